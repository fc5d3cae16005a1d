//! The tolerant parser proper: a recursive-descent state machine over bytes.
//!
//! It never fails on a structural problem it can explain (see [`Repair`]); it
//! returns `None` only when there is no value at all. Every loop consumes at
//! least one byte or returns, so it runs in time linear in the input, and the
//! nesting depth is capped at [`MAX_DEPTH`], so it cannot overflow the stack.

use serde_json::{Map, Number, Value};

use crate::extract::Repair;

/// Deepest nesting the parser follows; deeper input is cut there and reported
/// as [`Repair::DepthLimit`].
pub const MAX_DEPTH: usize = 256;

/// Parser state: the input, the cursor, the repairs applied so far.
pub(crate) struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    depth: usize,
    /// Set once the depth cap is hit: everything unwinds, closing containers.
    stopped: bool,
    repairs: Vec<Repair>,
}

/// What stopped a container: its own closer, or something else.
enum End {
    Closed,
    Open,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Parser {
            src: src.as_bytes(),
            pos: 0,
            depth: 0,
            stopped: false,
            repairs: Vec::new(),
        }
    }

    /// Parse one value starting at the first `{` or `[` (after whitespace and
    /// comments; text before it is skipped).
    pub(crate) fn parse_top(mut self) -> Option<(Value, Vec<Repair>)> {
        self.skip_ws();
        if !matches!(self.peek(), Some(b'{' | b'[')) {
            let rest = self.src.get(self.pos..)?;
            let off = memchr::memchr2(b'{', b'[', rest)?;
            self.pos += off;
        }
        let v = self.value()?;
        Some((v, self.repairs))
    }

    fn note(&mut self, r: Repair) {
        if !self.repairs.contains(&r) {
            self.repairs.push(r);
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<u8> {
        self.src.get(self.pos + off).copied()
    }

    /// Skip whitespace and comments (`//`, `/* */`, `#`), noting comments.
    fn skip_ws(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                b'/' if self.peek_at(1) == Some(b'/') => {
                    self.note(Repair::Comment);
                    self.skip_line();
                }
                b'#' => {
                    self.note(Repair::Comment);
                    self.skip_line();
                }
                b'/' if self.peek_at(1) == Some(b'*') => {
                    self.note(Repair::Comment);
                    let rest = self.src.get(self.pos + 2..).unwrap_or_default();
                    self.pos = match memchr::memmem::find(rest, b"*/") {
                        Some(i) => self.pos + 2 + i + 2,
                        None => self.src.len(),
                    };
                }
                _ => break,
            }
        }
    }

    fn skip_line(&mut self) {
        let rest = self.src.get(self.pos..).unwrap_or_default();
        self.pos = match memchr::memchr(b'\n', rest) {
            Some(i) => self.pos + i + 1,
            None => self.src.len(),
        };
    }

    /// One value at the cursor; `None` at end of input or on a byte that
    /// cannot start a value (the cursor is then unchanged).
    fn value(&mut self) -> Option<Value> {
        self.skip_ws();
        let b = self.peek()?;
        match b {
            b'{' | b'[' if self.depth >= MAX_DEPTH || self.stopped => {
                self.stopped = true;
                self.note(Repair::DepthLimit);
                None
            }
            b'{' => {
                self.pos += 1;
                self.depth += 1;
                let v = self.object();
                self.depth -= 1;
                Some(v)
            }
            b'[' => {
                self.pos += 1;
                self.depth += 1;
                let v = self.array();
                self.depth -= 1;
                Some(v)
            }
            b'"' | b'\'' => Some(Value::String(self.string(b, false))),
            b'-' | b'+' | b'.' | b'0'..=b'9' => Some(self.number_or_word()),
            _ if is_ident_start(b) => Some(self.word()),
            _ => None,
        }
    }

    fn object(&mut self) -> Value {
        let mut map = Map::new();
        let mut after_comma = false;
        let end = loop {
            self.skip_ws();
            let Some(b) = self.peek() else {
                break End::Open;
            };
            if self.stopped {
                break End::Open;
            }
            match b {
                b'}' => {
                    self.pos += 1;
                    if after_comma {
                        self.note(Repair::TrailingComma);
                    }
                    break End::Closed;
                }
                b',' => {
                    self.pos += 1;
                    if after_comma || map.is_empty() {
                        self.note(Repair::TrailingComma);
                    }
                    after_comma = true;
                    continue;
                }
                b']' => {
                    // A mismatched closer: end this object, let the parent see it.
                    self.note(Repair::MismatchedBracket);
                    break End::Closed;
                }
                _ => {}
            }
            if !map.is_empty() && !after_comma {
                self.note(Repair::MissingComma);
            }
            after_comma = false;
            // Key.
            let key = match b {
                b'"' | b'\'' => self.string(b, true),
                _ if is_key_byte(b) => {
                    self.note(Repair::UnquotedKey);
                    self.unquoted_key()
                }
                _ => {
                    // Nothing that can start a key: the object ends here.
                    self.note(Repair::UnexpectedChar);
                    break End::Open;
                }
            };
            self.skip_ws();
            match self.peek() {
                None => {
                    self.note(Repair::DanglingKeyDropped);
                    break End::Open;
                }
                Some(b':' | b'=') => {
                    self.pos += 1;
                }
                Some(b',' | b'}' | b']') => {
                    self.note(Repair::DanglingKeyDropped);
                    continue;
                }
                Some(_) => self.note(Repair::MissingColon),
            }
            self.skip_ws();
            match self.peek() {
                None => {
                    self.note(Repair::DanglingKeyDropped);
                    break End::Open;
                }
                Some(b',' | b'}' | b']') => {
                    self.note(Repair::DanglingKeyDropped);
                    continue;
                }
                Some(_) => {}
            }
            if let Some(v) = self.value() {
                map.insert(key, v);
            } else {
                if !self.stopped {
                    self.note(Repair::DanglingKeyDropped);
                    self.note(Repair::UnexpectedChar);
                }
                break End::Open;
            }
        };
        if matches!(end, End::Open) {
            if after_comma {
                self.note(Repair::TrailingComma);
            }
            self.note(Repair::Truncated);
        }
        Value::Object(map)
    }

    fn array(&mut self) -> Value {
        let mut items = Vec::new();
        let mut after_comma = false;
        let end = loop {
            self.skip_ws();
            let Some(b) = self.peek() else {
                break End::Open;
            };
            if self.stopped {
                break End::Open;
            }
            match b {
                b']' => {
                    self.pos += 1;
                    if after_comma {
                        self.note(Repair::TrailingComma);
                    }
                    break End::Closed;
                }
                b',' => {
                    self.pos += 1;
                    if after_comma || items.is_empty() {
                        self.note(Repair::TrailingComma);
                    }
                    after_comma = true;
                    continue;
                }
                b'}' => {
                    self.note(Repair::MismatchedBracket);
                    break End::Closed;
                }
                // `[1, 2, ...]`: an elision, not an element.
                b'.' if self.src.get(self.pos..self.pos + 3) == Some(b"...") => {
                    self.pos += 3;
                    self.note(Repair::EllipsisDropped);
                    continue;
                }
                _ => {}
            }
            let had_comma = after_comma;
            let was_empty = items.is_empty();
            if let Some(v) = self.value() {
                if !was_empty && !had_comma {
                    self.note(Repair::MissingComma);
                }
                items.push(v);
                after_comma = false;
            } else {
                if !self.stopped {
                    self.note(Repair::UnexpectedChar);
                }
                break End::Open;
            }
        };
        if matches!(end, End::Open) {
            if after_comma {
                self.note(Repair::TrailingComma);
            }
            self.note(Repair::Truncated);
        }
        Value::Array(items)
    }

    /// A quoted string; the cursor is on the opening quote `q`.
    ///
    /// Note [Inner quotes]: a closing quote followed (after spaces and tabs)
    /// by something that cannot follow a string (`,` `}` `]` `:`, a line end,
    /// another quote, a comment, the end of input) ends the string; any other
    /// quote of the same kind is taken as a literal character
    /// ([`Repair::UnescapedQuote`]). Keys end at the first matching quote.
    fn string(&mut self, q: u8, is_key: bool) -> String {
        if q == b'\'' {
            self.note(Repair::SingleQuotes);
        }
        self.pos += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let rest = self.src.get(self.pos..).unwrap_or_default();
            let Some(i) = rest.iter().position(|&b| b == q || b == b'\\' || b < 0x20) else {
                out.extend_from_slice(rest);
                self.pos = self.src.len();
                self.note(Repair::Truncated);
                break;
            };
            out.extend_from_slice(rest.get(..i).unwrap_or_default());
            self.pos += i;
            let Some(b) = self.peek() else { break };
            match b {
                b'\\' => self.escape(&mut out),
                _ if b == q => {
                    self.pos += 1;
                    if is_key || self.ends_string() {
                        break;
                    }
                    self.note(Repair::UnescapedQuote);
                    out.push(q);
                }
                _ => {
                    // A raw control character (newline, tab, ...).
                    self.note(Repair::RawControlCharInString);
                    out.push(b);
                    self.pos += 1;
                }
            }
        }
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// After a candidate closing quote: does what follows end the string?
    fn ends_string(&self) -> bool {
        let mut i = self.pos;
        while let Some(&b) = self.src.get(i) {
            match b {
                b' ' | b'\t' => i += 1,
                b',' | b'}' | b']' | b':' | b'\n' | b'\r' | b'"' | b'\'' => return true,
                b'/' => return matches!(self.src.get(i + 1), Some(b'/' | b'*')),
                _ => return false,
            }
        }
        true
    }

    /// An escape sequence; the cursor is on the backslash.
    fn escape(&mut self, out: &mut Vec<u8>) {
        let Some(c) = self.peek_at(1) else {
            // Cut right after the backslash: drop it.
            self.pos += 1;
            return;
        };
        self.pos += 2;
        let simple = match c {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            return;
        }
        if c == b'u' {
            let Some(hi) = self.hex4() else {
                let rest = self.src.get(self.pos..).unwrap_or_default();
                if rest.len() < 4 && rest.iter().all(u8::is_ascii_hexdigit) {
                    // Cut inside `\uXXXX`: drop the partial escape.
                    self.pos = self.src.len();
                    self.note(Repair::Truncated);
                } else {
                    self.note(Repair::InvalidEscape);
                }
                return;
            };
            let ch = if (0xD800..0xDC00).contains(&hi) {
                if self.peek() == Some(b'\\') && self.peek_at(1) == Some(b'u') {
                    let save = self.pos;
                    self.pos += 2;
                    match self.hex4() {
                        Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                            char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                        }
                        _ => {
                            self.pos = save;
                            None
                        }
                    }
                } else {
                    None
                }
            } else {
                char::from_u32(hi)
            };
            let ch = ch.unwrap_or('\u{FFFD}');
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            return;
        }
        // `\'` and other unknown escapes: keep the character itself.
        if c != b'\'' {
            self.note(Repair::InvalidEscape);
        }
        // `c` may start a multi-byte character; copy bytes up to the next boundary.
        self.pos -= 1;
        let start = self.pos;
        self.pos += 1;
        while self.peek().is_some_and(|b| (b & 0xC0) == 0x80) {
            self.pos += 1;
        }
        out.extend_from_slice(self.src.get(start..self.pos).unwrap_or_default());
    }

    fn hex4(&mut self) -> Option<u32> {
        let s = self.src.get(self.pos..self.pos + 4)?;
        let s = std::str::from_utf8(s).ok()?;
        let v = u32::from_str_radix(s, 16).ok()?;
        self.pos += 4;
        Some(v)
    }

    fn unquoted_key(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(is_key_byte) {
            self.pos += 1;
        }
        String::from_utf8_lossy(self.src.get(start..self.pos).unwrap_or_default()).into_owned()
    }

    /// A number, or a word that merely starts like one (`2024-01-01`, `-Infinity`).
    fn number_or_word(&mut self) -> Value {
        let start = self.pos;
        if self.peek() == Some(b'-') && self.peek_at(1).is_some_and(is_ident_start) {
            self.pos += 1;
            let w = self.word();
            return match w {
                Value::Null => Value::Null,
                Value::String(s) => Value::String(format!("-{s}")),
                other => other,
            };
        }
        while self
            .peek()
            .is_some_and(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            self.pos += 1;
        }
        // A number glued to letters is a word (`3rd`, `1h`).
        if self.peek().is_some_and(|b| is_ident_start(b) || b >= 0x80) {
            self.pos = start;
            return self.unquoted_string();
        }
        let lexeme = std::str::from_utf8(self.src.get(start..self.pos).unwrap_or_default())
            .unwrap_or_default();
        if let Some(n) = parse_number(lexeme) {
            return n;
        }
        // Cut inside a number (`1.`, `2e`, `-`): keep what parses.
        let trimmed = lexeme.trim_end_matches(['.', 'e', 'E', '+', '-']);
        if trimmed.len() < lexeme.len() && self.pos == self.src.len() {
            self.note(Repair::Truncated);
            if let Some(n) = parse_number(trimmed) {
                return n;
            }
            return Value::Null;
        }
        self.pos = start;
        self.unquoted_string()
    }

    /// An identifier-like word: a JSON, Python or JS literal, else an unquoted string.
    fn word(&mut self) -> Value {
        let start = self.pos;
        while self.peek().is_some_and(is_ident_byte) {
            self.pos += 1;
        }
        let w = self.src.get(start..self.pos).unwrap_or_default();
        match w {
            b"true" => Value::Bool(true),
            b"false" => Value::Bool(false),
            b"null" => Value::Null,
            b"True" => {
                self.note(Repair::PythonLiteral);
                Value::Bool(true)
            }
            b"False" => {
                self.note(Repair::PythonLiteral);
                Value::Bool(false)
            }
            b"None" => {
                self.note(Repair::PythonLiteral);
                Value::Null
            }
            // Note [Non-finite numbers]: JSON has no NaN or Infinity, and a
            // value we print must stay JSON, so these become `null`.
            _ if w.eq_ignore_ascii_case(b"true") => {
                self.note(Repair::PythonLiteral);
                Value::Bool(true)
            }
            _ if w.eq_ignore_ascii_case(b"false") => {
                self.note(Repair::PythonLiteral);
                Value::Bool(false)
            }
            _ if w.eq_ignore_ascii_case(b"null") || w.eq_ignore_ascii_case(b"none") => {
                self.note(Repair::PythonLiteral);
                Value::Null
            }
            b"undefined" | b"NaN" | b"Infinity" => {
                self.note(Repair::JsLiteral);
                Value::Null
            }
            _ => {
                self.pos = start;
                self.unquoted_string()
            }
        }
    }

    /// Unquoted text in value position, up to `,` `}` `]` or the line end.
    fn unquoted_string(&mut self) -> Value {
        self.note(Repair::UnquotedString);
        let start = self.pos;
        while let Some(b) = self.peek() {
            if matches!(b, b',' | b'}' | b']' | b'\n' | b'\r') {
                break;
            }
            if b == b'/' && matches!(self.peek_at(1), Some(b'/' | b'*')) {
                break;
            }
            self.pos += 1;
        }
        let s = String::from_utf8_lossy(self.src.get(start..self.pos).unwrap_or_default());
        Value::String(s.trim().to_owned())
    }
}

fn parse_number(s: &str) -> Option<Value> {
    if s.is_empty() {
        return None;
    }
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        if let Ok(i) = s.parse::<i64>() {
            return Some(Value::Number(i.into()));
        }
        if let Ok(u) = s.parse::<u64>() {
            return Some(Value::Number(u.into()));
        }
    }
    let f: f64 = s.parse().ok()?;
    Some(Number::from_f64(f).map_or(Value::Null, Value::Number))
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Bytes an unquoted key may hold (non-ASCII included, so `{ключ: 1}` works).
fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'-' | b'.') || b >= 0x80
}
