//! The tolerant JSON parser: repairs what LLMs get wrong, and lists each repair.
//!
//! Our own code, no dependency: a recursive-descent state machine
//! (`parser`) that accepts trailing commas, single quotes, unquoted keys,
//! Python and JS literals, comments, raw control characters in strings,
//! unescaped inner quotes, missing quotes (by bounded look-ahead), smart
//! quotes, backtick quotes, Unicode spaces, Python tuples and sets, unquoted
//! URLs and regexes, cut numbers, digit separators, constructor wrappers
//! (`ObjectId("x")`), stray words before keys, arrays continued after their
//! `]`, an extra `}` before more members, escaped JSON, missing commas and
//! colons, and truncated input
//! (closing open strings and containers), and reports each fix as a
//! [`Repair`]. It knows no schema (BAML's `jsonish` split): choosing among
//! candidates is the caller's job. The rules, and which peer library each
//! follows where they disagree, are `docs/repair-policy.md`; `prose` holds
//! the rule that keeps prose from becoming data (Note [No structure from
//! prose]), and [`repair_scalar`] reads a whole reply that is one scalar.
//!
//! Note \[Truncation\]: a reply cut by a token limit is closed up as the
//! bench's truncation rule says: a cut string keeps the characters before the
//! cut, a trailing comma is dropped, a dangling key (with or without `:`) is
//! dropped, every open container is closed, and a value that ends exactly at
//! the cut (`"hours": 30.0`) is complete. A number cut mid-way (`1.`, `2e`)
//! keeps what parses.

pub(crate) mod boundary;
pub(crate) mod lex;
pub(crate) mod node;
pub(crate) mod parser;
mod prose;

use serde_json::Value;

use super::Repair;
use crate::InexactNumber;

pub use node::Node;
pub use parser::MAX_DEPTH;
pub use prose::{keeps_nothing, prose_by_text};

/// A value the tolerant parser produced, with the repairs it needed (in order
/// of first use, each once).
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired {
    /// The value.
    pub value: Value,
    /// What was fixed; empty when the text was already valid JSON.
    pub repairs: Vec<Repair>,
    /// The numbers the value cannot hold exactly (Note [Big numbers] in
    /// `exact`); `repairs` then lists [`Repair::InexactNumber`].
    pub inexact: Vec<InexactNumber>,
}

/// Parse `text` tolerantly: the first `{…}` or `[…]` in it (text before is
/// skipped, text after is ignored). `None` when `text` holds no bracket.
///
/// Linear time, bounded depth ([`MAX_DEPTH`]), never panics.
pub fn repair_json(text: &str) -> Option<Repaired> {
    repair_node(text).map(RepairedNode::finish)
}

/// What the tolerant parser read, before it is made a [`Repaired`]: the
/// value as a [`Node`] borrowing from the text (Note [Repaired nodes] in
/// `node`), for callers that only look at it and write it out.
#[derive(Debug)]
pub struct RepairedNode<'a> {
    /// The value.
    pub node: Node<'a>,
    /// What was fixed, as [`Repaired::repairs`].
    pub repairs: Vec<Repair>,
    /// The literals of inexact numbers, whose placeholders stand in `node`
    /// until [`RepairedNode::finish`] puts the nearest values back.
    literals: Vec<String>,
}

impl RepairedNode<'_> {
    /// Whether every number holds its literal exactly: `node` then stands
    /// for the value as it is.
    pub fn exact(&self) -> bool {
        self.literals.is_empty()
    }

    /// The [`Repaired`] value, as [`repair_json`] gives it.
    pub fn finish(self) -> Repaired {
        finish(self.node.into_value(), self.repairs, &self.literals)
    }
}

/// [`repair_json`], stopping short of building the value.
pub fn repair_node(text: &str) -> Option<RepairedNode<'_>> {
    if let Some(unescaped) = escaped_json(text) {
        if let Some((node, mut repairs, literals)) = parser::Parser::new(&unescaped).parse_top() {
            repairs.insert(0, Repair::EscapedJson);
            return Some(RepairedNode {
                node: node.into_owned(),
                repairs,
                literals,
            });
        }
    }
    parser::Parser::new(text)
        .parse_top()
        .map(|(node, repairs, literals)| RepairedNode {
            node,
            repairs,
            literals,
        })
}

/// Parse the whole of `text` as one scalar (Note [Whole-reply scalars] in
/// `parser`): a quoted string, however broken, a literal or a number. `None`
/// when the text is anything else, in particular unquoted words (prose).
pub fn repair_scalar(text: &str) -> Option<Repaired> {
    // Note [Embedded JSON] in `extract::embedded`: `\"hello world\"` is a
    // quoted string escaped once more; unescaped once, it is that string.
    let trimmed = text.trim();
    if trimmed.len() > 4 && trimmed.starts_with("\\\"") && trimmed.ends_with("\\\"") {
        let once = serde_json::from_str::<String>(&format!("\"{trimmed}\"")).ok()?;
        let mut r = repair_scalar(&once)?;
        if r.value.is_string() {
            r.repairs.insert(0, Repair::EscapedJson);
            return Some(r);
        }
        return None;
    }
    // Noise is checked only once a scalar was read: most replies are prose
    // or hold a container and read no scalar, and the check scans them whole.
    if let Some((node, repairs, inexact)) = parser::Parser::new(text).parse_scalar() {
        return (!prose::noise(text)).then(|| finish(node.into_value(), repairs, &inexact));
    }
    let trimmed = text.trim();
    if trimmed.len() < 2
        || !trimmed.starts_with('"')
        || !trimmed.ends_with('"')
        || prose::noise(text)
    {
        return None;
    }
    whole_quoted(trimmed).map(|value| Repaired {
        value,
        repairs: vec![Repair::UnescapedQuote],
        inexact: Vec::new(),
    })
}

/// Note [Whole quoted reply]: a reply that opens and closes with `"` is one
/// string, whatever quotes it holds inside (`"The TV is 72""`, `"the list
/// [1, 2"] more"`): the inner quotes are characters. Escapes are read as
/// JSON's; `None` when the inside is not a JSON string body even then.
fn whole_quoted(text: &str) -> Option<Value> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    // An even count of quotes is two quotations (Note [Quoted speech]).
    if text.matches('"').count() % 2 == 0 {
        return None;
    }
    let mut body = String::with_capacity(inner.len() + 8);
    let mut escaped = false;
    for c in inner.chars() {
        if c == '"' && !escaped {
            body.push('\\');
        }
        escaped = c == '\\' && !escaped;
        body.push(c);
    }
    if escaped {
        return None;
    }
    serde_json::from_str::<String>(&format!("\"{body}\""))
        .ok()
        .map(Value::String)
}

/// Put the nearest value in place of each inexact number's placeholder
/// and list it, with its path.
fn finish(mut value: Value, mut repairs: Vec<Repair>, literals: &[String]) -> Repaired {
    let mut inexact = Vec::new();
    if !literals.is_empty() {
        let mut path = String::new();
        restore(&mut value, literals, &mut path, &mut inexact);
        if !inexact.is_empty() && !repairs.contains(&Repair::InexactNumber) {
            repairs.push(Repair::InexactNumber);
        }
    }
    Repaired {
        value,
        repairs,
        inexact,
    }
}

fn restore(
    value: &mut Value,
    literals: &[String],
    path: &mut String,
    out: &mut Vec<InexactNumber>,
) {
    match value {
        Value::String(s) => {
            let literal = s
                .strip_prefix(parser::INEXACT_MARK)
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|i| literals.get(i));
            if let Some(literal) = literal {
                let (found, held) = InexactNumber::at(path, literal);
                out.push(found);
                *value = held;
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                restore(v, literals, path, out);
                path.truncate(len);
            }
        }
        Value::Object(members) => {
            for (k, v) in members.iter_mut() {
                let len = path.len();
                path.push('/');
                path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                restore(v, literals, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Note [Escaped JSON]: a reply that is a JSON document escaped as a string
/// body (`{\"a\": \"b\"}`, as printed by a tool that double-encodes) has
/// `\"` where its first key or element starts. It is unescaped once (as a
/// JSON string body when that is valid, else just `\"` → `"` and `\\` →
/// `\`) and parsed. Only that opening shape triggers it, so one pass decides.
fn escaped_json(text: &str) -> Option<String> {
    let start = text.find(['{', '['])?;
    let body = text.get(start..)?;
    let after = body.get(1..)?.trim_start();
    if !after.starts_with("\\\"") {
        return None;
    }
    let quoted = format!("\"{body}\"");
    if let Ok(s) = serde_json::from_str::<String>(&quoted) {
        return Some(s);
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n @ ('"' | '\\')) => out.push(n),
                Some(n) => {
                    out.push(c);
                    out.push(n);
                }
                None => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}
