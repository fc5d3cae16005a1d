//! Hook input, block reasons and the last-message fold over arbitrary bytes: must never panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agentshape_core::hook::fuzz_hook(data);
});
