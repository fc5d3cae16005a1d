//! Gates written by hand for the rules ordinary text always wakes: the
//! generic rule (below) and Vault's service tokens ([`vault_service_token`]).
//!
//! Note \[Hand gate\]: the generic rule (`generic-api-key`) wakes on `key`,
//! `token`, `api`, `auth`, `access`, `secret`: words of ordinary prose, so
//! nearly every text wakes it and its relaxed gate (Note \[Relaxed gates\]
//! in `gate.rs`) had to be compiled by nearly every process. Compiling it
//! was most of what masking added to a short command (about 3 of 4.5
//! million instructions, callgrind), and it ran on every hot string of a
//! long one. What the rule needs is simple to say: a keyword, then only
//! name bytes, blanks and quotes up to an assignment (`=`, `:`, `>`, `|`,
//! `?`, `,`), then only quotes, blanks and assignment bytes up to a run of
//! ten or more value bytes (`[\w.=+/-]`) closed by a quote, a blank, `;`, a
//! written `\n` or the end. [`generic_api_key`] reads exactly that, with
//! every other bound of the pattern dropped, so it says yes wherever
//! the rule can match (a test holds it to that on the planted corpus and on
//! generated text) and no on prose such as `token café check`.
//!
//! It is attached by the pattern, not the rule's name: a rule whose regex
//! is not [`GENERIC_API_KEY`] byte for byte (a user's rule, or a new
//! gitleaks version's) gets the compiled relaxed gate as before.
//!
//! Rust's `(?i)` folds two non-ASCII characters into ASCII letters: K
//! (U+212A, Kelvin) into `k` and ſ (U+017F, long s) into `s`. A text
//! holding either is answered yes (the rule runs), since the keyword and
//! class tests here are ASCII.

use memchr::memmem;

use super::rules::Rule;

/// The generic rule's pattern, as gitleaks writes it; the hand gate stands
/// in for exactly this pattern.
pub(super) const GENERIC_API_KEY: &str = r#"(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)"#;

/// The hand gate for `rule`, if there is one: for its regex (as written),
/// and reading past values its allowlists allow whole (Note \[Values an
/// allowlist takes whole\]).
pub(super) fn for_rule(rule: &Rule) -> Option<fn(&str) -> bool> {
    if rule.regex == VAULT_SERVICE_TOKEN {
        return Some(vault_service_token as fn(&str) -> bool);
    }
    if rule.regex != GENERIC_API_KEY {
        return None;
    }
    Some(if letters_allowed(rule) {
        generic_api_key_past_letters as fn(&str) -> bool
    } else {
        generic_api_key as fn(&str) -> bool
    })
}

/// Note \[Values an allowlist takes whole\]: gitleaks' generic rule has an
/// allowlist `^[a-zA-Z_.-]+$` on the secret: a value of letters, `_`, `.`
/// and `-` only (`"apiKeySource": "ANTHROPIC_API_KEY"`, in the first line
/// of every Claude Code transcript) is always let go. The secret of a match
/// is the whole value run the gate reads (the value ends only where a value
/// byte cannot follow), but for `=` the pattern may take from before the
/// run; so a keyword hit whose run holds only those bytes, with no `=`
/// before it, can only make candidates that allowlist lets go, and the gate
/// reads past it. Before this, that one line compiled the generic rule
/// (about 6 M instructions, callgrind) in every `parse` of a transcript.
/// Only for a rule that has that allowlist (regex target the secret, no
/// stopword required alongside): a user's rule without it is gated as
/// before.
pub(super) fn letters_allowed(rule: &Rule) -> bool {
    rule.allowlists.iter().any(|a| {
        matches!(a.regex_target.as_deref(), None | Some("secret"))
            && (a.condition.as_deref() != Some("AND") || a.stopwords.is_empty())
            && a.regexes.iter().any(|r| r == LETTERS_ALLOWLIST)
    })
}

/// The allowlist regex of Note \[Values an allowlist takes whole\].
pub(super) const LETTERS_ALLOWLIST: &str = "^[a-zA-Z_.-]+$";

/// Gitleaks' `vault-service-token` pattern, as written; [`vault_service_token`]
/// stands in for exactly this pattern.
pub(super) const VAULT_SERVICE_TOKEN: &str =
    r#"\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'"\s;]|\\[nr]|$)"#;

/// False only when [`VAULT_SERVICE_TOKEN`] cannot match `text`. Its keyword
/// `s.` ends every sentence whose last word ends in s, so nearly every
/// text woke the rule and compiled its relaxed gate: the last regex a
/// short command compiled (about 0.6 M instructions and a 320 KB table of
/// the NFA compiler's, callgrind and DHAT). What the pattern needs: at a
/// word boundary (ASCII, as Go's `\b`), `s.` and exactly 24 ASCII letters
/// or digits, or `hvs.` and 90 or more of `[\w-]`, then a quote, a blank,
/// `;`, a written `\n`/`\r`, or the end. `(?i)` folds K and ſ into `k` and
/// `s`: a text holding either is answered yes, as the generic gate does.
pub(super) fn vault_service_token(text: &str) -> bool {
    let b = text.as_bytes();
    if folds_into_ascii(b) {
        return true;
    }
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let closed = |at: usize| match b.get(at) {
        None | Some(b'`' | b'\'' | b'"' | b';') => true,
        Some(b'\\') => matches!(b.get(at + 1), Some(b'n' | b'r')),
        Some(&c) => blank(c),
    };
    memmem::find_iter(b, b"s.").any(|dot| {
        let start = dot + 2;
        // `s.` at a word boundary, then 24 letters or digits and a close.
        if dot == 0 || !word(b[dot - 1]) {
            let run = b[start..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .count();
            if run == 24 && closed(start + 24) {
                return true;
            }
        }
        // `hvs.` at a word boundary, then 90 or more of `[\w-]` and a close.
        if dot >= 2 && &b[dot - 2..dot] == b"hv" && (dot == 2 || !word(b[dot - 3])) {
            let run = b[start..]
                .iter()
                .take_while(|&&c| word(c) || c == b'-')
                .count();
            if run >= 90 && closed(start + run) {
                return true;
            }
        }
        false
    })
}

/// Whether the gate of [`for_pattern`] has a form read on JSON text as
/// written (Note \[Hand gate as written\]): [`run_stop_as_written`] and
/// [`yes_at_as_written`].
pub(super) fn has_as_written(regex: &str) -> bool {
    regex == GENERIC_API_KEY
}

/// Whether `text` holds a character Rust's `(?i)` folds into an ASCII
/// letter (K, ſ): the hand gates then say yes.
///
/// One `memchr2` pass for their first bytes (`0xE2`, `0xC5`): two
/// `memmem::find` calls built two searchers per call, and this runs once
/// per line with a generic keyword and once per string the gate reads
/// (perf: 2–3% of masking `extract --jsonl` output).
pub(super) fn folds_into_ascii(text: &[u8]) -> bool {
    const KELVIN: &[u8] = "\u{212A}".as_bytes();
    const LONG_S: &[u8] = "\u{17F}".as_bytes();
    memchr::memchr2_iter(KELVIN[0], LONG_S[0], text).any(|at| {
        let rest = &text[at..];
        rest.starts_with(KELVIN) || rest.starts_with(LONG_S)
    })
}

/// The keywords of [`GENERIC_API_KEY`], lower case (`api` read
/// case-insensitively: a superset of the pattern's `[Aa]pi|API`).
const KEYWORDS: [&[u8]; 10] = [
    b"access",
    b"auth",
    b"api",
    b"credential",
    b"creds",
    b"key",
    b"passwd",
    b"password",
    b"secret",
    b"token",
];

/// Bytes between a keyword and its assignment: `[ \t\w.-]` and `[\s'"]`.
const fn before_op(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'\'' | b'"') || blank(b)
}

/// `\s` as the pattern reads it (ASCII, as in Go).
const fn blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0C' | b'\r')
}

/// The first byte of an assignment: `=`, `>`, `:`, `||`, `=>`, `?=`, `,`.
fn op_start(b: u8) -> bool {
    matches!(b, b'=' | b'>' | b':' | b'|' | b'?' | b',')
}

/// Bytes after an assignment's first byte and before the value: the rest
/// of the assignment, then `[\x60'"\s=]`.
fn after_op(b: u8) -> bool {
    matches!(b, b'=' | b':' | b'|' | b'>' | b'`' | b'\'' | b'"') || blank(b)
}

/// A value byte: `[\w.=-]`, or `[a-z0-9+/]` case-insensitively.
const fn value(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'=' | b'-' | b'+' | b'/')
}

/// A value byte that the letters allowlist does not take (Note \[Values an
/// allowlist takes whole\]): not a letter, `_`, `.` or `-`.
const NOT_LETTER: u8 = 2;

/// Per byte: 0 when it is not a [`value`] byte, else 1, or'ed with
/// [`NOT_LETTER`].
const VALUE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        // `i < 256`: the cast keeps every bit.
        #[allow(clippy::cast_possible_truncation)]
        let b = i as u8;
        if value(b) {
            t[i] = if b.is_ascii_alphabetic() || matches!(b, b'_' | b'.' | b'-') {
                1
            } else {
                1 | NOT_LETTER
            };
        }
        i += 1;
    }
    t
};

/// False only when [`GENERIC_API_KEY`] cannot match `text` (Note \[Hand
/// gate\]).
pub(super) fn generic_api_key(text: &str) -> bool {
    generic_api_key_with(text, false)
}

/// False only when every match of [`GENERIC_API_KEY`] in `text` has a
/// secret [`LETTERS_ALLOWLIST`] allows (Note \[Values an allowlist takes
/// whole\]).
pub(super) fn generic_api_key_past_letters(text: &str) -> bool {
    generic_api_key_with(text, true)
}

fn generic_api_key_with(text: &str, letters_allowed: bool) -> bool {
    let b = text.as_bytes();
    if folds_into_ascii(b) {
        return true;
    }
    // Where the last keyword's run of `before_op` bytes ended: a keyword
    // ending inside that run leads to the same place, already refused.
    let mut refused_to = 0;
    let mut i = 0;
    while i < b.len() {
        let Some(len) = keyword_at(b, i) else {
            i += 1;
            continue;
        };
        let end = i + len;
        i += 1;
        if end <= refused_to {
            continue;
        }
        let mut at = end;
        while at < b.len() && before_op(b[at]) {
            at += 1;
        }
        if at < b.len() && op_start(b[at]) && value_follows(b, at + 1, letters_allowed) {
            return true;
        }
        refused_to = at;
    }
    false
}

/// The length of a keyword starting at `i`, if one does (the longest).
fn keyword_at(b: &[u8], i: usize) -> Option<usize> {
    // Most bytes start no keyword: one table look decides them.
    const FIRST: [bool; 256] = {
        let mut t = [false; 256];
        let mut k = 0;
        while k < KEYWORDS.len() {
            let c = KEYWORDS[k][0];
            t[c as usize] = true;
            t[c.to_ascii_uppercase() as usize] = true;
            k += 1;
        }
        t
    };
    if !FIRST[usize::from(b[i])] {
        return None;
    }
    let rest = &b[i..];
    KEYWORDS
        .iter()
        .filter(|k| rest.len() >= k.len() && rest[..k.len()].eq_ignore_ascii_case(k))
        .map(|k| k.len())
        .max()
}

/// Note \[Hand gate as written\]: [`generic_api_key`] read on a line of JSON
/// text as written, from the end of one of the rule's keywords, so that a
/// hit in a string the rule cannot match in is not hot (Note \[Needs read
/// on the line\] in `clean_json.rs`): `"unquoted_key","single_quotes"` or
/// `"token café check"`. It says yes wherever the hand gate says yes on the
/// text of the string the hit is in, or on that string read beside its
/// value (`"key": "value"`), given the line has no `\u` or `\/` escape:
/// - an escape (`\` and the byte after it) becomes `"`, `\` or a control
///   character, so it is let through wherever the gate lets a quote or a
///   blank through, and it closes a value;
/// - a quote as written ends the string: the gate goes on past it only
///   where the string is an object key (blanks, then `:`), as it does
///   across `": "` when reading a value beside its key; after the
///   assignment, quotes are let through as the gate lets them;
/// - every other byte is the text's own.
///
/// Looser than the gate on the decoded text (it may cross more), never
/// stricter; a test holds it to that on generated lines.
///
/// Split in two so a caller can remember an answer: what the gate says
/// depends only on where the run of name bytes from the keyword stops
/// ([`run_stop_as_written`]), and a later keyword that ends inside that run
/// stops at the same place (no keyword ends with a `\`, so it never ends
/// inside an escape). Without that, a long string of keywords and words
/// was read again from every keyword: quadratic.
pub(super) fn run_stop_as_written(json: &[u8], end: usize) -> usize {
    let mut at = end;
    while let Some(&b) = json.get(at) {
        match RUN_AS_WRITTEN[usize::from(b)] {
            Step::Byte => at += 1,
            Step::Escape => at += 2,
            Step::Stop => break,
        }
    }
    at.min(json.len())
}

/// What [`run_stop_as_written`] does at a byte.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    /// A name byte: go on ([`before_op`], but a quote).
    Byte,
    /// `\`: an escape, two bytes.
    Escape,
    /// Anything else ends the run.
    Stop,
}

/// [`run_stop_as_written`]'s step for each byte, as one table read: the
/// run crosses a string's words up to its closing quote, two dozen bytes
/// a hit on prose, and [`before_op`]'s tests per byte were 4% of masking
/// `extract --jsonl`'s output (perf of the masking loop).
const RUN_AS_WRITTEN: [Step; 256] = {
    let mut t = [Step::Stop; 256];
    let mut i = 0;
    while i < 256 {
        // `i < 256`: the cast keeps every bit.
        #[allow(clippy::cast_possible_truncation)]
        let b = i as u8;
        t[i] = if b == b'\\' {
            Step::Escape
        } else if b != b'"' && before_op(b) {
            Step::Byte
        } else {
            Step::Stop
        };
        i += 1;
    }
    t
};

/// What the gate says when the run from a keyword stops at `stop` (Note
/// \[Hand gate as written\]).
pub(super) fn yes_at_as_written(json: &[u8], stop: usize, letters_allowed: bool) -> bool {
    match json.get(stop) {
        Some(b'"') => {
            // The end of the string: on when it is a key.
            let mut at = stop + 1;
            while json.get(at).is_some_and(|&c| blank(c)) {
                at += 1;
            }
            (json.get(at) == Some(&b':') && value_follows_as_written(json, at + 1, letters_allowed))
                || past_the_quote_as_text(json, stop, letters_allowed)
        }
        Some(&b) => op_start(b) && value_follows_as_written(json, stop + 1, letters_allowed),
        None => false,
    }
}

/// Note \[Plain text through the JSON door\]: the text handed over as
/// JSON may not be JSON (a printed line of prose, a stored column of
/// text), and then it is masked as plain text, where a quote is a byte the
/// generic gate reads on past (`token" = value`, `auth", value`). Reading
/// the quote as the end of a string made such a text "clean" without the
/// walk that would have found it is not JSON, and the value was printed
/// whole. So at a quote that does not end a key, the gate also reads on as
/// [`generic_api_key`] does on plain text: a yes makes the hit hot, and the
/// walk then reads JSON as JSON (nothing found beside a string that only
/// looked like an assignment) and hands text that is not JSON to plain
/// masking. In JSON a string's closing quote is followed by blanks, then
/// `,`, `:`, `}` or `]`: the hit is hot only when what comes after a `,`
/// or `:` is a string of ten value bytes, not all letters (with the
/// letters allowlist); none of the 20,000 lines of the bench's `extract
/// --jsonl --json` output is.
fn past_the_quote_as_text(text: &[u8], quote: usize, letters_allowed: bool) -> bool {
    let mut at = quote;
    while text.get(at).is_some_and(|&c| before_op(c)) {
        at += 1;
    }
    text.get(at).is_some_and(|&c| op_start(c)) && value_follows(text, at + 1, letters_allowed)
}

/// Both halves, for tests.
#[cfg(test)]
fn generic_api_key_as_written(json: &[u8], end: usize, letters_allowed: bool) -> bool {
    folds_into_ascii(json)
        || yes_at_as_written(json, run_stop_as_written(json, end), letters_allowed)
}

/// [`value_follows`] on JSON text as written (Note \[Hand gate as
/// written\]): escapes and quotes are let through before the value, and an
/// escape closes it.
fn value_follows_as_written(b: &[u8], from: usize, letters_allowed: bool) -> bool {
    let mut at = from;
    while let Some(&c) = b.get(at) {
        if c == b'\\' {
            at += 2;
        } else if after_op(c) {
            at += 1;
        } else {
            break;
        }
    }
    value_closed_at(b, from.min(b.len()), at.min(b.len()), true, letters_allowed)
}

/// Whether ten value bytes can follow an assignment whose first byte ends
/// at `from`: skip the assignment's rest and the quotes and blanks; the
/// value may begin with some of the `=` skipped (they are value bytes too).
fn value_follows(b: &[u8], from: usize, letters_allowed: bool) -> bool {
    let mut at = from;
    while at < b.len() && after_op(b[at]) {
        at += 1;
    }
    value_closed_at(b, from, at, false, letters_allowed)
}

/// Whether ten value bytes start at `at` (counting the `=` just before it,
/// from `from` on) and are closed: a match of the value ends where a value
/// byte cannot follow, so only at the run's end, and the pattern wants a
/// quote, blank, `;`, a written `\n` or `\r`, or the end of the text there.
/// `as_written`: any escape closes it (Note \[Hand gate as written\]).
/// `letters_allowed`: a run of letters, `_`, `.` and `-` alone, with no `=`
/// before it, is let go (Note \[Values an allowlist takes whole\]).
fn value_closed_at(
    b: &[u8],
    from: usize,
    at: usize,
    as_written: bool,
    letters_allowed: bool,
) -> bool {
    let equals = b[from..at].iter().rev().take_while(|&&c| c == b'=').count();
    // One table read per byte for both questions (the run, and whether it
    // is letters alone): every hit in a JSON array of strings reads the
    // next string here (Note [Plain text through the JSON door]).
    let mut run = 0;
    let mut seen = 0;
    for &c in &b[at..] {
        let class = VALUE_CLASS[usize::from(c)];
        if class == 0 {
            break;
        }
        seen |= class;
        run += 1;
    }
    let end = at + run;
    if letters_allowed && equals == 0 && seen & NOT_LETTER == 0 {
        return false;
    }
    let closed = match b.get(end) {
        None | Some(b'`' | b'\'' | b'"' | b';') => true,
        Some(b'\\') => as_written || matches!(b.get(end + 1), Some(b'n' | b'r')),
        Some(&c) => blank(c),
    };
    equals + run >= 10 && closed
}

#[cfg(test)]
mod tests {
    use super::{
        GENERIC_API_KEY, generic_api_key, generic_api_key_past_letters, generic_api_key_with,
    };
    use crate::secrets::RuleSet;
    use crate::secrets::syntax::go_to_rust;

    /// 20,000 texts of 1 to `most` pieces of `alphabet` each, from a
    /// xorshift generator seeded with `seed` (the same texts every run).
    fn generated(alphabet: &[&str], most: usize, seed: u64) -> Vec<String> {
        let mut seed = seed;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed).unwrap_or(0)
        };
        (0..20_000)
            .map(|_| {
                let len = 1 + next() % most;
                (0..len)
                    .map(|_| alphabet[next() % alphabet.len()])
                    .collect()
            })
            .collect()
    }

    fn full() -> regex::Regex {
        regex::RegexBuilder::new(&go_to_rust(GENERIC_API_KEY))
            .size_limit(64 << 20)
            .build()
            .unwrap()
    }

    #[test]
    fn kelvin_and_long_s_are_found_among_other_non_ascii() {
        for (text, folds) in [
            ("plain ascii", false),
            ("café → naïve — ĥ Ş", false),
            ("\u{212A}ey", true),
            ("tail \u{17F}", true),
            ("→\u{2129}\u{212B}\u{17E}\u{180}", false),
            ("\u{2192}\u{212A}", true),
            ("\u{C5}\u{17F}", true),
        ] {
            assert_eq!(super::folds_into_ascii(text.as_bytes()), folds, "{text}");
        }
        // A lead byte at the very end, cut short.
        assert!(!super::folds_into_ascii(&[b'a', 0xE2, 0x84]));
        assert!(!super::folds_into_ascii(&[0xC5]));
    }

    #[test]
    fn the_builtin_generic_rule_is_the_pattern_the_gate_was_written_for() {
        let rules = RuleSet::builtin();
        let generic = rules
            .rules
            .iter()
            .find(|r| r.id == "generic-api-key")
            .unwrap();
        // A new gitleaks pattern: read the hand gate again against it, then
        // update the constant (Note [Hand gate]).
        assert_eq!(generic.regex, GENERIC_API_KEY);
    }

    #[test]
    fn says_yes_wherever_the_rule_matches() {
        let re = full();
        let mut texts = crate::secrets::tests::planted_contexts();
        texts.extend(
            include_str!("../../tests/fixtures/secrets/ordinary.txt")
                .lines()
                .map(str::to_owned),
        );
        for t in [
            "api_key = 'Zx8Qw3Er5Ty7Ui9Op1As'",
            "token:==========",
            "key:============",
            "secret := \"abcdefghijkl\"",
            "password || abcdefghijklmnop",
            "KEY=>`Zx8Qw3Er5Ty7Ui9Op1As`",
            "tokenizer.name ?= abcdef0123456789",
            "auth, aaaaaaaaaaaa+/==",
            "\u{212A}ey=abcdefghijklmnop",
            "\u{17F}ecret: abcdefghijklmnop",
            "x.token=key=Zx8Qw3Er5Ty7Ui9Op1As",
        ] {
            assert!(re.is_match(t), "the rule matches {t:?}");
            texts.push(t.to_owned());
        }
        // Generated text over the bytes the pattern cares about.
        let alphabet: Vec<&str> = vec![
            "key",
            "token",
            "API",
            "api",
            "Api",
            "passwd",
            "secret",
            "creds",
            " ",
            "\t",
            "\n",
            "'",
            "\"",
            "`",
            "=",
            ":",
            "|",
            ">",
            "?",
            ",",
            ";",
            "a",
            "Z",
            "9",
            "_",
            ".",
            "-",
            "+",
            "/",
            "é",
            "\\n",
            "\u{212A}",
            "\u{17F}",
            "abcdefgh",
            "ABCDEFGH12",
            "x",
        ];
        texts.extend(generated(&alphabet, 14, 0x9e37_79b9_7f4a_7c15));
        let mut matched = 0;
        let mut kept = 0;
        for t in &texts {
            if re.is_match(t) {
                matched += 1;
                assert!(generic_api_key(t), "the gate refused {t:?}");
            }
            // Note [Values an allowlist takes whole]: past letters, the gate
            // still says yes wherever a match's secret is more than letters.
            let beyond_letters = re.captures_iter(t).any(|c| {
                c.get(1).is_some_and(|s| {
                    !s.as_str()
                        .bytes()
                        .all(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'.' | b'-'))
                })
            });
            if beyond_letters {
                kept += 1;
                assert!(
                    generic_api_key_past_letters(t),
                    "past letters, the gate refused {t:?}"
                );
            }
        }
        assert!(matched > 300, "{matched}");
        assert!(kept > 200, "{kept}");
    }

    #[test]
    fn values_of_letters_alone_are_read_past_only_where_the_allowlist_takes_them() {
        for (t, plain, past) in [
            (r#"{"apiKeySource":"ANTHROPIC_API_KEY"}"#, true, false),
            ("api_key = \"some.setting-name_here\"", true, false),
            (r#"{"apiKey":"ANTHROPIC_API_KEY1"}"#, true, true),
            ("key==ABCDEFGHIJKL", true, true),
            ("token: abcdefghijkl+/", true, true),
            (
                "token: ABCDEFGHIJKLMNOP then key: Zx8Qw3Er5Ty7Ui9Op1As",
                true,
                true,
            ),
            ("the secret: nothing", false, false),
        ] {
            assert_eq!(generic_api_key(t), plain, "{t}");
            assert_eq!(generic_api_key_past_letters(t), past, "{t}");
        }
        // Only a rule carrying that allowlist is gated past letters.
        let mut rule = RuleSet::builtin()
            .rules
            .into_iter()
            .find(|r| r.id == "generic-api-key")
            .unwrap();
        assert!(super::letters_allowed(&rule));
        rule.allowlists.clear();
        assert!(!super::letters_allowed(&rule));
        let gate = super::for_rule(&rule).unwrap();
        assert!(gate(r#"{"apiKeySource":"ANTHROPIC_API_KEY"}"#));
    }

    #[test]
    fn the_vault_gate_says_yes_wherever_the_rule_matches_and_no_to_prose() {
        let rules = RuleSet::builtin();
        let vault = rules
            .rules
            .iter()
            .find(|r| r.id == "vault-service-token")
            .unwrap();
        // A new gitleaks pattern: read the gate again against it.
        assert_eq!(vault.regex, super::VAULT_SERVICE_TOKEN);
        let re = regex::Regex::new(&go_to_rust(super::VAULT_SERVICE_TOKEN)).unwrap();
        let mut texts = crate::secrets::tests::planted_contexts();
        texts.extend(
            include_str!("../../tests/fixtures/secrets/ordinary.txt")
                .lines()
                .map(str::to_owned),
        );
        let token = "Ab3dEf6hIj9kLm2nOp5qRs8t";
        let long = "x".repeat(95);
        for t in [
            format!("VAULT_TOKEN=s.{token}"),
            format!("token: \"s.{token}\""),
            format!("s.{token}\\n"),
            format!("(\"hvs.{long}\")"),
            format!("a hvs.{long}-_9;"),
            format!("s.{}\u{212A}", &token[..23]),
        ] {
            assert!(re.is_match(&t), "the rule matches {t:?}");
            texts.push(t);
        }
        let (x30, x60) = ("x".repeat(30), "x".repeat(60));
        let alphabet = [
            "s.",
            "hvs.",
            "s",
            ".",
            "h",
            "v",
            token,
            &token[..23],
            "9",
            "_",
            "-",
            " ",
            "\"",
            "'",
            "`",
            ";",
            "\\n",
            "\\x",
            "\n",
            "é",
            "K",
            "\u{212A}",
            &x30,
            &x60,
        ];
        texts.extend(generated(&alphabet, 10, 0x2545_f491_4f6c_dd1d));
        let mut matched = 0;
        for t in &texts {
            if re.is_match(t) {
                matched += 1;
                assert!(super::vault_service_token(t), "the gate refused {t:?}");
            }
        }
        assert!(matched > 50, "{matched}");
        for t in [
            "Checks done. All services. Then logs.".to_owned(),
            "see https://docs.example.com/logs.html for details".to_owned(),
            format!("xs.{token}"),
            format!("s.{token}9"),
            format!("hvs.{}", "x".repeat(89)),
        ] {
            assert!(!super::vault_service_token(&t), "{t:?}");
            assert!(!re.is_match(&t), "{t:?}");
        }
    }

    #[test]
    fn says_no_to_prose_that_only_names_a_keyword() {
        for t in [
            "token café check",
            "rotate the api key after the incident, then restart",
            "the secret: nothing",
            "key: a b c d e f",
            "access = short",
            "token: abcdefghijklmn, and more",
            "key=abcdefghijklmnop#",
            "",
            "no words here",
        ] {
            assert!(!generic_api_key(t), "{t:?}");
        }
    }

    /// [`run_stop_as_written`] crosses `[ \t\w.-']` and escapes, and
    /// stops at a quote, an assignment, any other byte or the end.
    #[test]
    fn the_run_from_a_keyword_crosses_name_bytes_and_escapes_only() {
        for (json, stop) in [
            ("token_v2.main-key x 'y'\t", 24),
            (r#"token_v2.main-key":1"#, 17),
            (r#"token\"quoted\" = 1"#, 16),
            ("token: 1", 5),
            ("token=1", 5),
            ("token(1)", 5),
            ("token café", 9),
            ("token\u{7f}", 5),
            ("token", 5),
            // An escape cut by the end stops at the end.
            ("token abc\\", 10),
        ] {
            assert_eq!(
                super::run_stop_as_written(json.as_bytes(), 5),
                stop,
                "{json:?}"
            );
        }
        // Every byte: the one table read agrees with the tests it replaced.
        for b in 0..=255u8 {
            let step = super::RUN_AS_WRITTEN[usize::from(b)];
            let want = if b == b'\\' {
                super::Step::Escape
            } else if b != b'"'
                && (b.is_ascii_alphanumeric()
                    || matches!(
                        b,
                        b'_' | b'.' | b'-' | b'\'' | b' ' | b'\t' | b'\n' | 0x0C | b'\r'
                    ))
            {
                super::Step::Byte
            } else {
                super::Step::Stop
            };
            assert_eq!(step, want, "{b:#04x}");
        }
    }

    proptest::proptest! {
        /// Note [Hand gate as written]: wherever the gate says yes on a
        /// string's text, or on a string read beside its key, it says yes
        /// on the line as written from one of the rule's keywords.
        #[test]
        fn as_written_says_yes_wherever_the_text_does(
            members in proptest::collection::vec(
                (proptest::collection::vec(0usize..PIECES.len(), 0..6),
                 proptest::collection::vec(0usize..PIECES.len(), 0..8)),
                1..5,
            ),
            letters in proptest::bool::ANY,
        ) {
            let text = |ix: &[usize]| ix.iter().map(|&i| PIECES[i]).collect::<String>();
            let mut object = serde_json::Map::new();
            for (k, v) in &members {
                object.insert(text(k), serde_json::Value::String(text(v)));
            }
            let json = serde_json::Value::Object(object.clone()).to_string();
            proptest::prop_assume!(!json.contains("\\u") && !json.contains("\\/"));
            let decoded = object.iter().any(|(k, v)| {
                let v = v.as_str().unwrap_or_default();
                generic_api_key_with(k, letters)
                    || generic_api_key_with(v, letters)
                    || generic_api_key_with(&format!("\"{k}\": \"{v}\""), letters)
            });
            let lower = json.to_ascii_lowercase();
            let written = super::KEYWORDS.iter().any(|k| {
                lower
                    .match_indices(std::str::from_utf8(k).unwrap_or_default())
                    .any(|(at, m)| super::generic_api_key_as_written(json.as_bytes(), at + m.len(), letters))
            });
            proptest::prop_assert!(!decoded || written, "{}", json);
        }

        /// Note [Plain text through the JSON door]: on text that is not
        /// JSON (the pieces as they are, quotes and backslashes included),
        /// the gate as written says yes from one of the keywords wherever
        /// the gate says yes on the text.
        #[test]
        fn as_written_says_yes_wherever_plain_text_does(
            pieces in proptest::collection::vec(0usize..PIECES.len(), 1..16),
            letters in proptest::bool::ANY,
        ) {
            let text: String = pieces.iter().map(|&i| PIECES[i]).collect();
            let lower = text.to_ascii_lowercase();
            let written = super::KEYWORDS.iter().any(|k| {
                lower
                    .match_indices(std::str::from_utf8(k).unwrap_or_default())
                    .any(|(at, m)| super::generic_api_key_as_written(text.as_bytes(), at + m.len(), letters))
            });
            proptest::prop_assert!(!generic_api_key_with(&text, letters) || written, "{:?}", text);
        }
    }

    /// What the generated lines are made of: the rule's keywords, name
    /// bytes, assignments, quotes, blanks, escapes and values.
    const PIECES: &[&str] = &[
        "api",
        "KEY",
        "token",
        "secret",
        "password",
        "_",
        "-",
        ".",
        " ",
        "\t",
        "\n",
        "\"",
        "'",
        "\\",
        "\\n",
        "=",
        ":",
        ":=",
        "=>",
        ",",
        "|",
        "?=",
        ">",
        "`",
        ";",
        "Zx8Qw3Er5T",
        "abcdefghij",
        "0123456789",
        "+/",
        "==",
        "é",
        "x",
        "\u{8}",
    ];
}
