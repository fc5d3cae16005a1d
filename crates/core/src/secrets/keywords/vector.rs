//! The keyword prefilter's AVX2 kernel (Note \[Keyword buckets\] in
//! `keywords.rs`): 32 positions at a time, each tested against the 32
//! buckets' nibble tables with byte shuffles.
//!
//! The CPU is asked once, when the tables are made (`pulp::x86::V3`); the
//! token that answer gives is what lets the intrinsics be called, so this
//! module holds no `unsafe`. Text is read into vectors by value
//! (`bytemuck::cast` of a 32-byte array), never through a pointer.

use core::arch::x86_64::__m256i;

use pulp::bytemuck::cast;
use pulp::x86::V3;

use super::buckets::{GROUPS, SPAN, Tables};

/// Positions a piece holds: each one's offset fits a byte.
const PIECE: usize = 256;

/// Per byte of a mask, the places of its set bits packed from the low byte
/// up (the rest zero), so a piece's offsets are written eight at a time
/// without a branch per bit.
const PLACES: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut m = 0;
    while m < 256 {
        let (mut packed, mut n, mut bit) = (0u64, 0, 0u64);
        while bit < 8 {
            if (m >> bit) & 1 != 0 {
                packed |= bit << (8 * n);
                n += 1;
            }
            bit += 1;
        }
        t[m] = packed;
        m += 1;
    }
    t
};

/// The buckets' tables as vectors (each 16-byte table in both lanes, as
/// `vpshufb` looks up within a lane), and the token that proves AVX2.
#[derive(Debug)]
pub(super) struct Kernel {
    simd: V3,
    lo: [[u8; 32]; GROUPS * SPAN],
    hi: [[u8; 32]; GROUPS * SPAN],
}

/// A 16-byte table in both lanes.
fn both_lanes(t: &[u8; 16]) -> [u8; 32] {
    let mut v = [0u8; 32];
    v[..16].copy_from_slice(t);
    v[16..].copy_from_slice(t);
    v
}

impl Kernel {
    /// The kernel for `tables`, when this CPU has AVX2.
    pub(super) fn new(tables: &Tables) -> Option<Kernel> {
        let simd = V3::try_new()?;
        Some(Kernel {
            simd,
            lo: tables.0.map(|t| both_lanes(&t)),
            hi: tables.1.map(|t| both_lanes(&t)),
        })
    }

    /// Calls `piece(start, offsets)` for each run of up to 256 positions
    /// from the text's start, in order, with the offsets (from `start`) of
    /// the positions some bucket passes. A block of 32 positions is read
    /// when `text` holds its 32 bytes and the `SPAN - 1` after them. Answers
    /// how many positions were read, or `None` when `piece` said stop.
    pub(super) fn pieces(
        &self,
        text: &[u8],
        mut piece: impl FnMut(usize, &[u8]) -> bool,
    ) -> Option<usize> {
        let simd = self.simd;
        simd.vectorize(
            #[inline(always)]
            || {
                let zero = simd.avx._mm256_setzero_si256();
                let nibble = simd.avx._mm256_set1_epi8(0x0f);
                let lo: [__m256i; GROUPS * SPAN] = self.lo.map(cast);
                let hi: [__m256i; GROUPS * SPAN] = self.hi.map(cast);
                // A block reads 32 positions and the `SPAN - 1` bytes after.
                let blocks = text.len().saturating_sub(SPAN - 1) / 32;
                let mut offsets = [0u8; PIECE + 8];
                for first in (0..blocks).step_by(PIECE / 32) {
                    let mut n = 0usize;
                    for block in first..blocks.min(first + PIECE / 32) {
                        let at = block * 32;
                        let mut lows = [zero; SPAN];
                        let mut highs = [zero; SPAN];
                        for j in 0..SPAN {
                            let v = load(text, at + j);
                            lows[j] = simd.avx2._mm256_and_si256(v, nibble);
                            highs[j] = simd
                                .avx2
                                ._mm256_and_si256(simd.avx2._mm256_srli_epi16::<4>(v), nibble);
                        }
                        let mut any = zero;
                        for g in 0..GROUPS {
                            let mut m = simd.avx2._mm256_and_si256(
                                simd.avx2._mm256_shuffle_epi8(lo[g * SPAN], lows[0]),
                                simd.avx2._mm256_shuffle_epi8(hi[g * SPAN], highs[0]),
                            );
                            for j in 1..SPAN {
                                m = simd.avx2._mm256_and_si256(
                                    m,
                                    simd.avx2._mm256_and_si256(
                                        simd.avx2._mm256_shuffle_epi8(lo[g * SPAN + j], lows[j]),
                                        simd.avx2._mm256_shuffle_epi8(hi[g * SPAN + j], highs[j]),
                                    ),
                                );
                            }
                            any = simd.avx2._mm256_or_si256(any, m);
                        }
                        // One bit per position that no bucket passes, inverted.
                        #[allow(clippy::cast_sign_loss)]
                        let mask = !(simd
                            .avx2
                            ._mm256_movemask_epi8(simd.avx2._mm256_cmpeq_epi8(any, zero))
                            as u32);
                        let base = (block - first) * 32;
                        for q in 0..4 {
                            let bits = (mask >> (8 * q)) & 0xff;
                            // `base + 8 * q + 7` < 256: no byte carries.
                            #[allow(clippy::cast_possible_truncation)]
                            let add = (base + 8 * q) as u64 * 0x0101_0101_0101_0101;
                            let packed = PLACES[bits as usize] + add;
                            if let Some(slot) = offsets.get_mut(n..n + 8) {
                                slot.copy_from_slice(&packed.to_le_bytes());
                            }
                            n += bits.count_ones() as usize;
                        }
                    }
                    if !piece(first * 32, &offsets[..n.min(PIECE)]) {
                        return None;
                    }
                }
                Some(blocks * 32)
            },
        )
    }
}

/// 32 bytes of `text` from `at` as a vector (zeros past its end). Always
/// inlined: it runs inside the AVX2 functions `vectorize` makes.
#[allow(clippy::inline_always)]
#[inline(always)]
fn load(text: &[u8], at: usize) -> __m256i {
    let bytes: [u8; 32] = text
        .get(at..at + 32)
        .and_then(|b| b.try_into().ok())
        .unwrap_or([0; 32]);
    cast(bytes)
}

/// Whether `text` holds a backslash followed by `u` or `/` (an escape that
/// may hide a keyword's byte in JSON as written: `clean_json`'s
/// `hides_bytes`), 32 places at a time; `None` on a CPU without AVX2.
///
/// Note \[Escapes found with the vector pass\]: `memchr` stopped at every
/// backslash, and the JSON agentshape prints is full of `\n` and `\"`: 6%
/// of masking `extract --jsonl`'s output (perf). Two loads, three compares
/// and two logic operations per 32 bytes, one mask test at the end.
pub(super) fn hides_escape(text: &[u8]) -> Option<bool> {
    let simd = V3::try_new()?;
    Some(simd.vectorize(
        #[inline(always)]
        || {
            #[allow(clippy::cast_possible_wrap)] // Bytes: the bits are kept.
            let splat = |b: u8| simd.avx._mm256_set1_epi8(b as i8);
            let (backslash, u, slash) = (splat(b'\\'), splat(b'u'), splat(b'/'));
            let mut found = simd.avx._mm256_setzero_si256();
            let mut at = 0;
            while at + 33 <= text.len() {
                let (here, next) = (load(text, at), load(text, at + 1));
                let escape = simd.avx2._mm256_and_si256(
                    simd.avx2._mm256_cmpeq_epi8(here, backslash),
                    simd.avx2._mm256_or_si256(
                        simd.avx2._mm256_cmpeq_epi8(next, u),
                        simd.avx2._mm256_cmpeq_epi8(next, slash),
                    ),
                );
                found = simd.avx2._mm256_or_si256(found, escape);
                at += 32;
            }
            simd.avx2._mm256_movemask_epi8(found) != 0
                || text
                    .get(at..)
                    .unwrap_or_default()
                    .windows(2)
                    .any(|w| w[0] == b'\\' && matches!(w[1], b'u' | b'/'))
        },
    ))
}
