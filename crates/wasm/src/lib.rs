//! # agentshape (WebAssembly)
//!
//! agentshape-core's stages for JavaScript: the `.wasm` behind the npm
//! package `agentshape` (packages/agentshape, built by
//! scripts/build-wasm.sh). Like crates/python it is an edge crate: it
//! imports core only, nothing imports it, and it has no logic of its own.
//! Names and results mirror the Python package (`extract`, `Validator`,
//! `parse`, `Decoder`, `check`), errors carry the same kinds (Note
//! \[Exceptions and exit codes\] in crates/python's `errors`).
//!
//! The modules below the bindings are plain Rust over JSON text, tested on
//! the host by `cargo test`; `bindings` is the only place that knows about
//! JavaScript.
//!
//! Note \[Text crosses as JSON\]: every value crosses the boundary as JSON
//! text: JavaScript's `JSON.stringify`/`JSON.parse` (native code in every
//! engine) on its side, serde on ours. Handing JavaScript objects over
//! with serde-wasm-bindgen instead costs one boundary call per node read
//! or built. Measured in Node 20 (2026-11-29, the `wasm` profile, a
//! loaded 2-core host, mean of 3 passes): validating 20,000 of the bench
//! corpus's 1.5 KB instances given as objects took 1.30 s as
//! `JSON.stringify` + text against 3.24 s through serde-wasm-bindgen
//! (`from_value` into a `Value`); extracting 5,000 of its replies took
//! 0.64 s returning JSON text for `JSON.parse` against 0.73 s returning
//! objects built by serde-wasm-bindgen's serializer. Text also lets the
//! validator read an instance in place (core's borrowed reader), which a
//! `Value` built from objects cannot.

// The modules are private: JavaScript sees `bindings` only, and no Rust
// crate imports this one.
mod bindings;
mod check;
mod decode;
mod errors;
mod extract;
mod lint;
mod schema;
mod validate;
