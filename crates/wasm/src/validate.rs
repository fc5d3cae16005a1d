//! Validation of JSON text against a compiled schema: core's validate and
//! check stages, as the Python package's `Validator` gives them.
//!
//! Every verdict reads JSON text: the package stringifies a JavaScript
//! value first (Note \[Text crosses as JSON\] in the crate root), and
//! `validateJson` takes a line as it came. Core's borrowed reader answers
//! for most instances without building a `Value` (core's Note \[Errors from
//! text\]); the rest are parsed, with numbers JSON text holds but no 64-bit
//! type does reported as violations of kind `number`, as in `agentshape
//! validate`.

use agentshape_core::validate::Validator;
use agentshape_core::{Violation, json};

use crate::errors::{Failure, Kind, Result, to_json};

/// The verdict on the JSON text `text`: schema errors, then failed
/// invariants; empty when valid. `Input` when `text` is not JSON.
pub fn verdict(v: &Validator, text: &str) -> Result<Vec<Violation>> {
    match v.verdict_text(text) {
        Some(found) => Ok(found),
        None => verdict_parsed(v, text),
    }
}

/// [`verdict`] once core's borrowed reader has declined `text` (or the
/// schema has invariants to run on a `Value`): parsed into a `Value`.
fn verdict_parsed(v: &Validator, text: &str) -> Result<Vec<Violation>> {
    let parsed =
        json::parse(text).map_err(|e| Failure::new(Kind::Input, format!("not JSON: {e}")))?;
    let mut found: Vec<Violation> = parsed
        .inexact
        .iter()
        .map(agentshape_core::Violation::of_inexact)
        .collect();
    found.extend(v.errors_and_invariants(&parsed.value));
    Ok(found)
}

/// `true` when [`verdict`] would be empty; cheaper (no error list unless
/// the schema has invariants to run).
pub fn is_valid(v: &Validator, text: &str) -> Result<bool> {
    if !v.invariants().is_empty() {
        return verdict(v, text).map(|found| found.is_empty());
    }
    match v.is_valid_text(text) {
        Some(valid) => Ok(valid),
        // The reader declined: it would decline `verdict_text` too.
        None => verdict_parsed(v, text).map(|found| found.is_empty()),
    }
}

/// [`is_valid_flags`]: the instance is valid.
pub const VALID: u32 = 1;
/// [`is_valid_flags`]: the text holds U+FFFD, which is what `TextEncoder`
/// writes for a lone surrogate (the package then checks the string).
pub const HOLDS_REPLACEMENT: u32 = 2;
/// [`is_valid_flags`]: no verdict (not UTF-8, not JSON): the package calls
/// [`is_valid`] for the error.
pub const NOT_ANSWERED: u32 = 4;

/// Whether `bytes` hold U+FFFD (`EF BF BD`): a search for its first byte,
/// which ordinary text seldom has (a 3-byte `memmem` was 1.2% of
/// `extract`'s V8 profile).
pub fn holds_replacement(bytes: &[u8]) -> bool {
    memchr::memchr_iter(0xEF, bytes).any(|i| bytes.get(i + 1..i + 3) == Some(&[0xBF, 0xBD][..]))
}

/// [`is_valid`] on the UTF-8 bytes JavaScript wrote into the module's
/// memory, as flags ([`VALID`], [`HOLDS_REPLACEMENT`], [`NOT_ANSWERED`]):
/// a plain number crosses back without an error object, and the string's
/// well-formedness is checked in JavaScript only when its bytes hold
/// U+FFFD (Note \[Text written in place\] in `bindings`); `scan` false
/// for text known to hold no lone surrogate (Note \[Text written as
/// UTF-16\] there), which is not scanned.
pub fn is_valid_flags(v: &Validator, bytes: &[u8], scan: bool) -> u32 {
    let mut flags = 0;
    if scan && holds_replacement(bytes) {
        flags |= HOLDS_REPLACEMENT;
    }
    let answer = if v.invariants().is_empty() {
        // Read once; on a decline the text is parsed, not read again.
        match v.is_valid_json(bytes) {
            Some(valid) => Ok(valid),
            None => std::str::from_utf8(bytes).map_err(|_| ()).and_then(|text| {
                verdict_parsed(v, text)
                    .map(|f| f.is_empty())
                    .map_err(|_| ())
            }),
        }
    } else {
        std::str::from_utf8(bytes)
            .map_err(|_| ())
            .and_then(|text| is_valid(v, text).map_err(|_| ()))
    };
    match answer {
        Ok(true) => flags | VALID,
        Ok(false) => flags,
        Err(()) => flags | NOT_ANSWERED,
    }
}

/// [`verdict`] as JSON text.
pub fn verdict_json(v: &Validator, text: &str) -> Result<String> {
    verdict(v, text).map(|found| to_json(&found))
}

/// `coerce(instance)`: `[value, coercions]` as JSON text.
pub fn coerce_json(v: &Validator, text: &str) -> Result<String> {
    let parsed =
        json::parse(text).map_err(|e| Failure::new(Kind::Input, format!("not JSON: {e}")))?;
    let (value, coercions) = v.coerce(parsed.value);
    Ok(to_json(&(value, coercions)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::compile;

    const SCHEMA: &str = r#"{"type": "object", "required": ["action", "confidence"],
        "properties": {"action": {"enum": ["complete", "continue"]},
                       "confidence": {"type": "integer", "minimum": 0, "maximum": 100}}}"#;

    #[test]
    fn the_replacement_character_is_found_wherever_it_is() {
        for (text, want) in [
            ("", false),
            ("plain", false),
            ("\u{FFFD}", true),
            ("a\u{FFFD}", true),
            ("\u{FFFD}b", true),
            // Other characters whose UTF-8 begins with EF.
            ("\u{FFFC}\u{F000}\u{FEFF}", false),
            ("\u{FFFC}\u{FFFD}", true),
        ] {
            assert_eq!(holds_replacement(text.as_bytes()), want, "{text:?}");
        }
        assert!(!holds_replacement(&[0xEF, 0xBF]));
    }

    #[test]
    fn verdicts_match_the_python_package() {
        let Ok(v) = compile(SCHEMA, "{}") else {
            panic!("schema compiles")
        };
        assert_eq!(
            is_valid(&v, r#"{"action": "complete", "confidence": 5}"#).ok(),
            Some(true)
        );
        let errs = verdict_json(&v, r#"{"action": "complete"}"#).unwrap_or_default();
        assert_eq!(
            errs,
            r#"[{"instance_path":"","schema_path":"/required","message":"\"confidence\" is a required property"}]"#
        );
        let big = verdict(
            &v,
            r#"{"action": "complete", "confidence": 123456789012345678901234567890}"#,
        )
        .unwrap_or_default();
        assert!(big.iter().any(|e| e.kind.is_some()));
        assert_eq!(
            verdict(&v, "{nope").err().map(|f| f.kind),
            Some(Kind::Input)
        );
        assert_eq!(
            is_valid(&v, "{nope").err().map(|f| f.kind),
            Some(Kind::Input)
        );
    }

    #[test]
    fn flags_answer_as_is_valid_does() {
        let Ok(v) = compile(SCHEMA, "{}") else {
            panic!("schema compiles")
        };
        let flags = |t: &str| is_valid_flags(&v, t.as_bytes(), true);
        assert_eq!(flags(r#"{"action": "complete", "confidence": 5}"#), VALID);
        assert_eq!(flags(r#"{"action": "complete"}"#), 0);
        assert_eq!(flags("{nope"), NOT_ANSWERED);
        assert_eq!(is_valid_flags(&v, b"\xff{}", true), NOT_ANSWERED);
        let replaced = "{\"action\": \"complete\", \"confidence\": 5, \"x\": \"\u{FFFD}\"}";
        assert_eq!(flags(replaced), VALID | HOLDS_REPLACEMENT);
        // Text made from UTF-16 units held no lone surrogate: not scanned.
        assert_eq!(is_valid_flags(&v, replaced.as_bytes(), false), VALID);
        // A schema with invariants answers through the full verdict.
        let Ok(inv) = compile(
            r#"{"type": "object", "x-invariants": [{"rule": "self.a > 1", "message": "a"}]}"#,
            "{}",
        ) else {
            panic!("schema compiles")
        };
        assert_eq!(is_valid_flags(&inv, br#"{"a": 2}"#, true), VALID);
        assert_eq!(is_valid_flags(&inv, br#"{"a": 0}"#, true), 0);
    }

    #[test]
    fn deep_text_is_an_error_or_a_verdict_never_a_crash() {
        let Ok(v) = compile(r#"{"type": "array"}"#, "{}") else {
            panic!("schema compiles")
        };
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(verdict(&v, &deep).err().map(|f| f.kind), Some(Kind::Input));
    }

    #[test]
    fn coercion_returns_value_and_steps() {
        let Ok(v) = compile(SCHEMA, "{}") else {
            panic!("schema compiles")
        };
        let out =
            coerce_json(&v, r#"{"action": "Complete", "confidence": "90%"}"#).unwrap_or_default();
        assert!(
            out.starts_with(r#"[{"action":"complete","confidence":90},"#),
            "{out}"
        );
    }
}
