//! What one read of a JSON line tells masking before its keyword pass.
//!
//! Note \[Line facts in one pass\]: deciding that a line printed by
//! `extract --jsonl` holds no secret (Note \[Clean JSON without a Value\]
//! in `clean_json.rs`) read the whole line five times besides the keyword
//! pass: for a `\u` or `\/` escape (a vector pass), for a `%` (`memchr`),
//! for `eyJ` (`memmem`), for a Kelvin sign or long s (`memchr2`, once a
//! keyword woke a rule that folds case), and for runs of base64's alphabet
//! (its masks made 4 KiB at a time, then read for 24 ones in a row). Most
//! lines hold none of them: of the 20,000 lines over the bench replies,
//! 7,180 hold a `%`, 898 a run, none the others. Each search was a call
//! that read the line to its end to say so: 10% of masking the output for
//! the three searches alone (criterion, the masking loop, with them
//! skipped), about as much again for the runs. One vector pass now asks
//! all five questions at once, per 64 bytes (32 with AVX2) three loads, a
//! dozen byte compares, the alphabet's two nibble shuffles (Note \[Base64
//! bytes by nibbles\] in `encoded/alphabet.rs`) and a run's shifts on the
//! mask with a carry across steps; its last steps read the text's rest
//! padded with zeros (no pattern's byte, outside the alphabet). The
//! searches and the runs' pass run only on a line that has what they look
//! for: the loop went from 4.89–4.91 to 4.32–4.48 ms for the runs, 5.02 to
//! 4.88 before for the rest. The answers are exact, not a superset: each
//! is the byte loop's ([`Facts::portable`]), and the tests hold every
//! kernel to it at every place of a block and for runs of every length
//! across blocks.

use super::encoded::{B64_MIN, Starts, eyj, is_b64};

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
    /// A run of [`B64_MIN`] bytes of base64's alphabet (`encoded`'s
    /// `b64_runs` finds none in a text without one).
    pub b64_run: bool,
}

impl Facts {
    /// The facts of `text`, by the widest vector pass this CPU has.
    pub(super) fn of(text: &[u8]) -> Facts {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = vector::facts(text) {
            return f;
        }
        Facts::portable(text)
    }

    /// Which encodings' beginnings `encoded::trigger_spans` is to search
    /// for.
    pub(super) fn starts(self) -> Starts {
        Starts {
            percent: self.percent,
            eyj: self.eyj,
            b64_run: self.b64_run,
        }
    }

    /// The facts of `text` by searches of the whole text, what the vector
    /// passes are held to.
    pub(super) fn portable(text: &[u8]) -> Facts {
        Facts {
            escape: memchr::memchr_iter(b'\\', text)
                .any(|at| matches!(text.get(at + 1), Some(b'u' | b'/'))),
            percent: memchr::memchr(b'%', text).is_some(),
            eyj: eyj().find(text).is_some(),
            folds: super::hand_gate::folds_into_ascii(text),
            b64_run: text.split(|&b| !is_b64(b)).any(|run| run.len() >= B64_MIN),
        }
    }
}

/// The vector passes: 64 bytes a step with AVX-512 (BW), 32 with AVX2; the
/// last bytes (a pattern's start whose two bytes after are past a full
/// step) by [`Facts::portable`] on the rest.
#[cfg(target_arch = "x86_64")]
mod vector {
    use core::arch::x86_64::{__m256i, __m512i};

    use pulp::bytemuck::cast;
    use pulp::x86::{V3, V4};

    use super::super::encoded::alphabet::{HIGH_32, HIGH_64, LOW_32, LOW_64};
    use super::super::vectors::{load32, load64};
    use super::{B64_MIN, Facts};

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

    /// The bytes a kernel's last steps read: what is left of `text` from
    /// `at`, then zeros. A zero is no pattern's byte and outside base64's
    /// alphabet, so nothing the text does not hold is found, and the carry
    /// of a run goes on from the steps before.
    fn padded<const N: usize>(text: &[u8], at: usize) -> ([u8; N], usize) {
        let rest = text.get(at..).unwrap_or_default();
        let rest = rest.get(..N).unwrap_or(rest);
        let mut tail = [0u8; N];
        tail[..rest.len()].copy_from_slice(rest);
        (tail, rest.len())
    }

    /// Whether `mask` (a bit per byte, in the alphabet or not; `BITS`
    /// bytes) holds a run of `B64_MIN`, or ends one begun in the `carry`
    /// bytes before it; `carry` becomes the run the mask ends with.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run_in(mask: u64, bits: u32, carry: &mut u32) -> bool {
        let full = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        // Where 24 ones begin: shifts of 1, 1, 2, 4, 8 and 8.
        let mut long = mask & mask >> 1;
        long &= long >> 2;
        long &= long >> 4;
        long &= long >> 8;
        long &= long >> 8;
        let first = (mask | !full).trailing_ones().min(bits);
        // The run that goes on into the next mask (all of it when the mask
        // is full, which holds a run itself).
        let across = (*carry + first) as usize;
        *carry = (mask << (64 - bits)).leading_ones();
        long != 0 || across >= B64_MIN
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
                let (low, high): (__m512i, __m512i) = (cast(LOW_64), cast(HIGH_64));
                let nibble = splat(0x0f);
                let (mut escape, mut pct, mut eyj, mut folds) = (0u64, 0u64, 0u64, 0u64);
                let (mut b64, mut carry) = (false, 0u32);
                // A step reads the 64 starts from `at` and the two bytes
                // after the last; the last one or two read the rest, padded.
                let steps = text.len().saturating_sub(2) / 64;
                let (tail, left) = padded::<132>(text, 64 * steps);
                for (text, steps) in [(text, steps), (&tail[..], 1 + usize::from(left > 64))] {
                    for at in (0..steps).map(|k| 64 * k) {
                        let here = load64(text, at);
                        // Note [Base64 bytes by nibbles] in `alphabet.rs`.
                        let classes = simd.avx512f._mm512_and_si512(
                            bw._mm512_shuffle_epi8(
                                low,
                                simd.avx512f._mm512_and_si512(here, nibble),
                            ),
                            bw._mm512_shuffle_epi8(
                                high,
                                simd.avx512f
                                    ._mm512_and_si512(bw._mm512_srli_epi16::<4>(here), nibble),
                            ),
                        );
                        b64 |= run_in(bw._mm512_test_epi8_mask(classes, classes), 64, &mut carry);
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
                    }
                }
                Facts {
                    escape: escape != 0,
                    percent: pct != 0,
                    eyj: eyj != 0,
                    folds: folds != 0,
                    b64_run: b64,
                }
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
                let (low, high): (__m256i, __m256i) = (cast(LOW_32), cast(HIGH_32));
                let nibble = splat(0x0f);
                let (mut escape, mut pct, mut eyj, mut folds) = (zero, zero, zero, zero);
                let (mut b64, mut carry) = (false, 0u32);
                // As the AVX-512 pass, 32 starts a step.
                let steps = text.len().saturating_sub(2) / 32;
                let (tail, left) = padded::<68>(text, 32 * steps);
                for (text, steps) in [(text, steps), (&tail[..], 1 + usize::from(left > 32))] {
                    for at in (0..steps).map(|k| 32 * k) {
                        let here = load32(text, at);
                        let classes = and(
                            avx2._mm256_shuffle_epi8(low, and(here, nibble)),
                            avx2._mm256_shuffle_epi8(
                                high,
                                and(avx2._mm256_srli_epi16::<4>(here), nibble),
                            ),
                        );
                        // One bit per byte in no class, inverted.
                        #[allow(clippy::cast_sign_loss)]
                        let outside = avx2._mm256_movemask_epi8(eq(classes, zero)) as u32;
                        b64 |= run_in(u64::from(!outside), 32, &mut carry);
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
                    }
                }
                let any = |v| avx2._mm256_movemask_epi8(v) != 0;
                Facts {
                    escape: any(escape),
                    percent: any(pct),
                    eyj: any(eyj),
                    folds: any(folds),
                    b64_run: b64,
                }
            },
        )
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
        let b64 = |i: usize| text.get(i).copied().is_some_and(super::is_b64);
        Facts {
            escape: any(&[b"\\u", b"\\/"]),
            percent: any(&[b"%"]),
            eyj: any(&[b"eyJ"]),
            folds: any(&["\u{212A}".as_bytes(), "\u{17F}".as_bytes()]),
            b64_run: (0..text.len()).any(|i| (i..i + super::B64_MIN).all(b64)),
        }
    }

    /// Each pattern, near misses of each, and base64 runs shorter and
    /// longer than one that counts, at every place of texts that end
    /// before, inside and past one or more blocks of both kernels.
    #[test]
    fn each_pattern_at_every_place_of_a_block() {
        let runs: Vec<Vec<u8>> = [23, 24, 25, 40, 63, 64, 65, 100]
            .iter()
            .map(|&n| b"Az09+/-_".iter().copied().cycle().take(n).collect())
            .collect();
        let mut planted: Vec<&[u8]> = vec![
            b"\\u",
            b"\\/",
            b"%",
            b"eyJ",
            "\u{212A}".as_bytes(),
            "\u{17F}".as_bytes(),
            // Near misses: a pattern's bytes but the last, or one changed.
            b"\\n",
            b"\\",
            b"ey",
            b"eyj",
            b"EYJ",
            &[0xE2, 0x84],
            &[0xE2, 0x84, 0xAB],
            &[0xC5, 0xBE],
        ];
        planted.extend(runs.iter().map(Vec::as_slice));
        for len in [
            0usize, 1, 2, 3, 29, 30, 31, 32, 33, 34, 35, 61, 62, 63, 64, 65, 66, 67, 100, 126, 127,
            130, 131, 200,
        ] {
            let filler = vec![b' '; len];
            for f in every_pass(&filler) {
                assert_eq!(f, Facts::default(), "{len}");
            }
            for &p in &planted {
                for place in 0..=len {
                    let mut text = filler.clone();
                    text.splice(place..place, p.iter().copied());
                    let want = by_hand(&text);
                    for f in every_pass(&text) {
                        assert_eq!(f, want, "{p:?} at {place} of {len}");
                    }
                }
            }
        }
        // Each pattern gives its own fact and no other.
        let only = |text: &[u8], fact: fn(&mut Facts) -> &mut bool| {
            let mut want = Facts::default();
            *fact(&mut want) = true;
            assert_eq!(by_hand(text), want, "{text:?}");
        };
        only(b" \\u ", |f| &mut f.escape);
        only(b" % ", |f| &mut f.percent);
        only(b" eyJ ", |f| &mut f.eyj);
        only("\u{212A}".as_bytes(), |f| &mut f.folds);
        only(&runs[1], |f| &mut f.b64_run);
        assert_eq!(by_hand(&runs[0]), Facts::default());
        assert_eq!(by_hand(b" eyj "), Facts::default());
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

        /// Base64's alphabet with a break now and then: runs of every
        /// length, across blocks, read as the definition reads them.
        #[test]
        fn base64_runs_are_the_definition(
            text in proptest::collection::vec(
                proptest::prop_oneof![
                    40 => proptest::sample::select(b"aZ09+/-_".to_vec()),
                    1 => proptest::sample::select(vec![b' ', b'"', b'=', b'.', 0x80, 0xFF]),
                ],
                0..400,
            )
        ) {
            let want = by_hand(&text);
            for f in every_pass(&text) {
                proptest::prop_assert_eq!(f, want);
            }
        }
    }
}
