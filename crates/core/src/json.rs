//! Strict JSON text into values, never changing a number silently.
//!
//! Note [Big numbers]: `serde_json` (as built here, without its
//! `arbitrary_precision` feature) holds a number as an `i64`, a `u64` or an
//! `f64`. A literal none of them holds exactly is changed while parsing: a
//! 23-digit integer loses its last digits (`12345678901234567890123` becomes
//! `1.2345678901234568e22`), `1e-400` becomes `0.0`, and `1e400` or a
//! 100,000-digit integer is refused ("number out of range") by the strict
//! parser, after which the tolerant one made it `null`. Agent output then
//! came out "valid" with a value the agent never wrote.
//!
//! We detect and report instead of keeping such numbers exact. A literal is
//! *exact* when the number `serde_json` holds, written back (shortest
//! round-trip form), is the same decimal number: `0.1` is exact in this
//! sense, `12345678901234567890123` is not. [`parse`] parses strictly and
//! lists every inexact literal with its JSON Pointer ([`InexactNumber`]); a
//! literal beyond `f64` becomes `null`, the rest their nearest `f64`. The
//! callers (extract, validate) add the repair `inexact_number` and an error
//! of kind `number` per literal, so such a value is never reported valid.
//! The check is cheap in the common case: the text is scanned again only
//! when the parsed value holds a float (integers that fit `i64`/`u64` are
//! exact by construction) or the strict parse failed on range; a first
//! pass without paths (most literals have at most 15 digits and are
//! exact at a glance) decides whether the scan that builds paths runs.
//!
//! Why not `arbitrary_precision`: it is a workspace-wide switch (Cargo
//! unifies features, so every crate's `serde_json::Number` becomes a
//! string inside, `#[serde(flatten)]`/untagged types that meet a number
//! break, and `jsonschema` would need its own `arbitrary-precision`
//! feature to compare such numbers), and it slows every parse that meets a
//! number. Measured (best of three, release, parsing into `Value`; a loaded
//! 2-core machine, so ±20%): the extract bench's number-dense reply
//! (`extract/bare/numbers`: 200 rows of six numbers, mostly floats) took
//! 222 µs plain, 290 µs with this module's check, 338 µs with
//! `arbitrary_precision`; 1,200 integers took 43 µs plain, 47 µs checked,
//! 171 µs with `arbitrary_precision`; a reply without numbers is the same
//! three ways. Numbers that big are rare in agent output and a program
//! reading them would likely lose them too, so refusing to pass them as
//! valid is the useful answer.

use serde_json::Value;

use crate::outcome::{Violation, ViolationKind};

/// A JSON value parsed from text, and the number literals it could not hold
/// exactly (Note [Big numbers]).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The value; an inexact number holds its nearest `f64`, or `null`
    /// beyond `f64`'s range.
    pub value: Value,
    /// Every inexact literal, in text order.
    pub inexact: Vec<InexactNumber>,
}

/// A number literal that the parsed value does not hold exactly.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InexactNumber {
    /// JSON Pointer to the number in the value.
    pub instance_path: String,
    /// The literal as written, cut to [`LITERAL_SHOWN`] characters with its
    /// length when longer.
    pub literal: String,
    /// What the value holds instead (`null` beyond `f64`'s range).
    pub held: String,
}

impl InexactNumber {
    /// The report for `literal` at `path`, and the value that stands for it.
    pub(crate) fn at(path: &str, literal: &str) -> (InexactNumber, Value) {
        let value = match literal.parse::<f64>() {
            Ok(f) if f.is_finite() => {
                serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
            }
            _ => Value::Null,
        };
        let found = InexactNumber {
            instance_path: path.to_owned(),
            literal: shown(literal),
            held: value.to_string(),
        };
        (found, value)
    }
}

/// How much of a long literal a message shows.
pub const LITERAL_SHOWN: usize = 40;

impl InexactNumber {
    /// The error reported for it: kind `number`, at its path.
    pub fn violation(&self) -> Violation {
        Violation {
            instance_path: self.instance_path.clone(),
            schema_path: String::new(),
            message: format!(
                "number {} cannot be represented exactly (it would become {}); refused rather \
                 than changed",
                self.literal, self.held
            ),
            kind: Some(ViolationKind::Number),
            rule: None,
        }
    }
}

/// Parse strict JSON `text`, listing the numbers it cannot hold exactly.
///
/// # Errors
/// The `serde_json` error when `text` is not JSON (a number out of range
/// alone is not an error: it becomes `null` and is listed).
pub fn parse(text: &str) -> Result<Parsed, serde_json::Error> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => {
            if !has_float(&value) || !any_inexact(text) {
                return Ok(Parsed {
                    value,
                    inexact: Vec::new(),
                });
            }
            let found = scan(text);
            let inexact = found.iter().map(|f| f.report(text)).collect();
            Ok(Parsed { value, inexact })
        }
        Err(e) if e.to_string().starts_with("number out of range") => {
            let found = scan(text);
            // Replace the literals beyond `f64` by `null` and parse again.
            let mut patched = String::with_capacity(text.len());
            let mut last = 0;
            for f in found.iter().filter(|f| f.overflows) {
                patched.push_str(text.get(last..f.start).unwrap_or_default());
                patched.push_str("null");
                last = f.end;
            }
            patched.push_str(text.get(last..).unwrap_or_default());
            let value = serde_json::from_str::<Value>(&patched).map_err(|_| e)?;
            let inexact = found.iter().map(|f| f.report(text)).collect();
            Ok(Parsed { value, inexact })
        }
        Err(e) => Err(e),
    }
}

/// The reply of one JSONL line read in place: the line's string, or the
/// string member `text` of its object, and the value of its member `id`
/// when present. `None` when the line has another shape or the borrowed
/// reader declines it (Note [Validating from text] in `validate`: a syntax
/// error, a repeated key, a lone surrogate, an inexact number anywhere in
/// the line); the caller then reads it with `serde_json`, which gives the
/// same answer for every line this function reads (`reply_lines_agree`).
///
/// Why: `extract --jsonl` spent a quarter of its time reading lines through
/// `serde_json`, mostly growing a scratch buffer for the escapes of `text`;
/// here `text` is unescaped into one buffer of the right size and the other
/// members are read without hashing or copying.
pub fn reply_line(line: &str) -> Option<(String, Option<Value>)> {
    let (text, id) = crate::validate::tape::Doc::parse(line)?.take_reply()?;
    Some((text.into_owned(), id))
}

/// Parse `text` as strict JSON when it can be: `None` when it is not JSON.
///
/// Note [Doomed strict parses]: most replies that need repair get there
/// after a strict parse that fails, and that parse built a `Value` (an
/// `IndexMap` per object, every key hashed, every string copied) up to the
/// failure, often near the end (a trailing comma, a cut). A scan that builds
/// nothing (`scan_value`) decides first; only text it cannot rule out
/// goes to [`parse`], so the values are still `serde_json`'s. It rules a
/// text out only where `serde_json` refuses it as well (a grammar error);
/// anything it is unsure of (a `\u` surrogate escape, a number not surely
/// exact, deep nesting) is parsed (`precheck_never_refuses_what_serde_reads`).
/// Measured with the reader of Note [Reading reply lines] and Note [Short
/// runs] together (`extract --jsonl --json` on the 20,000-reply bench
/// corpus, output byte-identical): 2.104 → 1.998 billion instructions
/// (−5%); wall and user time on the loaded 2-core machine moved within
/// their noise (user −8% ± 10%).
pub fn parse_if_json(text: &str) -> Option<Parsed> {
    let b = text.as_bytes();
    let start = skip_ws(b, 0);
    match scan_value(b, start, 0) {
        Scan::Value(end) if skip_ws(b, end) != b.len() => None,
        Scan::Invalid => None,
        // Every number literal was surely exact (`scan_number`), so the
        // second pass of Note [Big numbers] (`has_float`, then
        // `any_inexact` over the whole text when a float is held) has
        // nothing to find.
        Scan::Value(_) => serde_json::from_str::<Value>(text)
            .ok()
            .map(|value| Parsed {
                value,
                inexact: Vec::new(),
            }),
        Scan::Doubtful => parse(text).ok(),
    }
}

/// What [`scan_value`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan {
    /// A JSON value that ends just before this index.
    Value(usize),
    /// Not JSON: `serde_json` refuses it too.
    Invalid,
    /// JSON by the grammar so far, but `serde_json` may read it differently
    /// or refuse it: a `\u` escape of a surrogate, a number literal that is
    /// not surely exact (Note [Big numbers]), nesting deeper than
    /// [`SCAN_DEPTH`]. The scan stops there.
    Doubtful,
}

/// Deepest nesting [`scan_value`] follows (`serde_json` refuses beyond 128).
const SCAN_DEPTH: usize = 100;

/// Scan the JSON value at `i` of `b` (no whitespace before it), building
/// nothing: the grammar of RFC 8259, as `serde_json` reads it.
///
/// Note [Calls per container]: inlined, so that an object's or array's
/// strings, numbers and literals are read in its own loop and only a
/// nested object or array is a call ([`scan_object`], [`scan_array`]):
/// the call per member value (five registers saved and restored, the
/// dispatch) cost about as much as the short strings it read. Measured
/// (callgrind, `extract --jsonl --json` on the 20,000-reply bench corpus,
/// output byte-identical, release with thin LTO): 0.903 → 0.897 billion
/// instructions (−0.7%); `reply_of_line_into` with what it calls 239.5 →
/// 233.2 million.
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn scan_value(b: &[u8], i: usize, depth: usize) -> Scan {
    match b.get(i) {
        Some(b'"') => scan_string(b, i),
        Some(b'{') => scan_object(b, i, depth + 1),
        Some(b'[') => scan_array(b, i, depth + 1),
        Some(b't') => scan_literal(b, i, b"true"),
        Some(b'f') => scan_literal(b, i, b"false"),
        Some(b'n') => scan_literal(b, i, b"null"),
        Some(b'-' | b'0'..=b'9') => scan_number(b, i),
        _ => Scan::Invalid,
    }
}

fn scan_literal(b: &[u8], i: usize, word: &[u8]) -> Scan {
    match b.get(i..i + word.len()) {
        Some(w) if w == word => Scan::Value(i + word.len()),
        _ => Scan::Invalid,
    }
}

#[inline(never)]
fn scan_array(b: &[u8], i: usize, depth: usize) -> Scan {
    if depth > SCAN_DEPTH {
        return Scan::Doubtful;
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b']') {
        return Scan::Value(j + 1);
    }
    loop {
        match scan_value(b, j, depth) {
            Scan::Value(end) => j = skip_ws(b, end),
            other => return other,
        }
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b']') => return Scan::Value(j + 1),
            _ => return Scan::Invalid,
        }
    }
}

#[inline(never)]
fn scan_object(b: &[u8], i: usize, depth: usize) -> Scan {
    if depth > SCAN_DEPTH {
        return Scan::Doubtful;
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Scan::Value(j + 1);
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return Scan::Invalid;
        }
        match scan_string(b, j) {
            Scan::Value(end) => j = skip_ws(b, end),
            other => return other,
        }
        if b.get(j) != Some(&b':') {
            return Scan::Invalid;
        }
        match scan_value(b, skip_ws(b, j + 1), depth) {
            Scan::Value(end) => j = skip_ws(b, end),
            other => return other,
        }
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Scan::Value(j + 1),
            _ => return Scan::Invalid,
        }
    }
}

/// The string at `i` (a `"`): its escapes are checked, nothing is copied.
///
/// Note [Inlined string scans]: most strings [`scan_value`] meets are keys
/// and short values that end within 16 bytes with no escape. Those are
/// read here, inlined into the callers (one vector mask of the 16 bytes
/// after the quote, Note [Vector byte masks] in `bytescan`); the rest go to
/// [`scan_string_slow`], whose escape handling (the `\u` reader is a call)
/// made every call save and restore six registers, ~25 of the ~60
/// instructions a string cost. Measured (callgrind, `extract --jsonl
/// --json` on the 20,000-reply bench corpus, output byte-identical,
/// release with thin LTO; with the first bracket-scan change of Note
/// [Vector bracket scan]): 0.931 → 0.903 billion instructions;
/// `reply_of_line_into` with what it calls 261 → 240 million, the out of
/// line [`scan_string_slow`] 10.7 million where `scan_string` was 54.1.
#[allow(clippy::inline_always)]
#[inline(always)]
fn scan_string(b: &[u8], i: usize) -> Scan {
    #[cfg(target_arch = "x86_64")]
    if let Some(chunk) = b.get(i + 1..i + 1 + CHUNK) {
        if let Ok(chunk) = <&[u8; CHUNK]>::try_from(chunk) {
            let stops = crate::bytescan::quote_stops(chunk);
            let k = stops.trailing_zeros() as usize;
            if chunk.get(k) == Some(&b'"') {
                return Scan::Value(i + 1 + k + 1);
            }
        }
    }
    scan_string_slow(b, i)
}

/// [`scan_string`] past its first 16 bytes, or with an escape there.
#[inline(never)]
fn scan_string_slow(b: &[u8], i: usize) -> Scan {
    let mut j = i + 1;
    loop {
        j = plain_run_end(b, j, b'"', b'"');
        match b.get(j) {
            Some(b'"') => return Scan::Value(j + 1),
            Some(b'\\') => {
                let e = b.get(j + 1).copied().unwrap_or_default();
                if SHORT_ESCAPES[usize::from(e)] != 0 {
                    j += 2;
                    continue;
                }
                match unescape(b.get(j + 1..).unwrap_or_default()) {
                    Escape::Char(_, used) => j += 1 + used,
                    Escape::Surrogate => return Scan::Doubtful,
                    Escape::Bad => return Scan::Invalid,
                }
            }
            // The end of the text, or a raw control character.
            _ => return Scan::Invalid,
        }
    }
}

/// The number literal at `i`; [`Scan::Doubtful`] when it is JSON but not
/// surely exact (Note [Big numbers]).
///
/// The digits are counted while the literal is read, the same test as
/// [`surely_exact`] (at most 15 significant digits, an exponent of at most
/// two) without walking the literal again (`scan_number_agrees_with_the_two_pass_scan`).
fn scan_number(b: &[u8], i: usize) -> Scan {
    let digits = |mut k: usize| {
        while b.get(k).is_some_and(u8::is_ascii_digit) {
            k += 1;
        }
        k
    };
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    let int_start = j;
    match b.get(j) {
        Some(b'0') => j += 1,
        Some(b'1'..=b'9') => j = digits(j + 1),
        _ => return Scan::Invalid,
    }
    let mut significant = j - int_start;
    if b.get(j) == Some(&b'.') {
        let end = digits(j + 1);
        if end == j + 1 {
            return Scan::Invalid;
        }
        significant += end - (j + 1);
        j = end;
    }
    let mut exponent = 0;
    if matches!(b.get(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let end = digits(j);
        if end == j {
            return Scan::Invalid;
        }
        exponent = end - j;
        j = end;
    }
    if significant <= 15 && exponent <= 2 {
        Scan::Value(j)
    } else {
        Scan::Doubtful
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
#[inline]
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// One escape sequence read after its backslash.
enum Escape {
    /// The character and the bytes it used after the backslash.
    Char(char, usize),
    /// A `\u` escape of a surrogate that is not part of a valid pair.
    Surrogate,
    /// Not a JSON escape.
    Bad,
}

/// The escape at the start of `rest` (just after a `\\`), as `serde_json`
/// reads it into a `String`.
#[inline]
fn unescape(rest: &[u8]) -> Escape {
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
pub(crate) fn unescape_lossy(literal: &str, replaced: &mut u64) -> Option<String> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?.as_bytes();
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while let Some(&c) = inner.get(i) {
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let (ch, used) = match unescape(inner.get(i + 1..)?) {
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

/// The reply of one JSONL line of `extract --jsonl`: the line's string, or
/// the string member `text` of its object, and the value of its member `id`
/// when present. `None` when the line has another shape or this reader
/// declines it (a key with an escape, a repeated `text` or `id`, anything
/// `scan_value` is not sure of, such as a number not surely exact
/// anywhere in the line); the caller then reads the line into a `Value`,
/// which gives the same answer for every line read here
/// (`reply_of_line_agrees_with_the_value_reading`).
///
/// Note [Reading reply lines]: reading lines was a fifth of
/// `extract --jsonl`: `serde_json` unescaped `text` into a scratch buffer,
/// grown escape by escape, then copied it into its `String` and checked its
/// UTF-8 again; the other members (a corpus line carries its whole
/// `expected` value) were walked through `serde`'s visitor machinery. Here
/// `text` is unescaped in one pass into a `String` allocated once (the rest
/// of the line bounds its length), and the other members are checked by
/// `scan_value` without building them.
/// Measured (criterion `extract/corpus/read` against `read/serde`, the
/// derive it replaced, 2,000 corpus lines, a loaded machine): 13.6 ms
/// against 12.4 ms ± 1 ms, so no gain shown yet; it is kept because it is
/// exact where the derive was not (`IgnoredAny` let `1e400` and lone
/// surrogates in other members through, the `Value` reading refuses them).
/// Tried and dropped: a forward scan of the other members (the stops of
/// 64 bytes found at once by `stop_mask64` when a string reached past
/// the last 64, every string end a shift and a `trailing_zeros`, the
/// grammar one loop over a stack of bits instead of recursion; exact
/// against `scan_value` by proptest): callgrind on the whole corpus
/// 1.117 → 1.126 billion instructions. The masks (47 million, ~20 a
/// line, computed at unaligned bases) cost more than the word tests they
/// replaced on strings of ~15 bytes, the per-string work stayed ~56
/// instructions, and the loop cost what the recursion did (47 against
/// 49 million).
///
/// Note [UTF-8 checked once]: the line must be UTF-8 (the `Value` reading
/// refuses it otherwise), and the unescaped `text` is checked as UTF-8 when
/// it becomes a `String`. That check covers `text`'s raw bytes too: runs
/// are copied whole between ASCII escapes, and an escape decodes to ASCII
/// or a whole character, which can neither complete a broken sequence
/// before it nor start one after it; so the output is UTF-8 exactly when
/// the raw runs are. The line is therefore checked around `text` only, not
/// whole and then `text` again (about 1,250 of a corpus line's 2,300 bytes
/// were checked twice). Measured (`extract --jsonl --json`, 20,000 bench
/// replies, output byte-identical, `perf stat -e instructions:u`): 1.683
/// → 1.662 billion instructions (−1.2%); callgrind on the first 4,000:
/// `reply_of_line` with what it calls 92.3 → 88.3 million.
pub fn reply_of_line(line: &[u8]) -> Option<(String, Option<Value>)> {
    let mut scratch = Vec::new();
    let (text, id) = reply_of_line_into(line, &mut scratch)?;
    Some((text.to_owned(), id))
}

/// [`reply_of_line`] with `text` unescaped into `scratch`, a buffer the
/// caller keeps from line to line: the text borrowed from it, and `id`.
///
/// Note [Reused text buffers]: `text` was unescaped into a `String`
/// allocated per line and zeroed over the whole rest of the line first
/// (the unescaper writes by index, Note [Escape masks]), so a corpus line
/// paid an allocation, a free and a `memset` of ~1,900 bytes (the rest of
/// `text` and the whole `expected` member) for ~1,250 bytes of text. Here
/// the buffer only grows (it is zeroed only when it must grow, so once per
/// worker up to the longest line) and the caller borrows the text. The
/// last bytes of a line, where fewer than 80 are left, go through the same
/// block walk from a padded copy instead of a word-by-word tail.
/// Measured (callgrind, `extract --jsonl --json` on the 20,000-reply bench
/// corpus, output byte-identical, release with thin LTO): 1.147 → 1.117
/// billion instructions (−2.6%); `reply_of_line` with what it calls
/// 385.3 → 352.5 million, of which the unescaper (without the UTF-8
/// check, now its caller's) 188.1 → 154.9 million.
pub fn reply_of_line_into<'s>(
    line: &[u8],
    scratch: &'s mut Vec<u8>,
) -> Option<(&'s str, Option<Value>)> {
    let b = line;
    let mut i = skip_ws(b, 0);
    if b.get(i) == Some(&b'"') {
        let (len, end) = unescape_into(b, i, scratch)?;
        if skip_ws(b, end) != b.len() {
            return None;
        }
        return Some((utf8(scratch.get(..len)?)?, None));
    }
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    // The unescaped length of `text` and where its raw string lies (Note
    // [UTF-8 checked once]).
    let mut text: Option<(usize, usize, usize)> = None;
    let mut id: Option<Value> = None;
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let Scan::Value(key_end) = scan_string(b, i) else {
            return None;
        };
        let key = b.get(i + 1..key_end - 1)?;
        if key.contains(&b'\\') {
            return None;
        }
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = match key {
            b"text" if text.is_none() => {
                let (len, end) = unescape_into(b, i, scratch)?;
                text = Some((len, i, end));
                end
            }
            b"id" if id.is_none() => {
                let Scan::Value(end) = scan_value(b, i, 0) else {
                    return None;
                };
                id = Some(serde_json::from_slice(b.get(i..end)?).ok()?);
                end
            }
            // A repeated `text` or `id`: the `Value` reading keeps the last.
            b"text" | b"id" => return None,
            _ => match scan_value(b, i, 0) {
                Scan::Value(end) => end,
                _ => return None,
            },
        };
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    if skip_ws(b, i + 1) != b.len() {
        return None;
    }
    let (len, start, end) = text?;
    utf8(b.get(..start)?)?;
    utf8(b.get(end..)?)?;
    Some((utf8(scratch.get(..len)?)?, id))
}

/// `bytes` as text when they are UTF-8.
///
/// Note [Vector UTF-8 checks]: a reply line is checked as UTF-8 whole
/// (Note [UTF-8 checked once]: the unescaped `text`, and the line around
/// its raw string), and `std::str::from_utf8` took ~0.9 instructions a byte
/// there. `simdutf8` checks 32 or 64 bytes a step with the vector
/// instructions the CPU has (found at run time) and gives the same
/// answer (`simdutf8_agrees_with_std`).
/// Measured (callgrind, `extract --jsonl --json` on the 20,000-reply bench
/// corpus, output byte-identical, release with thin LTO): 1.117 → 1.095
/// billion instructions (−2.0%); `reply_of_line` with what it calls
/// 352.5 → 332.4 million, its UTF-8 checks 38.9 → 15.4 million.
fn utf8(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
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
/// too) 49.2 → 48.0 million. Tried and dropped: [`unescape`] and
/// [`hex4`] inlined as well, so that no call is left in the walk:
/// `unescape_into` 100.3 → 100.9 million; the walk's output indexes taken
/// as remainders (`written % BLOCK`, equal to `written`) so that the
/// compiler could drop their bounds checks: 100.3 → 100.5 million.
fn unescape_into(b: &[u8], i: usize, out: &mut Vec<u8>) -> Option<(usize, usize)> {
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
                    let Escape::Char(ch, used) = unescape(block.get(stop + 1..)?) else {
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

/// The bytes [`unescape_into`] finds the stops of at once.
const BLOCK: usize = 64;

/// The bytes a run copy or a vector test handles at once.
const CHUNK: usize = 16;

/// What each one-letter escape (the byte after the backslash) stands for;
/// 0 for `u` (read by [`unescape`]) and for bytes that are no escape.
const SHORT_ESCAPES: [u8; 256] = {
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

/// Bit `k` set when byte `k` of `block` (its first [`BLOCK`] bytes) is a
/// quote, a backslash or a control character (Note [Escape masks]).
///
/// On `x86_64` four SSE2 masks (Note [Vector byte masks] in `bytescan`),
/// elsewhere [`stop_mask64_swar`].
#[allow(clippy::inline_always)]
#[inline(always)]
fn stop_mask64(block: &[u8; BLOCK]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        crate::bytescan::string_stops64(block)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        stop_mask64_swar(block)
    }
}

/// [`stop_mask64`] eight bytes at a time in `u64` words ([`stop_mask8`]):
/// the form of other targets, and the tests' reference for the vector one.
#[cfg(any(test, not(target_arch = "x86_64")))]
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
/// [`stop_bytes`]: each test adds within a byte's low seven bits, so no
/// carry crosses into the next byte.
#[cfg(any(test, not(target_arch = "x86_64")))]
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
/// [`long_run_end`] and one copy. The same bytes as copying
/// `bytes[from..plain_run_end(..)]` (`copy_plain_agrees_with_plain_run_end`).
/// Measured (`extract --jsonl --json` on the 20,000-reply bench corpus,
/// output byte-identical, `perf stat -e instructions:u`): used by
/// `unescape_string`, [`write_str`] and the repair parser's strings,
/// 1.962 → 1.858 billion instructions (−5.3%). On `x86_64` the two words
/// are one 16-byte SSE2 mask and one 16-byte store (Note [Vector byte
/// masks] in `bytescan`).
// Inlined on purpose: Note [Short runs].
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn copy_plain(out: &mut Vec<u8>, bytes: &[u8], from: usize, q1: u8, q2: u8) -> usize {
    let mut at = from;
    #[cfg(target_arch = "x86_64")]
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
/// Note [Short tails]: [`write_str`] copies whole strings, so every string
/// ends in a tail shorter than a word, and most strings written are keys
/// and values under eight bytes (`"id"`, `"done"`, method and repair
/// names: two thirds of the strings in `extract --jsonl`'s output). Such a
/// tail went to [`long_run_end`] and a `memchr3` call, about 100
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

/// Append `value` as compact JSON, byte for byte what
/// `serde_json::to_writer` writes (`compact_writer_agrees_with_serde_json`).
///
/// Why: writing results was a fifth of `extract --jsonl`, half of it
/// `serde_json`'s byte-at-a-time string escaping; here runs of 16 bytes that
/// need no escape are copied at once, and maps are walked directly.
pub fn write_compact(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // Numbers are rare and short: `serde_json` writes them (`itoa`/`ryu`).
        Value::Number(n) => {
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_compact(out, v);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write_compact(out, v);
            }
            out.push(b'}');
        }
    }
}

/// Append `s` as a JSON string, escaped as `serde_json` escapes it: `"`,
/// `\\` and the control characters (`\b \t \n \f \r` short, the rest as
/// `\u00xx`); everything else, non-ASCII included, as is.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    // Room for the quotes and for `copy_plain`'s last word store.
    out.reserve(s.len() + 10);
    out.push(b'"');
    let b = s.as_bytes();
    let mut start = 0;
    loop {
        let i = copy_plain(out, b, start, b'"', b'"');
        let Some(&c) = b.get(i) else {
            break;
        };
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(c >> 4)]);
                out.push(HEX[usize::from(c & 0xf)]);
            }
        }
        start = i + 1;
    }
    out.push(b'"');
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
pub(crate) fn first_stop(b: &[u8], from: usize, stop: impl Fn(u8) -> bool) -> usize {
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
/// 16 bytes per vector compare in [`long_run_end`], quote, backslash and
/// control characters in one test); a per-byte loop here was the largest
/// cost of reading and writing JSON text. (`memchr3` for the quote or
/// backslash and a minimum over the run for control characters came
/// before.) The same answer as `position` (`plain_run_end_agrees_with_position`).
///
/// Note [Short runs]: in the replies agents write, JSON inside a JSON string
/// escapes every quote and line break, so most runs are a few bytes long,
/// and a `memchr3` call per run cost more than the run. The first eight
/// bytes are tested at once in a `u64` ([`stop_bytes`]) before
/// [`long_run_end`] takes over for a longer run. (A 16-step loop of byte
/// compares into a bit mask, tried first here, did not vectorise inlined
/// into the callers: it doubled the instructions of `extract --jsonl`; in
/// the non-inlined [`long_run_end`] it does.) On `x86_64` the first test
/// covers 16 bytes with one SSE2 mask instead (Note [Vector byte masks] in
/// `bytescan`): most runs of agent JSON end within them, so fewer reach
/// [`long_run_end`] and its call.
// Inlined on purpose: Note [Short runs].
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn plain_run_end(bytes: &[u8], from: usize, a: u8, b: u8) -> usize {
    // Inlined at every caller: most runs end in the first word, and the
    // call (seven registers saved and restored) cost as much as the test.
    #[cfg(target_arch = "x86_64")]
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
/// is a whole array from the input, as in [`long_run_end`] (checked in the
/// release build's assembly), not in every caller's context.
#[allow(clippy::inline_always)]
#[inline(always)]
fn first_stop16(chunk: &[u8; CHUNK], a: u8, b: u8) -> usize {
    // A bit past the chunk's: 16 when no byte stops.
    #[cfg(target_arch = "x86_64")]
    {
        (crate::bytescan::string_stops(chunk, a, b) | 1 << CHUNK).trailing_zeros() as usize
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        first_stop16_bytes(chunk, a, b)
    }
}

/// [`first_stop16`] as a byte loop into a byte mask: the form of other
/// targets, where LLVM vectorises it.
#[cfg(not(target_arch = "x86_64"))]
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
pub(crate) fn plain_string_byte(c: u8) -> bool {
    c >= 0x20 && c != b'"' && c != b'\\'
}

/// Whether `value` holds a float anywhere (only floats can be inexact).
fn has_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64(),
        Value::Array(a) => a.iter().any(has_float),
        Value::Object(m) => m.values().any(has_float),
        _ => false,
    }
}

/// Whether the JSON number literal `literal` survives parsing: it fits
/// `i64`/`u64`, or the nearest `f64`, written back, is the same decimal
/// number (Note [Big numbers]).
pub fn is_exact(literal: &str) -> bool {
    if surely_exact(literal.as_bytes()) {
        return true;
    }
    let integral = !literal.contains(['.', 'e', 'E']);
    if integral && (literal.parse::<i64>().is_ok() || literal.parse::<u64>().is_ok()) {
        return true;
    }
    let Ok(f) = literal.parse::<f64>() else {
        return false;
    };
    if !f.is_finite() {
        return false;
    }
    let Some(written) = Decimal::of(literal) else {
        return false;
    };
    // At most 15 significant digits in the normal range always round-trip
    // through `f64` (`f64::DIGITS`).
    if written.digits.len() <= 15 && (-300..=300).contains(&written.exponent) {
        return true;
    }
    Decimal::of(&format!("{f:e}")).is_some_and(|back| back == written)
}

/// A cheap sufficient test: at most 15 digits and an exponent of at most two
/// digits (`f64::DIGITS`, well inside the normal range), so nothing is
/// parsed or allocated for the numbers agents usually write.
fn surely_exact(literal: &[u8]) -> bool {
    let (mantissa, exponent) = match literal.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => (
            literal.get(..i).unwrap_or_default(),
            literal.get(i + 1..).unwrap_or_default(),
        ),
        None => (literal, &b""[..]),
    };
    let digits = mantissa.iter().filter(|b| b.is_ascii_digit()).count();
    let exp_digits = exponent.iter().filter(|b| b.is_ascii_digit()).count();
    digits > 0
        && digits <= 15
        && exp_digits <= 2
        && mantissa
            .iter()
            .all(|&b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.'))
        && exponent
            .iter()
            .all(|&b| b.is_ascii_digit() || matches!(b, b'-' | b'+'))
}

/// Whether strict JSON `text` holds any inexact number literal: one linear
/// pass that jumps over strings and tracks no paths (the common answer is
/// no, and [`scan`] then never runs).
fn any_inexact(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => i = string_end(b, i),
            b'-' | b'0'..=b'9' => {
                let start = i;
                while b.get(i).is_some_and(|c| is_number_byte(*c)) {
                    i += 1;
                }
                if !is_exact(text.get(start..i).unwrap_or_default()) {
                    return true;
                }
            }
            _ => i += 1,
        }
    }
    false
}

fn is_number_byte(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
}

/// What the value holds for an inexact literal, for messages.
fn held(literal: &str) -> String {
    match literal.parse::<f64>() {
        Ok(f) if f.is_finite() => {
            serde_json::Number::from_f64(f).map_or_else(|| "null".to_owned(), |n| n.to_string())
        }
        _ => "null".to_owned(),
    }
}

/// A literal cut for a message: its first [`LITERAL_SHOWN`] characters and
/// its length.
fn shown(literal: &str) -> String {
    if literal.len() <= LITERAL_SHOWN {
        return literal.to_owned();
    }
    let head = literal.get(..LITERAL_SHOWN).unwrap_or(literal);
    format!("{head}… ({} characters)", literal.len())
}

/// A decimal number as sign, significant digits and exponent:
/// `digits × 10^exponent`, without leading or trailing zeros (zero has no
/// digits and no sign).
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: String,
    exponent: i64,
}

impl Decimal {
    fn of(literal: &str) -> Option<Decimal> {
        let (negative, rest) = match literal.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, literal.strip_prefix('+').unwrap_or(literal)),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(i) => (rest.get(..i)?, rest.get(i + 1..)?),
            None => (rest, "0"),
        };
        let exp: i64 = match exp.parse() {
            Ok(e) => e,
            // An exponent too long for `i64` is far out of `f64`'s range.
            Err(_)
                if exp
                    .trim_start_matches(['+', '-'])
                    .bytes()
                    .all(|b| b.is_ascii_digit()) =>
            {
                if exp.starts_with('-') {
                    i64::MIN / 2
                } else {
                    i64::MAX / 2
                }
            }
            Err(_) => return None,
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let frac_len = i64::try_from(frac.len()).ok()?;
        let mut digits: String = format!("{int}{frac}").trim_start_matches('0').to_owned();
        let mut exponent = exp.saturating_sub(frac_len);
        while digits.ends_with('0') {
            digits.pop();
            exponent = exponent.saturating_add(1);
        }
        if digits.is_empty() {
            return Some(Decimal {
                negative: false,
                digits,
                exponent: 0,
            });
        }
        Some(Decimal {
            negative,
            digits,
            exponent,
        })
    }
}

/// One inexact literal found by [`scan`].
struct Found {
    start: usize,
    end: usize,
    path: String,
    /// Beyond `f64`'s range (`serde_json` refuses it).
    overflows: bool,
}

impl Found {
    fn report(&self, text: &str) -> InexactNumber {
        let literal = text.get(self.start..self.end).unwrap_or_default();
        InexactNumber {
            instance_path: self.path.clone(),
            literal: shown(literal),
            held: held(literal),
        }
    }
}

/// Where the scan is inside a container.
enum Frame {
    Object { key: String, want_key: bool },
    Array { index: usize },
}

/// The inexact number literals of strict JSON `text`, with their pointers.
/// Linear; tolerant of anything (it runs on text `serde_json` accepted, or
/// refused only for a number's range).
fn scan(text: &str) -> Vec<Found> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'{' => {
                stack.push(Frame::Object {
                    key: String::new(),
                    want_key: true,
                });
                i += 1;
            }
            b'[' => {
                stack.push(Frame::Array { index: 0 });
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
            }
            b':' => {
                if let Some(Frame::Object { want_key, .. }) = stack.last_mut() {
                    *want_key = false;
                }
                i += 1;
            }
            b',' => {
                match stack.last_mut() {
                    Some(Frame::Object { want_key, .. }) => *want_key = true,
                    Some(Frame::Array { index }) => *index += 1,
                    None => {}
                }
                i += 1;
            }
            b'"' => {
                let end = string_end(b, i);
                if let Some(Frame::Object {
                    key,
                    want_key: true,
                }) = stack.last_mut()
                {
                    let raw = text.get(i..end).unwrap_or_default();
                    *key = serde_json::from_str::<String>(raw)
                        .unwrap_or_else(|_| raw.trim_matches('"').to_owned());
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while b.get(i).is_some_and(|c| is_number_byte(*c)) {
                    i += 1;
                }
                let literal = text.get(start..i).unwrap_or_default();
                if !is_exact(literal) {
                    out.push(Found {
                        start,
                        end: i,
                        path: pointer(&stack),
                        overflows: !literal.parse::<f64>().is_ok_and(f64::is_finite),
                    });
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// The index just past the string starting at `start` (a `"`).
fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while let Some(off) = b
        .get(i..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        i += off;
        if b.get(i) == Some(&b'"') {
            return i + 1;
        }
        i += 2;
    }
    b.len()
}

fn pointer(stack: &[Frame]) -> String {
    let mut out = String::new();
    for frame in stack {
        out.push('/');
        match frame {
            Frame::Object { key, .. } => out.push_str(&key.replace('~', "~0").replace('/', "~1")),
            Frame::Array { index } => out.push_str(&index.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn reference_reply(line: &str) -> Option<(String, Option<Value>)> {
        match serde_json::from_str::<Value>(line).ok()? {
            Value::String(s) => Some((s, None)),
            Value::Object(mut m) => match m.remove("text") {
                Some(Value::String(s)) => Some((s, m.remove("id"))),
                _ => None,
            },
            _ => None,
        }
    }

    fn value_strategy() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            "[\\x00-\\x21\"\\\\a\\x7f-\\u{a0}é😀]{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("(text|id|[a-c\"\\\\\\n]{0,3})", inner), 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn compact_writer_agrees_with_serde_json(v in value_strategy()) {
            let mut mine = Vec::new();
            write_compact(&mut mine, &v);
            proptest::prop_assert_eq!(String::from_utf8(mine).unwrap(), serde_json::to_string(&v).unwrap());
        }

        #[test]
        fn reply_lines_agree(v in value_strategy(), pretty in proptest::prelude::any::<bool>(), cut in 0usize..300, byte in proptest::prelude::any::<u8>()) {
            let line = if pretty { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) }.unwrap();
            let mut mangled = line.clone().into_bytes();
            mangled.insert(cut.min(mangled.len()), byte);
            let mangled = String::from_utf8(mangled).unwrap_or_default();
            for line in [line, mangled] {
                if let Some(got) = reply_line(&line) {
                    proptest::prop_assert_eq!(Some(got), reference_reply(&line), "{}", line);
                }
            }
        }
    }

    /// JSON-looking text broken in the ways the scans must get right.
    fn mangled_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("[".to_owned()),
            Just("]".to_owned()),
            Just(",".to_owned()),
            Just(":".to_owned()),
            Just(" ".to_owned()),
            Just("\n".to_owned()),
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just("\\u".to_owned()),
            Just("\\ud83d".to_owned()),
            Just("\\ude00".to_owned()),
            Just("\\n".to_owned()),
            Just("\u{1}".to_owned()),
            Just("true".to_owned()),
            Just("nul".to_owned()),
            Just("-".to_owned()),
            Just("0".to_owned()),
            Just("1e400".to_owned()),
            Just(".5".to_owned()),
            Just("E+".to_owned()),
            Just("12345678901234567890".to_owned()),
            Just("\"text\"".to_owned()),
            Just("\"id\"".to_owned()),
            "[a-z0-9é😀]{1,4}",
        ];
        prop_oneof![
            proptest::collection::vec(piece, 0..24).prop_map(|p| p.concat()),
            (
                value_strategy(),
                0usize..300,
                "[\\x00-\\x7f]{0,3}",
                any::<bool>()
            )
                .prop_map(|(v, cut, junk, cut_off)| {
                    let mut t = serde_json::to_string(&v).unwrap();
                    let at = (0..=cut.min(t.len()))
                        .rev()
                        .find(|&i| t.is_char_boundary(i))
                        .unwrap_or(0);
                    if cut_off {
                        t.truncate(at);
                    }
                    t.insert_str(at, &junk);
                    t
                }),
        ]
    }

    proptest::proptest! {
        /// Note [Doomed strict parses]: the pre-check never turns away
        /// text `serde_json` reads, and whatever it lets through gets
        /// `parse`'s answer.
        #[test]
        fn precheck_never_refuses_what_serde_reads(t in mangled_strategy(), v in value_strategy()) {
            for text in [t, serde_json::to_string(&v).unwrap(), serde_json::to_string_pretty(&v).unwrap()] {
                proptest::prop_assert_eq!(parse_if_json(&text), parse(&text).ok(), "{:?}", text);
            }
        }

        /// Note [Reading reply lines]: every line read gets the `Value`
        /// reading's answer.
        #[test]
        fn reply_of_line_agrees_with_the_value_reading(
            v in value_strategy(),
            text in "[\\x00-\\x21\"\\\\a\\x7f-\\u{a0}é😀{}\\[\\]]{0,60}",
            junk in mangled_strategy(),
            shape in 0u8..4,
        ) {
            let line = match shape {
                0 => serde_json::to_string(&text).unwrap(),
                1 => serde_json::to_string(&serde_json::json!({"id": v, "text": text})).unwrap(),
                2 => serde_json::to_string_pretty(&serde_json::json!({"text": text, "expected": v, "id": 1})).unwrap(),
                _ => format!("{{\"text\": {}, \"x\": {junk}}}", serde_json::to_string(&text).unwrap()),
            };
            let reference = reference_reply(&line);
            match reply_of_line(line.as_bytes()) {
                Some(got) => proptest::prop_assert_eq!(Some(got), reference, "{}", line),
                // Declined only for what the reader is unsure of.
                // Declined only for what the reader is unsure of (numbers
                // and the like in the other members); a string line never.
                None => proptest::prop_assert!(shape != 0 || reference.is_none(), "{}", line),
            }
            for mangled in [junk.clone(), format!("{{\"text\": \"a\", {junk}}}"), format!("{line}{junk}")] {
                if let Some(got) = reply_of_line(mangled.as_bytes()) {
                    proptest::prop_assert_eq!(Some(got), reference_reply(&mangled), "{}", mangled);
                }
            }
        }
    }

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

    /// Strings dense in what must be escaped, long enough for every path
    /// of the run copies (short words, long runs, the text's last bytes).
    fn escapable_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        "([\\x00-\\x21\"\\\\a/\\x7f-\\u{a0}é😀 ]|[a-z ]{1,20}|\n {2,8}){0,60}"
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
                    let Escape::Char(c, used) = unescape(b.get(j + 1..)?) else {
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

    /// Raw string bodies, valid or not: every escape (`\u` ones whole,
    /// surrogate pairs, lone halves and broken ones), raw control
    /// characters, bytes ≥ 0x80 (UTF-8 or not), quotes, and runs from 0 to
    /// 90 bytes, so escapes fall at every offset of a 64-byte block and
    /// strings end anywhere near the line's end.
    fn raw_body_strategy() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            4 => "[a-z ]{0,90}".prop_map(String::into_bytes),
            2 => Just(b"\\n".to_vec()),
            2 => Just(b"\\\"".to_vec()),
            1 => Just(b"\\\\".to_vec()),
            1 => prop::sample::select(&b"/bfnrtu\"\\x0 "[..]).prop_map(|c| vec![b'\\', c]),
            1 => Just(b"\\u00e9".to_vec()),
            1 => Just(b"\\ud83d\\ude00".to_vec()),
            1 => Just(b"\\ud83d".to_vec()),
            1 => Just(b"\\ude00x".to_vec()),
            1 => Just(b"\\u12g4".to_vec()),
            1 => Just("é→😀".as_bytes().to_vec()),
            1 => (0u8..0x20).prop_map(|c| vec![c]),
            1 => (0x80u8..=0xff).prop_map(|c| vec![c]),
            1 => Just(b"\"".to_vec()),
        ];
        prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
    }

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

        /// Note [Inlined string scans]: the inlined first chunk gives the
        /// slow scan's verdict, wherever the string ends (or is cut).
        #[test]
        fn scan_string_agrees_with_the_slow_scan(
            body in raw_body_strategy(),
            after in "[ ,}\\]a\"]{0,20}",
            cut in 0usize..200,
        ) {
            let mut line = vec![b'"'];
            line.extend_from_slice(&body);
            line.push(b'"');
            line.extend_from_slice(after.as_bytes());
            let cut = cut % (line.len() + 1);
            for text in [&line[..], &line[..cut.max(1)]] {
                proptest::prop_assert_eq!(scan_string(text, 0), scan_string_slow(text, 0), "{:?}", String::from_utf8_lossy(text));
            }
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

        /// `scan_number` counts digits as it reads: the same verdict as
        /// the two-pass scan it replaced, on numbers and near-numbers.
        #[test]
        fn scan_number_agrees_with_the_two_pass_scan(
            text in proptest::prelude::prop_oneof![
                "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{0,20})?([eE][+-]?[0-9]{0,4})?[,\\]} a.eE+-]{0,2}",
                "[-+0-9.eE ]{0,12}",
            ],
        ) {
            proptest::prop_assert_eq!(
                scan_number(text.as_bytes(), 0),
                scan_number_two_pass(text.as_bytes(), 0),
                "{}",
                text
            );
        }
    }

    /// The number scan before digits were counted on the way: the literal
    /// read, then `surely_exact` over it.
    fn scan_number_two_pass(b: &[u8], i: usize) -> Scan {
        let digits = |mut k: usize| {
            while b.get(k).is_some_and(u8::is_ascii_digit) {
                k += 1;
            }
            k
        };
        let mut j = i;
        if b.get(j) == Some(&b'-') {
            j += 1;
        }
        match b.get(j) {
            Some(b'0') => j += 1,
            Some(b'1'..=b'9') => j = digits(j + 1),
            _ => return Scan::Invalid,
        }
        if b.get(j) == Some(&b'.') {
            let end = digits(j + 1);
            if end == j + 1 {
                return Scan::Invalid;
            }
            j = end;
        }
        if matches!(b.get(j), Some(b'e' | b'E')) {
            j += 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let end = digits(j);
            if end == j {
                return Scan::Invalid;
            }
            j = end;
        }
        if surely_exact(b.get(i..j).unwrap_or_default()) {
            Scan::Value(j)
        } else {
            Scan::Doubtful
        }
    }

    /// Note [UTF-8 checked once]: a byte that breaks UTF-8 anywhere in the
    /// line (inside `text` raw or next to an escape, in a key, in `id`, in
    /// another member, after the object) declines the line, as the `Value`
    /// reading refuses it.
    #[test]
    fn reply_of_line_refuses_broken_utf8_anywhere() {
        let lines: &[&[u8]] = &[
            b"{\"text\": \"a\xff\"}",
            b"{\"text\": \"a\\n\xc3\\n\"}",
            b"{\"text\": \"a\xc3\\u00a9\"}",
            b"{\"text\": \"\\u00e9\xa9\"}",
            b"{\"text\": \"a\xe2\x82\"}",
            b"{\"text\": \"a\", \"x\": \"\xff\"}",
            b"{\"x\": [\"\xc3\"], \"text\": \"a\"}",
            b"{\"\xff\": 1, \"text\": \"a\"}",
            b"{\"id\": \"\xc3\", \"text\": \"a\"}",
            b"\"a\xff\"",
        ];
        for line in lines {
            assert!(serde_json::from_slice::<Value>(line).is_err());
            assert_eq!(
                reply_of_line(line),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let fine = "{\"id\": \"é\", \"é\": [\"😀\"], \"text\": \"→\\n\\u00e9é\"}";
        assert_eq!(
            reply_of_line(fine.as_bytes()),
            Some(("→\néé".to_owned(), Some(json!("é"))))
        );
    }

    proptest::proptest! {
        /// Any byte written over any byte of a line: whatever is read
        /// gets the `Value` reading's answer (a line that is no longer
        /// UTF-8 is never read).
        #[test]
        fn reply_of_line_agrees_on_bytes(
            v in value_strategy(),
            text in "[\\x00-\\x21\"\\\\a\\x7f-\\u{a0}é😀{}]{0,40}",
            at in 0usize..400,
            byte in proptest::prelude::any::<u8>(),
        ) {
            let line = serde_json::to_string(&serde_json::json!({"id": v, "text": text, "x": v})).unwrap();
            let mut bytes = line.into_bytes();
            let at = at % bytes.len();
            bytes[at] = byte;
            let reference = match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(mut m)) => match m.remove("text") {
                    Some(Value::String(s)) => Some((s, m.remove("id"))),
                    _ => None,
                },
                _ => None,
            };
            if let Some(got) = reply_of_line(&bytes) {
                proptest::prop_assert_eq!(Some(got), reference);
            }
        }
    }

    proptest::proptest! {
        /// Note [Reused text buffers]: one buffer read line after line
        /// (left longer than the next text, shorter, or full of earlier
        /// bytes) gives every line the `Value` reading's answer, and the
        /// same as a fresh buffer.
        #[test]
        fn reply_of_line_into_reuses_its_buffer(
            texts in proptest::collection::vec(escapable_strategy(), 1..6),
            shapes in proptest::collection::vec(0u8..4, 6),
            junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
            cut in 0usize..3000,
        ) {
            let mut scratch = junk;
            for (text, &shape) in texts.iter().zip(&shapes) {
                let line = match shape {
                    0 => serde_json::to_string(text).unwrap(),
                    1 => serde_json::to_string(&json!({"id": 7, "text": text})).unwrap(),
                    2 => serde_json::to_string(&json!({"text": text, "expected": {"a": [text]}})).unwrap(),
                    _ => {
                        // Cut anywhere (a string cut short ends the line).
                        let l = serde_json::to_string(&json!({"x": 1, "text": text})).unwrap();
                        let at = cut % (l.len() + 1);
                        String::from_utf8_lossy(&l.as_bytes()[..at]).into_owned()
                    }
                };
                let fresh = reply_of_line(line.as_bytes());
                let got = reply_of_line_into(line.as_bytes(), &mut scratch)
                    .map(|(t, id)| (t.to_owned(), id));
                proptest::prop_assert_eq!(&got, &fresh, "{}", line);
                if shape != 3 || got.is_some() {
                    proptest::prop_assert_eq!(got, reference_reply(&line), "{}", line);
                }
            }
        }
    }

    proptest::proptest! {
        /// Note [Vector UTF-8 checks]: the same verdict as the standard
        /// library on any bytes, mostly UTF-8 with a byte changed,
        /// inserted or cut, at any length around the vector steps.
        #[test]
        fn simdutf8_agrees_with_std(
            text in "[a-z\\x00-\\x7fé→😀\\u{10ffff}]{0,200}",
            at in 0usize..1000,
            byte in proptest::prelude::any::<u8>(),
            how in 0u8..4,
        ) {
            let mut bytes = text.into_bytes();
            let at = at % (bytes.len() + 1);
            match how {
                0 => {}
                1 => bytes.insert(at, byte),
                2 => bytes.truncate(at),
                _ => {
                    if let Some(c) = bytes.get_mut(at) {
                        *c = byte;
                    }
                }
            }
            proptest::prop_assert_eq!(utf8(&bytes), std::str::from_utf8(&bytes).ok());
        }
    }

    #[test]
    fn reply_of_line_table() {
        type Row = (&'static str, Option<(&'static str, Option<Value>)>);
        let rows: &[Row] = &[
            (r#""a\nb""#, Some(("a\nb", None))),
            (r#"  "x"  "#, Some(("x", None))),
            (
                r#"{"id": 3, "text": "x\"y"}"#,
                Some(("x\"y", Some(json!(3)))),
            ),
            (
                r#"{"id":0,"kind":"k","text":"t \u00e9\ud83d\ude00","expected":{"a":[1,2.5,null,true,"s"]}}"#,
                Some(("t é😀", Some(json!(0)))),
            ),
            (
                r#"{"text": "x", "id": {"k": [1, null]}}"#,
                Some(("x", Some(json!({"k": [1, null]})))),
            ),
            (r#"{"id": null, "text": ""}"#, Some(("", Some(Value::Null)))),
            (r#"{"text": "a", "x": 1, "x": 2}"#, Some(("a", None))),
            // Declined: the `Value` reading decides.
            (r#"{"text": "a", "text": "b"}"#, None),
            (r#"{"id": 1, "id": 2, "text": "a"}"#, None),
            (r#"{"te\u0078t": "a"}"#, None),
            (r#"{"text": 1}"#, None),
            (r#"{"text": null}"#, None),
            (r#"{"id": 1}"#, None),
            ("{}", None),
            (r#"{"text": "x", "n": 1e400}"#, None),
            (r#"{"text": "x", "n": "\ud800"}"#, None),
            (r#"{"text": "x", "n": [1,]}"#, None),
            (r#"{"text": "x"} trailing"#, None),
            (r#"{"text": "x""#, None),
            (r#"{"text": "x",}"#, None),
            (r#""\ud800""#, None),
            ("\"a\tb\"", None),
            ("[1]", None),
            ("nope", None),
            ("", None),
        ];
        for (line, want) in rows {
            let want = want.as_ref().map(|(t, id)| ((*t).to_owned(), id.clone()));
            assert_eq!(reply_of_line(line.as_bytes()), want, "{line}");
        }
        assert_eq!(reply_of_line(b"\"\xff\""), None);
    }

    #[test]
    fn scan_table() {
        let rows: &[(&str, Scan)] = &[
            ("{}", Scan::Value(2)),
            (
                r#"{"a": [1, -0.5e+3, true, false, null, "x\"\u00e9"]} x"#,
                Scan::Value(51),
            ),
            ("[1,]", Scan::Invalid),
            ("{'a': 1}", Scan::Invalid),
            ("{a: 1}", Scan::Invalid),
            (r#"{"a": 1,}"#, Scan::Invalid),
            (r#"{"a" 1}"#, Scan::Invalid),
            ("[01]", Scan::Invalid),
            ("[1.]", Scan::Invalid),
            ("[.5]", Scan::Invalid),
            ("[1e]", Scan::Invalid),
            ("[+1]", Scan::Invalid),
            ("[True]", Scan::Invalid),
            ("[nul]", Scan::Invalid),
            ("[\"a\nb\"]", Scan::Invalid),
            (r#"["\x"]"#, Scan::Invalid),
            (r#"["\u12"]"#, Scan::Invalid),
            ("[1", Scan::Invalid),
            ("", Scan::Invalid),
            ("[1e400]", Scan::Doubtful),
            ("[12345678901234567890]", Scan::Doubtful),
            (r#"["\udc00"]"#, Scan::Doubtful),
            (r#"["\ud800x"]"#, Scan::Doubtful),
        ];
        for (text, want) in rows {
            assert_eq!(scan_value(text.as_bytes(), 0, 0), *want, "{text}");
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(scan_value(deep.as_bytes(), 0, 0), Scan::Doubtful);
        let deep_bad = format!("{}1,]{}", "[".repeat(50), "]".repeat(49));
        assert_eq!(scan_value(deep_bad.as_bytes(), 0, 0), Scan::Invalid);
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

    #[test]
    fn reply_lines_of_every_shape() {
        type Row = (&'static str, Option<(&'static str, Option<Value>)>);
        let rows: &[Row] = &[
            (r#""a\nb""#, Some(("a\nb", None))),
            (
                r#"{"id": 3, "text": "x\"y"}"#,
                Some(("x\"y", Some(json!(3)))),
            ),
            (
                r#"{"text": "x", "id": {"k": [1, null]}, "expected": {"a": 1.5}}"#,
                Some(("x", Some(json!({"k": [1, null]})))),
            ),
            (r#"{"id": null, "text": ""}"#, Some(("", Some(Value::Null)))),
            // Declined: the `serde_json` reading decides.
            (r#"{"text": "a", "text": "b"}"#, None),
            (r#"{"text": 1}"#, None),
            (r#"{"id": 1}"#, None),
            (r#"{"text": "x", "n": 1e400}"#, None),
            (r#""\ud800""#, None),
            ("[1]", None),
            ("nope", None),
        ];
        for (line, want) in rows {
            let want = want.as_ref().map(|(t, id)| ((*t).to_owned(), id.clone()));
            assert_eq!(reply_line(line), want, "{line}");
        }
    }

    #[test]
    fn exactness_table() {
        let cases: &[(&str, bool)] = &[
            ("0", true),
            ("-0", true),
            ("42", true),
            ("-9223372036854775808", true),
            ("18446744073709551615", true),
            ("18446744073709551616", false),
            ("12345678901234567890123", false),
            ("100000000000000000000000", true),
            ("0.1", true),
            ("3.14159", true),
            ("1e20", true),
            ("1.5E+3", true),
            ("0.30000000000000004", true),
            ("0.30000000000000000001", false),
            ("1.7976931348623157e308", true),
            ("1e400", false),
            ("-1e400", false),
            ("1e-400", false),
            ("5e-324", true),
            ("1e99999999999999999999999", false),
            ("0e99999999999999999999999", true),
            ("2.50", true),
        ];
        for (literal, want) in cases {
            assert_eq!(is_exact(literal), *want, "{literal}");
        }
        assert!(!is_exact(&"9".repeat(100_000)));
    }

    #[test]
    fn parse_lists_inexact_numbers_with_their_paths() {
        let text = r#"{"a": 1e400, "b": [1, 12345678901234567890123], "c/d": {"e": 0.5}}"#;
        let p = parse(text).unwrap();
        assert_eq!(p.value["a"], Value::Null);
        assert_eq!(p.value["c/d"]["e"], json!(0.5));
        let paths: Vec<(&str, &str, &str)> = p
            .inexact
            .iter()
            .map(|n| {
                (
                    n.instance_path.as_str(),
                    n.literal.as_str(),
                    n.held.as_str(),
                )
            })
            .collect();
        assert_eq!(
            paths,
            [
                ("/a", "1e400", "null"),
                ("/b/1", "12345678901234567890123", "1.2345678901234568e+22")
            ]
        );
        let v = p.inexact[1].violation();
        assert_eq!(v.kind, Some(ViolationKind::Number));
        assert!(
            v.message.contains("cannot be represented exactly"),
            "{}",
            v.message
        );
    }

    #[test]
    fn a_huge_integer_is_listed_cut_short() {
        let text = format!("{{\"n\": {}}}", "9".repeat(100_000));
        let p = parse(&text).unwrap();
        assert_eq!(p.value, json!({"n": null}));
        assert_eq!(p.inexact.len(), 1);
        assert!(p.inexact[0].literal.ends_with("(100000 characters)"));
    }

    #[test]
    fn exact_numbers_and_keys_with_escapes_are_left_alone() {
        for text in [
            r#"{"a\"b": [1, 2.5, -3e2], "n": 123456789012345678}"#,
            "[0.1, 0.2, 0.30000000000000004]",
            "\"1e400 in a string\"",
        ] {
            let p = parse(text).unwrap();
            assert!(p.inexact.is_empty(), "{text}: {:?}", p.inexact);
        }
        let p = parse(r#"{"a\"b": {"k\\": [9.00000000000000000001]}}"#).unwrap();
        assert_eq!(p.inexact[0].instance_path, "/a\"b/k\\/0");
        assert!(parse("{").is_err());
        assert!(parse("[1e400,").is_err());
    }
}
