//! The byte-stop loops: where a string's plain run ends (a quote, a
//! backslash, a control character), many bytes at a time (Note [String
//! scans], Note [Short runs], Note [Escape masks]).

/// The bytes [`unescape_into`](super::unescape::unescape_into) finds the
/// stops of at once.
pub(super) const BLOCK: usize = 64;

/// The bytes a run copy or a vector test handles at once.
pub(super) const CHUNK: usize = 16;

/// Bit `k` set when byte `k` of `block` (its first [`BLOCK`] bytes) is a
/// quote, a backslash or a control character (Note [Escape masks]).
///
/// On `x86_64` four SSE2 masks (Note [Vector byte masks] in `bytescan`),
/// elsewhere [`stop_mask64_swar`].
#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn stop_mask64(block: &[u8; BLOCK]) -> u64 {
    #[cfg(vector_bytes)]
    {
        crate::bytescan::string_stops64(block)
    }
    #[cfg(not(vector_bytes))]
    {
        stop_mask64_swar(block)
    }
}

/// [`stop_mask64`] eight bytes at a time in `u64` words ([`stop_mask8`]):
/// the form of other targets, and the tests' reference for the vector one.
#[cfg(any(test, not(vector_bytes)))]
#[allow(clippy::inline_always)]
#[inline(always)]
fn stop_mask64_swar(block: &[u8; BLOCK]) -> u64 {
    let mut mask = 0u64;
    for k in 0..BLOCK / 8 {
        let mut w = [0u8; 8];
        if let Some(word) = block.get(k * 8..k * 8 + 8) {
            w.copy_from_slice(word);
        }
        mask |= stop_mask8(u64::from_le_bytes(w)) << (8 * k);
    }
    mask
}

/// Bit `k` (of the low eight) set when byte `k` of `w` (little-endian) is a
/// quote, a backslash or a control character. Exact for every byte, unlike
/// `stop_bytes`: each test adds within a byte's low seven bits, so no
/// carry crosses into the next byte.
#[cfg(any(test, not(vector_bytes)))]
#[allow(clippy::inline_always)]
#[inline(always)]
fn stop_mask8(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // High bit set where the byte is not `c`.
    let differs = |c: u8| {
        let x = w ^ (ONES * u64::from(c));
        ((x & LOW7) + LOW7) | x
    };
    // High bit set where the byte is at least 0x20.
    let printable = ((w & LOW7) + ONES * 0x60) | w;
    let stops = !(differs(b'"') & differs(b'\\') & printable) & HIGH;
    // Gather the eight high bits into the top byte: each lands on its own
    // bit, no two products overlap.
    (stops >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Append the plain run of `bytes` at `from` (up to the first `q1`, `q2`,
/// backslash or control character, [`plain_run_end`]) to `out`; returns
/// where it ended.
///
/// Note [Word copies]: most runs in reply text are a few bytes long (JSON
/// inside a JSON string escapes every quote and line break), and copying
/// each with `extend_from_slice` of a run length cost a `memcpy` call.
/// The first two words are tested and stored eight bytes at a time
/// whatever the run's length, then the length is cut back to the run: a
/// fixed-size store and a length update. Longer runs go to
/// `long_run_end` and one copy. The same bytes as copying
/// `bytes[from..plain_run_end(..)]` (`copy_plain_agrees_with_plain_run_end`).
/// Measured (`extract --jsonl --json` on the 20,000-reply bench corpus,
/// output byte-identical, `perf stat -e instructions:u`): used by
/// `unescape_string`, [`write_str`](super::write_str) and the repair parser's strings,
/// 1.962 → 1.858 billion instructions (−5.3%). On `x86_64` the two words
/// are one 16-byte SSE2 mask and one 16-byte store (Note [Vector byte
/// masks] in `bytescan`).
// Inlined on purpose: Note [Short runs].
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn copy_plain(out: &mut Vec<u8>, bytes: &[u8], from: usize, q1: u8, q2: u8) -> usize {
    let mut at = from;
    #[cfg(vector_bytes)]
    if let Some(chunk) = bytes.get(at..at + CHUNK) {
        let Ok(chunk) = <&[u8; CHUNK]>::try_from(chunk) else {
            return at;
        };
        let stops = crate::bytescan::string_stops(chunk, q1, q2);
        let len = out.len();
        out.extend_from_slice(chunk);
        if stops != 0 {
            let k = stops.trailing_zeros() as usize;
            out.truncate(len + k);
            return at + k;
        }
        at += CHUNK;
        let end = long_run_end(bytes, at, q1, q2);
        out.extend_from_slice(bytes.get(at..end).unwrap_or_default());
        return end;
    }
    for _ in 0..2 {
        let Some(word) = bytes.get(at..at + 8) else {
            return copy_short_tail(out, bytes, at, q1, q2);
        };
        let mut word8 = [0u8; 8];
        word8.copy_from_slice(word);
        let stops = stop_bytes(u64::from_le_bytes(word8), q1, q2);
        let len = out.len();
        out.extend_from_slice(&word8);
        if stops != 0 {
            let k = (stops.trailing_zeros() / 8) as usize;
            out.truncate(len + k);
            return at + k;
        }
        at += 8;
    }
    let end = long_run_end(bytes, at, q1, q2);
    out.extend_from_slice(bytes.get(at..end).unwrap_or_default());
    end
}

/// [`copy_plain`] when fewer than eight bytes are left at `at`.
///
/// Note [Short tails]: [`write_str`](super::write_str) copies whole strings, so every string
/// ends in a tail shorter than a word, and most strings written are keys
/// and values under eight bytes (`"id"`, `"done"`, method and repair
/// names: two thirds of the strings in `extract --jsonl`'s output). Such a
/// tail went to `long_run_end` and a `memchr3` call, about 100
/// instructions for a few bytes. Here the tail is read into one word,
/// padded with NUL (a control character, so a stop where the bytes end),
/// and tested and stored like a whole word. Measured (`extract --jsonl
/// --json` on the 20,000-reply bench corpus, output byte-identical,
/// `perf stat -e instructions:u`): 1.767 → 1.683 billion instructions
/// (−4.8%); callgrind on the first 4,000 replies: `write_str` with what it
/// calls 46.5 → 28.9 million.
// Inlined on purpose: Note [Short runs].
#[allow(clippy::inline_always)]
#[inline(always)]
fn copy_short_tail(out: &mut Vec<u8>, bytes: &[u8], at: usize, q1: u8, q2: u8) -> usize {
    let rest = bytes.get(at..).unwrap_or_default();
    // Built byte by byte (at most seven): a copy of a variable length
    // would be a `memcpy` call.
    let w = rest
        .iter()
        .rev()
        .fold(0u64, |w, &c| (w << 8) | u64::from(c));
    let k = (stop_bytes(w, q1, q2).trailing_zeros() / 8) as usize;
    let len = out.len();
    out.extend_from_slice(&w.to_le_bytes());
    out.truncate(len + k.min(rest.len()));
    at + k.min(rest.len())
}

/// The index of the first byte at or after `from` for which `stop` holds,
/// or `b.len()`.
///
/// Note [Byte scans]: string bodies are scanned 16 bytes at a time: the
/// test of each byte of a chunk goes into one bit mask (no branch per byte,
/// which the compiler can turn into vector compares), and the first set bit
/// is the answer. Only the last, partial chunk of the input is walked byte
/// by byte. The same answer as `position` (`first_stop_agrees_with_position`).
#[inline]
pub fn first_stop(b: &[u8], from: usize, stop: impl Fn(u8) -> bool) -> usize {
    const CHUNK: usize = 16;
    let mut i = from;
    while let Some(chunk) = b.get(i..i + CHUNK) {
        let Ok(chunk) = <&[u8; CHUNK]>::try_from(chunk) else {
            break;
        };
        let mut mask = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            mask |= u32::from(stop(c)) << k;
        }
        if mask != 0 {
            return i + mask.trailing_zeros() as usize;
        }
        i += CHUNK;
    }
    b.get(i..)
        .and_then(|rest| rest.iter().position(|&c| stop(c)))
        .map_or(b.len(), |p| p + i)
}

/// The index of the first byte at or after `from` that is `a`, `b`, a
/// backslash or a control character, or `b.len()`: where a string's plain
/// run ends.
///
/// Note [String scans]: the bytes are tested many at a time (a word, then
/// 16 bytes per vector compare in `long_run_end`, quote, backslash and
/// control characters in one test); a per-byte loop here was the largest
/// cost of reading and writing JSON text. (`memchr3` for the quote or
/// backslash and a minimum over the run for control characters came
/// before.) The same answer as `position` (`plain_run_end_agrees_with_position`).
///
/// Note [Short runs]: in the replies agents write, JSON inside a JSON string
/// escapes every quote and line break, so most runs are a few bytes long,
/// and a `memchr3` call per run cost more than the run. The first eight
/// bytes are tested at once in a `u64` (`stop_bytes`) before
/// `long_run_end` takes over for a longer run. (A 16-step loop of byte
/// compares into a bit mask, tried first here, did not vectorise inlined
/// into the callers: it doubled the instructions of `extract --jsonl`; in
/// the non-inlined `long_run_end` it does.) On `x86_64` the first test
/// covers 16 bytes with one SSE2 mask instead (Note [Vector byte masks] in
/// `bytescan`): most runs of agent JSON end within them, so fewer reach
/// `long_run_end` and its call.
// Inlined on purpose: Note [Short runs].
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn plain_run_end(bytes: &[u8], from: usize, a: u8, b: u8) -> usize {
    // Inlined at every caller: most runs end in the first word, and the
    // call (seven registers saved and restored) cost as much as the test.
    #[cfg(vector_bytes)]
    if let Some(chunk) = bytes.get(from..from + CHUNK) {
        let Ok(chunk) = <&[u8; CHUNK]>::try_from(chunk) else {
            return long_run_end(bytes, from, a, b);
        };
        let stops = crate::bytescan::string_stops(chunk, a, b);
        if stops != 0 {
            return from + stops.trailing_zeros() as usize;
        }
        return long_run_end(bytes, from + CHUNK, a, b);
    }
    if let Some(word) = bytes.get(from..from + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let stops = stop_bytes(u64::from_le_bytes(w), a, b);
        if stops != 0 {
            return from + (stops.trailing_zeros() / 8) as usize;
        }
        return long_run_end(bytes, from + 8, a, b);
    }
    long_run_end(bytes, from, a, b)
}

/// [`plain_run_end`] past its first word: 16 bytes at a time.
///
/// Testing up to eight words here before `memchr3` (for the 10 to 60 byte
/// runs of agent JSON) was tried and measured: +5 million instructions
/// over 4,000 corpus replies (callgrind: `long_run_end` +10.2 M, `memchr3`
/// −5.1 M), so `memchr3` took over after the second word. Now one
/// vectorised test per 16 bytes ([`first_stop16`]) replaces both the second
/// word and `memchr3` (its call and set-up cost more than the 10 to 60
/// bytes it scanned), and the control-character check folds into the same
/// test. Measured (`reply_of_line` alone over the bench corpus, `perf
/// stat`, 5 passes): −3% instructions, cycles within noise; in the whole
/// `extract --jsonl --json` (where `write_str` and the repair parser use it
/// too) in Note [Escape masks]; callgrind on the first 4,000 replies:
/// `long_run_end` with what it calls 26.6 → 15.0 million.
#[inline(never)]
fn long_run_end(bytes: &[u8], from: usize, a: u8, b: u8) -> usize {
    let mut j = from;
    while let Some(chunk) = bytes.get(j..j + CHUNK) {
        let Ok(chunk) = <&[u8; CHUNK]>::try_from(chunk) else {
            break;
        };
        let k = first_stop16(chunk, a, b);
        j += k;
        if k < CHUNK {
            return j;
        }
    }
    // Fewer than 16 bytes left: padded with NUL, a stop where they end.
    let rest = bytes.get(j..).unwrap_or_default();
    let mut chunk = [0u8; CHUNK];
    for (d, &c) in chunk.iter_mut().zip(rest) {
        *d = c;
    }
    j + first_stop16(&chunk, a, b).min(rest.len())
}

/// The index in `chunk` of its first byte that is `a`, `b`, a backslash or
/// a control character, or 16.
///
/// On `x86_64` one SSE2 mask (Note [Vector byte masks] in `bytescan`).
/// Elsewhere one test per byte into a byte mask with no branch, which
/// LLVM turns into vector compares (`pcmpeqb`, `pminub`, `por`) and one
/// `trailing_zeros` over the mask as a `u128`; it does so when the chunk
/// is a whole array from the input, as in `long_run_end` (checked in the
/// release build's assembly), not in every caller's context.
#[allow(clippy::inline_always)]
#[inline(always)]
fn first_stop16(chunk: &[u8; CHUNK], a: u8, b: u8) -> usize {
    // A bit past the chunk's: 16 when no byte stops.
    #[cfg(vector_bytes)]
    {
        (crate::bytescan::string_stops(chunk, a, b) | 1 << CHUNK).trailing_zeros() as usize
    }
    #[cfg(not(vector_bytes))]
    {
        first_stop16_bytes(chunk, a, b)
    }
}

/// [`first_stop16`] as a byte loop into a byte mask: the form of other
/// targets, where LLVM vectorises it.
#[cfg(not(vector_bytes))]
#[allow(clippy::inline_always)]
#[inline(always)]
fn first_stop16_bytes(chunk: &[u8; CHUNK], a: u8, b: u8) -> usize {
    let mut stops = [0u8; CHUNK];
    // `|`, not `||`: no branch per byte, so the loop vectorises.
    #[allow(clippy::needless_bitwise_bool)]
    for (s, &c) in stops.iter_mut().zip(chunk) {
        *s = u8::from((c == a) | (c == b) | (c == b'\\') | (c < 0x20)).wrapping_neg();
    }
    (u128::from_le_bytes(stops).trailing_zeros() / 8) as usize
}

/// The high bit of each byte of `w` (little-endian) that is `a`, `b`, a
/// backslash or a control character; a bit above the lowest may be false
/// (borrows run upwards), so only the lowest set bit is meaningful.
// Inlined on purpose: Note [Short runs].
#[allow(clippy::inline_always)]
#[inline(always)]
fn stop_bytes(w: u64, a: u8, b: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    zero(w ^ (ONES * u64::from(a)))
        | zero(w ^ (ONES * u64::from(b)))
        | zero(w ^ (ONES * u64::from(b'\\')))
        | (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
}

/// A byte JSON strings carry as is: not a quote, a backslash or a control
/// character (the tests' reference for the scans).
#[cfg(test)]
pub fn plain_string_byte(c: u8) -> bool {
    c >= 0x20 && c != b'"' && c != b'\\'
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words of bytes at the edges of the stop tests (quote, backslash,
    /// 0x00, 0x1f/0x20, 0x7f/0x80, lead and continuation bytes), or any.
    fn word_strategy() -> impl proptest::strategy::Strategy<Value = [u8; 8]> {
        use proptest::prelude::*;
        let edge =
            prop::sample::select(&[b'"', b'\\', 0, 0x1f, 0x20, 0x7f, 0x80, 0xa2, 0xdc, 0xff][..]);
        prop_oneof![
            any::<[u8; 8]>(),
            prop::array::uniform8(prop_oneof![edge, any::<u8>()]),
        ]
    }

    /// Bytes a string carries as they are, mostly ASCII.
    fn plain_byte_strategy() -> impl proptest::strategy::Strategy<Value = u8> {
        use proptest::prelude::*;
        prop_oneof![9 => 0x20u8..0x7f, 1 => 0x80u8..=0xff]
    }

    proptest::proptest! {

        /// `stop_mask8` marks exactly the quotes, backslashes and control
        /// characters of a word, whatever the other bytes are.
        #[test]
        fn stop_mask8_is_exact(
            word in word_strategy(),
        ) {
            let want = word.iter().enumerate().fold(0u64, |m, (k, &c)| {
                m | (u64::from(!plain_string_byte(c)) << k)
            });
            proptest::prop_assert_eq!(stop_mask8(u64::from_le_bytes(word)), want);
        }

        /// Note [Vector byte masks]: the SSE2 `stop_mask64` marks the same
        /// bytes as the SWAR one it replaced on `x86_64`.
        #[test]
        fn stop_mask64_agrees_with_the_swar_masks(
            words in proptest::array::uniform8(word_strategy()),
        ) {
            let block: [u8; BLOCK] = words.concat().try_into().unwrap_or([0; BLOCK]);
            proptest::prop_assert_eq!(stop_mask64(&block), stop_mask64_swar(&block));
        }

        /// `long_run_end`'s 16-byte tests on long runs: the same answer as
        /// `position` wherever the stop or the end falls.
        #[test]
        fn long_runs_end_where_position_says(
            run in proptest::collection::vec(plain_byte_strategy(), 0..120),
            stop in proptest::option::of(proptest::prelude::any::<u8>()),
            tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20),
            from in 0usize..140,
        ) {
            let mut b = run;
            b.extend(stop);
            b.extend(tail);
            for (x, y) in [(b'"', b'"'), (b'\'', 0xC2)] {
                let want = b.get(from..).and_then(|r| r.iter().position(|&c| c == x || c == y || c == b'\\' || c < 0x20))
                    .map_or(b.len().max(from), |p| p + from);
                proptest::prop_assert_eq!(plain_run_end(&b, from, x, y), want);
                proptest::prop_assert_eq!(long_run_end(&b, from, x, y), want);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn copy_plain_agrees_with_plain_run_end(
            b in proptest::collection::vec(proptest::prelude::prop_oneof![
                proptest::prelude::Just(b'"'), proptest::prelude::Just(b'\\'), proptest::prelude::Just(b'\n'),
                proptest::prelude::Just(b'\''), 0x20u8..0x7f, proptest::prelude::any::<u8>()], 0..100),
            from in 0usize..120,
            prefix in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..10),
        ) {
            for (x, y) in [(b'"', b'"'), (b'\'', 0xC2)] {
                let end = plain_run_end(&b, from, x, y);
                let mut want = prefix.clone();
                want.extend_from_slice(b.get(from..end).unwrap_or_default());
                let mut got = prefix.clone();
                proptest::prop_assert_eq!(copy_plain(&mut got, &b, from, x, y), end);
                proptest::prop_assert_eq!(got, want);
            }
        }

        #[test]
        fn first_stop_agrees_with_position(
            b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100),
            from in 0usize..120,
        ) {
            let want = b.get(from..).and_then(|r| r.iter().position(|&c| !plain_string_byte(c)))
                .map_or(b.len(), |p| p + from);
            proptest::prop_assert_eq!(first_stop(&b, from, |c| !plain_string_byte(c)), want);
        }

        #[test]
        fn plain_run_end_agrees_with_position(
            b in proptest::collection::vec(proptest::prelude::prop_oneof![
                proptest::prelude::Just(b'"'), proptest::prelude::Just(b'\\'), proptest::prelude::Just(b'\n'),
                proptest::prelude::Just(b'\''), 0x20u8..0x7f, proptest::prelude::any::<u8>()], 0..100),
            from in 0usize..120,
        ) {
            for (x, y) in [(b'"', b'"'), (b'\'', 0xC2)] {
                let want = b.get(from..).and_then(|r| r.iter().position(|&c| c == x || c == y || c == b'\\' || c < 0x20))
                    .map_or(b.len().max(from), |p| p + from);
                proptest::prop_assert_eq!(plain_run_end(&b, from, x, y), want);
            }
        }
    }
}
