//! Literals a rule's match needs, looked for before the rule is compiled.
//!
//! Note \[Literals a match needs\]: a woken rule (its keyword occurs) was
//! compiled, or its relaxed gate was (Note \[Relaxed gates\] in `gate.rs`),
//! before it could say "no match here", and compiling was most of what
//! masking added to a short command: `curl` in a sentence woke both curl
//! rules, ~6 million instructions of compiling for a text without `-H`,
//! `--header`, `-u` or `--user`. Most patterns name literals that every
//! match holds (`curl` and one of `-H`/`--header`; `SK`; `://` and `@`), and
//! a text without them cannot match. So the build script reads each
//! built-in pattern's syntax tree (`derive.rs`: a literal, a concatenation
//! of literals, a repetition of at least one, a capture, and an alternation
//! whose every branch needs something give literals; anything else gives
//! none) and writes, per rule, up to three requirements of up to eight
//! literals each; a rule runs only when every requirement has a literal in
//! the text. Nothing is parsed or built at run time, and a rule whose
//! requirements are met runs as before, so findings are unchanged (a test
//! checks every built-in rule on the planted corpus). A literal of exact
//! bytes is looked for as it is (Twilio's `SK`, not the `sk` of "task"); one
//! holding a letter that `(?i)` folds is looked for ignoring ASCII case
//! (which only widens its exact bytes), and since such a letter also
//! matches the Kelvin sign or the long s (`k`, `s`), a requirement holding
//! one is not used on non-ASCII text.

#[cfg(test)]
pub(super) mod derive;

/// One literal of a requirement: its bytes (lower case when it holds a
/// letter `(?i)` folds) and whether it does.
pub(super) type Literal = (&'static [u8], bool);

/// One built-in rule's requirements: its id, its pattern as written (a rule
/// replaced by a user's keeps none), and the requirements.
pub(super) type RuleNeeds = (&'static str, &'static str, &'static [&'static [Literal]]);

/// The built-in rules' requirements, written by the build script.
pub(super) static BUILTIN: &[RuleNeeds] = include!(concat!(env!("OUT_DIR"), "/builtin_needs.rs"));

/// The requirements of the built-in rule `id` with pattern `regex`, if any.
pub(super) fn builtin(id: &str, regex: &str) -> &'static [&'static [Literal]] {
    BUILTIN
        .iter()
        .find(|(i, r, _)| *i == id && *r == regex)
        .map_or(&[], |(_, _, n)| n)
}

/// Whether `text` holds a literal of every requirement (and so the rule may
/// match).
pub(super) fn met(needs: &[&[Literal]], text: &str) -> bool {
    // Read only when a requirement folds (one pass, at most once).
    let mut ascii = None;
    needs.iter().all(|choices| {
        // A folded letter may be a non-ASCII character in the text.
        (choices.iter().any(|&(_, folded)| folded)
            && !*ascii.get_or_insert_with(|| text.is_ascii()))
            || choices.iter().any(|&(lit, folded)| {
                if folded {
                    holds(text.as_bytes(), lit)
                } else {
                    holds_exact(text.as_bytes(), lit)
                }
            })
    })
}

/// [`met`] read on JSON text as written, for any of its strings: false only
/// when no string of `json` (nor a string read beside its object key, as
/// `"key": "value"`) can meet `needs`.
///
/// Sound only for JSON without `\u` or `\/` escapes (the caller's
/// condition; Note \[Needs read on the line\] in `clean_json.rs`): then a
/// string's text is its bytes as written but for the bytes its other
/// escapes make (`"`, `\`, control characters), so a literal holding none of
/// those that a string's text holds is in `json` too. A literal holding one
/// is taken as met.
pub(super) fn met_as_written(needs: &[&[Literal]], json: &str) -> bool {
    let escaped = |lit: &[u8]| lit.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
    needs
        .iter()
        .all(|choices| choices.iter().any(|&(lit, _)| escaped(lit)) || met(&[choices], json))
}

/// Whether `text` holds `lit` as it is. Literals are short and texts are
/// mostly a string or a line: a `memchr` for the first byte and a compare
/// beat `memmem::find`, which builds a searcher per call (perf: 8% of
/// masking `extract --jsonl` output).
fn holds_exact(text: &[u8], lit: &[u8]) -> bool {
    let Some((&first, rest)) = lit.split_first() else {
        return true;
    };
    let mut from = 0;
    while let Some(at) = memchr::memchr(first, &text[from..]).map(|p| from + p) {
        if text.get(at + 1..at + lit.len()) == Some(rest) {
            return true;
        }
        from = at + 1;
    }
    false
}

/// Whether `text` holds `lit` (lower case) ignoring ASCII case.
fn holds(text: &[u8], lit: &[u8]) -> bool {
    let Some((&first, rest)) = lit.split_first() else {
        return true;
    };
    let (lo, up) = (first, first.to_ascii_uppercase());
    let mut from = 0;
    while let Some(at) = memchr::memchr2(lo, up, &text[from..]).map(|p| from + p) {
        let end = at + lit.len();
        if end <= text.len() && text[at + 1..end].eq_ignore_ascii_case(rest) {
            return true;
        }
        from = at + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::derive::{Unit, needs_of};
    use super::{BUILTIN, holds, met};
    use crate::secrets::RuleSet;
    use crate::secrets::syntax::go_to_rust;

    fn lit(s: &str) -> Vec<Unit> {
        s.bytes().map(Unit::Exact).collect()
    }

    fn folded(s: &str) -> Vec<Unit> {
        s.bytes().map(Unit::Fold).collect()
    }

    /// What every match needs, read off the patterns the rules are made of.
    #[test]
    fn literals_every_match_holds() {
        let cases: Vec<(&str, Vec<Vec<Vec<Unit>>>)> = vec![
            ("abc", vec![vec![lit("abc")]]),
            ("SK[0-9a-f]{32}", vec![vec![lit("SK")]]),
            (
                r"curl.*(?:-H|--header)x",
                vec![
                    vec![lit("--header"), lit("-H")],
                    vec![lit("curl")],
                    vec![lit("x")],
                ],
            ),
            ("(?i)key", vec![vec![folded("key")]]),
            // A class of more than one letter's cases is not a literal.
            ("[Kk0-9]ey", vec![vec![lit("ey")]]),
            // A branch that needs nothing: the alternation needs nothing.
            ("(?:abc|[0-9]+)", vec![]),
            ("(?:abc)?d", vec![vec![lit("d")]]),
            ("(?:xy){2,}z", vec![vec![lit("xy")], vec![lit("z")]]),
            ("[a-z]+", vec![]),
            (r"\bfoo\b", vec![vec![lit("foo")]]),
        ];
        for (pattern, want) in cases {
            let mut got = needs_of(pattern);
            let mut want = want;
            for n in got.iter_mut().chain(want.iter_mut()) {
                n.sort();
            }
            got.sort();
            want.sort();
            assert_eq!(got, want, "{pattern}");
        }
    }

    #[test]
    fn a_literal_is_looked_for_ignoring_ascii_case() {
        assert!(holds(b"a CURL -h x", b"curl"));
        assert!(holds(b"xx--HEADER", b"--header"));
        assert!(!holds(b"cur", b"curl"));
        assert!(holds(b"", b""));
        for (text, lit, want) in [
            (&b"xxSK1"[..], &b"SK"[..], true),
            (b"sk SKx", b"SK", true),
            (b"S", b"SK", false),
            (b"xS", b"SK", false),
            (b"sk", b"SK", false),
            (b"a.eyb", b".ey", true),
            (b"", b"", true),
            (b"x", b"", true),
            (b":", b":", true),
        ] {
            assert_eq!(super::holds_exact(text, lit), want, "{lit:?} in {text:?}");
        }
        let needs: &[&[super::Literal]] =
            &[&[(b"-H", false), (b"--header", false)], &[(b"curl", true)]];
        assert!(met(needs, "CURL x -H y"));
        assert!(
            !met(needs, "curl x -h y"),
            "an exact literal is looked for as written"
        );
        assert!(!met(needs, "a quick `curl` against port 5432"));
        // A folded letter may hide as the Kelvin sign: not used on such text.
        let k: &[&[super::Literal]] = &[&[(b"key", true)]];
        assert!(!met(k, "ey"));
        assert!(met(k, "\u{212A}ey"));
    }

    /// The build script's table is what `derive` reads off each built-in
    /// rule, in file order (the detector looks there in that order).
    #[test]
    fn the_built_in_table_is_derived_from_the_rules() {
        let rules = RuleSet::builtin();
        assert_eq!(BUILTIN.len(), rules.rules.len());
        let mut with_needs = 0;
        for (rule, &(id, regex, needs)) in rules.rules.iter().zip(BUILTIN) {
            assert_eq!((rule.id.as_str(), rule.regex.as_str()), (id, regex));
            let derived = needs_of(&go_to_rust(&rule.regex));
            assert_eq!(derived.len(), needs.len(), "{id}");
            with_needs += usize::from(!needs.is_empty());
        }
        // Most patterns name a literal beyond their keyword.
        assert!(
            with_needs * 2 > rules.rules.len(),
            "{with_needs} of {}",
            rules.rules.len()
        );
    }

    /// Soundness on real matches: wherever a built-in rule's regex matches
    /// a planted secret in its context, the rule's requirements are met.
    #[test]
    fn every_planted_match_meets_its_rules_needs() {
        let text = include_str!("../../../tests/fixtures/secrets/planted.jsonl");
        let rules = RuleSet::builtin();
        let compiled: Vec<regex::Regex> = rules
            .rules
            .iter()
            .map(|r| {
                regex::RegexBuilder::new(&go_to_rust(&r.regex))
                    .size_limit(64 << 20)
                    .build()
                    .unwrap()
            })
            .collect();
        let mut checked = 0;
        for line in text.lines().filter(|l| l.starts_with('{')) {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let Some(context) = v["context"].as_str() else {
                continue;
            };
            for ((rule, re), &(_, _, needs)) in rules.rules.iter().zip(&compiled).zip(BUILTIN) {
                if re.is_match(context) {
                    checked += 1;
                    assert!(met(needs, context), "{}: {context:?}", rule.id);
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
