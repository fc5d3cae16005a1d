//! Secrets the rules cannot see as written: percent-encoded URLs, base64
//! blobs, JWTs broken over lines.
//!
//! Note \[Derived texts\]: each of these is undone in a small window of the
//! text (decoded, or joined across the line break) and the detector's rules
//! run on the result, a *derived text*. Each byte of a derived text knows
//! the span of the original it came from, so a finding in it is masked in
//! the original: over the encoded bytes for a percent-encoded URL, over the
//! whole run for base64 (its bytes do not line up with the decoded ones),
//! and piece by piece on either side of a line break for a JWT (the break
//! stays, so the text keeps its lines). The windows are found without the
//! regexes: a `memchr` pass for `%` (an encoded `://` after it) and for
//! `eyJ`, and a scan that reads 64 bytes at a time on ordinary text, so
//! text that holds none of them costs nearly nothing. Derived texts are not derived again (one
//! level of decoding).

#[cfg(target_arch = "x86_64")]
pub(super) mod alphabet;

use std::sync::OnceLock;

use memchr::memmem;

/// Which encodings' beginnings a text may hold, as its caller knows them
/// (Note \[Line facts in one pass\] in `facts.rs`): [`trigger_spans`]
/// searches only for those it may.
#[derive(Debug, Clone, Copy)]
pub(super) struct Starts {
    /// A `%`.
    pub percent: bool,
    /// `eyJ`.
    pub eyj: bool,
    /// A run of [`B64_MIN`] base64 bytes.
    pub b64_run: bool,
}

impl Starts {
    /// Nothing known: every search runs.
    #[cfg(test)]
    pub(super) const UNKNOWN: Starts = Starts {
        percent: true,
        eyj: true,
        b64_run: true,
    };
}

/// A window of the original text, decoded or joined.
#[derive(Debug)]
pub(super) struct Derived {
    /// The decoded or joined text.
    pub(super) text: String,
    /// Per byte of `text`, the original span `[start, end)` it came from;
    /// empty when a finding masks `whole` instead.
    pub(super) spans: Vec<(usize, usize)>,
    /// The original span masked whole for any finding in `text` (base64).
    pub(super) whole: Option<(usize, usize)>,
}

impl Derived {
    /// The original spans to mask for a finding at `[start, end)` of `text`:
    /// one span, or one per side of each removed line break.
    pub(super) fn original(&self, start: usize, end: usize) -> Vec<(usize, usize)> {
        if let Some(w) = self.whole {
            return vec![w];
        }
        let Some(spans) = self.spans.get(start..end).filter(|s| !s.is_empty()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let (mut from, mut to) = spans[0];
        for &(s, e) in &spans[1..] {
            if s != to {
                out.push((from, to));
                from = s;
            }
            to = e;
        }
        out.push((from, to));
        out
    }
}

/// Every derived text of `text` (Note \[Derived texts\]); `masked` are the
/// spans of masks already in it, which no window may touch.
pub(super) fn derive(text: &str, masked: &[(usize, usize)]) -> Vec<Derived> {
    let mut out = Vec::new();
    percent_windows(text, &mut out);
    jwt_joins(text, &mut out);
    base64_runs(text, &mut out);
    out.retain(|d| {
        let (lo, hi) = d.whole.unwrap_or_else(|| {
            (
                d.spans.first().map_or(0, |s| s.0),
                d.spans.last().map_or(0, |s| s.1),
            )
        });
        !masked.iter().any(|&(ms, me)| lo < me && ms < hi)
    });
    out
}

/// Where a window of [`derive`] may start, as byte spans: each `%` of an
/// encoded `://`, each `eyJ`, each base64 run of at least [`B64_MIN`]
/// bytes that decodes to text. A text without any has no derived text.
///
/// Note \[Percent at an encoded scheme\]: a percent window opens only at
/// an encoded `://` (`%3A%2F%2F`, or twice encoded, [`percent_windows`]),
/// so only that `%` is a trigger. Every `%` was one, and ordinary text
/// holds many (`50% of the tokens`): on the bench's `extract --jsonl`
/// output, 11,635 of the 15,393 hot spans were a lone `%`, each sending
/// its line through the walk string by string for nothing. The pattern
/// holds no quote, backslash or control character, so as written (no `\u`
/// escape) it lies inside one string exactly when that string's text holds
/// it.
///
/// Note \[Runs that decode to text\]: a run of base64 bytes is only a
/// window when one of its alignments decodes to text ([`base64_runs`]), so
/// only then is it a trigger. Counting every run of 24 base64 bytes made
/// ordinary JSON hot for nothing: `"raw_control_char_in_string"`, a path
/// such as `roles/app/tasks/docker-compose` or an identifier are runs, and
/// a hot line is walked string by string (perf: `b64_runs` and the walk it
/// caused were a sixth of masking `extract --jsonl` output). The spans are
/// read from JSON text as written, where a string's escapes differ from its
/// text: with no `\u` or `\/` (the caller's condition), an escape becomes
/// a byte outside the alphabet, so a run of the text is a run as written
/// with at most one escape letter in front (`\nQUJD…`); one alignment more
/// than [`derive`] tries covers it.
///
/// `starts` says which of a `%`, an `eyJ` and a run of [`B64_MIN`] base64
/// bytes the text may hold; it is not searched for the others.
pub(super) fn trigger_spans(bytes: &[u8], starts: Starts, out: &mut Vec<(usize, usize)>) {
    // Only an encoded `://` starts a percent window (Note \[Percent at an
    // encoded scheme\]).
    if starts.percent {
        out.extend(
            memchr::memchr_iter(b'%', bytes)
                .filter(|&at| encoded_colon_slashes(bytes, at))
                .map(|at| (at, at + 1)),
        );
    }
    if starts.eyj {
        out.extend(eyj().find_iter(bytes).map(|at| (at, at + 3)));
    }
    // A run as written may be one escape letter longer than the text's.
    if starts.b64_run {
        b64_runs(bytes, B64_MAX + 1, |start, end| {
            if text_run(bytes, start, end, ALIGNMENTS + 1).is_some() {
                out.push((start, end));
            }
        });
    }
}

/// The searcher for `eyJ`, one for the process (this runs for every string
/// masked).
pub(super) fn eyj() -> &'static memmem::Finder<'static> {
    static EYJ: OnceLock<memmem::Finder<'static>> = OnceLock::new();
    EYJ.get_or_init(|| memmem::Finder::new(b"eyJ"))
}

/// Whether [`derive`] may find a window in `text` (a cheap superset).
pub(super) fn may_derive(text: &str) -> bool {
    let bytes = text.as_bytes();
    if memchr::memchr_iter(b'%', bytes).any(|at| encoded_colon_slashes(bytes, at))
        || eyj().find(bytes).is_some()
    {
        return true;
    }
    let mut any = false;
    b64_runs(bytes, B64_MAX, |start, end| {
        any = any || text_run(bytes, start, end, ALIGNMENTS).is_some();
    });
    any
}

// ---------------------------------------------------------------------------
// Percent-encoded URLs: `postgres%3A%2F%2Fuser%3Apass%40host`.

/// The longest window read around a `%3A%2F%2F`.
const URL_MAX: usize = 2048;

/// What a URL's scheme is made of (read leftwards from `://`).
fn is_scheme(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'.' || b == b'-'
}

/// What a percent-encoded URL is made of: printable ASCII but for quotes,
/// angle brackets, the backslash and space.
fn is_url(b: u8) -> bool {
    b.is_ascii_graphic() && !matches!(b, b'"' | b'\'' | b'`' | b'<' | b'>' | b'\\')
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Is `at` the start of an encoded `://`, once (`%3A%2F%2F`) or twice
/// (`%253A%252F%252F`) encoded, in either case?
fn encoded_colon_slashes(bytes: &[u8], at: usize) -> bool {
    let rest = &bytes[at..];
    [&b"%3a%2f%2f"[..], &b"%253a%252f%252f"[..]]
        .iter()
        .any(|p| rest.len() >= p.len() && rest[..p.len()].eq_ignore_ascii_case(p))
}

/// Decoded bytes and, per byte, the original span it came from.
type Decoded = (Vec<u8>, Vec<(usize, usize)>);

/// `%XX` decoded in `bytes`, with each output byte's span in `spans`
/// (`spans[i]` for input byte `i`); `None` when nothing was decoded.
fn percent_decode(bytes: &[u8], spans: &[(usize, usize)]) -> Option<Decoded> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut out_spans = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut changed = false;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex_value),
                bytes.get(i + 2).copied().and_then(hex_value),
            )
        {
            out.push(h << 4 | l);
            out_spans.push((spans[i].0, spans[i + 2].1));
            i += 3;
            changed = true;
        } else {
            out.push(bytes[i]);
            out_spans.push(spans[i]);
            i += 1;
        }
    }
    changed.then_some((out, out_spans))
}

/// Windows around each encoded `://`: the scheme before it and the URL
/// characters after it, percent-decoded (twice at most).
fn percent_windows(text: &str, out: &mut Vec<Derived>) {
    let bytes = text.as_bytes();
    let mut after = 0;
    for at in memchr::memchr_iter(b'%', bytes) {
        if at < after || !encoded_colon_slashes(bytes, at) {
            continue;
        }
        let mut start = at;
        while start > 0 && at - start < 32 && is_scheme(bytes[start - 1]) {
            start -= 1;
        }
        let mut end = at;
        while end < bytes.len() && end - start < URL_MAX && is_url(bytes[end]) {
            end += 1;
        }
        after = end;
        let window = &bytes[start..end];
        let spans: Vec<(usize, usize)> = (start..end).map(|i| (i, i + 1)).collect();
        let Some((mut decoded, mut spans)) = percent_decode(window, &spans) else {
            continue;
        };
        if let Some((again, again_spans)) = percent_decode(&decoded, &spans) {
            decoded = again;
            spans = again_spans;
        }
        if let Ok(text) = String::from_utf8(decoded) {
            out.push(Derived {
                text,
                spans,
                whole: None,
            });
        }
    }
}

// ---------------------------------------------------------------------------
// JWTs broken over lines.

/// What a JWT is made of (base64url, the dots, and what gitleaks' rule
/// also takes in its segments: `/`, `\`, `=`).
fn is_jwt(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/' | b'\\' | b'=')
}

/// The longest JWT joined, and the most line breaks joined in one.
const JWT_MAX: usize = 16 << 10;
const JWT_BREAKS: usize = 16;
/// A signature shorter than this (HS256's 43 characters) is incomplete.
const JWT_SIGNATURE_MIN: usize = 43;

/// The length of a line break at `at` (`\n`, `\r\n`, or the escapes `\n`
/// and `\r\n` of JSON text) and of the indentation after it; 0 when none.
fn line_break(bytes: &[u8], at: usize) -> usize {
    let rest = &bytes[at..];
    let brk = [&b"\r\n"[..], b"\n", br"\r\n", br"\n"]
        .iter()
        .find(|p| rest.starts_with(p))
        .map_or(0, |p| p.len());
    if brk == 0 {
        return 0;
    }
    let indent = rest[brk..]
        .iter()
        .take(16)
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    brk + indent
}

/// Each `eyJ` that starts a token broken by a line break while still
/// incomplete (fewer than two dots, or a dot last, or a signature shorter
/// than [`JWT_SIGNATURE_MIN`] followed by a line of token characters only),
/// joined across its breaks.
fn jwt_joins(text: &str, out: &mut Vec<Derived>) {
    let bytes = text.as_bytes();
    let mut after = 0;
    for at in eyj().find_iter(bytes) {
        if at < after || (at > 0 && bytes[at - 1].is_ascii_alphanumeric()) {
            continue;
        }
        let mut joined = Vec::new();
        let mut spans = Vec::new();
        let mut i = at;
        let (mut dots, mut since_dot, mut breaks) = (0, 0, 0);
        while i < bytes.len() && i - at < JWT_MAX {
            let b = bytes[i];
            if is_jwt(b) && !(b == b'\\' && line_break(bytes, i) > 0) {
                joined.push(b);
                spans.push((i, i + 1));
                if b == b'.' {
                    dots += 1;
                    since_dot = 0;
                } else {
                    since_dot += 1;
                }
                i += 1;
                continue;
            }
            let brk = line_break(bytes, i);
            let next = i + brk;
            if brk == 0 || breaks == JWT_BREAKS || next >= bytes.len() || !is_jwt(bytes[next]) {
                break;
            }
            let incomplete = dots < 2 || since_dot == 0;
            let short_signature = dots == 2 && since_dot < JWT_SIGNATURE_MIN && {
                let line = &bytes[next..];
                let run = line.iter().take_while(|b| is_jwt(**b)).count();
                run + since_dot >= JWT_SIGNATURE_MIN && line_break_or_end(line, run)
            };
            if !(incomplete || short_signature) {
                break;
            }
            breaks += 1;
            i = next;
        }
        after = i;
        if breaks > 0
            && let Ok(text) = String::from_utf8(joined)
        {
            out.push(Derived {
                text,
                spans,
                whole: None,
            });
        }
    }
}

/// Does `line` end (a break, the end, or white space) at `run`?
fn line_break_or_end(line: &[u8], run: usize) -> bool {
    run == line.len() || line[run].is_ascii_whitespace() || line_break(line, run) > 0
}

// ---------------------------------------------------------------------------
// Base64 blobs that decode to text.

/// The shortest base64 run read (18 bytes decoded: `password=hunter22`).
pub(super) const B64_MIN: usize = 24;
/// The longest: a longer run is an image or an archive, not a config.
const B64_MAX: usize = 64 << 10;

/// Base64's alphabet (standard and URL-safe) to its values; 0xFF: not in it.
const B64_VALUE: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0u8;
    while i < 26 {
        t[(b'A' + i) as usize] = i;
        t[(b'a' + i) as usize] = 26 + i;
        i += 1;
    }
    let mut d = 0u8;
    while d < 10 {
        t[(b'0' + d) as usize] = 52 + d;
        d += 1;
    }
    t[b'+' as usize] = 62;
    t[b'-' as usize] = 62;
    t[b'/' as usize] = 63;
    t[b'_' as usize] = 63;
    t
};

pub(super) fn is_b64(b: u8) -> bool {
    B64_VALUE[b as usize] != 0xFF
}

/// Decodes `run` (no padding) into text, or `None` as soon as a byte
/// cannot be text: a control character other than tab and line breaks,
/// or a byte that is not UTF-8.
fn decode_text(run: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(run.len() / 4 * 3 + 2);
    // `out[..valid]` is known UTF-8.
    let mut valid = 0;
    for chunk in run.chunks(4) {
        if chunk.len() == 1 {
            break;
        }
        let mut acc = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            acc |= u32::from(B64_VALUE[c as usize]) << (18 - 6 * k);
        }
        let [_, a, b, c] = acc.to_be_bytes();
        let new = out.len();
        out.extend_from_slice(&[a, b, c][..chunk.len() - 1]);
        if out[new..]
            .iter()
            .any(|&x| x < 0x20 && !matches!(x, b'\t' | b'\n' | b'\r') || x == 0x7F)
        {
            return None;
        }
        match std::str::from_utf8(&out[valid..]) {
            Ok(_) => valid = out.len(),
            // A character cut at the chunk's end: checked with the next one.
            Err(e) if e.error_len().is_none() => valid += e.valid_up_to(),
            Err(_) => return None,
        }
    }
    String::from_utf8(out).ok()
}

/// Runs of base64 of a plausible length that decode to text, each masked
/// whole.
fn base64_runs(text: &str, out: &mut Vec<Derived>) {
    let bytes = text.as_bytes();
    b64_runs(bytes, B64_MAX, |start, end| {
        let mut padded = end;
        while padded < bytes.len() && padded - end < 2 && bytes[padded] == b'=' {
            padded += 1;
        }
        if let Some((from, text)) = text_run(bytes, start, end, ALIGNMENTS) {
            out.push(Derived {
                text,
                spans: Vec::new(),
                whole: Some((from, padded)),
            });
        }
    });
}

/// The alignments a base64 run is decoded at: a run may begin inside a
/// word (`com/c2Vj…`, `\nc2Vj…`), so each of the four.
const ALIGNMENTS: usize = 4;

/// The first of `alignments` starts of the run `bytes[start..end]` that
/// decodes to text long enough to hold a secret, and that text.
fn text_run(bytes: &[u8], start: usize, end: usize, alignments: usize) -> Option<(usize, String)> {
    (0..alignments).find_map(|skip| {
        let from = (start + skip).min(end);
        decode_text(&bytes[from..end])
            .filter(|t| t.len() >= B64_MIN / 2)
            .map(|t| (from, t))
    })
}

/// Calls `each(start, end)` for every run of base64 bytes [`B64_MIN`] to
/// `max` long, in order.
///
/// Note \[Base64 runs a block at a time\]: the text is read 64 bytes at a
/// time as a mask of the bytes in the alphabet ([`Masks`]: two shuffles a
/// 32 bytes with AVX2, Note \[Base64 bytes by nibbles\] in `alphabet.rs`;
/// else `bytescan::base64_bytes64`, four vector compares a 16 bytes on
/// `x86_64` and WebAssembly), with the next
/// block's mask behind it. Five AND-shifts of the 128 bits (by 1, 2, 4, 8
/// and 8) leave the positions where [`B64_MIN`] (24) alphabet bytes begin,
/// so a block of prose, whose words are shorter, is passed in a few
/// instructions. Before, each 24th byte was sampled and a word around it
/// read byte by byte: 10% of masking `extract --jsonl` output (perf),
/// `hot_spans`' largest part after the keyword pass. The first such
/// position in a run is its start (each run is passed whole, so none is
/// entered midway); its end is read forward.
fn b64_runs(bytes: &[u8], max: usize, mut each: impl FnMut(usize, usize)) {
    const BLOCK: usize = 64;
    let mut masks = Masks::new(bytes);
    let mut mask = |at: usize| masks.at(at);
    let mut at = 0;
    let mut here = mask(0);
    while at < bytes.len() {
        let next = if at + BLOCK < bytes.len() {
            mask(at + BLOCK)
        } else {
            0
        };
        let two = u128::from(here) | u128::from(next) << BLOCK;
        let mut long = two & two >> 1;
        long &= long >> 2;
        long &= long >> 4;
        long &= long >> 8;
        long &= long >> 8;
        // The low 64 bits: where a run of 24 begins in this block.
        #[allow(clippy::cast_possible_truncation)]
        let long = long as u64;
        if long == 0 {
            at += BLOCK;
            here = next;
            continue;
        }
        let start = at + long.trailing_zeros() as usize;
        let mut end = start + B64_MIN;
        while end < bytes.len() && is_b64(bytes[end]) {
            end += 1;
        }
        if end - start <= max {
            each(start, end);
        }
        // `bytes[end]` is out of the alphabet: the next run starts after it.
        at = end;
        here = mask(at);
    }
}

/// Words of alphabet masks made at a time: 4 KiB of text.
const MASK_WORDS: usize = 64;

/// The alphabet masks of a text, 64 bytes to a word (bit `i` of word `k`
/// for byte `64 * k + i`; bytes past the end are outside the alphabet),
/// made [`MASK_WORDS`] at a time as [`b64_runs`] reads forward, by the
/// vector form where the CPU has one (Note \[Base64 bytes by nibbles\] in
/// `alphabet.rs`), else by `bytescan`'s.
struct Masks<'t> {
    text: &'t [u8],
    /// The word `words[0]` is, and how many of `words` are made.
    first: usize,
    made: usize,
    words: [u64; MASK_WORDS],
}

impl<'t> Masks<'t> {
    fn new(text: &'t [u8]) -> Masks<'t> {
        Masks {
            text,
            first: 0,
            made: 0,
            words: [0; MASK_WORDS],
        }
    }

    /// Word `k`.
    fn word(&mut self, k: usize) -> u64 {
        let Some(rest) = self.text.get(64 * k..).filter(|r| !r.is_empty()) else {
            return 0;
        };
        if !(self.first..self.first + self.made).contains(&k) {
            let n = rest.len().div_ceil(64).min(MASK_WORDS);
            let words = &mut self.words[..n];
            if !vector_masks(rest, words) {
                portable_masks(rest, words);
            }
            (self.first, self.made) = (k, n);
        }
        self.words[k - self.first]
    }

    /// The 64 bytes from `at` as a mask (bit `i` for byte `at + i`).
    fn at(&mut self, at: usize) -> u64 {
        let (k, shift) = (at / 64, at % 64);
        let low = self.word(k) >> shift;
        if shift == 0 {
            low
        } else {
            low | self.word(k + 1) << (64 - shift)
        }
    }
}

/// [`alphabet::masks`] by `bytescan`'s portable form, for CPUs without
/// AVX2 and other targets.
fn portable_masks(text: &[u8], out: &mut [u64]) {
    for (k, w) in out.iter_mut().enumerate() {
        let mut block = [0u8; 64];
        let part = text.get(64 * k..).unwrap_or_default();
        let part = part.get(..64).unwrap_or(part);
        block[..part.len()].copy_from_slice(part);
        *w = crate::bytescan::base64_bytes64(&block);
    }
}

/// [`alphabet::masks`] where there is one.
#[cfg(target_arch = "x86_64")]
fn vector_masks(text: &[u8], out: &mut [u64]) -> bool {
    alphabet::masks(text, out)
}

/// No vector form: the caller makes the masks.
#[cfg(not(target_arch = "x86_64"))]
fn vector_masks(_text: &[u8], _out: &mut [u64]) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::{
        B64_MIN, Derived, Starts, base64_runs, decode_text, jwt_joins, may_derive, percent_windows,
        trigger_spans,
    };

    fn derived(f: fn(&str, &mut Vec<Derived>), text: &str) -> Vec<Derived> {
        let mut out = Vec::new();
        f(text, &mut out);
        out
    }

    #[test]
    fn percent_windows_decode_and_map_back_to_the_encoded_bytes() {
        let text = "see ?next=postgres%3A%2F%2Fapp%3As3cr%40t%40db%3A5432 ok";
        let d = derived(percent_windows, text);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].text, "postgres://app:s3cr@t@db:5432");
        let at = d[0].text.find("s3cr@t").unwrap();
        let spans = d[0].original(at, at + "s3cr@t".len());
        assert_eq!(spans.len(), 1);
        assert_eq!(&text[spans[0].0..spans[0].1], "s3cr%40t");
        // Twice encoded.
        let twice = derived(percent_windows, "u=https%253A%252F%252Fa%253Ab%2540h");
        assert_eq!(twice[0].text, "https://a:b@h");
        // Nothing encoded around: nothing derived.
        assert!(derived(percent_windows, "100% sure, 50%3 off").is_empty());
    }

    #[test]
    fn jwt_joins_only_tokens_broken_while_incomplete() {
        let (h, p) = ("eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxMjM0NTY3ODkwIn0");
        let sig = "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
        let text = format!("token: {h}.{p}.\n{sig}\nnext line");
        let d = derived(jwt_joins, &text);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].text, format!("{h}.{p}.{sig}"));
        let pieces = d[0].original(0, d[0].text.len());
        assert_eq!(pieces.len(), 2);
        assert_eq!(&text[pieces[1].0..pieces[1].1], sig);
        // A break inside the header, and JSON's escaped `\n` with indentation.
        let text = format!("{}\\n  {}.{p}.{sig}", &h[..9], &h[9..]);
        assert_eq!(derived(jwt_joins, &text)[0].text, format!("{h}.{p}.{sig}"));
        // A complete token ends at its line.
        assert!(derived(jwt_joins, &format!("{h}.{p}.{sig}\nNextWord")).is_empty());
        // A short signature continues only on a line of token characters.
        let text = format!("{h}.{p}.{}\n{}\n", &sig[..20], &sig[20..]);
        assert_eq!(derived(jwt_joins, &text)[0].text, format!("{h}.{p}.{sig}"));
        assert!(derived(jwt_joins, &format!("{h}.{p}.{}\nand more", &sig[..20])).is_empty());
    }

    /// The masks CPUs without AVX2 make (`bytescan`'s) are the byte loop's
    /// too, at every text length around a block (on this CPU `Masks` reads
    /// the vector ones, which `alphabet.rs` tests).
    #[test]
    fn portable_masks_are_the_byte_loops() {
        let text: Vec<u8> = (0..=255u8)
            .chain(b"aZ09+/-_ ".iter().copied())
            .cycle()
            .take(700)
            .collect();
        for len in [0, 1, 63, 64, 65, 127, 128, 200, 700] {
            let t = &text[..len];
            let mut out = [0u64; 12];
            super::portable_masks(t, &mut out);
            for (k, &m) in out.iter().enumerate() {
                let slow = (0..64).fold(0u64, |acc, i| {
                    acc | u64::from(t.get(64 * k + i).is_some_and(|&b| super::is_b64(b))) << i
                });
                assert_eq!(m, slow, "word {k} of {len} bytes");
            }
        }
    }

    proptest::proptest! {
        /// Every run of base64 bytes long enough, as the slow way finds them.
        #[test]
        fn b64_runs_are_every_long_enough_run(
            pieces in proptest::collection::vec(
                (0usize..50, proptest::sample::select(b" .\"=\n".to_vec())),
                0..12,
            ),
            max in 24usize..60,
            lead in 0usize..8300,
            long in 0usize..4200,
        ) {
            // Runs of every length around the bounds, each closed by a byte
            // out of the alphabet, after a lead of short words and a long
            // run, so runs cross the 4 KiB pieces `Masks` makes.
            let mut text: Vec<u8> = b"ab. ".iter().cycle().take(lead).copied().collect();
            text.extend(b"aZ09+/-_".iter().cycle().take(long));
            text.push(b' ');
            for (len, close) in pieces {
                text.extend(b"aZ09+/-_".iter().cycle().take(len));
                text.push(close);
            }
            let mut fast = Vec::new();
            super::b64_runs(&text, max, |s, e| fast.push((s, e)));
            let mut slow = Vec::new();
            let mut i = 0;
            while i < text.len() {
                let start = i;
                while i < text.len() && super::is_b64(text[i]) {
                    i += 1;
                }
                if (B64_MIN..=max).contains(&(i - start)) {
                    slow.push((start, i));
                }
                i += 1;
            }
            proptest::prop_assert_eq!(fast, slow);
        }
    }

    /// Note \[Runs that decode to text\]: only a run that decodes to text
    /// is a trigger, whatever escape letter stands in front of it.
    #[test]
    fn only_runs_that_decode_to_text_are_triggers() {
        let b64 =
            "ZXhwb3J0IEdJVEhVQl9UT0tFTj1naHBfWHE3TG0yVmI5UnQ0V3o4S3AzSG42SmQxRnM1R2MwWWEyVWU3";
        let spans = |t: &str| {
            let mut out = Vec::new();
            trigger_spans(t.as_bytes(), Starts::UNKNOWN, &mut out);
            out
        };
        for ordinary in [
            r#"["raw_control_char_in_string","unquoted_identifier_names"]"#,
            "roles/app/tasks/docker-compose-production.yml",
            "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXGOm3ueFtTEoXD0qGjvW5Ncg==",
        ] {
            assert_eq!(spans(ordinary), [], "{ordinary}");
        }
        for front in ["", "n", "na", "nab", "nabc"] {
            // As written: `\n` and up to three bytes before the run.
            let text = format!(r#""x\{front}{b64}""#);
            assert_eq!(spans(&text).len(), 1, "{text}");
            // The string's text: a newline, then the same bytes.
            let pad = front.get(1..).unwrap_or("");
            assert!(may_derive(&format!("x\n{pad}{b64}")), "{text}");
        }
    }

    /// Note \[Percent at an encoded scheme\]: a `%` is a trigger only at
    /// an encoded `://`, where a percent window opens.
    #[test]
    fn only_an_encoded_scheme_makes_a_percent_trigger() {
        let spans = |t: &str| {
            let mut out = Vec::new();
            trigger_spans(t.as_bytes(), Starts::UNKNOWN, &mut out);
            out
        };
        for ordinary in [
            r#"{"note":"cache 50% token cpu","p":"100%"}"#,
            "%20 and %2F and %3A%2F and %",
            "postgres%3A%2F%2",
        ] {
            assert_eq!(spans(ordinary), [], "{ordinary}");
            assert!(!may_derive(ordinary), "{ordinary}");
            let mut windows = Vec::new();
            percent_windows(ordinary, &mut windows);
            assert!(windows.is_empty(), "{ordinary}");
        }
        for (text, at) in [
            ("x postgres%3A%2F%2Fuser%3Apass%40host y", 10),
            (r#"{"u":"POSTGRES%3a%2f%2fu%3Ap%40h"}"#, 14),
            ("postgres%253A%252F%252Fuser%253Apass%2540host", 8),
        ] {
            assert_eq!(spans(text), [(at, at + 1)], "{text}");
            assert!(may_derive(text), "{text}");
            let mut windows = Vec::new();
            percent_windows(text, &mut windows);
            assert_eq!(windows.len(), 1, "{text}");
        }
    }

    #[test]
    fn base64_runs_that_decode_to_text_are_found_at_any_alignment() {
        // "export GITHUB_TOKEN=ghp_..." in base64, after a word.
        let b64 =
            "ZXhwb3J0IEdJVEhVQl9UT0tFTj1naHBfWHE3TG0yVmI5UnQ0V3o4S3AzSG42SmQxRnM1R2MwWWEyVWU3";
        for prefix in ["", "data: ", "x/", "\\n"] {
            let text = format!("{prefix}{b64} end");
            let d = derived(base64_runs, &text);
            assert_eq!(d.len(), 1, "{prefix:?}");
            assert!(
                d[0].text.starts_with("export GITHUB_TOKEN=ghp_"),
                "{prefix:?}"
            );
            let (s, e) = d[0].whole.unwrap();
            assert_eq!(&text[s..e], b64, "{prefix:?}");
        }
        // Binary (an image, a hash) and identifiers decode to no text.
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        let hash = "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXGOm3ueFtTEoXD0qGjvW5Ncg==";
        let path = "crates/core/src/secrets/encoded/ThisIsALongIdentifierName";
        for ordinary in [png, hash, path] {
            assert!(derived(base64_runs, ordinary).is_empty(), "{ordinary}");
        }
        assert!(derived(base64_runs, &"QUJD".repeat(B64_MIN / 4 - 1)).is_empty());
        assert_eq!(decode_text(b"aGk").as_deref(), Some("hi"));
    }
}
