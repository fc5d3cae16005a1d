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
///
/// Its error report (`violation`, kind `number`) is built in `outcome`,
/// with the other reports: this module imports no stage.
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
    pub fn at(path: &str, literal: &str) -> (InexactNumber, Value) {
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
pub(super) fn surely_exact(literal: &[u8]) -> bool {
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

/// A byte a number literal may hold: digits, signs, the point and the
/// exponent letters (the repair parser reads its numbers with the same set).
pub fn is_number_byte(b: u8) -> bool {
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
