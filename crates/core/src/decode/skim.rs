//! A fast JSON validity check that also reports the top-level `"type"`.
//!
//! Note [Skimming tool results]: `user` lines (tool output) are ~85% of the
//! bytes of a real Claude transcript, and nothing in them is read unless the
//! caller keeps tool results. They must still be validated (a truncated line is
//! malformed and counted), and validation is dominated by scanning long strings
//! full of escapes. `serde_json` scans strings eight bytes at a time; here the
//! next `"` or `\` is found with `memchr2` (vectorized) and the span before it
//! is checked for raw control characters in a second, auto-vectorized pass.
//! The grammar is RFC 8259's: same answers as `serde_json` on every input,
//! except that nesting is not capped here (the caller re-parses every line it
//! reads with `serde_json`, whose cap then applies), and, as `serde_json` does
//! for ignored strings, the UTF-8 of string contents is not checked.

use memchr::memchr2_iter;

/// What one line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skim<'a> {
    /// Not valid JSON (or not UTF-8).
    Invalid,
    /// Valid JSON, not an object.
    NonObject,
    /// A valid object, with the raw bytes (between the quotes, escapes
    /// undecoded) of its top-level `"type"` when that is a string.
    Object(Option<&'a [u8]>),
}

/// Validate `line` as one JSON text (surrounding whitespace allowed).
///
/// The grammar is checked over bytes; the UTF-8 of string contents is not
/// (nobody reads them), which is what `serde_json` does for the strings it
/// ignores. Lines that are read are parsed from a checked `&str`.
pub fn skim(line: &[u8]) -> Skim<'_> {
    // Compact JSON has no byte below 0x20 anywhere; only when some exists
    // (pretty-printed whitespace, or a raw control character in a string) do
    // string spans need checking. The min-reduction vectorizes.
    let check_ctrl = line.iter().fold(u8::MAX, |m, &c| m.min(c)) < 0x20;
    let mut p = Parser {
        b: line,
        i: 0,
        kind: None,
        check_ctrl,
    };
    p.ws();
    let is_object = p.peek() == Some(b'{');
    if p.value().is_none() {
        return Skim::Invalid;
    }
    p.ws();
    if p.i != line.len() {
        return Skim::Invalid;
    }
    if is_object {
        Skim::Object(p.kind)
    } else {
        Skim::NonObject
    }
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    kind: Option<&'a [u8]>,
    check_ctrl: bool,
}

/// Container kinds on the explicit stack (no recursion, so no stack overflow
/// on deep nesting).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Object,
    Array,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek() == Some(c)).then(|| self.i += 1)
    }

    /// One value, iteratively.
    fn value(&mut self) -> Option<()> {
        let mut stack: Vec<Open> = Vec::new();
        loop {
            // Parse one value start; containers push and continue.
            self.ws();
            match self.peek()? {
                b'{' => {
                    self.i += 1;
                    self.ws();
                    if self.eat(b'}').is_none() {
                        stack.push(Open::Object);
                        self.key(stack.len() == 1)?;
                        continue;
                    }
                }
                b'[' => {
                    self.i += 1;
                    self.ws();
                    if self.eat(b']').is_none() {
                        stack.push(Open::Array);
                        continue;
                    }
                }
                b'"' => {
                    self.i += 1;
                    self.string()?;
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return None,
            }
            // After a complete value: close containers or move to the next member.
            loop {
                let Some(&top) = stack.last() else {
                    return Some(());
                };
                self.ws();
                match (self.peek()?, top) {
                    (b',', Open::Object) => {
                        self.i += 1;
                        self.ws();
                        self.key(stack.len() == 1)?;
                        break;
                    }
                    (b',', Open::Array) => {
                        self.i += 1;
                        break;
                    }
                    (b'}', Open::Object) | (b']', Open::Array) => {
                        self.i += 1;
                        stack.pop();
                    }
                    _ => return None,
                }
            }
        }
    }

    /// `"key" :` of an object member; at the top level, remembers `"type"`.
    fn key(&mut self, top: bool) -> Option<()> {
        self.eat(b'"')?;
        let start = self.i;
        self.string()?;
        let key = self.b.get(start..self.i - 1)?;
        self.ws();
        self.eat(b':')?;
        if top && key == b"type" {
            self.ws();
            if self.peek() == Some(b'"') {
                // Read the value's extent, then rewind: the main loop parses
                // it again as any value (a short string), keeping one code path.
                let save = self.i;
                self.i += 1;
                self.string()?;
                self.kind = self.b.get(save + 1..self.i - 1);
                self.i = save;
            }
        }
        Some(())
    }

    /// The rest of a string after its opening quote.
    ///
    /// One `memchr2` iterator per string walks the quotes and backslashes;
    /// an escaped `"` or `\\` is stepped over by position. Raw control
    /// characters are checked per span only when the line has any byte below
    /// 0x20 at all (compact JSON lines have none; see [`skim`]).
    fn string(&mut self) -> Option<()> {
        let start = self.i;
        let rest = self.b.get(start..)?;
        let mut skip_to = 0;
        let mut span_from = 0;
        for at in memchr2_iter(b'"', b'\\', rest) {
            if at < skip_to {
                continue;
            }
            if self.check_ctrl && rest.get(span_from..at)?.iter().any(|&c| c < 0x20) {
                return None;
            }
            if rest.get(at)? == &b'"' {
                self.i = start + at + 1;
                return Some(());
            }
            skip_to = match rest.get(at + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at + 2,
                b'u' => {
                    let hex = rest.get(at + 2..at + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    at + 6
                }
                _ => return None,
            };
            span_from = skip_to;
        }
        None
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat(b'.').is_some() {
            self.digits1()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.digits1()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    fn digits1(&mut self) -> Option<()> {
        let start = self.i;
        self.digits();
        (self.i > start).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_serde_json_on_a_table_of_lines() {
        let lines: &[&str] = &[
            r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"a\"b\\c\n\u00e9"}]}}"#,
            r#"{"a":1,"type":"result","b":[1,2,{"c":null}]}"#,
            r#"  {"type" : "x"}  "#,
            r#"{"type":1}"#,
            r"{}",
            r"[]",
            r"42",
            r#""keepalive""#,
            r"null",
            r#"{"type":"user","message":{"content":"cut"#,
            r#"{"a":1,}"#,
            r#"{"a":1 "b":2}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a":1e}"#,
            r#"{"a":1.5e+3}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"\u12G4"}"#,
            "{\"a\":\"raw\ttab\"}",
            "{\t\"a\":\t\"tab around, not inside\"}",
            "{\"a\":\"\\\"\"}",
            r#"{"a":tru}"#,
            r#"{"a":true}x"#,
            r"{'a':1}",
            r#"{"a":[1,2]]"#,
            r#"{"a":[1,2}"#,
            r"npm WARN deprecated",
            r#"{"a":{"type":"inner"},"type":"outer"}"#,
            r#"[{"type":"x"}]"#,
            "",
        ];
        for line in lines {
            let serde = serde_json::from_str::<serde_json::Value>(line);
            let want = match &serde {
                Err(_) => Skim::Invalid,
                Ok(serde_json::Value::Object(m)) => Skim::Object(
                    m.get("type")
                        .and_then(serde_json::Value::as_str)
                        .map(str::as_bytes),
                ),
                Ok(_) => Skim::NonObject,
            };
            assert_eq!(skim(line.as_bytes()), want, "{line}");
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        let deep = "[".repeat(1_000_000) + &"]".repeat(1_000_000);
        assert_eq!(skim(deep.as_bytes()), Skim::NonObject);
        let open = "{\"a\":".repeat(100_000);
        assert_eq!(skim(open.as_bytes()), Skim::Invalid);
    }

    #[test]
    fn invalid_utf8_only_matters_outside_strings() {
        // Inside a string nobody reads, as serde_json ignores it.
        assert_eq!(skim(b"{\"a\":\"\xff\"}"), Skim::Object(None));
        // Anywhere else it breaks the grammar.
        assert_eq!(skim(b"{\"a\":\xff}"), Skim::Invalid);
        assert_eq!(skim(b"\xff{}"), Skim::Invalid);
    }
}
