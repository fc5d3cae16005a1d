//! What one read of a JSON line tells masking before its keyword pass.
//!
//! Note \[Line facts in one pass\]: deciding that a line printed by
//! `extract --jsonl` holds no secret (Note \[Clean JSON without a Value\]
//! in `clean_json.rs`) read the whole line five times besides the keyword
//! pass: for a `\u` or `\/` escape (a vector pass), for a `%` (`memchr`),
//! for `eyJ` (`memmem`), for a Kelvin sign or long s (`memchr2`, once a
//! keyword woke a rule that folds case), and the base64 alphabet's pass.
//! Most lines hold none of them (of the 20,000 lines over the bench
//! replies, 7,180 hold a `%`, none the others), and each search was a call
//! that read the line to its end to say so: 10% of masking the output
//! (criterion, the masking loop, with the three searches skipped). One
//! vector pass now asks all four questions at once, three loads and a
//! dozen byte compares per 64 bytes (32 with AVX2), and the searches run
//! only on a line that has what they look for: the loop went from
//! 5.02 to 4.88 ms (the pass costs about half of what it spares). The
//! answers are exact, not a superset: each is the byte loop's
//! ([`Facts::portable`]), and the tests hold every kernel to it at every
//! place of a block.

use std::sync::OnceLock;

use memchr::memmem;

/// What a line holds, each a yes or no for the whole line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Facts {
    /// A backslash followed by `u` or `/`: an escape that may hide a
    /// keyword's byte or a base64 byte in JSON as written (`clean_json`).
    pub escape: bool,
    /// A `%`: where a percent-encoded URL may begin (`encoded`).
    pub percent: bool,
    /// `eyJ`: where a base64 JSON object (a JWT's part) may begin.
    pub eyj: bool,
    /// The Kelvin sign or the long s, which `(?i)` folds into ASCII
    /// letters (`hand_gate::folds_into_ascii`).
    pub folds: bool,
}

const KELVIN: &[u8] = "\u{212A}".as_bytes();
const LONG_S: &[u8] = "\u{17F}".as_bytes();

impl Facts {
    /// The facts of `text`, by the widest vector pass this CPU has.
    pub(super) fn of(text: &[u8]) -> Facts {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = vector::facts(text) {
            return f;
        }
        Facts::portable(text)
    }

    /// The facts of `text` by searches of the whole text, what the vector
    /// passes are held to.
    pub(super) fn portable(text: &[u8]) -> Facts {
        let from = |at: usize| text.get(at..).unwrap_or_default();
        Facts {
            escape: memchr::memchr_iter(b'\\', text)
                .any(|at| matches!(text.get(at + 1), Some(b'u' | b'/'))),
            percent: memchr::memchr(b'%', text).is_some(),
            eyj: eyj().find(text).is_some(),
            folds: memchr::memchr2_iter(KELVIN[0], LONG_S[0], text)
                .any(|at| from(at).starts_with(KELVIN) || from(at).starts_with(LONG_S)),
        }
    }

    /// Each fact that either holds.
    fn or(self, other: Facts) -> Facts {
        Facts {
            escape: self.escape || other.escape,
            percent: self.percent || other.percent,
            eyj: self.eyj || other.eyj,
            folds: self.folds || other.folds,
        }
    }
}

/// The searcher for `eyJ`, one for the process (this runs for every string
/// masked).
pub(super) fn eyj() -> &'static memmem::Finder<'static> {
    static EYJ: OnceLock<memmem::Finder<'static>> = OnceLock::new();
    EYJ.get_or_init(|| memmem::Finder::new(b"eyJ"))
}

/// The vector passes: 64 bytes a step with AVX-512 (BW), 32 with AVX2; the
/// last bytes (a pattern's start whose two bytes after are past a full
/// step) by [`Facts::portable`] on the rest.
#[cfg(target_arch = "x86_64")]
mod vector {
    use core::arch::x86_64::{__m256i, __m512i};

    use pulp::bytemuck::cast;
    use pulp::x86::{V3, V4};

    use super::Facts;

    /// The facts of `text` with AVX-512 where the CPU has it, else AVX2;
    /// `None` without either.
    pub(super) fn facts(text: &[u8]) -> Option<Facts> {
        if let Some(simd) = V4::try_new() {
            return Some(facts_avx512(simd, text));
        }
        Some(facts_avx2(V3::try_new()?, text))
    }

    /// The AVX2 pass even where the CPU has AVX-512, so tests read both.
    #[cfg(test)]
    pub(super) fn with_avx2(text: &[u8]) -> Option<Facts> {
        Some(facts_avx2(V3::try_new()?, text))
    }

    /// Whether the CPU has AVX-512, for tests.
    #[cfg(test)]
    pub(super) fn wide() -> bool {
        V4::try_new().is_some()
    }

    /// The facts of the patterns that start in `text[at..]`, read by the
    /// byte loop (their bytes after included, so nothing is cut).
    fn rest(text: &[u8], at: usize, found: Facts) -> Facts {
        // Starts before `at` were read by the vector steps; the rest's
        // facts are those of the text from `at`, with at most two bytes
        // before it joining a pattern that began earlier, already read.
        found.or(Facts::portable(text.get(at..).unwrap_or_default()))
    }

    fn facts_avx512(simd: V4, text: &[u8]) -> Facts {
        simd.vectorize(
            #[inline(always)]
            || {
                let bw = simd.avx512bw;
                #[allow(clippy::cast_possible_wrap)] // Bytes: the bits are kept.
                let splat = |b: u8| simd.avx512f._mm512_set1_epi8(b as i8);
                let (backslash, u, slash, percent) =
                    (splat(b'\\'), splat(b'u'), splat(b'/'), splat(b'%'));
                let (e_, y_, j_) = (splat(b'e'), splat(b'y'), splat(b'J'));
                let (k0, k1, k2) = (splat(0xE2), splat(0x84), splat(0xAA));
                let (s0, s1) = (splat(0xC5), splat(0xBF));
                let (mut escape, mut pct, mut eyj, mut folds) = (0u64, 0u64, 0u64, 0u64);
                let mut at = 0;
                // A step reads the 64 starts from `at` and the two bytes
                // after the last.
                while at + 66 <= text.len() {
                    let here = load64(text, at);
                    let next = load64(text, at + 1);
                    let after = load64(text, at + 2);
                    let slash_start = bw._mm512_cmpeq_epi8_mask(here, backslash);
                    escape |= bw._mm512_mask_cmpeq_epi8_mask(slash_start, next, u)
                        | bw._mm512_mask_cmpeq_epi8_mask(slash_start, next, slash);
                    pct |= bw._mm512_cmpeq_epi8_mask(here, percent);
                    let ey = bw._mm512_mask_cmpeq_epi8_mask(
                        bw._mm512_cmpeq_epi8_mask(here, e_),
                        next,
                        y_,
                    );
                    eyj |= bw._mm512_mask_cmpeq_epi8_mask(ey, after, j_);
                    let kelvin = bw._mm512_mask_cmpeq_epi8_mask(
                        bw._mm512_cmpeq_epi8_mask(here, k0),
                        next,
                        k1,
                    );
                    folds |= bw._mm512_mask_cmpeq_epi8_mask(kelvin, after, k2)
                        | bw._mm512_mask_cmpeq_epi8_mask(
                            bw._mm512_cmpeq_epi8_mask(here, s0),
                            next,
                            s1,
                        );
                    at += 64;
                }
                let found = Facts {
                    escape: escape != 0,
                    percent: pct != 0,
                    eyj: eyj != 0,
                    folds: folds != 0,
                };
                rest(text, at, found)
            },
        )
    }

    fn facts_avx2(simd: V3, text: &[u8]) -> Facts {
        simd.vectorize(
            #[inline(always)]
            || {
                let (avx, avx2) = (simd.avx, simd.avx2);
                #[allow(clippy::cast_possible_wrap)] // Bytes: the bits are kept.
                let splat = |b: u8| avx._mm256_set1_epi8(b as i8);
                let eq = |a, b| avx2._mm256_cmpeq_epi8(a, b);
                let and = |a, b| avx2._mm256_and_si256(a, b);
                let or = |a, b| avx2._mm256_or_si256(a, b);
                let (backslash, u, slash, percent) =
                    (splat(b'\\'), splat(b'u'), splat(b'/'), splat(b'%'));
                let (e_, y_, j_) = (splat(b'e'), splat(b'y'), splat(b'J'));
                let (k0, k1, k2) = (splat(0xE2), splat(0x84), splat(0xAA));
                let (s0, s1) = (splat(0xC5), splat(0xBF));
                let zero = avx._mm256_setzero_si256();
                let (mut escape, mut pct, mut eyj, mut folds) = (zero, zero, zero, zero);
                let mut at = 0;
                while at + 34 <= text.len() {
                    let here = load32(text, at);
                    let next = load32(text, at + 1);
                    let after = load32(text, at + 2);
                    escape = or(
                        escape,
                        and(eq(here, backslash), or(eq(next, u), eq(next, slash))),
                    );
                    pct = or(pct, eq(here, percent));
                    eyj = or(eyj, and(and(eq(here, e_), eq(next, y_)), eq(after, j_)));
                    folds = or(
                        folds,
                        or(
                            and(and(eq(here, k0), eq(next, k1)), eq(after, k2)),
                            and(eq(here, s0), eq(next, s1)),
                        ),
                    );
                    at += 32;
                }
                let any = |v| avx2._mm256_movemask_epi8(v) != 0;
                let found = Facts {
                    escape: any(escape),
                    percent: any(pct),
                    eyj: any(eyj),
                    folds: any(folds),
                };
                rest(text, at, found)
            },
        )
    }

    /// 64 bytes of `text` from `at` as a vector (zeros past its end).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn load64(text: &[u8], at: usize) -> __m512i {
        let bytes: [u8; 64] = text
            .get(at..at + 64)
            .and_then(|b| b.try_into().ok())
            .unwrap_or([0; 64]);
        cast(bytes)
    }

    /// 32 bytes of `text` from `at` as a vector (zeros past its end).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn load32(text: &[u8], at: usize) -> __m256i {
        let bytes: [u8; 32] = text
            .get(at..at + 32)
            .and_then(|b| b.try_into().ok())
            .unwrap_or([0; 32]);
        cast(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::Facts;

    /// Each kernel this CPU has, and the byte loop.
    fn every_pass(text: &[u8]) -> Vec<Facts> {
        let mut out = vec![Facts::of(text), Facts::portable(text)];
        #[cfg(target_arch = "x86_64")]
        if super::vector::wide() {
            out.extend(super::vector::with_avx2(text));
        }
        out
    }

    /// The facts, one byte at a time, as the notes define them.
    fn by_hand(text: &[u8]) -> Facts {
        let at = |i: usize, p: &[u8]| text.get(i..).is_some_and(|r| r.starts_with(p));
        let any = |p: &[&[u8]]| (0..text.len()).any(|i| p.iter().any(|p| at(i, p)));
        Facts {
            escape: any(&[b"\\u", b"\\/"]),
            percent: any(&[b"%"]),
            eyj: any(&[b"eyJ"]),
            folds: any(&["\u{212A}".as_bytes(), "\u{17F}".as_bytes()]),
        }
    }

    #[test]
    fn each_pattern_at_every_place_of_a_block() {
        let patterns: [(&[u8], Facts); 6] = [
            (
                b"\\u",
                Facts {
                    escape: true,
                    ..Facts::default()
                },
            ),
            (
                b"\\/",
                Facts {
                    escape: true,
                    ..Facts::default()
                },
            ),
            (
                b"%",
                Facts {
                    percent: true,
                    ..Facts::default()
                },
            ),
            (
                b"eyJ",
                Facts {
                    eyj: true,
                    ..Facts::default()
                },
            ),
            (
                "\u{212A}".as_bytes(),
                Facts {
                    folds: true,
                    ..Facts::default()
                },
            ),
            (
                "\u{17F}".as_bytes(),
                Facts {
                    folds: true,
                    ..Facts::default()
                },
            ),
        ];
        // Near misses: each pattern's bytes but the last, or one changed.
        let misses: [&[u8]; 8] = [
            b"\\n",
            b"\\",
            b"ey",
            b"eyj",
            b"EYJ",
            &[0xE2, 0x84],
            &[0xE2, 0x84, 0xAB],
            &[0xC5, 0xBE],
        ];
        for len in [
            0usize, 1, 2, 3, 31, 32, 33, 34, 35, 63, 64, 65, 66, 67, 100, 130, 131, 200,
        ] {
            let filler = vec![b'a'; len];
            for f in every_pass(&filler) {
                assert_eq!(f, Facts::default(), "{len}");
            }
            for (p, want) in &patterns {
                for place in 0..=len {
                    let mut text = filler.clone();
                    text.splice(place..place, p.iter().copied());
                    for f in every_pass(&text) {
                        assert_eq!(f, *want, "{p:?} at {place} of {len}");
                    }
                }
            }
            for p in misses {
                for place in 0..=len {
                    let mut text = filler.clone();
                    text.splice(place..place, p.iter().copied());
                    for f in every_pass(&text) {
                        assert_eq!(f, by_hand(&text), "{p:?} at {place} of {len}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// Any bytes, the pattern bytes frequent: every pass answers as the
        /// byte-at-a-time definition.
        #[test]
        fn every_pass_is_the_definition(
            text in proptest::collection::vec(
                proptest::sample::select(vec![
                    b'a', b'\\', b'u', b'/', b'%', b'e', b'y', b'J', 0xE2, 0x84, 0xAA, 0xC5, 0xBF,
                ]),
                0..300,
            )
        ) {
            let want = by_hand(&text);
            for f in every_pass(&text) {
                proptest::prop_assert_eq!(f, want);
            }
        }
    }
}
