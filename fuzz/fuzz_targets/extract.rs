//! The whole extract chain over arbitrary text: must never panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agentshape_core::extract::fuzz_extract(data);
});
