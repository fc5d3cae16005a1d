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
pub(super) const fn lanes<const N: usize>(t: &[u8; 16]) -> [u8; N] {
    let mut v = [0u8; N];
    let mut i = 0;
    while i < N {
        v[i] = t[i % 16];
        i += 1;
    }
    v
}

/// `N` bytes of `text` from `at` (zeros when fewer are left).
#[allow(clippy::inline_always)]
#[inline(always)]
fn block<const N: usize>(text: &[u8], at: usize) -> [u8; N] {
    text.get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .unwrap_or([0; N])
}

/// 64 bytes of `text` from `at` as a vector (zeros when fewer are left).
#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn load64(text: &[u8], at: usize) -> __m512i {
    cast(block::<64>(text, at))
}

/// 32 bytes of `text` from `at` as a vector (zeros when fewer are left).
#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn load32(text: &[u8], at: usize) -> __m256i {
    cast(block::<32>(text, at))
}
