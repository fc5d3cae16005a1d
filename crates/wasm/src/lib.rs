//! # agentshape (WebAssembly)
//!
//! agentshape-core's stages for JavaScript: the `.wasm` behind the npm
//! package `agentshape` (packages/agentshape, built by
//! scripts/build-wasm.sh). Like crates/python it is an edge crate: it
//! imports core only, nothing imports it, and it has no logic of its own.
//! Names and results mirror the Python package (`extract`, `Validator`,
//! `parse`, `Decoder`, `check`), errors carry the same kinds (Note
//! [Exceptions and exit codes] in crates/python's `errors`).
//!
//! The modules below the bindings are plain Rust over JSON text, tested on
//! the host by `cargo test`; `bindings` is the only place that knows about
//! JavaScript.
//!
//! Note [Text crosses as JSON]: every value crosses the boundary as JSON
//! text: JavaScript's `JSON.stringify`/`JSON.parse` (native code in every
//! engine) on its side, serde on ours. Handing JavaScript objects over
//! with serde-wasm-bindgen instead costs one boundary call per node read
//! or built; measured on the bench corpus's 1.5 KB instances and on the
//! extract results of its replies, it was the slower of the two (the
//! numbers are in packages/agentshape/README.md). Text also lets the
//! validator read an instance in place (core's `verdict_json`), which is
//! what makes `Validator.validateJson` fast.

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
