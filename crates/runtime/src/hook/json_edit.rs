//! Edits of JSON text that keep every byte they do not change.
//!
//! Note \[Editing JSON as text\]: a settings file is the user's; reading it
//! into a value and printing that again loses what a value does not hold:
//! the spacing, the final newline, `\u00e9` escapes, and numbers past `f64`
//! (`123456789012345678901234567890` came back `1.2345678901234568e+29`,
//! issue 40). So the text is parsed once more for where each value is
//! ([`Node`], byte spans), and an edit is a splice of the text: a member or
//! an element added after the last one of its container (or alone in an
//! empty one), one removed with the comma and white space before it (or
//! after it, for the first), a string replaced in place. Removing what was
//! added gives the bytes back: the text added is exactly the text removed.
//! New text follows the file's own layout: on one line when the container
//! is, else each item on its own line, indented as its siblings (or one
//! unit more than the container's line, the unit taken from the file).
//! The text must already be valid JSON (checked by `serde_json`, which
//! also bounds the depth); the parser here only finds spans.

use serde_json::Value;

/// Where a value is in the text, and what it holds.
#[derive(Debug, Clone)]
pub struct Node {
    /// The first byte of the value.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
    /// What it is.
    pub kind: Kind,
    /// Where its member starts (its key) when it is an object's value,
    /// else `start`.
    key_start: usize,
}

/// A value's kind, with its parts for a container.
#[derive(Debug, Clone)]
pub enum Kind {
    /// An object: its members, in order (key decoded, value).
    Object(Vec<(String, Node)>),
    /// An array: its elements, in order.
    Array(Vec<Node>),
    /// A string, number, boolean or null.
    Scalar,
}

impl Node {
    /// The value of `key` (the last one when a key is repeated, as
    /// `serde_json` reads it).
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Object(m) => m.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The index of member `key` (the last one when repeated).
    pub fn index_of(&self, key: &str) -> Option<usize> {
        match &self.kind {
            Kind::Object(m) => m.iter().rposition(|(k, _)| k == key),
            _ => None,
        }
    }

    /// The elements of an array (none for anything else).
    pub fn items(&self) -> &[Node] {
        match &self.kind {
            Kind::Array(a) => a,
            _ => &[],
        }
    }

    /// The spans of the parts of a container (members' keys to values,
    /// or elements), in order.
    fn parts(&self) -> Vec<(usize, usize)> {
        match &self.kind {
            Kind::Object(m) => m.iter().map(|(_, v)| (v.key_start, v.end)).collect(),
            Kind::Array(a) => a.iter().map(|v| (v.start, v.end)).collect(),
            Kind::Scalar => Vec::new(),
        }
    }
}

/// Parse `text` (valid JSON) into spans; `None` when it is not JSON after
/// all (the caller checked it first, so this means a bug, never a panic).
pub fn parse(text: &str) -> Option<Node> {
    let mut p = Parser {
        b: text.as_bytes(),
        at: 0,
        text,
    };
    p.ws();
    let node = p.value()?;
    p.ws();
    (p.at == p.b.len()).then_some(node)
}

struct Parser<'a> {
    b: &'a [u8],
    at: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self
            .b
            .get(self.at)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.b.get(self.at) == Some(&c)).then(|| self.at += 1)
    }

    fn value(&mut self) -> Option<Node> {
        let start = self.at;
        let kind = match self.b.get(self.at)? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                self.ws();
                if self.eat(b'}').is_none() {
                    loop {
                        self.ws();
                        let key_start = self.at;
                        let key_end = self.string()?;
                        let key: String =
                            serde_json::from_str(&self.text[key_start..key_end]).ok()?;
                        self.ws();
                        self.eat(b':')?;
                        self.ws();
                        let mut v = self.value()?;
                        v.key_start = key_start;
                        members.push((key, v));
                        self.ws();
                        if self.eat(b',').is_none() {
                            self.eat(b'}')?;
                            break;
                        }
                    }
                }
                Kind::Object(members)
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                self.ws();
                if self.eat(b']').is_none() {
                    loop {
                        self.ws();
                        items.push(self.value()?);
                        self.ws();
                        if self.eat(b',').is_none() {
                            self.eat(b']')?;
                            break;
                        }
                    }
                }
                Kind::Array(items)
            }
            b'"' => {
                self.string()?;
                Kind::Scalar
            }
            _ => {
                while self.b.get(self.at).is_some_and(|c| {
                    !matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.at += 1;
                }
                if self.at == start {
                    return None;
                }
                Kind::Scalar
            }
        };
        Some(Node {
            start,
            end: self.at,
            kind,
            key_start: start,
        })
    }

    /// Skip a string; the offset past its closing quote.
    fn string(&mut self) -> Option<usize> {
        self.eat(b'"')?;
        loop {
            match self.b.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(self.at);
                }
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
    }
}

/// The text between the start of `at`'s line and `at`, when it is only
/// white space (an indent), else `None`.
fn indent_before(text: &str, at: usize) -> Option<&str> {
    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let s = &text[line..at];
    s.chars().all(|c| c == ' ' || c == '\t').then_some(s)
}

/// The file's indent unit: the indent of the first member of the top
/// level, else two spaces.
fn unit(text: &str, root: &Node) -> String {
    root.parts()
        .first()
        .and_then(|&(s, _)| {
            text[..s]
                .contains('\n')
                .then(|| indent_before(text, s))
                .flatten()
        })
        .filter(|s| !s.is_empty())
        .unwrap_or("  ")
        .to_owned()
}

/// `value` as JSON text: on one line, or pretty with `unit` and every line
/// after the first indented by `base`.
fn render(value: &Value, layout: Option<(&str, &str)>) -> String {
    let Some((unit, base)) = layout else {
        return value.to_string();
    };
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    if serde::Serialize::serialize(value, &mut ser).is_err() {
        return value.to_string();
    }
    // A JSON string holds no raw newline: every one here is the layout's.
    String::from_utf8_lossy(&out).replace('\n', &format!("\n{base}"))
}

/// `text` with `new` in place of `start..end`.
fn splice(text: &str, start: usize, end: usize, new: &str) -> String {
    let mut out = String::with_capacity(text.len() + new.len());
    out.push_str(&text[..start]);
    out.push_str(new);
    out.push_str(&text[end..]);
    out
}

/// Add a part after the last one of `container` (an object when `key` is
/// given, else an array), in the file's layout (Note \[Editing JSON as text\]).
pub fn append(
    text: &str,
    root: &Node,
    container: &Node,
    key: Option<&str>,
    value: &Value,
) -> String {
    let unit = unit(text, root);
    let head = |base: &str| {
        let v = render(value, Some((unit.as_str(), base)));
        match key {
            Some(k) => format!("{}: {v}", Value::String(k.to_owned())),
            None => v,
        }
    };
    let compact = || match key {
        Some(k) => format!("{}:{}", Value::String(k.to_owned()), render(value, None)),
        None => render(value, None),
    };
    let parts = container.parts();
    if let (Some(&(first, _)), Some(&(last, last_end))) = (parts.first(), parts.last()) {
        // Between the container's opening and its first part: its layout.
        if !text[container.start..first].contains('\n') {
            return splice(text, last_end, last_end, &format!(",{}", compact()));
        }
        let base = indent_before(text, last).unwrap_or("");
        return splice(
            text,
            last_end,
            last_end,
            &format!(",\n{base}{}", head(base)),
        );
    }
    // Empty: the part alone, one unit in from the container's line, and
    // the closing bracket on a line of its own (a one-line file stays one).
    let inner = (container.start + 1, container.end - 1);
    if !text.contains('\n') {
        return splice(text, inner.0, inner.1, &compact());
    }
    let line = indent_before(text, container.start).map_or_else(
        || {
            let l = text[..container.start].rfind('\n').map_or(0, |i| i + 1);
            text[l..]
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect::<String>()
        },
        str::to_owned,
    );
    let base = format!("{line}{unit}");
    splice(
        text,
        inner.0,
        inner.1,
        &format!("\n{base}{}\n{line}", head(&base)),
    )
}

/// Remove part `index` of `container`: with the comma and white space
/// before it, or (the first of several) after it; the only one leaves the
/// container empty (`{}`, `[]`).
pub fn remove(text: &str, container: &Node, index: usize) -> String {
    let parts = container.parts();
    let Some(&(start, end)) = parts.get(index) else {
        return text.to_owned();
    };
    if parts.len() == 1 {
        return splice(text, container.start + 1, container.end - 1, "");
    }
    if index > 0 {
        return splice(text, parts[index - 1].1, end, "");
    }
    splice(text, start, parts[1].0, "")
}

/// Replace the value `node` with `value` written on one line (a string).
pub fn replace(text: &str, node: &Node, value: &Value) -> String {
    splice(text, node.start, node.end, &value.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Add a member `k` to the top level, then remove it: the text comes
    /// back; the added text follows the file's layout.
    #[test]
    fn append_then_remove_gives_the_text_back() {
        let cases = [
            ("{}", "{\"k\":[1]}"),
            ("{\"a\":1}", "{\"a\":1,\"k\":[1]}"),
            (
                "{\n\t\"a\": 123456789012345678901234567890\n}",
                "{\n\t\"a\": 123456789012345678901234567890,\n\t\"k\": [\n\t\t1\n\t]\n}",
            ),
            (
                "{\n   \"a\" : \"caf\\u00e9\" ,\n   \"b\": [ ]\n}\n",
                "{\n   \"a\" : \"caf\\u00e9\" ,\n   \"b\": [ ],\n   \"k\": [\n      1\n   ]\n}\n",
            ),
        ];
        for (input, want) in cases {
            let root = parse(input).unwrap();
            let out = append(input, &root, &root, Some("k"), &json!([1]));
            assert_eq!(out, want, "{input:?}");
            let root = parse(&out).unwrap();
            let back = remove(&out, &root, root.index_of("k").unwrap());
            assert_eq!(back, input, "{input:?}");
        }
        // An empty container over lines gets the part on a line of its own.
        let text = "{\n}\n";
        let root = parse(text).unwrap();
        assert_eq!(
            append(text, &root, &root, Some("k"), &json!([1])),
            "{\n  \"k\": [\n    1\n  ]\n}\n"
        );
    }

    #[test]
    fn remove_takes_its_comma_and_nothing_else() {
        let text = "[1, 2 ,3]";
        let root = parse(text).unwrap();
        assert_eq!(remove(text, &root, 0), "[2 ,3]");
        assert_eq!(remove(text, &root, 1), "[1 ,3]");
        assert_eq!(remove(text, &root, 2), "[1, 2]");
        let one = "{ \"a\": {\"b\": 1} }";
        let root = parse(one).unwrap();
        assert_eq!(remove(one, &root, 0), "{}");
        let inner = root.get("a").unwrap();
        assert_eq!(remove(one, inner, 0), "{ \"a\": {} }");
        let s = parse("{\"c\": \"x\\\"y\"}").unwrap();
        let node = s.get("c").unwrap();
        assert_eq!(
            replace("{\"c\": \"x\\\"y\"}", node, &json!("new")),
            "{\"c\": \"new\"}"
        );
        assert!(parse("{\"a\": 1").is_none());
        assert!(parse("[1] x").is_none());
    }
}
