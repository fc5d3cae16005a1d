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
//! one is not used on text that holds either (Rust's `(?i)` folds no other
//! character into an ASCII letter; `derive::letter` reads a class as one
//! letter only when it holds no other). It was not used on any text that
//! was not ASCII: `café` beside `sonarr` met Sonar's requirement.

#[cfg(test)]
pub(super) mod derive;

use std::cell::Cell;

/// One literal of a requirement: its bytes (lower case when it holds a
/// letter `(?i)` folds), whether it does, and whether it is needed at a
/// word boundary (Note \[Literals at a word boundary\]).
pub(super) type Literal = (&'static [u8], bool, bool);

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
    met_in(needs, text, false)
}

/// [`met`], with `json`: `text` is JSON as written (see [`met_as_written`]).
fn met_in(needs: &[&[Literal]], text: &str, json: bool) -> bool {
    // Read only when a requirement folds (one pass, at most once).
    let folds = Cell::new(None);
    needs
        .iter()
        .all(|choices| choices_met(choices, text.as_bytes(), json, &folds))
}

/// Whether `text` holds one of `choices` (one requirement; `json`: as in
/// [`met_in`]); `folds` keeps whether `text` holds the Kelvin sign or the
/// long s, read at most once.
pub(super) fn choices_met(
    choices: &[Literal],
    text: &[u8],
    json: bool,
    folds: &Cell<Option<bool>>,
) -> bool {
    (json && choices.iter().any(|&(lit, _, _)| escaped(lit)))
        // A folded letter may be the Kelvin sign or the long s in the text.
        || (choices.iter().any(|&(_, folded, _)| folded) && text_folds(text, folds))
        || holds_any(text, choices, json)
}

/// Whether `lit` holds a byte that JSON escapes.
fn escaped(lit: &[u8]) -> bool {
    lit.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Whether `text` holds a character `(?i)` folds into an ASCII letter
/// (`hand_gate::folds_into_ascii`), read once into `folds`.
pub(super) fn text_folds(text: &[u8], folds: &Cell<Option<bool>>) -> bool {
    if let Some(f) = folds.get() {
        return f;
    }
    let f = super::hand_gate::folds_into_ascii(text);
    folds.set(Some(f));
    f
}

/// Note \[A requirement read at its keyword\]: a rule's requirement whose
/// every choice holds the keyword that woke it (Sonar's eight products
/// hold `sonar`; Vault's `hvs.` and `s.` hold `s.`; the JWT rule's `.ey`
/// holds `ey`; Twilio's `SK` is `sk` as written) is met in a match only
/// where that keyword occurs inside the match: the choice's occurrence
/// holds one, and the keyword pass reports every occurrence. So at a
/// keyword's hit such a requirement is read there, a compare or two,
/// instead of searched for through the whole line: the line-wide search
/// for Sonar's products stopped at every `s` of a line that held `sonarr`
/// (2.4 µs a line), Telegram's `telegr` at every `t`. Only one requirement
/// of a rule is read at a hit (two might be met at two different
/// occurrences of the keyword); the others are read line-wide as before.
/// A choice holding a byte JSON escapes, or `"`, `:` or a blank (which a
/// string read beside its key, `"key": "value"`, may put inside it), is not
/// read this way; nor is a folded choice in text holding the Kelvin sign
/// or the long s (a match may hold them where the keyword pass, which
/// folds ASCII only, reports nothing).
#[derive(Debug)]
pub(super) struct AtKeyword {
    /// The requirement's index among the rule's.
    req: usize,
    /// Per choice, where the keyword begins in it.
    offsets: Box<[usize]>,
}

impl AtKeyword {
    /// The requirement of `needs` read at an occurrence of `keyword` (lower
    /// case), if one has the keyword in each of its choices.
    pub(super) fn of(needs: &[&[Literal]], keyword: &[u8]) -> Option<AtKeyword> {
        // Rules read from a file never list an empty keyword (`rules.rs`);
        // a set built by hand might, and `windows(0)` would panic.
        if keyword.is_empty() {
            return None;
        }
        needs.iter().enumerate().find_map(|(req, choices)| {
            let offsets: Option<Box<[usize]>> = choices
                .iter()
                .map(|&(lit, _, _)| {
                    if escaped(lit) || lit.iter().any(|&b| b == b':' || b == b' ') {
                        return None;
                    }
                    lit.windows(keyword.len())
                        .position(|w| w.eq_ignore_ascii_case(keyword))
                })
                .collect();
            offsets.map(|offsets| AtKeyword { req, offsets })
        })
    }

    /// The requirement's index among the rule's.
    pub(super) fn req(&self) -> usize {
        self.req
    }

    /// Whether a choice of the requirement (of `needs`) holds the keyword
    /// found at `start` of `json` (JSON as written, Note \[Needs read on the
    /// line\] in `clean_json.rs`); `folds` as for [`choices_met`].
    pub(super) fn met_at(
        &self,
        needs: &[&[Literal]],
        json: &[u8],
        start: usize,
        folds: &Cell<Option<bool>>,
    ) -> bool {
        let choices = needs[self.req];
        if choices.iter().any(|&(_, folded, _)| folded) && text_folds(json, folds) {
            return true;
        }
        choices.iter().zip(&*self.offsets).any(|(&c, &o)| {
            start
                .checked_sub(o)
                .is_some_and(|from| occurs_at(json, from, c, true))
        })
    }
}

/// Whether `lit` occurs at `at` of `text` (ignoring ASCII case when it
/// folds), where its boundary allows (`json`: the text is JSON as written).
#[inline]
fn occurs_at(text: &[u8], at: usize, (lit, folded, boundary): Literal, json: bool) -> bool {
    let Some(seen) = text.get(at..at + lit.len()) else {
        return false;
    };
    // The second byte first: a common first byte (`s` of a product's
    // `sonar…`) is mostly followed by another.
    let fold = |b: u8| if folded { b.to_ascii_lowercase() } else { b };
    if lit.len() > 1 && fold(seen[1]) != lit[1] {
        return false;
    }
    let same = if folded {
        seen.eq_ignore_ascii_case(lit)
    } else {
        seen == lit
    };
    same && Boundary { on: boundary, json }.allows(text, at)
}

/// Note \[Literals at a word boundary\]: a pattern that begins its literal
/// after `\b` (Vault's `\b(?:hvs\.|s\.)…`, the JWT rule's `\bey…`)
/// matches only where no word character comes before it. Without that,
/// `s.` was met by every plural before a full stop (`status.example`,
/// `logs.`) and `ey` by every `key`: on `extract --jsonl`'s bench output,
/// 1,354 lines were walked string by string for Vault's rule alone. Such a
/// literal (its first byte a word byte; `derive::required`) is found only
/// where the byte before it is not an ASCII word byte. A byte of a
/// character that is not ASCII before it may be a word character's or
/// not, so it counts; so does a word byte after a backslash in JSON as
/// written, which may be an escape's letter (`\n` is a newline).
#[derive(Clone, Copy)]
struct Boundary {
    /// The literal is needed at a word boundary.
    on: bool,
    /// The text is JSON as written.
    json: bool,
}

impl Boundary {
    /// Whether an occurrence at `at` in `text` may be where a match holds it.
    fn allows(self, text: &[u8], at: usize) -> bool {
        if !self.on || at == 0 {
            return true;
        }
        let before = text[at - 1];
        let word = before.is_ascii_alphanumeric() || before == b'_';
        !word || (self.json && at >= 2 && text[at - 2] == b'\\')
    }
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
/// is taken as met. The detector reads a line's requirements one at a
/// time, as it needs them ([`choices_met`] with `json`), and one of them
/// at each keyword hit ([`AtKeyword`]); this is the whole of it, which the
/// tests hold those to.
#[cfg(test)]
pub(super) fn met_as_written(needs: &[&[Literal]], json: &str) -> bool {
    met_in(needs, json, true)
}

/// The most choices [`holds_any`] reads in one pass: as many as a
/// requirement lists (the build script's `derive::MOST_CHOICES`, which a
/// test holds it to); more are read one by one.
const ONE_PASS: usize = 8;

/// Whether `text` holds one of `choices` (each where its boundary
/// allows; `json`: the text is JSON as written).
///
/// Literals are short and texts are mostly a string or a line: a `memchr`
/// for one byte and a compare beat `memmem::find`, which builds a
/// searcher per call (perf: 8% of masking `extract --jsonl` output). The
/// choices' searched bytes (both cases of a folded one) are looked for in
/// one pass when there are at most three: a product's eight literals
/// (Note \[Products of small languages\] in `derive.rs`) mostly share one.
///
/// Note \[The rarest byte searched\]: the byte searched is a literal's
/// least common one in JSON text ([`commonness`]), not its first.
/// Telegram's `:A` was searched by its `:`, and a JSON line has a colon
/// after every key: the search stopped at each of them (perf of masking
/// `extract --jsonl`'s output: `memchr` 5%, most of it called from here);
/// by its `A` it mostly reads the line once (the loop about 2% faster).
fn holds_any(text: &[u8], choices: &[Literal], json: bool) -> bool {
    if choices.len() > ONE_PASS {
        return choices
            .iter()
            .any(|c| holds_any(text, std::slice::from_ref(c), json));
    }
    // Each choice's searched byte's place in it, found once: `found_at`
    // runs at every occurrence of a searched byte.
    let mut offsets = [0usize; ONE_PASS];
    let mut bytes = [0u8; 3];
    let mut n = 0;
    for (offset, &(lit, folded, _)) in offsets.iter_mut().zip(choices) {
        *offset = rarest(lit);
        let Some(&byte) = lit.get(*offset) else {
            return true;
        };
        let cases = [
            byte,
            if folded {
                byte.to_ascii_uppercase()
            } else {
                byte
            },
        ];
        for b in cases {
            if !bytes[..n].contains(&b) {
                if n == bytes.len() {
                    return choices
                        .iter()
                        .any(|c| holds_any(text, std::slice::from_ref(c), json));
                }
                bytes[n] = b;
                n += 1;
            }
        }
    }
    let found_at = |at: usize| {
        choices.iter().zip(&offsets).any(|(&c, &offset)| {
            at.checked_sub(offset)
                .is_some_and(|from| occurs_at(text, from, c, json))
        })
    };
    match n {
        0 => false,
        1 => memchr::memchr_iter(bytes[0], text).any(found_at),
        2 => memchr::memchr2_iter(bytes[0], bytes[1], text).any(found_at),
        _ => memchr::memchr3_iter(bytes[0], bytes[1], bytes[2], text).any(found_at),
    }
}

/// Where in `lit` its least common byte is ([`commonness`]; the first of
/// equals), 0 for an empty one.
fn rarest(lit: &[u8]) -> usize {
    lit.iter()
        .enumerate()
        .min_by_key(|&(_, &b)| commonness(b))
        .map_or(0, |(i, _)| i)
}

/// How common a byte is in the JSON text agents and agentshape write, in
/// four ranks (Note \[The rarest byte searched\]): JSON's structure and
/// blanks, then lower-case letters (a folded literal's are searched in
/// both cases), then digits and the punctuation of names and paths, then
/// everything else (capitals, rarer punctuation, bytes above ASCII).
fn commonness(b: u8) -> u8 {
    match b {
        b'"' | b':' | b',' | b' ' | b'{' | b'}' | b'[' | b']' | b'\\' => 3,
        b'a'..=b'z' => 2,
        b'0'..=b'9' | b'.' | b'-' | b'_' | b'/' => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::derive::{Unit, needs_of};
    use super::{BUILTIN, Boundary, met, met_as_written};

    /// An occurrence anywhere counts.
    const ANYWHERE: Boundary = Boundary {
        on: false,
        json: false,
    };

    /// Whether `text` holds `lit` ignoring ASCII case.
    fn holds(text: &[u8], lit: &'static [u8], at: Boundary) -> bool {
        super::holds_any(text, &[(lit, true, at.on)], at.json)
    }

    /// Whether `text` holds `lit` as it is.
    fn holds_exact(text: &[u8], lit: &'static [u8], at: Boundary) -> bool {
        super::holds_any(text, &[(lit, false, at.on)], at.json)
    }
    use crate::secrets::RuleSet;
    use crate::secrets::syntax::go_to_rust;

    fn lit(s: &str) -> Vec<Unit> {
        s.bytes().map(Unit::Exact).collect()
    }

    fn folded(s: &str) -> Vec<Unit> {
        s.bytes().map(Unit::Fold).collect()
    }

    fn at_boundary(l: &[Unit]) -> Vec<Unit> {
        let mut out = vec![Unit::Boundary];
        out.extend_from_slice(l);
        out
    }

    /// What every match needs, read off the patterns the rules are made of.
    #[test]
    fn literals_every_match_holds() {
        let cases: Vec<(&str, Vec<Vec<Vec<Unit>>>)> = vec![
            ("abc", vec![vec![lit("abc")]]),
            ("SK[0-9a-f]{32}", vec![vec![lit("SK")]]),
            (
                r"curl.*(?:-H|--header)x",
                // `x` and the alternation in one product.
                vec![vec![lit("--headerx"), lit("-Hx")], vec![lit("curl")]],
            ),
            ("(?i)key", vec![vec![folded("key")]]),
            // A class of more than one letter's cases is not a literal.
            ("[Kk0-9]ey", vec![vec![lit("ey")]]),
            // A branch that needs nothing: the alternation needs nothing.
            ("(?:abc|[0-9]+)", vec![]),
            ("(?:abc)?d", vec![vec![lit("d")]]),
            ("(?:xy){2,}z", vec![vec![lit("xy")], vec![lit("z")]]),
            ("[a-z]+", vec![]),
            // Note [Literals at a word boundary].
            (r"\bfoo\b", vec![vec![at_boundary(&lit("foo"))]]),
            // A boundary inside a run matches nothing; it is not kept.
            (r"x\Bfoo", vec![vec![lit("xfoo")]]),
            (r"\B(?:foo)", vec![vec![lit("foo")]]),
            // A literal whose first byte is not a word byte keeps no boundary.
            (
                r"\b(?:\.ab|cd)",
                vec![vec![lit(".ab"), at_boundary(&lit("cd"))]],
            ),
            (
                r"\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:['\s;]|$)",
                vec![vec![at_boundary(&lit("hvs.")), at_boundary(&lit("s."))]],
            ),
            // Note [Products of small languages].
            (
                "(?i)[a-z]{0,5}(?:sonar[_.-]?(login|token))",
                vec![
                    ["", "_", ".", "-"]
                        .iter()
                        .flat_map(|sep| {
                            ["login", "token"].map(|w| {
                                let mut l = folded("sonar");
                                l.extend(lit(sep));
                                l.extend(folded(w));
                                l
                            })
                        })
                        .collect(),
                ],
            ),
            ("ab?c", vec![vec![lit("abc"), lit("ac")]]),
            ("a[xy]-b[0-9]", vec![vec![lit("ax-b"), lit("ay-b")]]),
            // The next item's beginnings join the product.
            ("k=(?:ab|cd)[0-9]+", vec![vec![lit("k=ab"), lit("k=cd")]]),
            // At most eight strings: the item with no room begins the next run.
            (
                "[ab][cd][ef][gh]x",
                vec![
                    ["ace", "acf", "ade", "adf", "bce", "bcf", "bde", "bdf"]
                        .map(lit)
                        .to_vec(),
                    vec![lit("gx"), lit("hx")],
                ],
            ),
            // An optional item alone: nothing.
            ("(?:ab)?[0-9]", vec![]),
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
        assert!(holds(b"a CURL -h x", b"curl", ANYWHERE));
        assert!(holds(b"xx--HEADER", b"--header", ANYWHERE));
        assert!(!holds(b"cur", b"curl", ANYWHERE));
        assert!(holds(b"", b"", ANYWHERE));
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
            assert_eq!(
                holds_exact(text, lit, ANYWHERE),
                want,
                "{lit:?} in {text:?}"
            );
        }
        let needs: &[&[super::Literal]] = &[
            &[(b"-H", false, false), (b"--header", false, false)],
            &[(b"curl", true, false)],
        ];
        assert!(met(needs, "CURL x -H y"));
        assert!(
            !met(needs, "curl x -h y"),
            "an exact literal is looked for as written"
        );
        assert!(!met(needs, "a quick `curl` against port 5432"));
        // A folded letter may hide as the Kelvin sign: not used on such text.
        let k: &[&[super::Literal]] = &[&[(b"key", true, false)]];
        assert!(!met(k, "ey"));
        assert!(met(k, "\u{212A}ey"));
        assert!(met(k, "x \u{17F} y"), "the long s");
        // Other characters that are not ASCII fold into no ASCII letter.
        assert!(!met(k, "caf\u{e9} ey \u{2192} \u{1F680}"));
        assert!(met(k, "caf\u{e9} KEY"));
    }

    /// Note [Literals at a word boundary]: found only where no ASCII word
    /// byte comes before; in JSON as written, a word byte after a backslash
    /// may be an escape's letter.
    #[test]
    fn a_literal_at_a_word_boundary_has_no_word_byte_before_it() {
        let at = |on, json| Boundary { on, json };
        for (text, json, want) in [
            (&b"status.example"[..], false, false),
            (b"logs.", false, false),
            (b"_s.x", false, false),
            (b"9s.x", false, false),
            (b"s.x", false, true),
            (b"a s.x", false, true),
            (b"\"s.x", false, true),
            (b"a-s.x", false, true),
            // A character that is not ASCII may or may not be a word's.
            ("\u{e9}s.x".as_bytes(), false, true),
            // One occurrence at a boundary is enough.
            (b"status. s.x", false, true),
            // `\ns.`: the `n` of a newline's escape in JSON as written.
            (b"a\\ns.x", true, true),
            (b"a\\ns.x", false, false),
            (b"ans.x", true, false),
        ] {
            assert_eq!(
                holds_exact(text, b"s.", at(true, json)),
                want,
                "{:?} json {json}",
                String::from_utf8_lossy(text)
            );
            assert!(holds_exact(text, b"s.", at(false, json)));
        }
        assert!(!holds(b"KEYS.x", b"s.", at(true, false)));
        assert!(holds(b"KEY S.x", b"s.", at(true, false)));
        // As the detector reads a line: Vault's requirement on a JSON line.
        let vault: &[&[super::Literal]] = &[&[(b"hvs.", false, true), (b"s.", false, true)]];
        assert!(!met_as_written(
            vault,
            r#"{"url":"https://status.example.com/"}"#
        ));
        assert!(met_as_written(
            vault,
            r#"{"token":"s.abcdefghijklmnopqrstuvwx"}"#
        ));
        assert!(met_as_written(
            vault,
            r#"{"note":"line\ns.abcdefghijklmnopqrstuvwx"}"#
        ));
        assert!(!met(vault, "status.example"));
        assert!(met(vault, "x hvs.abc"));
    }

    /// A requirement's choices are looked for in one pass when they begin
    /// with at most three bytes (both cases of a folded one), one by one
    /// otherwise; found either way.
    #[test]
    fn choices_are_found_in_one_pass_or_one_by_one() {
        use super::{Literal, holds_any};
        let sonar: &[Literal] = &[(b"sonar_token", true, false), (b"sonartoken", true, false)];
        assert!(holds_any(b"a SONAR_TOKEN", sonar, false));
        assert!(holds_any(b"sonartoken", sonar, false));
        assert!(!holds_any(b"sonarr token sonar token", sonar, false));
        let four: &[Literal] = &[
            (b"ab", false, false),
            (b"cd", false, false),
            (b"ef", false, false),
            (b"Gh", false, false),
        ];
        assert!(holds_any(b"xxGh", four, false));
        assert!(holds_any(b"xxef", four, false));
        assert!(!holds_any(b"ag ce gh", four, false));
        // `b` folded and `B` exact: three first bytes, one pass.
        let three: &[Literal] = &[
            (b"bx", true, false),
            (b"By", false, false),
            (b"z", false, false),
        ];
        assert!(holds_any(b"..BX", three, false));
        assert!(holds_any(b"..By", three, false));
        assert!(!holds_any(b"..by", three, false));
        assert!(holds_any(b"z", three, false));
        // Each choice keeps its own boundary.
        let vault: &[Literal] = &[(b"hvs.", false, true), (b"s.", false, true)];
        assert!(!holds_any(b"xhvs. logs.", vault, false));
        assert!(holds_any(b"xhvs. s.", vault, false));
        assert!(!holds_any(b"", vault, false));
    }

    /// Note [The rarest byte searched]: a literal is searched by its least
    /// common byte and still found wherever it occurs, as a compare at
    /// every place finds it.
    #[test]
    fn literals_are_searched_by_their_rarest_byte() {
        use super::{ONE_PASS, commonness, holds_any, rarest};
        assert_eq!(ONE_PASS, super::derive::MOST_CHOICES);
        assert_eq!(rarest(b":A"), 1);
        assert_eq!(rarest(b"sonar_"), 5);
        assert_eq!(rarest(b"ab"), 0);
        assert_eq!(rarest(b""), 0);
        assert!(commonness(b':') > commonness(b'a') && commonness(b'a') > commonness(b'A'));
        let telegram: &[super::Literal] = &[(b":A", false, false)];
        assert!(holds_any(br#"{"a":1,"b":"x:A"}"#, telegram, true));
        assert!(!holds_any(br#"{"a":1,"b":"A","c":"a"}"#, telegram, true));
        assert!(holds_any(b"A:A", telegram, false));
        assert!(!holds_any(b"A:", telegram, false));
    }

    proptest::proptest! {
        /// Any choices (folded or not, at a boundary or not) in any text:
        /// found exactly where a compare at every place finds one.
        #[test]
        fn holds_any_is_a_compare_at_every_place(
            lits in proptest::collection::vec(
                (proptest::collection::vec(proptest::sample::select(b":Aa.\"_b1".to_vec()), 1..4),
                 proptest::bool::ANY,
                 proptest::bool::ANY),
                1..11,
            ),
            text in proptest::collection::vec(proptest::sample::select(b":Aa.\"_b1 B".to_vec()), 0..40),
            json in proptest::bool::ANY,
        ) {
            let lits: Vec<(Vec<u8>, bool, bool)> = lits
                .into_iter()
                .map(|(l, folded, boundary)| {
                    (if folded { l.to_ascii_lowercase() } else { l }, folded, boundary)
                })
                .collect();
            let choices: Vec<super::Literal> = lits
                .iter()
                .map(|(l, f, b)| (&*Box::leak(l.clone().into_boxed_slice()), *f, *b))
                .collect();
            let everywhere = (0..=text.len())
                .any(|at| choices.iter().any(|&c| super::occurs_at(&text, at, c, json)));
            proptest::prop_assert_eq!(super::holds_any(&text, &choices, json), everywhere);
        }
    }

    /// `needs` as the build script writes them (its literal conversion).
    fn as_table(needs: &[Vec<Vec<Unit>>]) -> Vec<Vec<super::Literal>> {
        needs
            .iter()
            .map(|choices| {
                choices
                    .iter()
                    .map(|lit| {
                        let (bytes, folded, boundary) = super::derive::as_table(lit);
                        (&*Box::leak(bytes.into_boxed_slice()), folded, boundary)
                    })
                    .collect()
            })
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Soundness of the derivation, products and boundaries included:
        /// wherever a pattern matches a text, the text meets its needs, as
        /// plain text and as a JSON string written (escapes and all).
        #[test]
        fn a_match_always_meets_what_its_pattern_needs(
            atoms in proptest::collection::vec(0usize..ATOMS.len(), 1..6),
            fold in proptest::bool::ANY,
            text in proptest::collection::vec(0usize..PIECES.len(), 0..16),
        ) {
            let body: String = atoms.iter().map(|&a| ATOMS[a]).collect();
            let pattern = if fold { format!("(?i){body}") } else { body };
            let re = regex::Regex::new(&pattern).unwrap();
            let text: String = text.iter().map(|&c| PIECES[c]).collect();
            if re.is_match(&text) {
                let table = as_table(&needs_of(&pattern));
                let needs: Vec<&[super::Literal]> = table.iter().map(Vec::as_slice).collect();
                proptest::prop_assert!(met(&needs, &text), "{pattern} on {text:?}: {table:?}");
                let json = serde_json::to_string(&text).unwrap();
                proptest::prop_assert!(!json.contains("\\u"));
                proptest::prop_assert!(
                    met_as_written(&needs, &json),
                    "{pattern} on {json}: {table:?}"
                );
            }
        }
    }

    /// Pieces of the patterns the property test joins: literals, small
    /// classes, optional and alternative pieces, boundaries, repetitions.
    const ATOMS: [&str; 16] = [
        "s\\.",
        "ey",
        "ab",
        "k",
        "x_",
        "[ab]",
        "[_.-]",
        "(?:a|bc)",
        "(?:ab)?",
        "\\b",
        "\\B",
        "[a-z]{1,3}",
        "(?i:sk)",
        "[ -~]",
        "(?:s|hvs)\\.",
        "\\s",
    ];

    /// The pieces of the property test's texts: the atoms' own characters
    /// and some of their strings whole, word and other bytes around them,
    /// what JSON escapes (`\ns.`: an escape's letter before a boundary),
    /// and characters that are not ASCII: a letter (`é`, a word character
    /// to `\b`), an arrow (not one), the Kelvin sign and the long s (they
    /// fold into `k`, `s`).
    const PIECES: [&str; 27] = [
        "a", "b", "c", "s", "S", ".", "e", "y", "k", "K", "x", "_", "-", " ", "\n", "\"", "\\",
        "\u{e9}", "\u{2192}", "\u{212A}", "\u{17F}", "s.", "\ns.", "hvs.", "ey", "sk", "ab",
    ];

    /// Note [A requirement read at its keyword]: the requirement whose every
    /// choice holds the keyword, each choice read where it would hold the
    /// keyword's hit, boundary and case as in the line-wide search.
    #[test]
    fn a_requirement_is_read_where_its_keyword_is() {
        use super::{AtKeyword, Literal};
        let folds = std::cell::Cell::new(None);
        let at = |needs: &[&[Literal]], keyword: &str, json: &str| {
            let a = AtKeyword::of(needs, keyword.as_bytes()).unwrap();
            let start = json.find(keyword).unwrap();
            folds.set(None);
            a.met_at(needs, json.as_bytes(), start, &folds)
        };
        let vault: &[&[Literal]] = &[&[(b"hvs.", false, true), (b"s.", false, true)]];
        let a = AtKeyword::of(vault, b"s.").unwrap();
        assert_eq!((a.req(), &*a.offsets), (0, &[2, 0][..]));
        assert!(!at(vault, "s.", r#"{"u":"status.example"}"#));
        assert!(at(vault, "s.", r#"{"t":"s.Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1"}"#));
        assert!(at(vault, "s.", r#"{"t":"hvs.CAESIJ"}"#));
        assert!(!at(vault, "s.", r#"{"t":"xhvs.CAESIJ"}"#));
        assert!(at(
            vault,
            "s.",
            r#"{"t":"a
s.Xq7Lm2Vb9Rt4"}"#
        ));
        // The JWT rule: `.ey` is read at the hit, `ey` at a boundary is not.
        let jwt: &[&[Literal]] = &[&[(b".ey", false, false)], &[(b"ey", false, true)]];
        let a = AtKeyword::of(jwt, b"ey").unwrap();
        assert_eq!((a.req(), &*a.offsets), (0, &[1][..]));
        assert!(!at(jwt, "ey", r#"{"k":"they"}"#));
        assert!(at(jwt, "ey", r#"{"k":"a.eyJ"}"#));
        // Twilio's `SK` as written, at a hit of `sk` in any case.
        let twilio: &[&[Literal]] = &[&[(b"SK", false, false)]];
        assert!(!at(twilio, "sk", r#"{"risk":1}"#));
        assert!(!at(twilio, "Sk", r#"{"Skip":1}"#));
        assert!(at(twilio, "SK", r#"{"SK0123":1}"#));
        // Folded choices: any case; on text with the long s, met.
        let sonar: &[&[Literal]] =
            &[&[(b"sonar_token", true, false), (b"sonarlogin", true, false)]];
        assert!(!at(sonar, "sonar", r#"{"name":"sonarr"}"#));
        assert!(at(sonar, "SONAR", r#"{"SONAR_TOKEN":"x"}"#));
        assert!(at(sonar, "sonar", "{\"a\":\"sonarr \u{17F}onarlogin\"}"));
        // A choice that may cross a key and its value, or without the keyword:
        // the requirement is read line-wide.
        let generic: &[&[Literal]] = &[&[(b":", false, false), (b"=", false, false)]];
        assert!(AtKeyword::of(generic, b"key").is_none());
        let spaced: &[&[Literal]] = &[&[(b"key id", true, false)]];
        assert!(AtKeyword::of(spaced, b"key").is_none());
        let other: &[&[Literal]] = &[&[(b"SK", false, false), (b"AC", false, false)]];
        assert!(AtKeyword::of(other, b"sk").is_none());
        assert!(AtKeyword::of(twilio, b"").is_none(), "an empty keyword");
        // The second requirement when the first does not hold the keyword.
        let second: &[&[Literal]] = &[&[(b":A", false, false)], &[(b"telegr", true, false)]];
        assert_eq!(AtKeyword::of(second, b"telegr").map(|a| a.req()), Some(1));
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
