//! Note [No structure from prose]: the tolerant parser reads *anything*
//! between brackets, so a reply of plain prose (`the {placeholder} syntax
//! [citation needed]`, `{x | x > 0}`, `see [1]`) would come back as `{}`,
//! `["citation needed"]` or `[1]`. Such a value keeps nothing the text said
//! as data, and is not an extraction. A bare candidate is dropped when:
//!
//! 1. its value is an empty object or array while the text between its
//!    brackets holds something besides spaces, commas, colons, quoted
//!    strings, comments and elisions (everything was thrown away:
//!    `{placeholder}`, `{:2}`, `[#####-----]`; `{ ... }` is an elided,
//!    empty object);
//! 2. it is glued to code on its left: a letter, digit or one of `$ % @ # !
//!    _` right before the bracket (`${VAR}`, `arr[0]`, `%{a: 1}`,
//!    `Point{X: 1}`, `vec![]`): an index or a literal of another language;
//! 3. it sits inside prose and holds no quoted string (`[1]`, `{}`,
//!    `{a: 1}`, `[0, 1]`, `{k: v for k in ks}`): JSON in a sentence quotes
//!    its strings; brackets around bare words and numbers are notation;
//! 4. it holds no quote and no object member, a string of its value was an
//!    unquoted word, and its brackets close around only letters and spaces
//!    or one of its strings is a phrase with a space (`[citation needed]`,
//!    `[Applause]`): words in brackets. One unquoted
//!    token with a digit or punctuation (`[e5]`, `[0789]`, a URL) is kept:
//!    LLMs write such values without quotes.
//!
//! 5. it needed [`Repair::DoubledBrace`] and sits inside prose: `{{…}}` in
//!    a sentence is template syntax (Handlebars, Jinja, JSX `style={{…}}`);
//! 6. it is binary noise: one character in eight or more is undecodable
//!    (U+FFFD, from lossy UTF-8) or a control character other than tab and
//!    line breaks ([`noise`]); an agent's text, even with a bad byte, is not.
//!
//! "Inside prose" means a word around the candidate, outside comments, not
//! counting a callee right before `(` ([`prose_around`]): `{} // note` or
//! `callback({})` is not prose, `Answer: [B]` is. A whole reply that is
//! strictly valid JSON never reaches this rule, and a fenced block (the
//! writer marked it as code) is not judged by it.

use super::Node;
use crate::Repair;

/// Is this bare candidate prose, not data? See Note [No structure from prose].
///
/// `span` is the candidate's text, `before` and `after` the text around it,
/// `repairs` what the tolerant parser needed (empty for strict JSON).
pub fn keeps_nothing(
    value: &Node<'_>,
    span: &str,
    before: &str,
    after: &str,
    repairs: &[Repair],
) -> bool {
    let empty = match value {
        Node::Object(m) => m.is_empty(),
        Node::Array(a) => a.is_empty(),
        _ => false,
    };
    prose_by_text(empty, span, before, after, repairs).unwrap_or_else(|| {
        // Rule 4, the one that reads the value below its top level.
        if has_member(value) {
            return false;
        }
        let inner = span.get(1..).unwrap_or_default();
        let closed = span.ends_with([']', '}']);
        let words = inner.get(..inner.len().saturating_sub(1)).is_some_and(|w| {
            !w.trim().is_empty() && w.chars().all(|c| c.is_alphabetic() || c == ' ')
        });
        (closed && words) || phrase(value)
    })
}

/// [`keeps_nothing`]'s rules that read only the text and whether the value
/// is an `empty` object or array: the verdict, or `None` when rule 4 must
/// look into the value (only after [`Repair::UnquotedString`]). A strict
/// candidate (no repairs) always gets a verdict, so it is judged without
/// building its value (Note [Writing from the tape] in `json::tape`).
pub fn prose_by_text(
    empty: bool,
    span: &str,
    before: &str,
    after: &str,
    repairs: &[Repair],
) -> Option<bool> {
    if noise(span) {
        return Some(true);
    }
    let inner = span.get(1..).unwrap_or_default();
    if empty && dropped_text(inner) {
        return Some(true);
    }
    let glued = before
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || matches!(c, '$' | '%' | '@' | '#' | '!' | '_'));
    if glued {
        return Some(true);
    }
    if repairs.contains(&Repair::DoubledBrace) && prose_around(before, after) {
        return Some(true);
    }
    let quoted = span.contains([
        '"', '\'', '`', '\u{201c}', '\u{201d}', '\u{2018}', '\u{2019}',
    ]);
    if quoted {
        return Some(false);
    }
    if prose_around(before, after) {
        return Some(true);
    }
    if !repairs.contains(&Repair::UnquotedString) {
        return Some(false);
    }
    None
}

/// Is `text` binary noise: at least one character in eight undecodable
/// (U+FFFD) or a control character other than tab, CR and LF?
///
/// Note [Noise fast path]: this runs over every reply that is not one whole
/// JSON value, so it must cost about a byte compare per byte. A character
/// counted as bad starts with a byte the 16-at-a-time scan below looks for
/// (an ASCII control, DEL, `0xC2` for the C1 controls, `0xEF` for U+FFFD);
/// text with none of them, nearly every reply, is not noise without
/// decoding it. When there are some (`0xC2` also starts `°` and the
/// non-breaking space), only the characters at those bytes are looked at,
/// and the characters are counted only when one of them is bad: UTF-8
/// continuation bytes are the only ones that start no character.
pub fn noise(text: &str) -> bool {
    // Any suspect byte at all? (Note [Byte scans] in `json`: 16 at a time.)
    let b = text.as_bytes();
    let suspect = |c: u8| {
        (c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r')) || matches!(c, 0x7F | 0xC2 | 0xEF)
    };
    if !any_suspect(b) {
        return false;
    }
    let mut bad = 0usize;
    let mut i = crate::first_stop(b, 0, suspect);
    while let Some(&c) = b.get(i) {
        let is_bad = match c {
            // U+0080..=U+009F, the C1 controls.
            0xC2 => matches!(b.get(i + 1), Some(0x80..=0x9F)),
            // U+FFFD.
            0xEF => b.get(i + 1..i + 3) == Some(&[0xBF, 0xBD][..]),
            // The ASCII controls the scan stops at, and DEL.
            _ => true,
        };
        bad += usize::from(is_bad);
        i = crate::first_stop(b, i + 1, suspect);
    }
    if bad == 0 {
        return false;
    }
    let total = b.iter().filter(|&&c| c & 0xC0 != 0x80).count();
    bad * 8 >= total
}

/// Whether any byte is one [`noise`] looks at: an ASCII control other than
/// tab, LF and CR, DEL, `0xC2` or `0xEF`. One OR-fold per 64 bytes, which the
/// compiler turns into a few vector instructions: [`crate::first_stop`]
/// cost about four instructions a byte here, on every reply.
fn any_suspect(b: &[u8]) -> bool {
    let flag = |c: u8| {
        u8::from(
            (c < 0x20 && c != b'\t' && c != b'\n' && c != b'\r')
                || c == 0x7F
                || c == 0xC2
                || c == 0xEF,
        )
    };
    let mut chunks = b.chunks_exact(64);
    for chunk in &mut chunks {
        if chunk.iter().fold(0u8, |acc, &c| acc | flag(c)) != 0 {
            return true;
        }
    }
    chunks.remainder().iter().any(|&c| flag(c) != 0)
}

/// Does the text inside a candidate's brackets hold anything besides
/// spaces, `,` `:`, closers, `"…"` strings and comments?
fn dropped_text(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                i += 1;
                while let Some(&d) = b.get(i) {
                    i += if d == b'\\' { 2 } else { 1 };
                    if d == b'"' {
                        break;
                    }
                }
                continue;
            }
            b'/' if matches!(b.get(i + 1), Some(b'/' | b'*')) => {
                i = comment_end(b, i);
                continue;
            }
            // An elision (`{ ... }`, `[…]`) is dropped as a repair, not text.
            b',' | b':' | b'}' | b']' | b'.' => {}
            _ if c.is_ascii_whitespace() => {}
            // `…` (U+2026) as UTF-8.
            0xE2 if b.get(i + 1..i + 3) == Some(&[0x80, 0xA6]) => i += 2,
            _ => return true,
        }
        i += 1;
    }
    false
}

/// The index just past the comment starting at `i` (`//`, `#` or `/*`).
fn comment_end(b: &[u8], i: usize) -> usize {
    let rest = b.get(i..).unwrap_or_default();
    if rest.starts_with(b"/*") {
        return memchr::memmem::find(rest, b"*/").map_or(b.len(), |k| i + k + 2);
    }
    memchr::memchr(b'\n', rest).map_or(b.len(), |k| i + k)
}

/// Does the text around a candidate (`before`, `after`) read as prose: a
/// word, not counting comments (`//`, `#` to the line end, `/* */`) and a
/// callee right before `(` (`callback_123({})`, JSONP)?
pub fn prose_around(before: &str, after: &str) -> bool {
    words(before) + words(after) >= 1
}

/// The words (runs of letters) of `text` outside comments, callees excluded.
fn words(text: &str) -> usize {
    let b = text.as_bytes();
    let mut n = 0;
    let mut i = 0;
    let mut in_word = false;
    while let Some(&c) = b.get(i) {
        let next = b.get(i + 1).copied();
        if (c == b'/' && matches!(next, Some(b'/' | b'*'))) || c == b'#' {
            i = comment_end(b, i);
            in_word = false;
            continue;
        }
        let letter = c.is_ascii_alphabetic() || c >= 0x80;
        if letter && !in_word && !callee(b, i) {
            n += 1;
        }
        in_word = letter || (in_word && (c.is_ascii_alphanumeric() || c == b'_'));
        i += 1;
    }
    n
}

/// Is the identifier starting at `i` a callee: followed by `(` (after spaces)?
fn callee(b: &[u8], mut i: usize) -> bool {
    while b
        .get(i)
        .is_some_and(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.'))
    {
        i += 1;
    }
    while b.get(i).is_some_and(|&c| c == b' ' || c == b'\t') {
        i += 1;
    }
    b.get(i) == Some(&b'(')
}

/// Does the value hold an object with at least one member, at any depth?
fn has_member(v: &Node<'_>) -> bool {
    match v {
        Node::Object(m) => !m.is_empty(),
        Node::Array(a) => a.iter().any(has_member),
        _ => false,
    }
}

/// Does a string of the value hold a space (a phrase of words, not one
/// token such as `e5`, `0789` or a URL)?
fn phrase(v: &Node<'_>) -> bool {
    match v {
        Node::String(s) => s.trim().contains(char::is_whitespace),
        Node::Array(a) => a.iter().any(phrase),
        Node::Object(m) => m.iter().any(|(_, v)| phrase(v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The definition, decoded char by char: the fast path must agree.
    fn noise_by_chars(text: &str) -> bool {
        let total = text.chars().count();
        let bad = text
            .chars()
            .filter(|&c| c == '\u{fffd}' || (c.is_control() && !matches!(c, '\t' | '\n' | '\r')))
            .count();
        bad > 0 && bad * 8 >= total
    }

    #[test]
    fn noise_fast_path_agrees_with_the_definition() {
        for t in [
            "plain prose\n\twith tabs",
            "\u{fffd}\u{fffd}ab",
            "\u{85}\u{9f}x",
            "caf\u{e9} \u{a0}nbsp \u{b0}C",
            "\u{7f}\u{7f}",
            "\u{feff}bom",
            "\u{1}\u{2}\u{3}abcdefghijklmnopqrstuvwxyz",
            "",
            // 0xEF and 0xC2 that start no bad character.
            "\u{fe0f}\u{ff01}\u{a0}\u{b0}",
            // One bad in eight characters is noise; in nine it is not.
            "\u{80}abcdefg",
            "\u{80}abcdefgh",
            "\u{fffd}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}",
            "\u{fffd}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}",
            "\u{0}",
            "x\u{fffd}",
        ] {
            assert_eq!(noise(t), noise_by_chars(t), "{t:?}");
        }
    }

    #[test]
    fn any_suspect_agrees_with_a_byte_walk() {
        let suspect = |c: u8| {
            (c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r')) || matches!(c, 0x7F | 0xC2 | 0xEF)
        };
        for c in 0..=255u8 {
            for at in [0, 5, 63, 64, 65, 127, 130] {
                let mut b = vec![b'a'; 131];
                b[at] = c;
                assert_eq!(any_suspect(&b), suspect(c), "byte {c:#x} at {at}");
                assert_eq!(
                    any_suspect(&b[..=at]),
                    suspect(c),
                    "byte {c:#x} last of {}",
                    at + 1
                );
            }
        }
        assert!(!any_suspect(b""));
    }

    proptest::proptest! {
        #[test]
        fn noise_fast_path_agrees_on_any_text(t in "\\PC*|[\\x00-\\x{ff}\\x{fffd}]{0,40}") {
            proptest::prop_assert_eq!(noise(&t), noise_by_chars(&t));
        }
    }

    #[test]
    fn keeps_nothing_table() {
        use Repair::{DanglingKeyDropped, UnquotedString};
        // (value, before, span, after, repairs, dropped)
        type Row = (
            Value,
            &'static str,
            &'static str,
            &'static str,
            &'static [Repair],
            bool,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            (json!({}), "The ", "{placeholder}", " syntax", &[DanglingKeyDropped], true),
            (json!({}), "", "{:2}", "", &[], true),
            (json!([]), "", "[#####-----]", "", &[], true),
            (json!({}), "", "{ ... }", "", &[], false),
            (json!([null]), "", "[undefined]", "", &[], false),
            (json!({"g": "hello world"}), "", "{g: hello world}", "", &[UnquotedString], false),
            (json!({}), "", "{\"key\":", "", &[DanglingKeyDropped], false),
            (json!([]), "", "[", "", &[], false),
            (json!({}), "", "{ /* c */ }", "", &[], false),
            (json!({}), "use ", "{}", " here", &[], true),
            (json!({}), "", "{}", " // note", &[], false),
            (json!({}), "callback(", "{}", ");", &[], false),
            (json!({"a": []}), "$", "{a[@]}", "", &[], true),
            (json!([0]), "arr", "[0]", "", &[], true),
            (json!(["citation needed"]), "", "[citation needed]", "", &[UnquotedString], true),
            (json!(["Applause"]), "", "[Applause]", "", &[UnquotedString], true),
            (json!(["B"]), "Answer: ", "[B]", "", &[UnquotedString], true),
            (json!(["e5"]), "", "[e5]", ",", &[UnquotedString], false),
            (json!(["truee"]), "", "[truee", "", &[UnquotedString], false),
            (json!([1]), "see ", "[1]", "", &[], true),
            (json!([1, 2]), "", "[1, 2,]", "", &[], false),
            (json!(["a"]), "see ", "[\"a\"]", "", &[], false),
            (json!({"a": 1}), "so ", "{a: 1}", "", &[], true),
            (json!({"a": "b"}), "", "{a: b}", "", &[UnquotedString], false),
            (json!({"a": 1}), "Result: ", "{\"a\": 1}", " ok", &[], false),
            (json!({"a": "b"}), "use ", "{{\"a\": \"b\"}}", "", &[Repair::DoubledBrace], true),
            (json!({"a": "b"}), "", "{{\"a\": \"b\"}}", "", &[Repair::DoubledBrace], false),
            (json!(["\u{fffd}\u{1}x\u{fffd}"]), "", "[\"\u{fffd}\u{1}x\u{fffd}\"]", "", &[], true),
            (json!({"a": "caf\u{fffd} au lait, one bad byte"}), "", "{\"a\": \"caf\u{fffd} au lait, one bad byte\"}", "", &[], false),
        ];
        for (v, before, span, after, repairs, want) in rows {
            assert_eq!(
                keeps_nothing(&Node::from_value(v.clone()), span, before, after, repairs),
                *want,
                "span: {span:?}"
            );
        }
    }

    #[test]
    fn prose_around_table() {
        let rows: &[(&str, &str, bool)] = &[
            ("The answer uses the ", " syntax.", true),
            ("", " // comment", false),
            ("/* foo bar */ callback_123 (", ");", false),
            ("", ",", false),
            ("see ", "", true),
            ("# heading here\n", "", false),
        ];
        for (before, after, want) in rows {
            assert_eq!(prose_around(before, after), *want, "{before:?} {after:?}");
        }
    }
}
