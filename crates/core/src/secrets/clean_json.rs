//! Deciding that JSON text holds no secret without building a `Value`.
//!
//! Note \[Clean JSON without a Value\]: [`Masker::mask_json_text`] masks
//! each string of a JSON text with its object key as context, which meant
//! parsing every line into a `serde_json::Value` and running the detector
//! on each of its strings: `extract --jsonl` prints lines of ~50 short
//! strings, and that per-string work was most of what masking cost it
//! (issue 40: ×2.5). Almost every line holds no secret, so the answer
//! "nothing to mask" is found here first, and the full path runs only
//! when some string may hold one:
//!
//! 1. One keyword pass over the text as written marks *hot spans*
//!    ([`Detector::hot_spans`]): keyword hits, `%`, `eyJ` and base64 runs.
//!    An unescaped string's bytes are its text, and no keyword holds a byte
//!    JSON escapes, so a string with a keyword or an encoding overlaps a hot
//!    span. A text without hot spans and without `\u` or `\/` escapes (the
//!    only ones that can hide a keyword's byte or split a base64 run) holds
//!    no secret, as JSON or as plain text: done, nothing parsed.
//! 2. Otherwise the text is walked by serde's visitor, which hands over
//!    each unescaped string as a slice of the text (its place known) and an
//!    escaped one decoded. A string is read only when it is hot (an
//!    unescaped one overlapping a hot span, an escaped one that
//!    [`Detector::may_find`] accepts) or is the value of a hot key, and
//!    then exactly as [`Masker::mask_value`] reads it.
//! 3. The first finding, or a text that is not JSON, stops the walk, and the
//!    caller takes the full path, which then decides everything as before.
//!
//! So the answer is the full path's: "clean" only when every string the
//! full path would read is known to give nothing.
//!
//! Note \[Needs read on the line\]: most keyword hits in ordinary JSON
//! wake a rule that cannot match there: `risk` holds Twilio's `sk` but the
//! rule needs `SK`, `key` holds the JWT rule's `ey` but it needs `.ey`,
//! `unquoted_key` holds Octopus Deploy's `api-`... (Note \[Literals a match
//! needs\] in `needs/mod.rs`). Each made a line hot and sent it through the
//! walk for nothing. When the text has no `\u` or `\/` escape, a string's
//! text is its bytes as written but for the bytes its other escapes make
//! (`"`, `\`, control characters), and reading a string beside its key
//! only adds quotes, `:` and a blank between bytes of the text; so a
//! literal (holding none of those bytes) that a string, or a string read
//! beside its key, holds is in the text too. A hit is then a hot span only
//! when one rule it wakes has what it needs somewhere in the whole text
//! (`needs::met_as_written`, read once per rule and line); escaped strings
//! are still asked [`Detector::may_find`] on their own text, unpruned.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::Masker;
use super::facts::Facts;

/// Step 1 of Note \[Clean JSON without a Value\] alone, on bytes: true
/// when `bytes` have no `\u` or `\/` escape and the keyword pass finds no
/// hot span in them, so that they hold no secret as JSON text or as plain
/// text; false when they may (and the caller reads them as text).
///
/// Note \[Clean bytes unchecked\]: a `--jsonl` command masks each batch
/// of result lines it prints, and checked that the batch is UTF-8 and split
/// it into lines before reading each as text (callgrind of `extract --jsonl
/// --json`: about 5 of masking's 320 million instructions), though no line
/// of the bench's 20,000 has a hot span. Nothing in step 1 reads text: the
/// facts pass, the keyword kernel, the needs and the hand gate read bytes.
/// So the check runs only on the batches this says no to. For bytes that are
/// not UTF-8, the printer masks their lossy text, which differs from them
/// only where U+FFFD stands for bytes that are not UTF-8; when every
/// keyword and literal a rule needs is ASCII ([`Detector::ascii_only`],
/// the built-in set's are), no hit, literal, trigger (`%`, `eyJ`, base64
/// runs) or fold (K, ſ) holds a byte of U+FFFD or a byte that is not
/// UTF-8, so this finds nothing in the bytes only where it would find
/// nothing in that text. A rule set with other keywords gets false.
pub(super) fn clean_bytes(masker: &Masker, bytes: &[u8]) -> bool {
    let detector = masker.detector();
    if !detector.ascii_only() {
        return false;
    }
    let facts = Facts::of(bytes);
    !facts.escape
        && detector
            .hot_spans(bytes, true, facts)
            .is_some_and(|hot| hot.is_empty())
}

/// True when [`Masker::mask_json_text`] would find nothing in `json`
/// (Note \[Clean JSON without a Value\]); false when it may find something.
pub(super) fn is_clean(masker: &Masker, json: &str) -> bool {
    // Note [Line facts in one pass] in `facts.rs`.
    let facts = Facts::of(json.as_bytes());
    let as_written = !facts.escape;
    let Some(hot) = masker
        .detector()
        .hot_spans(json.as_bytes(), as_written, facts)
    else {
        return false;
    };
    if hot.is_empty() && as_written {
        return true;
    }
    let mut walk = Walk {
        masker,
        base: json.as_ptr() as usize,
        hot: &hot,
        next: 0,
        found: false,
    };
    let mut de = serde_json::Deserializer::from_str(json);
    let walked = Node {
        walk: &mut walk,
        key: None,
    }
    .deserialize(&mut de)
    .is_ok()
        && de.end().is_ok();
    walked && !walk.found
}

/// The visits of a walk that only looks at strings and containers: the
/// other values of a JSON text pass (`Node` and `Repeats`).
macro_rules! scalars_pass {
    () => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
            Ok(())
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
            Ok(())
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
            Ok(())
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
            Ok(())
        }

        fn visit_unit<E: de::Error>(self) -> Result<(), E> {
            Ok(())
        }
    };
}

/// The walk's state: the hot spans and how far they have been passed.
struct Walk<'m, 'h> {
    masker: &'m Masker,
    /// The address of the text's first byte (an unescaped string's place
    /// is its slice's address minus this).
    base: usize,
    hot: &'h [(usize, usize)],
    /// The first hot span that may still overlap a string (strings come in
    /// text order).
    next: usize,
    found: bool,
}

impl Walk<'_, '_> {
    /// Whether the unescaped string `s` (a slice of the text) overlaps a hot span.
    fn hot_at(&mut self, s: &str) -> bool {
        let start = (s.as_ptr() as usize).wrapping_sub(self.base);
        let end = start + s.len();
        while self.next < self.hot.len() && self.hot[self.next].1 <= start {
            self.next += 1;
        }
        // Quotes are never hot, so an empty string's place is never inside a span.
        self.hot.get(self.next).is_some_and(|&(s, _)| s < end)
    }

    /// Whether masking `s` (with `key` as context) finds something.
    fn finds(&mut self, key: Option<&str>, s: &str) -> bool {
        self.found = !self.masker.settle(key, s).is_empty();
        self.found
    }
}

/// The error that stops a walk at its first finding.
fn stop<E: de::Error>() -> E {
    E::custom("a string may hold a secret")
}

/// A JSON value, the member of an object under `key` (and whether that key
/// is hot) or not a member.
struct Node<'w, 'm, 'h, 'k> {
    walk: &'w mut Walk<'m, 'h>,
    key: Option<(&'k str, bool)>,
}

impl<'de> DeserializeSeed<'de> for Node<'_, '_, '_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Node<'_, '_, '_, '_> {
    fn string<E: de::Error>(self, s: &str, hot: bool) -> Result<(), E> {
        let key_hot = self.key.is_some_and(|(_, h)| h);
        if (hot || key_hot) && self.walk.finds(self.key.map(|(k, _)| k), s) {
            return Err(stop());
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for Node<'_, '_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<(), E> {
        let hot = self.walk.hot_at(s);
        self.string(s, hot)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        let hot = self.walk.masker.detector().may_find(s);
        self.string(s, hot)
    }

    scalars_pass!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Node {
                walk: &mut *self.walk,
                key: None,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some((key, hot)) = map.next_key_seed(Key {
            walk: &mut *self.walk,
        })? {
            // A hot key is masked as text itself (`Masker::mask_value`).
            if hot && self.walk.finds(None, &key) {
                return Err(stop());
            }
            map.next_value_seed(Node {
                walk: &mut *self.walk,
                key: Some((&key, hot)),
            })?;
        }
        Ok(())
    }
}

/// An object key: its text and whether it is hot.
struct Key<'w, 'm, 'h> {
    walk: &'w mut Walk<'m, 'h>,
}

impl<'de> DeserializeSeed<'de> for Key<'_, '_, '_> {
    type Value = (Cow<'de, str>, bool);

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_, '_, '_> {
    type Value = (Cow<'de, str>, bool);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok((Cow::Borrowed(s), self.walk.hot_at(s)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        let hot = self.walk.masker.detector().may_find(s);
        Ok((Cow::Owned(s.to_owned()), hot))
    }
}

/// Whether `json`, text `serde_json` reads, has an object holding a key
/// twice (Note \[A repeated key\] in `mask.rs`).
pub(super) fn repeats_a_key(json: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(json);
    // The walk stops with an error at the first repeat.
    Repeats.deserialize(&mut de).is_err()
}

/// A value walked for [`repeats_a_key`].
struct Repeats;

impl<'de> DeserializeSeed<'de> for Repeats {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Repeats {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    scalars_pass!();

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Repeats)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            keys.push(key);
            map.next_value_seed(Repeats)?;
        }
        keys.sort_unstable();
        if keys.windows(2).any(|w| w[0] == w[1]) {
            return Err(de::Error::custom("a repeated key"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::{Facts, is_clean};
    use crate::secrets::{Detector, MaskKey, Masker, RuleSet};

    const PLANTED: &str = include_str!("../../tests/fixtures/secrets/planted.jsonl");
    const ORDINARY: &str = include_str!("../../tests/fixtures/secrets/ordinary.txt");
    const TOKEN: &str = "ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7";

    fn masker() -> Masker {
        Masker::builtin(MaskKey::from_bytes([3; 32]))
    }

    fn contexts() -> Vec<String> {
        PLANTED
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["context"].as_str().unwrap().to_owned()
            })
            .collect()
    }

    /// Lines of every shape the full path reads, each planted context and
    /// ordinary line: as a string, as a key, beside a name, escaped (these
    /// four JSON), and as text that is not JSON. `true` for JSON lines of
    /// ordinary text not beside a name.
    fn lines() -> Vec<(bool, String)> {
        let mut out = Vec::new();
        let planted = contexts().into_iter().map(|c| (false, c));
        let ordinary = ORDINARY.lines().take(2000).map(|c| (true, c.to_owned()));
        for (ordinary, c) in planted.chain(ordinary) {
            out.push((
                ordinary,
                json!({"content": c, "n": 1, "ok": true, "list": [c, null]}).to_string(),
            ));
            out.push((ordinary, json!({ c.clone(): 2.5 }).to_string()));
            // Ordinary text beside `password` may well be one.
            out.push((false, json!([{"password": c}]).to_string()));
            // `\u` and `\/` escapes, which can hide a keyword's byte.
            let s = json!(c).to_string();
            out.push((ordinary, s.replace('/', "\\/").replace('g', "\\u0067")));
            out.push((false, format!("{{\"broken\": {c}")));
            // Keywords whose rules' requirements are read at the hit
            // (Note [A requirement read at its keyword] in `needs/mod.rs`),
            // each where the requirement is not, before and after the text
            // and in the same string.
            out.push((
                ordinary,
                json!({"d": DECOYS, "content": c, "e": [DECOYS]}).to_string(),
            ));
            out.push((
                ordinary,
                json!({ "v": format!("{DECOYS} {c} {DECOYS}") }).to_string(),
            ));
            out.push((false, c));
        }
        out
    }

    /// Near misses of the keywords whose requirements are read at the hit:
    /// `sonar` not before `_token`, `s.` after a word byte, `ey` not after
    /// a `.`, `sk` not as `SK`, `telegr` without `:A` anywhere.
    const DECOYS: &str = "sonarr status.example they risk telegraph hvs x-ey Sk";

    /// The fast answer never hides what the full path finds, and it is
    /// "clean" for every JSON line of ordinary text.
    /// Note \[A repeated key\]: `serde_json` keeps a repeated key's last
    /// value, so a secret in an earlier one was in the text but not in the
    /// `Value` masking read, and the text went out as it was.
    #[test]
    fn a_secret_under_a_repeated_key_is_masked() {
        let m = masker();
        for line in [
            format!(r#"{{"a":"{TOKEN}","a":"x"}}"#),
            format!(r#"{{"k":{{"a":"{TOKEN}","b":1,"a":"x"}},"n":[1,2]}}"#),
            format!(r#"[{{"a":"x"}},{{"t\u0041":"{TOKEN}","tA":"y"}}]"#),
        ] {
            let out = m.mask_json_text(&line);
            assert!(!out.text.contains(TOKEN), "{line} -> {}", out.text);
            let value: Value = serde_json::from_str(&out.text).unwrap();
            assert_eq!(
                value,
                serde_json::from_str::<Value>(&line).unwrap(),
                "{line}"
            );
        }
        for (json, repeats) in [
            (r#"{"a":1,"b":{"a":2}}"#, false),
            (r#"[{"a":1},{"a":2}]"#, false),
            (r#"{"a":1,"b":2,"a":3}"#, true),
            (r#"{"x":[{"y":1,"y":2}]}"#, true),
            (r#"{"\u0061":1,"a":2}"#, true),
            ("3", false),
        ] {
            assert_eq!(super::repeats_a_key(json), repeats, "{json}");
        }
    }

    #[test]
    fn hiding_escapes_are_a_backslash_before_u_or_slash() {
        for (json, hides) in [
            (r#""plain""#, false),
            (r#""a\nb\"c\\d\te""#, false),
            (r#""\u0041""#, true),
            (r#""a\/b""#, true),
            (r#""\\u""#, true),
            (r#""ends\\""#, false),
            ("\\", false),
            (r#"{"k":"\\","v":"\u00e9"}"#, true),
        ] {
            assert_eq!(Facts::of(json.as_bytes()).escape, hides, "{json}");
            // Note [Line facts in one pass]: at every place of a 32- and a
            // 64-byte block, its last place and the tail included.
            for lead in [0, 1, 30, 31, 32, 33, 63, 64, 95] {
                for trail in [0, 1, 31, 40] {
                    let long = format!("{}{json}{}", "a".repeat(lead), "b".repeat(trail));
                    assert_eq!(Facts::of(long.as_bytes()).escape, hides, "{long}");
                }
            }
        }
    }

    #[test]
    fn clean_only_where_the_full_path_finds_nothing() {
        let m = masker();
        let (mut dirty, mut ordinary_json) = (0, 0);
        for (i, (ordinary, line)) in lines().iter().enumerate() {
            let full = m.mask_json_text_parsed(line);
            if is_clean(&m, line) {
                assert!(full.found.is_empty(), "line {i} said clean: {line}");
            } else {
                dirty += 1;
                assert!(!ordinary, "ordinary JSON line {i} not clean: {line}");
            }
            ordinary_json += usize::from(*ordinary);
            assert_eq!(m.mask_json_text(line), full, "line {i}");
        }
        assert!(dirty >= contexts().len() * 4, "{dirty}");
        assert_eq!(ordinary_json, 2000 * 5);
    }

    #[test]
    fn a_secret_at_either_end_of_a_string_or_beside_a_hot_key_is_found() {
        let m = masker();
        for line in [
            format!("{{\"a\":\"{TOKEN}\",\"b\":\"x\"}}"),
            format!("{{\"a\":\"x\",\"b\":\"export {TOKEN}\"}}"),
            format!("[\"{TOKEN}\"]"),
            format!("\"{TOKEN}\""),
            format!("{{\"{TOKEN}\":1}}"),
            // The key wakes the rule; the value holds no keyword.
            "{\"password\":\"Zx8Qw3Er5Ty7Ui9Op1As\"}".to_owned(),
            "{\"db_password\":\"Zx8Qw3Er5Ty7Ui9Op1As\",\"n\":[1,2]}".to_owned(),
            // Escapes: a keyword's byte hidden, a URL's slashes escaped.
            format!("{{\"t\":\"\\u0067hp_{}\"}}", &TOKEN[4..]),
            "{\"u\":\"postgres:\\/\\/admin:Zx8Qw3Er5Ty7Ui9@db.internal:5432\\/app\"}".to_owned(),
            format!("{{\"t\":\"line one\\nexport GITHUB_TOKEN={TOKEN}\\tend\"}}"),
        ] {
            assert!(!is_clean(&m, &line), "{line}");
            let masked = m.mask_json_text(&line);
            assert!(!masked.found.is_empty(), "{line}");
            assert!(!masked.text.contains("Zx8Qw3Er5Ty7Ui9") && !masked.text.contains(&TOKEN[8..]));
        }
        for line in [
            "{\"title\":\"token caf\u{e9} check\",\"done\":false,\"deps\":[1,2]}",
            "{\"key\":\"value\",\"keys\":[\"a\",\"b\"]}",
            "[]",
            "\"\"",
            "",
        ] {
            assert!(is_clean(&m, line), "{line}");
        }
    }

    /// Note \[Needs read on the line\]: keyword hits whose rules cannot
    /// match anywhere in the line are not hot; the same hits are when the
    /// line has a `\u` escape, and a secret those rules find still is.
    #[test]
    fn hits_whose_rules_need_what_the_line_lacks_are_not_hot() {
        let m = masker();
        let d = m.detector();
        // `ey` (JWT: needs `.ey`) where a JWT could begin (`eyeb`: Note
        // \[Keywords as a match holds them\] in `keywords.rs` leaves out
        // `risk`, `disk` and `they `, which no match can hold).
        let line = r#"{"risk":"low","task":"eyeball the disk","notes":"they asked for logs"}"#;
        let facts = Facts::of(line.as_bytes());
        assert_eq!(
            d.hot_spans(line.as_bytes(), false, facts)
                .map(|s| s.is_empty()),
            Some(false)
        );
        assert_eq!(d.hot_spans(line.as_bytes(), true, facts), Some(Vec::new()));
        assert!(is_clean(&m, line));
        for line in [
            r#"{"risk":"SK0123456789abcdef0123456789abcdef"}"#,
            r#"{"task":"rotate SK0123456789abcdef0123456789abcdef now"}"#,
            r#"{"SK0123456789abcdef0123456789abcdef":"risk"}"#,
        ] {
            assert!(!is_clean(&m, line), "{line}");
            let masked = m.mask_json_text(line);
            assert_eq!(masked, m.mask_json_text_parsed(line), "{line}");
            assert!(!masked.text.contains("0123456789abcdef0123"), "{line}");
        }
    }

    /// Note \[Runs that decode to text\] in `encoded.rs`: a base64 secret
    /// is found behind an escape letter at every alignment, and runs that
    /// decode to no text (identifiers, paths) leave a line clean.
    #[test]
    fn base64_behind_an_escape_is_found_and_identifiers_stay_clean() {
        let m = masker();
        // "export GITHUB_TOKEN=ghp_..." in base64.
        let b64 =
            "ZXhwb3J0IEdJVEhVQl9UT0tFTj1naHBfWHE3TG0yVmI5UnQ0V3o4S3AzSG42SmQxRnM1R2MwWWEyVWU3";
        for pad in ["", "a", "ab", "abc"] {
            for escape in ["\\n", "\\t", "\\r", "\\b", "\\f", "\\\"", " "] {
                let line = format!("{{\"t\":\"x{escape}{pad}{b64} end\"}}");
                let full = m.mask_json_text_parsed(&line);
                assert_eq!(
                    is_clean(&m, &line),
                    full.found.is_empty(),
                    "{line}: {:?}",
                    full.found
                );
                assert_eq!(m.mask_json_text(&line), full, "{line}");
            }
        }
        let line = format!("{{\"t\":\"x\\n{b64} end\"}}");
        assert!(!m.mask_json_text(&line).found.is_empty(), "{line}");
        for line in [
            r#"{"repairs":["raw_control_char_in_string","unquoted_identifier_names"]}"#,
            r#"{"path":"roles/app/tasks/docker-compose-production.yml"}"#,
            r#"{"t":"crates/core/src/secrets/encoded/ThisIsALongIdentifierName"}"#,
        ] {
            assert!(is_clean(&m, line), "{line}");
        }
    }

    #[test]
    fn one_secret_in_the_middle_of_a_multi_megabyte_string_is_found() {
        let m = masker();
        let filler = "the quick brown fox jumps over the lazy dog; key token api ".repeat(40_000);
        let text = format!("{filler}export GITHUB_TOKEN={TOKEN} {filler}");
        assert!(text.len() > 4 << 20);
        let line = json!({"output": text, "more": [filler]}).to_string();
        let masked = m.mask_json_text(&line);
        assert_eq!(masked.found.len(), 1);
        assert!(!masked.text.contains(TOKEN));
        let clean = json!({ "output": filler }).to_string();
        assert!(is_clean(&m, &clean));
    }

    /// A detector shared by threads, each compiling rules when its text
    /// first needs them, finds what one thread alone finds.
    #[test]
    fn rules_compiled_lazily_from_several_threads_find_the_same() {
        let texts: Vec<String> = contexts()
            .iter()
            .map(|c| json!({ "content": c }).to_string())
            .collect();
        let alone = masker();
        let expected: Vec<usize> = texts
            .iter()
            .map(|t| alone.mask_json_text(t).found.len())
            .collect();
        let shared = Arc::new(Detector::builtin_uncached());
        let found: Vec<Vec<usize>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|k| {
                    let m = Masker::new(Arc::clone(&shared), MaskKey::from_bytes([3; 32]));
                    let texts = &texts;
                    s.spawn(move || {
                        // Each thread starts at another text.
                        let mut out = vec![0; texts.len()];
                        for j in 0..texts.len() {
                            let i = (j + k * 17) % texts.len();
                            out[i] = m.mask_json_text(&texts[i]).found.len();
                        }
                        out
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for f in found {
            assert_eq!(f, expected);
        }
        assert!(expected.iter().all(|&n| n > 0));
    }

    /// A user's rule without keywords runs on every string: the fast answer
    /// steps aside.
    #[test]
    fn rules_without_keywords_take_the_full_path() {
        let mut rules = RuleSet::builtin();
        rules.extend(
            RuleSet::from_toml("[[rules]]\nid = \"acme\"\nregex = '''acme_[0-9]{6}'''\n").unwrap(),
        );
        let m = Masker::new(
            Arc::new(Detector::new(&rules).unwrap()),
            MaskKey::from_bytes([3; 32]),
        );
        let line = "{\"a\":\"id acme_123456\"}";
        assert!(!is_clean(&m, line));
        assert_eq!(m.mask_json_text(line).found[0].rule, "acme");
    }
}
