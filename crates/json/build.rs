//! Sets `cfg(vector_bytes)` for the byte scans (Note [Vector byte masks] in
//! `bytescan`).

/// `cfg(vector_bytes)`: the target has 16-byte vector compares that
/// `bytescan` uses (SSE2 on `x86_64`, SIMD128 on `wasm32` when built with
/// it: Note [WebAssembly SIMD] in `.cargo/config.toml`). Elsewhere the
/// byte scans take their word-at-a-time forms.
// A build script reads the target from cargo's environment; the library never does.
#[allow(clippy::disallowed_methods)]
fn main() {
    println!("cargo::rustc-check-cfg=cfg(vector_bytes)");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let simd128 = features.split(',').any(|f| f == "simd128");
    if arch == "x86_64" || (arch == "wasm32" && simd128) {
        println!("cargo::rustc-cfg=vector_bytes");
    }
}
