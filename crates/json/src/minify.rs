//! Strict JSON checked and written compact in one pass, for
//! core's `extract::extract_text_compact` without a schema.
//!
//! Note [One-pass compact]: without a schema, a strict candidate that wins
//! is only written out, yet it was read onto the tape first (a slot per
//! node, an item per element, a member per key, two stacks, a cut per
//! whitespace run: Note [Copied runs] in `json::tape`), then written by
//! copying its text between the cuts, and the tape dropped. Nothing of the
//! tape is read but its top level (Note [Weak candidates]). Here the same
//! grammar walk (the tape reader's, check for check) copies the text as it
//! goes: at each whitespace run the text since the last one is copied
//! (a fixed 16-byte copy into a buffer sized once, written by index, for
//! the short runs of pretty-printed JSON) and the run skipped, and the
//! tokens `serde_json` writes otherwise (numbers that are not short
//! integers, strings with a `\u` or `\/` escape) are written in their
//! place, exactly as the tape's writer writes them. The walk declines
//! where the tape declines and says why (Note [Declined, not refused]):
//! repeated keys are still found (the keys of the open objects are kept on
//! one stack), as are wide objects, deep nesting, inexact numbers and the
//! escapes the tape leaves to `serde_json`; on any decline the output goes
//! back to its length before the candidate. The top level the weak and
//! prose rules read ([`Top`]) is gathered on the way; a weak bare
//! candidate (rare) is read again into a `Value`. The tape stays for the
//! schema and validate paths. `one_pass_agrees_with_the_tape` holds the
//! output, the verdict and the top level to the tape's and to
//! `serde_json`'s, on JSON-shaped, spaced, mangled and cut text.
//! The buffer written into is the scratch's, kept per thread and only
//! grown (zeroing the output's room per candidate, tried first, cost a
//! `memset` of the whole text even for a candidate refused at its first
//! bytes: 4 million instructions over the repaired replies), and copied
//! to the output once the candidate is read; keys are spans of the text
//! (the unescaped text of the rare escaped key in an arena), not `Cow`s.
//! Measured (`extract --jsonl --json`, callgrind, output byte-identical,
//! thin-LTO release build): the 20,000-reply bench corpus 1.028 → 0.962
//! billion instructions (−6.4%); its 4,500 fenced replies 246.8 → 210.6
//! million; its 10,994 repaired ones (every strict reading refused: the
//! walk up to the refusal costs less than the tape's) 640.4 → 633.2
//! million. With Note [Indentation words], the corpus 0.949 billion
//! (−7.7% in all), fenced 203.2, repaired 632.0, bare (3,006 replies)
//! 160.1 → 132.0 million. The walk is now about 10 instructions per byte
//! of pretty-printed candidate, against about 20 for the tape and its
//! writing; most of what is left is the string scans and one call and
//! one copy per whitespace run.
use std::cell::RefCell;

use serde_json::Number;

use super::Top;
use crate::number::{NumberLiteral, number_literal};
use crate::tape::{Declined, MAX_DEPTH, MAX_SCANNED_KEYS, closes_as_it_opens, write_raw_escaped};
use crate::unescape::{unescape, unescape_all};
use crate::ws::{is_ws, ws_end};
use crate::{is_exact, plain_run_end};

/// What the one-pass writer keeps from candidate to candidate (and, per
/// thread, from reply to reply): the buffer it writes into, the keys of
/// the open objects, the text of escaped keys, a buffer for rewritten
/// tokens.
#[derive(Debug, Default)]
pub struct MinifyScratch {
    /// Written by index; it only grows (its bytes past what a candidate
    /// writes are left from earlier ones), so it is zeroed only when it
    /// grows.
    buf: Vec<u8>,
    keys: Vec<Key>,
    /// The unescaped text of the keys with escapes.
    arena: String,
    token: Vec<u8>,
}

/// An object key: its raw body in the text, or (with [`IN_ARENA`] set in
/// `at`) its unescaped text in [`MinifyScratch::arena`].
#[derive(Debug, Clone, Copy)]
struct Key {
    at: usize,
    len: usize,
}

/// [`Key::at`] is an offset in the arena.
const IN_ARENA: usize = 1 << (usize::BITS - 1);

/// Room kept in the buffer past what is written: the overrun of a fixed
/// 16-byte copy.
const SLACK: usize = 16;

/// Buffer bytes past which a scratch lets its buffer go rather than keep
/// it for the next reply.
const KEEP_BYTES: usize = 1 << 20;

thread_local! {
    /// One [`MinifyScratch`] per thread, kept from reply to reply.
    static SCRATCH: RefCell<MinifyScratch> = RefCell::new(MinifyScratch::default());
}

/// This thread's [`MinifyScratch`] (an empty one when it is already
/// out); give it back with [`put_scratch`].
pub fn take_scratch() -> MinifyScratch {
    SCRATCH.with(|cell| {
        cell.try_borrow_mut()
            .map(|mut held| std::mem::take(&mut *held))
            .unwrap_or_default()
    })
}

/// Give back a scratch from [`take_scratch`].
pub fn put_scratch(mut scratch: MinifyScratch) {
    if scratch.buf.len() > KEEP_BYTES {
        scratch.buf = Vec::new();
    }
    SCRATCH.with(|cell| {
        if let Ok(mut held) = cell.try_borrow_mut() {
            *held = scratch;
        }
    });
}

/// A string holds an escape (a key is then unescaped to be compared).
const ESCAPED: u8 = 1;
/// A string holds an escape its compact form writes otherwise (`\u`,
/// `\/`): it is written from its raw body, not copied.
const REWRITTEN: u8 = 2;

/// Check the strict JSON `text` and append its compact form to `out` (the
/// bytes [`crate::write_compact`] writes for the value `serde_json`
/// reads); its top level, or why not (Note [Declined, not refused]), `out`
/// then as it was. Note [One-pass compact].
///
/// # Errors
///
/// [`Declined`] when the text is not strict JSON this walk writes.
pub fn write_strict(
    text: &str,
    out: &mut Vec<u8>,
    scratch: &mut MinifyScratch,
) -> Result<Top, Declined> {
    let b = text.as_bytes();
    let start = ws_end(b, 0);
    // Note [Cut text refused at once] in `json::tape`: before any room
    // is made.
    if !closes_as_it_opens(b.get(start..).unwrap_or_default()) {
        return Err(Declined::Invalid);
    }
    // The compact form is never longer than the text but for rewritten
    // numbers, which make their own room.
    if scratch.buf.len() < b.len() + SLACK {
        scratch.buf.resize(b.len() + SLACK, 0);
    }
    scratch.keys.clear();
    scratch.arena.clear();
    let mut m = Minifier {
        b,
        text,
        pos: start,
        seg: start,
        out: std::mem::take(&mut scratch.buf),
        at: 0,
        keys: std::mem::take(&mut scratch.keys),
        arena: std::mem::take(&mut scratch.arena),
        token: std::mem::take(&mut scratch.token),
        doubt: false,
        nested: false,
    };
    let read = m.document();
    scratch.buf = m.out;
    scratch.keys = m.keys;
    scratch.arena = m.arena;
    scratch.token = m.token;
    if read.is_none() {
        return Err(if m.doubt {
            Declined::Doubtful
        } else {
            Declined::Invalid
        });
    }
    let written = scratch.buf.get(..m.at).unwrap_or_default();
    out.extend_from_slice(written);
    Ok(match b.get(start) {
        Some(b'{') => Top::Object {
            empty: written == b"{}",
        },
        Some(b'[') => Top::Array {
            empty: written == b"[]",
            scalars: !m.nested,
        },
        _ => Top::Scalar,
    })
}

/// The end of the whitespace run at `i` (`b[i]` is whitespace).
///
/// Note [Indentation words]: the runs of pretty-printed JSON are one
/// space, or a line break and an indentation of spaces. The spaces after
/// the first byte are counted in one word (the first byte that is not a
/// space is the lowest non-zero byte of the word XOR spaces), and only a
/// run that goes on past that (a tab, a second line break, more than
/// eight spaces) is left to `ws_end` in `json::ws`. With the one
/// space after a `:` skipped where it is met and the element reader
/// inlined, measured (`extract --jsonl --json`, callgrind, output
/// byte-identical): the bench corpus 962.5 → 949.0 million instructions,
/// its fenced replies 210.6 → 203.2 million.
#[inline]
fn ws_skip(b: &[u8], i: usize) -> usize {
    const SPACES: u64 = 0x2020_2020_2020_2020;
    let j = i + 1;
    let spaces = b.get(j..j + 8).map_or(0, |word| {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        // 8 when all eight are spaces.
        ((u64::from_le_bytes(w) ^ SPACES).trailing_zeros() / 8) as usize
    });
    let end = j + spaces;
    if is_ws(b.get(end)) {
        ws_end(b, end)
    } else {
        end
    }
}

struct Minifier<'t> {
    b: &'t [u8],
    /// The same text as `b`.
    text: &'t str,
    pos: usize,
    /// Where the text not yet copied starts.
    seg: usize,
    /// Written by index at `at`; always longer than what is left to copy
    /// (`b.len() - seg`) by [`SLACK`].
    out: Vec<u8>,
    at: usize,
    /// The keys of the open objects, outermost first.
    keys: Vec<Key>,
    arena: String,
    token: Vec<u8>,
    /// Declined on a point `serde_json` may read otherwise.
    doubt: bool,
    /// An element of the root array is an array or an object.
    nested: bool,
}

impl Minifier<'_> {
    /// Copy the text from `seg` to `to`.
    // Inlined on purpose: most runs are short, one fixed-size copy.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn copy_to(&mut self, to: usize) {
        let from = self.seg;
        let n = to.saturating_sub(from);
        self.seg = to;
        if n <= SLACK {
            if let (Some(src), Some(dst)) = (
                self.b.get(from..from + SLACK),
                self.out.get_mut(self.at..self.at + SLACK),
            ) {
                dst.copy_from_slice(src);
                self.at += n;
                return;
            }
        }
        self.copy_long(from, to);
    }

    /// [`Minifier::copy_to`] for a long run, or one near the end.
    #[inline(never)]
    fn copy_long(&mut self, from: usize, to: usize) {
        let src = self.b.get(from..to).unwrap_or_default();
        let n = src.len();
        if self.out.len() < self.at + n {
            self.out.resize(self.at + n + SLACK, 0);
        }
        if let Some(dst) = self.out.get_mut(self.at..self.at + n) {
            dst.copy_from_slice(src);
        }
        self.at += n;
    }

    /// Put the bytes of `token` where the text has `from..to`.
    #[cold]
    fn put_token(&mut self, from: usize, to: usize) {
        self.copy_to(from);
        let n = self.token.len();
        let need = self.at + n + self.b.len().saturating_sub(to) + SLACK;
        if self.out.len() < need {
            self.out.resize(need, 0);
        }
        if let Some(dst) = self.out.get_mut(self.at..self.at + n) {
            dst.copy_from_slice(&self.token);
        }
        self.at += n;
        self.seg = to;
    }

    /// Decline text `serde_json` may read (Note [Declined, not refused]).
    #[cold]
    fn doubtful<T>(&mut self) -> Option<T> {
        self.doubt = true;
        None
    }

    /// Skip whitespace (Note [Whitespace words] in `json::ws`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn ws(&mut self) {
        if is_ws(self.b.get(self.pos)) {
            self.ws_run();
        }
    }

    /// [`Minifier::ws`] past its first byte: the text before the run is
    /// copied, the run dropped.
    #[inline(never)]
    fn ws_run(&mut self) {
        let (b, i) = (self.b, self.pos);
        let end = ws_skip(b, i);
        self.copy_to(i);
        self.seg = end;
        self.pos = end;
    }

    /// The whole text (from its first token) as one value and nothing
    /// after it.
    fn document(&mut self) -> Option<()> {
        self.value(0)?;
        self.copy_to(self.pos);
        self.ws();
        (self.pos == self.b.len()).then_some(())
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        match *self.b.get(self.pos)? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string_value(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// [`Minifier::value`] for an element or member value, a string read
    /// without the call.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn element(&mut self, depth: usize) -> Option<()> {
        if self.b.get(self.pos) == Some(&b'"') {
            self.string_value()
        } else {
            self.value(depth)
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if !self.b.get(self.pos..)?.starts_with(word) {
            return None;
        }
        self.pos += word.len();
        Some(())
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return self.doubtful();
        }
        self.pos += 1;
        self.ws();
        if self.b.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.ws();
            if depth == 1 && matches!(self.b.get(self.pos), Some(b'[' | b'{')) {
                self.nested = true;
            }
            self.element(depth)?;
            self.ws();
            match self.b.get(self.pos)? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return self.doubtful();
        }
        self.pos += 1;
        let base = self.keys.len();
        self.ws();
        if self.b.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.ws();
            if self.b.get(self.pos) != Some(&b'"') {
                return None;
            }
            let key = self.key()?;
            self.keys.push(key);
            self.ws();
            if self.b.get(self.pos) != Some(&b':') {
                return None;
            }
            self.pos += 1;
            // The one space after a `:` of pretty-printed JSON: skipped
            // here, without the call.
            let b = self.b;
            if b.get(self.pos) == Some(&b' ') && !is_ws(b.get(self.pos + 1)) {
                self.copy_to(self.pos);
                self.pos += 1;
                self.seg = self.pos;
            } else {
                self.ws();
            }
            self.element(depth)?;
            // After the value, as the tape checks: a repeated key, or a
            // wide object, is left to `serde_json`.
            let (key, held) = self.keys.get(base..)?.split_last()?;
            if held.len() >= MAX_SCANNED_KEYS || held.iter().any(|k| self.same_key(*k, *key)) {
                return self.doubtful();
            }
            self.ws();
            match self.b.get(self.pos)? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    self.keys.truncate(base);
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The string at `pos` (a `"`), every escape checked as the tape
    /// checks it: [`ESCAPED`] and [`REWRITTEN`] as it holds them; `pos`
    /// moves past its closing quote.
    // Inlined on purpose: strings are most of the tokens.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn string(&mut self) -> Option<u8> {
        let b = self.b;
        let mut i = self.pos + 1;
        let mut flags = 0;
        loop {
            // Note [String scans] in `json`.
            i = plain_run_end(b, i, b'"', b'"');
            match *b.get(i)? {
                b'"' => {
                    self.pos = i + 1;
                    return Some(flags);
                }
                b'\\' => {
                    // The escapes written as they stand; `\/` and `\u`
                    // are rewritten, any other declined as the tape does.
                    if let Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') = b.get(i + 1) {
                        flags |= ESCAPED;
                        i += 2;
                    } else {
                        let Some((_, used)) = unescape(b.get(i + 1..)?) else {
                            return self.doubtful();
                        };
                        flags |= ESCAPED | REWRITTEN;
                        i += 1 + used;
                    }
                }
                // A raw control character: `serde_json` refuses it.
                _ => return None,
            }
        }
    }

    /// A string value at `pos`.
    // Inlined on purpose: the call cost about as much as a short string.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn string_value(&mut self) -> Option<()> {
        let start = self.pos;
        if self.string()? & REWRITTEN != 0 {
            self.rewrite_string(start)?;
        }
        Some(())
    }

    /// Write the string from `start` to `pos` from its raw body.
    #[cold]
    fn rewrite_string(&mut self, start: usize) -> Option<()> {
        let raw = self.text.get(start + 1..self.pos - 1)?;
        self.token.clear();
        write_raw_escaped(&mut self.token, raw);
        self.put_token(start, self.pos);
        Some(())
    }

    /// An object key at `pos`, unescaped when it holds an escape (keys are
    /// compared as `serde_json` compares them).
    fn key(&mut self) -> Option<Key> {
        let start = self.pos;
        let flags = self.string()?;
        let key = Key {
            at: start + 1,
            len: self.pos - start - 2,
        };
        if flags == 0 {
            return Some(key);
        }
        self.escaped_key(start, flags)
    }

    /// [`Minifier::key`] with escapes: its text goes to the arena.
    #[cold]
    fn escaped_key(&mut self, start: usize, flags: u8) -> Option<Key> {
        let raw = self.text.get(start + 1..self.pos - 1)?;
        if flags & REWRITTEN != 0 {
            self.rewrite_string(start)?;
        }
        let at = self.arena.len();
        self.arena.push_str(&unescape_all(raw));
        Some(Key {
            at: at | IN_ARENA,
            len: self.arena.len() - at,
        })
    }

    /// The text of a key.
    fn key_bytes(&self, k: Key) -> &[u8] {
        let within = if k.at & IN_ARENA == 0 {
            self.b
        } else {
            self.arena.as_bytes()
        };
        let at = k.at & !IN_ARENA;
        within.get(at..at + k.len).unwrap_or_default()
    }

    /// Whether two keys have the same text (most differ in length).
    #[inline]
    fn same_key(&self, a: Key, b: Key) -> bool {
        a.len == b.len && self.key_bytes(a) == self.key_bytes(b)
    }

    /// A number literal at `pos`, read as the tape reads it: an integer of
    /// up to 18 digits (not `-0`) is copied, any other is written as
    /// `serde_json` writes it, or declined when not exact (Note [Big
    /// numbers] in `json`).
    fn number(&mut self) -> Option<()> {
        let start = self.pos;
        let b = self.b;
        let NumberLiteral {
            end: i,
            int_start,
            int_end,
            simple,
        } = number_literal(b, start)?;
        self.pos = i;
        let digits = int_end - int_start;
        let negative_zero = int_start > start && b.get(int_start) == Some(&b'0') && digits == 1;
        if simple && digits <= 18 && !negative_zero {
            return Some(());
        }
        self.rewrite_number(start)
    }

    /// Write the number from `start` to `pos` as `serde_json` writes it.
    #[cold]
    fn rewrite_number(&mut self, start: usize) -> Option<()> {
        let literal = self.text.get(start..self.pos)?;
        if !is_exact(literal) {
            return self.doubtful();
        }
        let Ok(n) = serde_json::from_str::<Number>(literal) else {
            return self.doubtful();
        };
        self.token.clear();
        // Writing a number into a vector cannot fail.
        let _ = serde_json::to_writer(&mut self.token, &n);
        self.put_token(start, self.pos);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::*;
    use crate::tape::{self, Doc, Scratch};

    /// The one-pass writer against the tape (its verdict, its top level,
    /// `write_compact`) and `serde_json` (`json::write_compact` of its
    /// value), with `scratch` as a caller leaves it.
    fn agrees_with(text: &str, scratch: &mut MinifyScratch) {
        let by_tape = Doc::read_in(text, &mut Scratch::default()).map(|doc| {
            let mut bytes = Vec::new();
            doc.root().write_compact(&mut bytes);
            (bytes, Top::of_tape(doc.root()))
        });
        let mut out = b"prefix ".to_vec();
        let mine = write_strict(text, &mut out, scratch);
        let serde = serde_json::from_str::<Value>(text);
        let shown = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match (by_tape, mine) {
            (Ok((bytes, top)), Ok(my_top)) => {
                assert_eq!(shown(&out[7..]), shown(&bytes), "{text:?}");
                assert_eq!(my_top, top, "{text:?}");
                let v = serde.expect("the tape reads only JSON");
                let mut reference = Vec::new();
                crate::write_compact(&mut reference, &v);
                assert_eq!(shown(&out[7..]), shown(&reference), "{text:?}");
                assert_eq!(my_top, Top::of(&v), "{text:?}");
            }
            (Err(why), Err(my_why)) => {
                assert_eq!(my_why, why, "{text:?}");
                assert_eq!(out, b"prefix ", "{text:?}: the output as it was");
                if why == Declined::Invalid {
                    assert!(serde.is_err(), "refused {text:?}, which serde_json reads");
                }
            }
            (tape, mine) => panic!("{text:?}: the tape {:?}, one pass {mine:?}", tape.err()),
        }
    }

    fn agrees(text: &str) {
        agrees_with(text, &mut MinifyScratch::default());
    }

    #[test]
    fn one_pass_agrees_with_the_tape() {
        let rows = [
            " {\n  \"a\": [1, 2.50, -0, 1e3, 18446744073709551615, 123456789012345678],\n  \"b\": null\n} ",
            "[\"\\u00e9\\/x\", \"a\\nb\\t\\\"\\\\\", \"\\ud83d\\ude00\"]",
            "\t\r\n[ true ,false\t, null ]\r\n",
            "{\"k\\u0041\": 1,  \"b\": 2}",
            "{\"k\\/\": {\"x\": [ ]}}",
            "{\"k\\n\": \"v\" }",
            "{\"a\": 1, \"\\u0061\": 2}",
            "{\"a\": {\"a\": 1}, \"b\": {\"a\": 2, \"b\": [{\"a\": 3}]}}",
            "{\"a\": {\"b\": 1}, \"b\": 2, \"a\": 3}",
            "{\"a\": 1, \"a\": [1,}",
            "  1.50  ",
            "-0",
            "-0.0e0",
            "\"\\u0001\"",
            " \"plain\" ",
            "{}",
            "[]",
            "[[]]",
            "[{}, 1]",
            "[ ]",
            "{ }",
            r#"["a\\u\\/", {"k\\u": 1}]"#,
            "\"abc\\",
            "\"abc\\x\"",
            "\"a\tb\"",
            "\"\\ud800\"",
            "[1e400]",
            "[12345678901234567890123]",
            "[1.]",
            "[01]",
            "[-]",
            "[1,]",
            "{\"a\" 1}",
            "{\"a\": tru}",
            "[1] x",
            "nul",
            "",
            "   ",
            "[1, 2",
            "{\"a\": [1]]",
            "\"a very long string that takes more than one word to scan through\"",
            "[\"x\",\n    \"a string longer than sixteen bytes\",\n    12345678901234567\n]",
        ];
        for text in rows {
            agrees(text);
        }
        // Wide objects and deep nesting are left to `serde_json`.
        let members = |n: usize| (0..n).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>();
        for n in [MAX_SCANNED_KEYS, MAX_SCANNED_KEYS + 1] {
            agrees(&format!("{{{}}}", members(n).join(",")));
            agrees(&format!("[{{{}}}, 1]", members(n).join(",\n ")));
        }
        for depth in [MAX_DEPTH, MAX_DEPTH + 1] {
            agrees(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            agrees(&format!(
                "{}1{}",
                "[{\"a\": ".repeat(depth / 2),
                "}]".repeat(depth / 2)
            ));
        }
        // Numbers that grow when written, many of them.
        let floats = format!("[{}]", vec!["1e3, -0, 1e15"; 300].join(","));
        agrees(&floats);
    }

    /// Text that is JSON, or nearly: generated values written pretty with
    /// any whitespace, `\/` and `\u` escapes, keys repeated.
    fn spaced(v: &Value, seps: &[String], slash: bool, unicode: bool) -> String {
        let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
        let mut text = String::new();
        for (i, line) in pretty.split('\n').enumerate() {
            text.push_str(&seps[i % seps.len()]);
            text.push_str(line.trim_start_matches(' '));
        }
        text.push_str(&seps[0]);
        if slash {
            text = text.replacen('"', "\"\\/", 1);
        }
        if unicode {
            text = text.replace('a', "\\u0061");
        }
        text
    }

    proptest! {
        #[test]
        fn one_pass_agrees_on_json(
            v in tape::tests::json_value(),
            seps in prop::collection::vec("[ \n\t\r]{0,6}", 1..5),
            slash in any::<bool>(),
            unicode in any::<bool>(),
        ) {
            agrees(&serde_json::to_string(&v).unwrap());
            agrees(&spaced(&v, &seps, slash, unicode));
        }

        #[test]
        fn one_pass_agrees_on_mangled_and_cut_json(
            v in tape::tests::json_value(),
            seps in prop::collection::vec("[ \n\t\r]{0,3}", 1..3),
            at in 0usize..400,
            byte in prop_oneof![
                Just(b','), Just(b'"'), Just(b'\\'), Just(b'}'), Just(b']'), Just(b'{'),
                Just(b'['), Just(b':'), Just(b'\n'), Just(b'0'), Just(b'.'), Just(b'-'),
                Just(b'e'), any::<u8>(),
            ],
            how in 0..3,
        ) {
            let mut text = spaced(&v, &seps, false, false).into_bytes();
            let at = at.min(text.len());
            match how {
                0 => text.insert(at, byte),
                1 => text.truncate(at),
                _ => {
                    if let Some(c) = text.get_mut(at) {
                        *c = byte;
                    }
                }
            }
            if let Ok(text) = String::from_utf8(text) {
                agrees(&text);
            }
        }

        #[test]
        fn one_pass_agrees_on_escapes(
            body in tape::tests::string_body(),
            key in tape::tests::string_body(),
            wrap in 0..4,
        ) {
            let text = match wrap {
                0 => format!("\"{body}\""),
                1 => format!("[\"{body}\", 1]"),
                2 => format!("{{\"{key}\": \"{body}\"}}"),
                _ => format!("{{\"{key}\": 1, \"{body}\": [\"{key}\"]}}"),
            };
            agrees(&text);
        }

        #[test]
        fn one_pass_agrees_on_any_text(text in ".{0,40}") {
            agrees(&text);
        }

        /// Note [Indentation words]: the run ends where a byte scan ends
        /// it, whatever the bytes around.
        #[test]
        fn ws_skip_agrees_with_position(
            b in prop::collection::vec(prop_oneof![
                Just(b' '), Just(b' '), Just(b' '), Just(b'\n'), Just(b'\t'), Just(b'\r'),
                Just(b'"'), Just(0xA0u8), any::<u8>(),
            ], 1..40),
            from in 0usize..40,
        ) {
            let mut b = b;
            let from = from.min(b.len() - 1);
            b[from] = b'\n';
            let want = b.iter().skip(from).position(|c| !is_ws(Some(c))).map_or(b.len(), |p| p + from);
            prop_assert_eq!(ws_skip(&b, from), want);
        }

        /// A scratch left by any candidate, read or declined, serves the
        /// next as a fresh one.
        #[test]
        fn one_pass_scratch_is_reused(
            texts in prop::collection::vec(
                prop_oneof![
                    tape::tests::json_value().prop_map(|v| v.to_string()),
                    Just("{\"a\": {\"b\": 1, \"b\": 2}}".to_owned()),
                    Just("{\"a\": [1, \"x\\u0041\"], \"c\": {\"d\": [1,]}}".to_owned()),
                    Just("{\"k\": {\"k\": 1}, \"j\": 1e400}".to_owned()),
                ],
                1..6,
            ),
        ) {
            let mut scratch = MinifyScratch::default();
            for text in &texts {
                agrees_with(text, &mut scratch);
            }
        }
    }
}
