//! JSON string escapes: the one reader of an escape (`\u` pairs included)
//! that every JSON reader here shares, and the unescapers built on it:
//! the block walk of reply lines (Note [Escape masks]), the lazy bodies of
//! the tape (Note [Lazy escapes] in `tape`), the lossy reading of refused
//! text. The repair parser reads its escapes with [`escape`] too, and its
//! lenient policy on top (Note [Lenient escapes] in `extract::repair::lex`).

use super::scan::{BLOCK, CHUNK, stop_mask64};

/// One escape sequence read after its backslash.
pub enum Escape {
    /// The character and the bytes it used after the backslash.
    Char(char, usize),
    /// A `\u` escape of a surrogate that is not part of a valid pair.
    Surrogate,
    /// Not a JSON escape.
    Bad,
}

/// The escape at the start of `rest` (just after a `\\`), as `serde_json`
/// reads it into a `String`: the one reader of an escape.
#[inline]
pub fn escape(rest: &[u8]) -> Escape {
    let c = match rest.first() {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => {
            let Some(hi) = hex4(rest.get(1..5)) else {
                return Escape::Bad;
            };
            if !(0xD800..0xE000).contains(&hi) {
                return char::from_u32(hi).map_or(Escape::Bad, |c| Escape::Char(c, 5));
            }
            if hi >= 0xDC00 || rest.get(5..7) != Some(&b"\\u"[..]) {
                return Escape::Surrogate;
            }
            return match hex4(rest.get(7..11)) {
                Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                        .map_or(Escape::Bad, |c| Escape::Char(c, 11))
                }
                _ => Escape::Surrogate,
            };
        }
        _ => return Escape::Bad,
    };
    Escape::Char(c, 1)
}

/// A JSON string literal (its quotes included) as `serde_json` reads it
/// into a `String`, except that a lone surrogate escape, which `serde_json`
/// refuses, becomes U+FFFD and is counted in `replaced` (Note [Replaced
/// text] in `extract`). `None` when it is not a string literal. Only for
/// text `serde_json` refused: valid text never comes here.
pub fn unescape_lossy(literal: &str, replaced: &mut u64) -> Option<String> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?.as_bytes();
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while let Some(&c) = inner.get(i) {
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let (ch, used) = match escape(inner.get(i + 1..)?) {
            Escape::Char(ch, used) => (ch, used),
            // `\uXXXX`: the surrogate's escape alone.
            Escape::Surrogate => {
                *replaced += 1;
                ('\u{fffd}', 5)
            }
            Escape::Bad => return None,
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        i += 1 + used;
    }
    String::from_utf8(out).ok()
}

fn hex4(b: Option<&[u8]>) -> Option<u32> {
    let b = b?;
    let mut n = 0u32;
    for &c in b {
        n = n * 16 + char::from(c).to_digit(16)?;
    }
    Some(n)
}

/// The string at `i` of `b` (a `"`) unescaped into the start of `out`:
/// its length there and the index after the string; `None` unless it is a
/// string [`scan_value`] reads as [`Scan::Value`]. The bytes are not
/// checked as UTF-8 here: the caller checks them once, at the end, and
/// they are UTF-8 exactly when the string's raw bytes are (Note [UTF-8
/// checked once]). `out` is longer than what was written (it only grows,
/// Note [Reused text buffers]).
///
/// Pushing each run and each escaped character into a `String` cost a
/// `memcpy` call per run, and a reply's text escapes every quote and line
/// break of the JSON it holds. The string is read 64 bytes at a time (Note
/// [Escape masks]), the line's last bytes from a padded copy.
///
/// Note [Escape masks]: a corpus reply's `text` (~1,250 raw bytes) holds an
/// escape every ~11 bytes, and where the next run ends depended on where
/// the last escape ended: each run was one test of eight bytes, then a
/// second, then `memchr3`, one after the other, ~110 instructions and a
/// dependent chain of loads and tests per escape. Here the stops (quote,
/// backslash, control character) of 64 bytes are found first, without a
/// branch, eight bytes at a time as exact bit masks ([`stop_mask64`]), and
/// the escapes are then walked from bit to bit: a run is copied 16 bytes
/// at a time into a buffer sized once (writes by index, no capacity check
/// per run), the next stop is a `trailing_zeros` away. The walk indexes
/// its 80-byte block and its share of the output from 0, so the bounds
/// checks are against fixed lengths (indexing the whole line and buffer
/// instead: 435 against 347 million instructions for `reply_of_line`
/// alone over the corpus). Measured on the 20,000-reply bench
/// corpus (`extract --jsonl --json`, output byte-identical, `perf stat`,
/// 8 interleaved runs on a 2-core machine at load 6, with the
/// [`long_run_end`] and `scan_number` changes of the same commits):
/// 1.439 → 1.342 billion instructions (−6.7%); cycles median 884 → 882
/// million, best 741 → 694 million (−6%). Callgrind on the first 4,000
/// replies: `reply_of_line` with what it calls 88.2 → 76.9 million,
/// `unescape_string` 49.9 → 41.8 million (7.0 of them zeroing the buffer,
/// 4.0 the UTF-8 check). LLVM turns the eight words' tests into SSE2 code
/// (two words per register, the gathering multiply emulated with
/// `pmuludq`).
/// Tried and dropped: 16-byte runs tested by one vectorised compare
/// (`first_stop16`, kept for [`long_run_end`]) as the unescaper's loop: −15%
/// instructions but no fewer cycles, since each run's test still waited
/// for the one before it; a 16-byte vector form of the mask built from
/// byte compares: LLVM unrolled it into scalar code, 1.7× the instructions.
/// Since Note [Vector byte masks] (in `bytescan`) the masks are four SSE2
/// compares and `pmovmskb` per 16 bytes on `x86_64` (~55 instructions for
/// 64 bytes against ~120), the SWAR words kept for other targets and as
/// the tests' reference (`stop_mask64_agrees_with_the_swar_masks`).
/// Measured (callgrind, `extract --jsonl --json` on the 20,000-reply bench
/// corpus, output byte-identical, release with thin LTO): `unescape_into`
/// 154.7 → 110.3 million instructions (the whole run 1.030 → 0.931 billion
/// with the other uses of the masks, Note [Vector byte masks]). The walk
/// from escape to escape is left as it is: ~30 instructions per short
/// escape, with little left to take out without byte shuffles (SSSE3).
///
/// Note [Escape walk]: the corpus has ~2.1 million escapes in ~395,000
/// blocks. Each escape tested whether the mask was empty before reading
/// its stop, and the walk's loop shared its top with the padded copy of
/// the line's last bytes (a `memcpy` call), so every block reloaded five
/// values the call had made the compiler keep on the stack. Now the walk
/// of one block is [`walk_block`], inlined into two loops: whole blocks of
/// the line (no call), then the padded last bytes. An empty mask is not
/// tested: `trailing_zeros` is then [`BLOCK`], and byte [`BLOCK`] of the
/// 80-byte block is read as the stop (the bytes before it were plain, so
/// a quote there closes the string and a backslash there is an escape,
/// which ends within the 80 bytes). The masks also find the quote and the
/// control characters with one compare (Note [Quote or control in one
/// test] in `bytescan`). Measured (callgrind, `extract --jsonl --json` on
/// the 20,000-reply bench corpus, output byte-identical, release with thin
/// LTO): 0.886 → 0.874 billion instructions (−1.3%); `unescape_into`
/// 110.3 → 100.3 million, `scan_object` (whose strings use the new mask
/// too) 49.2 → 48.0 million. Tried and dropped: [`escape`] and
/// [`hex4`] inlined as well, so that no call is left in the walk:
/// `unescape_into` 100.3 → 100.9 million; the walk's output indexes taken
/// as remainders (`written % BLOCK`, equal to `written`) so that the
/// compiler could drop their bounds checks: 100.3 → 100.5 million.
pub(super) fn unescape_into(b: &[u8], i: usize, out: &mut Vec<u8>) -> Option<(usize, usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    // The unescaped text is never longer than the rest of the line, and a
    // block writes at most `BLOCK + CHUNK` bytes past what it keeps: the
    // buffer is grown (and zeroed) only when it is shorter than that
    // (Note [Reused text buffers]), then written by index.
    let room = b.len() - i + BLOCK + CHUNK;
    if out.len() < room {
        out.resize(room, 0);
    }
    let mut len = 0;
    let mut j = i + 1;
    // Whole blocks of the line, with no `memcpy` call in the loop (Note
    // [Escape walk]).
    while let Some(block) = b
        .get(j..j + BLOCK + CHUNK)
        .and_then(|s| <&[u8; BLOCK + CHUNK]>::try_from(s).ok())
    {
        let dst =
            <&mut [u8; BLOCK + CHUNK]>::try_from(out.get_mut(len..len + BLOCK + CHUNK)?).ok()?;
        let (closed, at, written) = walk_block(block, dst)?;
        len += written;
        j += at;
        if closed {
            return Some((len, j + 1));
        }
    }
    // The last bytes of the line, padded with NUL: a control character, so
    // the walk stops where the bytes end and the string is refused there,
    // unclosed (no escape can be read across the padding either).
    loop {
        let rest = b.get(j..)?;
        let mut padded = [0u8; BLOCK + CHUNK];
        padded.get_mut(..rest.len())?.copy_from_slice(rest);
        let dst =
            <&mut [u8; BLOCK + CHUNK]>::try_from(out.get_mut(len..len + BLOCK + CHUNK)?).ok()?;
        let (closed, at, written) = walk_block(&padded, dst)?;
        len += written;
        j += at;
        if closed {
            return Some((len, j + 1));
        }
    }
}

/// One block of [`unescape_into`]'s walk: the runs and escapes from the
/// start of `block` to its first stop at or past [`BLOCK`], or to the
/// closing quote, written from the start of `dst`. Returns whether the
/// quote closed the string, where the walk stopped in `block` (the
/// quote's index when closed), and the bytes written; `None` for a raw
/// control character (or the padding past the line) or a bad escape.
///
/// Bit `k` of the mask: byte `k` stops a run. Bits below `at` are cleared
/// as the walk passes them. With no stop left, the run reaches byte
/// [`BLOCK`], which is then read like any stop (it starts a token: the
/// bytes before it were plain): a quote closes the string, a backslash is
/// an escape (at most 12 bytes: it ends inside the block), a plain byte
/// starts the next block.
#[allow(clippy::inline_always)]
#[inline(always)]
fn walk_block(
    block: &[u8; BLOCK + CHUNK],
    dst: &mut [u8; BLOCK + CHUNK],
) -> Option<(bool, usize, usize)> {
    let mut mask = stop_mask64(block.first_chunk::<BLOCK>()?);
    let mut at = 0;
    let mut written = 0;
    loop {
        // `BLOCK` when no stop is left.
        let stop = mask.trailing_zeros() as usize;
        copy_run(dst, written, block, at, stop - at)?;
        written += stop - at;
        match *block.get(stop)? {
            b'\\' => {
                let short = SHORT_ESCAPES[usize::from(*block.get(stop + 1)?)];
                if short == 0 {
                    let Escape::Char(ch, used) = escape(block.get(stop + 1..)?) else {
                        return None;
                    };
                    written += ch.encode_utf8(dst.get_mut(written..written + 4)?).len();
                    at = stop + 1 + used;
                } else {
                    *dst.get_mut(written)? = short;
                    written += 1;
                    at = stop + 2;
                }
                if at >= BLOCK {
                    return Some((false, at, written));
                }
                mask &= u64::MAX << at;
            }
            b'"' => return Some((true, stop, written)),
            c if stop == BLOCK && c >= 0x20 => return Some((false, BLOCK, written)),
            // A raw control character, or the padding past the line.
            _ => return None,
        }
    }
}

/// [`unescape_into`] as a `String` of its own (the tests' entry).
#[cfg(test)]
fn unescape_string(b: &[u8], i: usize) -> Option<(String, usize)> {
    let mut out = Vec::new();
    let (len, end) = unescape_into(b, i, &mut out)?;
    out.truncate(len);
    Some((String::from_utf8(out).ok()?, end))
}

/// What each one-letter escape (the byte after the backslash) stands for;
/// 0 for `u` (read by [`escape`]) and for bytes that are no escape.
pub const SHORT_ESCAPES: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0c;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// Copy the `len` bytes (at most [`BLOCK`]) at `from` of `src` to `to` of `out`,
/// [`CHUNK`] bytes at a time (fixed-size copies, no `memcpy` call): up to
/// 15 bytes more are written, which the next writes overwrite. `None` when
/// either side is too short, which [`unescape_into`]'s sizes rule out.
#[allow(clippy::inline_always)]
#[inline(always)]
fn copy_run(out: &mut [u8], to: usize, src: &[u8], from: usize, len: usize) -> Option<()> {
    let mut done = 0;
    loop {
        out.get_mut(to + done..to + done + CHUNK)?
            .copy_from_slice(src.get(from + done..from + done + CHUNK)?);
        done += CHUNK;
        if done >= len {
            return Some(());
        }
    }
}

/// The text of a raw string body whose escapes the reader checked (Note
/// [Lazy escapes]).
pub fn unescape_all(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = memchr::memchr(b'\\', rest.as_bytes()) {
        out.push_str(rest.get(..at).unwrap_or_default());
        let after = rest.as_bytes().get(at + 1..).unwrap_or_default();
        // Checked by the reader; an escape it would refuse is kept as text
        // rather than lost.
        let used = if let Some((c, used)) = unescape(after) {
            out.push(c);
            used
        } else {
            out.push('\\');
            0
        };
        rest = rest.get(at + 1 + used..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// The character of the escape after a `\` (`rest` starts after it) and the
/// bytes it used; `None` for anything but the escapes `serde_json` reads
/// into a `String` the same way (a lone surrogate, a bad escape): [`escape`]
/// for the readers that decline both alike.
#[inline]
pub fn unescape(rest: &[u8]) -> Option<(char, usize)> {
    match escape(rest) {
        Escape::Char(c, used) => Some((c, used)),
        Escape::Surrogate | Escape::Bad => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::copy_plain;
    use crate::tests::{escapable_strategy, raw_body_strategy};

    /// `serde_json`'s reading of the string at `i` of `text`, and the
    /// index after it (the reference for `unescape_string`).
    fn reference_string(text: &str, i: usize) -> Option<(String, usize)> {
        if text.as_bytes().get(i) != Some(&b'"') {
            return None;
        }
        let mut values = serde_json::Deserializer::from_str(text.get(i..)?).into_iter::<String>();
        let s = values.next()?.ok()?;
        Some((s, i + values.byte_offset()))
    }

    proptest::proptest! {
        /// `unescape_string` gives `serde_json`'s answer on every string,
        /// escape-dense, whole or broken, at any offset.
        #[test]
        fn unescape_string_agrees_with_serde_json(
            s in escapable_strategy(),
            prefix in "[ a{:,]{0,70}",
            suffix in "[ ,}\\]\"a]{0,3}",
            u_escapes in proptest::prelude::any::<bool>(),
            cut in 0usize..2000,
            byte in proptest::prelude::any::<u8>(),
        ) {
            let mut encoded = serde_json::to_string(&s).unwrap();
            if u_escapes {
                // The same text with `\u` and `\/` escapes.
                encoded = std::iter::once("\"".to_owned())
                    .chain(s.chars().map(|c| match c {
                        '\n' => "\\u000a".to_owned(),
                        '/' => "\\/".to_owned(),
                        'é' => "\\u00e9".to_owned(),
                        '😀' => "\\ud83d\\ude00".to_owned(),
                        c => {
                            let e = serde_json::to_string(&c.to_string()).unwrap();
                            e[1..e.len() - 1].to_owned()
                        }
                    }))
                    .chain(std::iter::once("\"".to_owned()))
                    .collect();
            }
            let text = format!("{prefix}{encoded}{suffix}");
            let at = prefix.len();
            proptest::prop_assert_eq!(unescape_string(text.as_bytes(), at), Some((s.clone(), at + encoded.len())));
            // Broken: one byte inserted, or the text cut short.
            let mut mangled = text.clone().into_bytes();
            mangled.insert(cut.min(mangled.len()), byte);
            let cut_short = text.get(..cut.min(text.len())).unwrap_or_default().to_owned();
            for broken in [String::from_utf8(mangled).unwrap_or_default(), cut_short] {
                proptest::prop_assert_eq!(unescape_string(broken.as_bytes(), at), reference_string(&broken, at), "{:?}", broken);
            }
        }
    }

    /// Note [Escape walk]: a quote, an escape or a control character at
    /// every offset around the blocks' edges (a block's last stop, byte
    /// [`BLOCK`] read as the stop after it, an escape running past it),
    /// in lines that end right after the string or go on, read as the
    /// scalar unescaper and `serde_json` read them.
    #[test]
    fn escape_walk_agrees_at_block_edges() {
        let events: [&[u8]; 8] = [
            b"\"",
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\u00e9",
            b"\\ud83d\\ude00",
            b"\x01",
            b"\\x",
        ];
        for lead in 0..3 {
            for p in 0..160 {
                for event in events {
                    for tail in [&b""[..], b"bc\"", b"\\n\"", b"d\" , \"x\": 1}"] {
                        for after in [&b""[..], &[b' '; 90][..]] {
                            let mut line = vec![b' '; lead];
                            line.push(b'"');
                            line.extend(std::iter::repeat_n(b'a', p));
                            line.extend_from_slice(event);
                            line.extend_from_slice(tail);
                            line.extend_from_slice(after);
                            let got = unescape_string(&line, lead);
                            assert_eq!(got, unescape_string_scalar(&line, lead), "{line:?}");
                            let text = String::from_utf8(line).unwrap_or_default();
                            assert_eq!(got, reference_string(&text, lead), "{text:?}");
                        }
                    }
                }
            }
        }
    }

    /// The unescaper before Note [Escape masks]: runs by [`copy_plain`],
    /// one escape at a time (the reference for the block walk).
    fn unescape_string_scalar(b: &[u8], i: usize) -> Option<(String, usize)> {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let mut out: Vec<u8> = Vec::new();
        let mut j = i + 1;
        loop {
            j = copy_plain(&mut out, b, j, b'"', b'"');
            match b.get(j)? {
                b'"' => return Some((String::from_utf8(out).ok()?, j + 1)),
                b'\\' => {
                    let Escape::Char(c, used) = escape(b.get(j + 1..)?) else {
                        return None;
                    };
                    let mut utf8 = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                    j += 1 + used;
                }
                _ => return None,
            }
        }
    }

    proptest::proptest! {
        /// Note [Escape masks]: the block walk reads every string as the
        /// scalar unescaper did, at every alignment, whole, cut anywhere,
        /// or followed by more of a line.
        #[test]
        fn unescape_string_agrees_with_the_scalar_reader(
            body in raw_body_strategy(),
            prefix in 0usize..70,
            after in "[ ,}\\]a\"]{0,100}",
            cut in 0usize..4000,
        ) {
            let mut line = vec![b' '; prefix];
            line.push(b'"');
            line.extend_from_slice(&body);
            line.push(b'"');
            line.extend_from_slice(after.as_bytes());
            let cut = cut % (line.len() + 1);
            for text in [&line[..], &line[..cut], &line[..prefix + 1 + body.len()]] {
                proptest::prop_assert_eq!(
                    unescape_string(text, prefix),
                    unescape_string_scalar(text, prefix),
                    "{:?}",
                    String::from_utf8_lossy(text)
                );
            }
        }
    }
}
