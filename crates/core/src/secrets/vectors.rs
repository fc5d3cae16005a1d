//! Text and tables as vectors, for the secrets module's vector passes
//! (the keyword kernels in `keywords/vector.rs`, the line facts in
//! `facts.rs`).
//!
//! Text is read into vectors by value (`bytemuck::cast` of a byte array),
//! never through a pointer, so no pass needs `unsafe`. The loads are always
//! inlined: they run inside the functions pulp's `vectorize` makes, where
//! a call would compile the intrinsic out of line, one call per vector
//! (Note \[Keyword buckets 64 wide\] in `keywords/vector.rs`).

use core::arch::x86_64::{__m256i, __m512i};

use pulp::bytemuck::cast;

/// A 16-byte table in each of `N / 16` lanes (`vpshufb` looks up within a
/// lane).
pub(super) fn lanes<const N: usize>(t: &[u8; 16]) -> [u8; N] {
    let mut v = [0u8; N];
    for lane in v.chunks_exact_mut(16) {
        lane.copy_from_slice(t);
    }
    v
}

/// 64 bytes of `text` from `at` as a vector (zeros when fewer are left).
#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn load64(text: &[u8], at: usize) -> __m512i {
    let bytes: [u8; 64] = text
        .get(at..at + 64)
        .and_then(|b| b.try_into().ok())
        .unwrap_or([0; 64]);
    cast(bytes)
}

/// 32 bytes of `text` from `at` as a vector (zeros when fewer are left).
#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn load32(text: &[u8], at: usize) -> __m256i {
    let bytes: [u8; 32] = text
        .get(at..at + 32)
        .and_then(|b| b.try_into().ok())
        .unwrap_or([0; 32]);
    cast(bytes)
}
