//! Every decoder over arbitrary bytes: must never panic or allocate without bound.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agentshape_core::decode::fuzz_decode(data);
});
