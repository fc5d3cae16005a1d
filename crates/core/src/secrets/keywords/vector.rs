//! The keyword prefilter's vector kernels (Note \[Keyword buckets\] in
//! `keywords.rs`): 32 positions at a time with AVX2, 64 with AVX-512, each
//! tested against the 32 buckets' nibble tables with byte shuffles.
//!
//! The CPU is asked once, when the tables are made (`pulp::x86::V4`, else
//! `V3`); the token that answer gives is what lets the intrinsics be
//! called, so this module holds no `unsafe`. Text is read into vectors by
//! value (`bytemuck::cast` of a byte array), never through a pointer.

use core::arch::x86_64::{__m256i, __m512i};

use pulp::bytemuck::cast;
use pulp::core_arch::x86::{Avx, Avx2};
use pulp::x86::{V3, V4};

use super::super::vectors::{lanes, load32, load64};
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

/// The buckets' tables as vectors (each 16-byte table in every 128-bit
/// lane, as `vpshufb` looks up within a lane), and the token that proves
/// the CPU's vector instructions.
#[derive(Debug)]
pub(super) struct Kernel {
    simd: Simd,
    lo: [__m256i; GROUPS * SPAN],
    hi: [__m256i; GROUPS * SPAN],
    lo64: [__m512i; GROUPS * SPAN],
    hi64: [__m512i; GROUPS * SPAN],
}

/// The widest vectors this CPU has, asked once.
///
/// Note \[Keyword buckets 64 wide\]: where the CPU has AVX-512 (`BW` for
/// byte shuffles on 512-bit vectors), a block is 64 positions with the
/// same 40 shuffles that read 32 with AVX2, and the positions that pass
/// come out as one 64-bit mask (`vptestmb`), with no compare and
/// `movemask`. The last whole 32 positions of a text go through the AVX2
/// block, so no more positions are left to the triple loop than before.
/// Masking 4 MB of `extract --jsonl` output in one thread (criterion,
/// interleaved): 5.52–5.59 ms with the AVX2 kernel, 5.05–5.18 ms with
/// this one. The code a kernel runs must be inlined into the function
/// `vectorize` makes: the survivors' closure (for `popcnt`) and each
/// helper (an intrinsic called out of line costs a call per vector).
#[derive(Debug, Clone, Copy)]
enum Simd {
    V3(V3),
    V4(V4),
}

impl Kernel {
    /// The kernel for `tables`, when this CPU has AVX2 (and AVX-512 where
    /// it has it, Note \[Keyword buckets 64 wide\]).
    pub(super) fn new(tables: &Tables) -> Option<Kernel> {
        let simd = match V4::try_new() {
            Some(v4) => Simd::V4(v4),
            None => Simd::V3(V3::try_new()?),
        };
        Some(Kernel::with(simd, tables))
    }

    /// The AVX2 kernel even where the CPU has AVX-512, so tests read both.
    #[cfg(test)]
    pub(super) fn new_avx2(tables: &Tables) -> Option<Kernel> {
        Some(Kernel::with(Simd::V3(V3::try_new()?), tables))
    }

    fn with(simd: Simd, tables: &Tables) -> Kernel {
        Kernel {
            simd,
            lo: tables.0.map(|t| cast(lanes::<32>(&t))),
            hi: tables.1.map(|t| cast(lanes::<32>(&t))),
            lo64: tables.0.map(|t| cast(lanes::<64>(&t))),
            hi64: tables.1.map(|t| cast(lanes::<64>(&t))),
        }
    }

    /// Whether the blocks are 64 positions wide.
    #[cfg(test)]
    pub(super) fn wide(&self) -> bool {
        matches!(self.simd, Simd::V4(_))
    }

    /// Calls `piece(start, offsets)` for each run of up to 256 positions
    /// from the text's start, in order, with the offsets (from `start`) of
    /// the positions some bucket passes. A block of 64 or 32 positions is
    /// read when `text` holds its bytes and the `SPAN - 1` after them.
    /// Answers how many positions were read, or `None` when `piece` said
    /// stop.
    pub(super) fn pieces(
        &self,
        text: &[u8],
        piece: impl FnMut(usize, &[u8]) -> bool,
    ) -> Option<usize> {
        match self.simd {
            Simd::V3(simd) => self.pieces_avx2(simd, text, piece),
            Simd::V4(simd) => self.pieces_avx512(simd, text, piece),
        }
    }

    /// [`Kernel::pieces`] 32 positions a block.
    fn pieces_avx2(
        &self,
        simd: V3,
        text: &[u8],
        mut piece: impl FnMut(usize, &[u8]) -> bool,
    ) -> Option<usize> {
        simd.vectorize(
            #[inline(always)]
            || {
                let (lo, hi) = (&self.lo, &self.hi);
                // A block reads 32 positions and the `SPAN - 1` bytes after.
                let blocks = text.len().saturating_sub(SPAN - 1) / 32;
                let mut offsets = [0u8; PIECE + 8];
                for first in (0..blocks).step_by(PIECE / 32) {
                    let mut n = 0usize;
                    for block in first..blocks.min(first + PIECE / 32) {
                        let mask = block32(simd.avx, simd.avx2, lo, hi, text, block * 32);
                        gather::<4>(&mut offsets, &mut n, (block - first) * 32, u64::from(mask));
                    }
                    if !piece(first * 32, &offsets[..n.min(PIECE)]) {
                        return None;
                    }
                }
                Some(blocks * 32)
            },
        )
    }

    /// [`Kernel::pieces`] 64 positions a block, then one block of 32 where
    /// 64 do not fit (Note \[Keyword buckets 64 wide\]).
    fn pieces_avx512(
        &self,
        simd: V4,
        text: &[u8],
        mut piece: impl FnMut(usize, &[u8]) -> bool,
    ) -> Option<usize> {
        simd.vectorize(
            #[inline(always)]
            || {
                // Positions with their `SPAN - 1` bytes after in `text`.
                let readable = text.len().saturating_sub(SPAN - 1);
                let mut offsets = [0u8; PIECE + 8];
                let mut at = 0;
                while at + 32 <= readable {
                    let first = at;
                    let mut n = 0usize;
                    while at + 64 <= readable && at + 64 <= first + PIECE {
                        let mask = block64(simd, &self.lo64, &self.hi64, text, at);
                        gather::<8>(&mut offsets, &mut n, at - first, mask);
                        at += 64;
                    }
                    if at + 32 <= readable && at + 32 <= first + PIECE {
                        let mask = block32(simd.avx, simd.avx2, &self.lo, &self.hi, text, at);
                        gather::<4>(&mut offsets, &mut n, at - first, u64::from(mask));
                        at += 32;
                    }
                    if !piece(first, &offsets[..n.min(PIECE)]) {
                        return None;
                    }
                }
                Some(at)
            },
        )
    }
}

/// The positions of the 64 from `at` that some bucket passes, one bit
/// each (Note \[Keyword buckets 64 wide\]). Always inlined: it runs inside
/// the function `vectorize` makes.
#[allow(clippy::inline_always)]
#[inline(always)]
fn block64(
    simd: V4,
    lo: &[__m512i; GROUPS * SPAN],
    hi: &[__m512i; GROUPS * SPAN],
    text: &[u8],
    at: usize,
) -> u64 {
    let (f, bw) = (simd.avx512f, simd.avx512bw);
    let nibble = f._mm512_set1_epi8(0x0f);
    let mut lows = [f._mm512_setzero_si512(); SPAN];
    let mut highs = lows;
    for j in 0..SPAN {
        let v = load64(text, at + j);
        lows[j] = f._mm512_and_si512(v, nibble);
        highs[j] = f._mm512_and_si512(bw._mm512_srli_epi16::<4>(v), nibble);
    }
    let mut any = f._mm512_setzero_si512();
    for g in 0..GROUPS {
        let mut m = f._mm512_and_si512(
            bw._mm512_shuffle_epi8(lo[g * SPAN], lows[0]),
            bw._mm512_shuffle_epi8(hi[g * SPAN], highs[0]),
        );
        for j in 1..SPAN {
            m = f._mm512_and_si512(
                m,
                f._mm512_and_si512(
                    bw._mm512_shuffle_epi8(lo[g * SPAN + j], lows[j]),
                    bw._mm512_shuffle_epi8(hi[g * SPAN + j], highs[j]),
                ),
            );
        }
        any = f._mm512_or_si512(any, m);
    }
    bw._mm512_test_epi8_mask(any, any)
}

/// The positions of the 32 from `at` that some bucket passes, one bit
/// each. Always inlined: it runs inside the functions `vectorize` makes.
#[allow(clippy::inline_always)]
#[inline(always)]
fn block32(
    avx: Avx,
    avx2: Avx2,
    lo: &[__m256i; GROUPS * SPAN],
    hi: &[__m256i; GROUPS * SPAN],
    text: &[u8],
    at: usize,
) -> u32 {
    let zero = avx._mm256_setzero_si256();
    let nibble = avx._mm256_set1_epi8(0x0f);
    let mut lows = [zero; SPAN];
    let mut highs = [zero; SPAN];
    for j in 0..SPAN {
        let v = load32(text, at + j);
        lows[j] = avx2._mm256_and_si256(v, nibble);
        highs[j] = avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v), nibble);
    }
    let mut any = zero;
    for g in 0..GROUPS {
        let mut m = avx2._mm256_and_si256(
            avx2._mm256_shuffle_epi8(lo[g * SPAN], lows[0]),
            avx2._mm256_shuffle_epi8(hi[g * SPAN], highs[0]),
        );
        for j in 1..SPAN {
            m = avx2._mm256_and_si256(
                m,
                avx2._mm256_and_si256(
                    avx2._mm256_shuffle_epi8(lo[g * SPAN + j], lows[j]),
                    avx2._mm256_shuffle_epi8(hi[g * SPAN + j], highs[j]),
                ),
            );
        }
        any = avx2._mm256_or_si256(any, m);
    }
    // One bit per position that no bucket passes, inverted.
    #[allow(clippy::cast_sign_loss)]
    let none = avx2._mm256_movemask_epi8(avx2._mm256_cmpeq_epi8(any, zero)) as u32;
    !none
}

/// Writes the offsets of the set bits of `mask`'s low `BYTES` bytes, each
/// `base` plus its place, at `offsets[*n..]`, eight at a time without a
/// branch per bit (Note \[Hits gathered, then compared\]), and moves `*n`
/// past them.
#[allow(clippy::inline_always)]
#[inline(always)]
fn gather<const BYTES: usize>(
    offsets: &mut [u8; PIECE + 8],
    n: &mut usize,
    base: usize,
    mask: u64,
) {
    for q in 0..BYTES {
        let bits = (mask >> (8 * q)) & 0xff;
        // `base + 8 * q + 7` < 256: no byte carries.
        #[allow(clippy::cast_possible_truncation)]
        let add = (base + 8 * q) as u64 * 0x0101_0101_0101_0101;
        let packed = PLACES[bits as usize] + add;
        if let Some(slot) = offsets.get_mut(*n..*n + 8) {
            slot.copy_from_slice(&packed.to_le_bytes());
        }
        *n += bits.count_ones() as usize;
    }
}
