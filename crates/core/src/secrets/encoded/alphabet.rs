//! Base64's alphabet found 32 bytes a step where the CPU has AVX2.
//!
//! Note \[Base64 bytes by nibbles\]: [`super::b64_runs`] reads each line
//! as masks of the bytes in the alphabet, 64 bytes to a mask. The portable
//! form (`bytescan::base64_bytes64`) is SSE2, 16 bytes a step, each step
//! two range tests and four compares: about 8% of masking `extract
//! --jsonl`'s output (perf of the masking loop), the largest part of
//! `hot_spans` after the keyword pass. The alphabet (letters, digits, `+`,
//! `-`, `/`, `_`) is a set of bytes that two 16-entry tables decide
//! exactly, as the keyword buckets are decided (Note \[Keyword buckets\] in
//! `keywords.rs`): a byte's high nibble picks the classes it may be in,
//! its low nibble the classes it is in, and it is in the alphabet when the
//! two share a bit. Five classes, one per high nibble's set of low ones:
//! `2` with `B`, `D`, `F` (`+ - /`); `3` with `0`–`9`; `4` and `6` with
//! `1`–`F`; `5` and `7` with `0`–`A`; `5` with `F` (`_`). A byte from
//! 0x80 has a high nibble of 8 or more, which picks none. So 32 bytes cost
//! two shuffles, a shift and three logic operations, and the masks of a
//! whole piece of text are made in one call (the CPU asked once, as for the
//! keyword kernel). A test holds the tables to the byte loop for every byte
//! at every place of a block.

use core::arch::x86_64::__m256i;

use pulp::bytemuck::cast;
use pulp::x86::V3;

use super::super::vectors::lanes;

/// The classes each low nibble is in (Note \[Base64 bytes by nibbles\]).
pub(in crate::secrets) const LOW: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut l = 0;
    while l < 16 {
        let mut c = 0u8;
        if l == 0xB || l == 0xD || l == 0xF {
            c |= 1;
        }
        if l <= 9 {
            c |= 2;
        }
        if l >= 1 {
            c |= 4;
        }
        if l <= 0xA {
            c |= 8;
        }
        if l == 0xF {
            c |= 16;
        }
        t[l] = c;
        l += 1;
    }
    t
};

/// The classes each high nibble may be in.
pub(in crate::secrets) const HIGH: [u8; 16] = [0, 0, 1, 2, 4, 8 | 16, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0];

/// [`LOW`] and [`HIGH`] in every lane of a 32-byte and a 64-byte vector,
/// made at compile time (this module's runs and `facts`' pass load them).
pub(in crate::secrets) const LOW_32: [u8; 32] = lanes(&LOW);
pub(in crate::secrets) const HIGH_32: [u8; 32] = lanes(&HIGH);
pub(in crate::secrets) const LOW_64: [u8; 64] = lanes(&LOW);
pub(in crate::secrets) const HIGH_64: [u8; 64] = lanes(&HIGH);

/// Writes to `out[k]` the mask of the alphabet's bytes in the 64 bytes of
/// `text` from `64 * k` (bit `i` for byte `64 * k + i`; bytes past the
/// text's end are outside the alphabet), for every `k` of `out`. Answers
/// false, writing nothing, on a CPU without AVX2.
pub(super) fn masks(text: &[u8], out: &mut [u64]) -> bool {
    let Some(simd) = V3::try_new() else {
        return false;
    };
    simd.vectorize(
        #[inline(always)]
        || {
            for (k, mask) in out.iter_mut().enumerate() {
                let at = 64 * k;
                *mask = if at >= text.len() {
                    0
                } else {
                    u64::from(half(simd, text, at)) | u64::from(half(simd, text, at + 32)) << 32
                };
            }
        },
    );
    true
}

/// The mask of the 32 bytes of `text` from `at` (zeros past its end).
/// Always inlined: it runs inside the AVX2 function `vectorize` makes, so
/// its intrinsics are compiled with AVX2.
#[allow(clippy::inline_always)]
#[inline(always)]
fn half(simd: V3, text: &[u8], at: usize) -> u32 {
    let bytes: [u8; 32] = if let Some(b) = text.get(at..at + 32) {
        b.try_into().unwrap_or([0; 32])
    } else {
        let mut b = [0u8; 32];
        let rest = text.get(at..).unwrap_or_default();
        b[..rest.len()].copy_from_slice(rest);
        b
    };
    let v: __m256i = cast(bytes);
    let nibble = simd.avx._mm256_set1_epi8(0x0f);
    let lo = simd.avx2._mm256_and_si256(v, nibble);
    let hi = simd
        .avx2
        ._mm256_and_si256(simd.avx2._mm256_srli_epi16::<4>(v), nibble);
    let classes = simd.avx2._mm256_and_si256(
        simd.avx2._mm256_shuffle_epi8(cast(LOW_32), lo),
        simd.avx2._mm256_shuffle_epi8(cast(HIGH_32), hi),
    );
    // One bit per byte in no class, inverted.
    #[allow(clippy::cast_sign_loss)]
    let outside = simd.avx2._mm256_movemask_epi8(
        simd.avx2
            ._mm256_cmpeq_epi8(classes, simd.avx._mm256_setzero_si256()),
    ) as u32;
    !outside
}

#[cfg(test)]
mod tests {
    use super::masks;

    /// The byte loop the masks stand for.
    fn slow(text: &[u8], k: usize) -> u64 {
        (0..64).fold(0, |m, i| {
            let b = text.get(64 * k + i).copied();
            m | u64::from(b.is_some_and(super::super::is_b64)) << i
        })
    }

    #[test]
    fn every_byte_at_every_place_of_a_block_is_read_as_the_byte_loop_reads_it() {
        if pulp::x86::V3::try_new().is_none() {
            eprintln!("no AVX2 here: the portable masks are tested in bytescan");
            return;
        }
        for b in 0..=255u8 {
            for place in 0..64 {
                // The byte among base64 letters and among spaces, at every
                // place of the second block, the text ending at any length.
                for filler in [b'a', b' '] {
                    let mut text = [filler; 128];
                    text[64 + place] = b;
                    for len in [64 + place + 1, 128] {
                        let t = &text[..len];
                        let mut out = [0u64; 3];
                        assert!(masks(t, &mut out));
                        for (k, &m) in out.iter().enumerate() {
                            assert_eq!(m, slow(t, k), "byte {b:#x} at {place}, len {len}");
                        }
                    }
                }
            }
        }
    }
}
