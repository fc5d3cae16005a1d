//! Where a quoted value ends: the look-ahead at a candidate closing quote.
//!
//! Note [String boundaries]: the commonest damage in model JSON is a quote
//! inside a string that was not escaped (`"he said "hi" to me"`), and a
//! string that is closed too early or too late follows from it. A quote of
//! the string's kind ends the string only when what follows it can continue
//! the structure around it; what follows is read in two steps:
//!
//! 1. The first byte after the quote (spaces and tabs skipped) decides most
//!    quotes at once ([`Follow`]): `}` or `]` closing the container the
//!    string sits in, `:`, a line end, another quote, a comment, a fence,
//!    the end of the input, `,` then what starts a member (`"k"`, `k:`, a
//!    closer) end the string; in an array a digit, in a tuple `)` too.
//!    Anything else is doubtful: a word (`"xxxxx" true}`), a `,` in an
//!    object followed by words that start no member (`"ipsum", sic."`), a
//!    closer of another kind (`"z"]` inside an object), the same quote
//!    again (`"yes""}`).
//! 2. A doubtful quote is decided by scanning on, over the text, to the
//!    first place that decides where the string ends: when the structure
//!    visibly goes on first (a closer of this container at bracket depth 0,
//!    `,` then a member start, a quote opening `"key":`), the doubtful quote
//!    ended the string and the words between are stray text (`{"b": "xxxxx"
//!    true}` is `{"b": "xxxxx"}`, `["consectetur" comment]` two items);
//!    when a later quote ends the string by step 1 first, the doubtful
//!    quote (and any doubtful one passed on the way) is a character of the
//!    text (`"lorem "ipsum", sic."`, `"say "hi", then "bye" ok"` stay one
//!    string); when the structure goes on only after other doubtful quotes
//!    (`"the "quote" ends here}`), they are all text and the string lost
//!    its closing quote (Note [Missing quotes] in `parser` places it);
//!    otherwise the first step's default stands. Of the two readings, that
//!    prefers the one that leaves the rest parseable.
//!
//! The scan passes quotes that are doubtful themselves and escapes, and
//! stops at [`SCAN`] bytes; what it found holds for the doubtful quotes it
//! passed, and the parser keeps it (`inner_until`, `undecided_until`), so
//! each byte of a string is scanned once however many quotes it holds:
//! parsing stays linear (`adversarial_inputs_are_linear_and_safe`; the
//! `extract` bench's `repaired/quotes-1mb`).

use super::lex::{Ctx, is_ident_start, smart_quote};

/// Bytes a doubtful quote's scan looks at (Note [String boundaries]).
pub(super) const SCAN: usize = 4096;

/// Bytes looked at for a member start after a comma.
const MEMBER_SPAN: usize = 64;

/// What the first byte after a candidate closing quote says (step 1 of
/// Note [String boundaries]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follow {
    /// The string ends here.
    End,
    /// Undecided; the scan decides, else this default (`true`: it ends).
    Doubtful(bool),
}

/// Step 1 at `pos`, just past a candidate closing quote of a value string
/// in `ctx`; `closers` are the open containers' closers, outermost first
/// (empty at top level). A closer of an outer container counts as a
/// closer: a typo (`[{"k": "v"], …`) the container loops repair.
pub(crate) fn follow(src: &[u8], pos: usize, ctx: Ctx, closers: &[u8]) -> Follow {
    let closer = closers.last().copied();
    let mut i = pos;
    while let Some(&b) = src.get(i) {
        match b {
            b' ' | b'\t' => i += 1,
            // `"yes""}`: the same quote again; the scan finds which ends.
            // Unless it opens the next key: `"According...""ans": 1`.
            b'"' | b'\'' if i == pos && pos > 0 && src.get(pos - 1) == Some(&b) => {
                return if opens_key(src, i) {
                    Follow::End
                } else {
                    Follow::Doubtful(true)
                };
            }
            b':' | b'\n' | b'\r' | b'"' | b'\'' => return Follow::End,
            b'}' | b']' => {
                return if closer.is_none_or(|c| c == b) || closers.contains(&b) {
                    Follow::End
                } else {
                    Follow::Doubtful(true)
                };
            }
            b',' => {
                return if ctx != Ctx::Object || closer.is_none() || member_starts(src, i + 1) {
                    Follow::End
                } else {
                    Follow::Doubtful(true)
                };
            }
            b'/' => {
                return if matches!(src.get(i + 1), Some(b'/' | b'*')) {
                    Follow::End
                } else {
                    Follow::Doubtful(false)
                };
            }
            b'`' if src.get(i..i + 3) == Some(b"```") => return Follow::End,
            b'0'..=b'9' if ctx == Ctx::Array => return Follow::End,
            b')' if ctx == Ctx::Tuple => return Follow::End,
            b'+' => {
                let mut j = i + 1;
                while j < i + 64 && matches!(src.get(j), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                    j += 1;
                }
                return if matches!(src.get(j), Some(b'"' | b'\'')) {
                    Follow::End
                } else {
                    Follow::Doubtful(false)
                };
            }
            _ if smart_quote(src.get(i..).unwrap_or_default()).is_some() => return Follow::End,
            _ => return Follow::Doubtful(false),
        }
    }
    Follow::End
}

/// What step 2 found (Note [String boundaries]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scan {
    /// The structure goes on at `.0` (a closer of this container, the
    /// comma before a member, the quote opening the next key) before any
    /// other quote: the string ends at the doubtful quote and the text up
    /// to `.0` is stray.
    Stray(usize),
    /// The quote at `.0` ends the string by step 1, or the structure goes
    /// on at `.0` after other doubtful quotes: the doubtful quote, and every
    /// quote before `.0`, is a character of the text.
    Inner(usize),
    /// Nothing decisive before `.0` (the end of the input or of [`SCAN`]):
    /// the first step's default stands, for every doubtful quote before
    /// `.0` too.
    Undecided(usize),
}

/// Step 2: scan from `from` (at or past the doubtful quote) for the next
/// quote of kind `q` that ends the string by step 1, passing quotes that
/// are themselves doubtful. The parser keeps what a scan found for the
/// doubtful quotes it passed ([`Scan::Inner`], [`Scan::Undecided`]), so a
/// string full of quotes is scanned once in all: linear.
pub(super) fn scan(src: &[u8], from: usize, q: u8, ctx: Ctx, closers: &[u8]) -> Scan {
    let closer = closers.last().copied();
    let keys = ctx == Ctx::Object && closer == Some(b'}');
    let end = (from + SCAN).min(src.len());
    let mut depth = 0usize;
    // Doubtful quotes passed: when the structure goes on after one, the
    // string did not end at the first (`"the "quote" ends here}`): they are
    // all text, and the string lost its closing quote (Note [Missing
    // quotes] in `parser` finds where).
    let mut passed = false;
    let mut i = from;
    while i < end {
        let Some(&b) = src.get(i) else { break };
        match b {
            // An escape is never the string's end.
            b'\\' => {
                i += 2;
                continue;
            }
            _ if b == q => {
                if keys && key_opens_at(src, i) {
                    return if passed {
                        Scan::Inner(i)
                    } else {
                        Scan::Stray(i)
                    };
                }
                if follow(src, i + 1, ctx, closers) == Follow::End {
                    return Scan::Inner(i);
                }
                passed = true;
            }
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' if depth > 0 => depth -= 1,
            b'}' | b']' if depth == 0 && closer == Some(b) => {
                return if passed {
                    Scan::Inner(i)
                } else {
                    Scan::Stray(i)
                };
            }
            b',' if depth == 0 && closer.is_some() && continues(src, i + 1, ctx) => {
                return if passed {
                    Scan::Inner(i)
                } else {
                    Scan::Stray(i)
                };
            }
            _ => {}
        }
        i += 1;
    }
    Scan::Undecided(end)
}

/// After a `,` met by the scan, in a container of kind `ctx`: does what
/// follows start the next member (object) or element (array, tuple)? For
/// an object, stricter than [`member_starts`]: a quote must open a whole
/// key and its colon (`s,"}` is text before the string's real end).
fn continues(src: &[u8], at: usize, ctx: Ctx) -> bool {
    match ctx {
        Ctx::Object | Ctx::Key => {
            let k = skip_space(src, at);
            match src.get(k) {
                Some(b'"' | b'\'') => after_quoted_token(src, k).is_some_and(|j| j == b':'),
                _ => member_starts(src, at),
            }
        }
        Ctx::Array | Ctx::Tuple => {
            let k = skip_space(src, at);
            matches!(
                src.get(k),
                Some(b'"' | b'\'' | b'{' | b'[' | b'-' | b'0'..=b'9')
            )
        }
    }
}

/// Does a member start at `at` (after a comma; whitespace and line breaks
/// skipped)? A quote, a closer, the end of the input, or a bare key and its
/// colon (`b: 1`, `b": 1`) or, after a space, a quote. Bounded by
/// [`MEMBER_SPAN`].
pub(super) fn member_starts(src: &[u8], at: usize) -> bool {
    let k = skip_space(src, at);
    match src.get(k) {
        // Non-ASCII: a Unicode space, a smart quote; left to the parser.
        None | Some(b'"' | b'\'' | b'}' | b'`' | b'#' | 0x80..=0xFF) => true,
        // A comment before the next member.
        Some(b'/') => matches!(src.get(k + 1), Some(b'/' | b'*')),
        Some(&b) if is_ident_start(b) => {
            let mut j = k;
            while j < k + MEMBER_SPAN && src.get(j).is_some_and(|&c| is_key_byte(c)) {
                j += 1;
            }
            // `b":` — a key that lost only its opening quote.
            if src.get(j) == Some(&b'"') {
                j += 1;
            }
            let word_end = j;
            while matches!(src.get(j), Some(b' ' | b'\t')) {
                j += 1;
            }
            // `b: 1`, `b = 1`; or, after a space, a quote: a key that lost
            // its colon (`d "e"`) or a stray word before a quoted key
            // (`note 'c': 1`, Note [Stray words] in `parser`).
            match src.get(j) {
                Some(b':' | b'=') => true,
                Some(b'"' | b'\'') => j > word_end && quoted_token_ends_member(src, j),
                _ => false,
            }
        }
        _ => false,
    }
}

/// A quoted token at `at` (its quote there) closed on its line within
/// [`MEMBER_SPAN`] and followed by `:`, `,` or `}`: a key after a stray
/// word (`note 'c': 1`) or a value after a key that lost its colon
/// (`d "e",`).
fn quoted_token_ends_member(src: &[u8], at: usize) -> bool {
    after_quoted_token(src, at).is_some_and(|b| matches!(b, b':' | b',' | b'}'))
}

/// The byte after the non-empty quoted token at `at` (closed by its own
/// quote on its line within [`MEMBER_SPAN`]) and the spaces after it.
fn after_quoted_token(src: &[u8], at: usize) -> Option<u8> {
    let &q = src.get(at)?;
    let end = (at + 1 + MEMBER_SPAN).min(src.len());
    let close = src
        .get(at + 1..end)?
        .iter()
        .position(|&b| b == q || b == b'\n')?;
    let mut j = at + 1 + close;
    if src.get(j) != Some(&q) || close == 0 {
        return None;
    }
    j += 1;
    while matches!(src.get(j), Some(b' ' | b'\t')) {
        j += 1;
    }
    src.get(j).copied()
}

/// Note [Lost closing quote before a key]: a doubtful `"` in an object
/// value, right after a space, that opens `"word":` is the next member's
/// key: the value before it lost its closing quote (`{"a": "first "b":
/// 2}`). `quote_at` is the `"`; bounded by [`MEMBER_SPAN`].
pub(super) fn key_opens_at(src: &[u8], quote_at: usize) -> bool {
    quote_at
        .checked_sub(1)
        .and_then(|p| src.get(p))
        .is_some_and(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        && opens_key(src, quote_at)
}

/// The quote at `quote_at` opens `"word":` (bounded by [`MEMBER_SPAN`]).
fn opens_key(src: &[u8], quote_at: usize) -> bool {
    let Some(&q) = src.get(quote_at) else {
        return false;
    };
    let mut j = quote_at + 1;
    let name = j;
    while j < name + MEMBER_SPAN && src.get(j).is_some_and(|&c| is_key_byte(c)) {
        j += 1;
    }
    if j == name || src.get(j) != Some(&q) {
        return false;
    }
    j += 1;
    while matches!(src.get(j), Some(b' ' | b'\t')) {
        j += 1;
    }
    src.get(j) == Some(&b':')
}

/// Note [Lost closing quote before a bare key]: a doubtful quote in an
/// object value preceded by `, word:` (spaces allowed around each) opens
/// the value of that member: the string before lost its closing quote at
/// the comma (`{"a": "first, b: "second"}`). Returns the comma's index,
/// found looking back from `quote_at` no further than `floor`.
pub(super) fn bare_key_before(src: &[u8], floor: usize, quote_at: usize) -> Option<usize> {
    let lowest = quote_at.saturating_sub(MEMBER_SPAN).max(floor);
    let mut i = quote_at;
    let back_ws = |mut i: usize| {
        while i > lowest && matches!(src.get(i - 1), Some(b' ' | b'\t')) {
            i -= 1;
        }
        i
    };
    i = back_ws(i);
    if i <= lowest || src.get(i - 1) != Some(&b':') {
        return None;
    }
    i = back_ws(i - 1);
    let name_end = i;
    while i > lowest && src.get(i - 1).is_some_and(|&c| is_key_byte(c)) {
        i -= 1;
    }
    if i == name_end || !src.get(i).is_some_and(|&c| is_ident_start(c)) {
        return None;
    }
    i = back_ws(i);
    (i > lowest && src.get(i - 1) == Some(&b',')).then(|| i - 1)
}

fn skip_space(src: &[u8], mut k: usize) -> usize {
    let end = k + MEMBER_SPAN;
    while k < end && matches!(src.get(k), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        k += 1;
    }
    k
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'-')
}
