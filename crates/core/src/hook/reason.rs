//! The reason a blocked stop gives the model.
//!
//! Note \[Reasons a model can act on\]: Claude Code hands the reason to the
//! model as its next instruction, so it says what to fix, not what
//! happened inside agentshape: which schema (or profile) the answer must
//! match, how the answer was read (a fenced `json` block, JSON in the text,
//! repaired JSON, nothing at all), each failing JSON path with what it
//! expects (the validator's message, which names the expected type, enum
//! values or missing property), the shape in one line, and to end the turn
//! with only the corrected JSON. At most [`MAX_REASON_BYTES`]: eight errors
//! at most, each cut to 240 bytes, the shape to what is left; the count of
//! the errors left out is given so the model knows there are more.

use std::fmt::Write as _;

use serde_json::Value;

use super::shape::{cut, shape_line};
use crate::outcome::{Extraction, Method, ViolationKind};

/// The most bytes a block reason takes.
pub const MAX_REASON_BYTES: usize = 2048;

/// Errors listed at most.
const MAX_ERRORS: usize = 8;

/// Bytes of one error line at most.
const MAX_ERROR_LINE: usize = 240;

/// What [`block_reason`] needs to know.
#[derive(Debug, Clone, Copy)]
pub struct BlockContext<'a> {
    /// How the message was read and what failed.
    pub extraction: &'a Extraction,
    /// What it must match, for the model: `the schema of profile claude-ops`.
    pub against: &'a str,
    /// The schema, for the one-line shape.
    pub schema: Option<&'a Value>,
    /// The message was empty.
    pub empty: bool,
    /// This block's number in the chain (1 for the first).
    pub block: u32,
    /// Blocks allowed in a row.
    pub max_blocks: u32,
}

fn how_read(method: Method) -> &'static str {
    match method {
        Method::Structured => "native structured output",
        Method::Fenced => "a ```json block",
        Method::Bare => "JSON in the text",
        Method::Repaired => "JSON that needed repair",
        Method::Markers => "legacy text markers",
        Method::None => "nothing",
    }
}

/// `text` in at most about `max` bytes, its middle left out: validator
/// messages put the offending value first and what was expected last
/// (`"xxxx…" is not of type "integer"`), and the expectation is the part
/// the model needs.
fn middle_out(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut head = max / 4;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (max - head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{} … {}", &text[..head], &text[tail..])
}

/// The reason to block with (Note \[Reasons a model can act on\]).
pub fn block_reason(ctx: &BlockContext<'_>) -> String {
    let e = ctx.extraction;
    let mut out = String::with_capacity(MAX_REASON_BYTES);
    let _ = write!(
        out,
        "agentshape: your final message must contain one JSON value matching {}. ",
        ctx.against
    );
    if ctx.empty {
        out.push_str("It was empty.\n");
    } else if e.method == Method::None {
        out.push_str("It contains no JSON value.\n");
    } else {
        let _ = write!(out, "It was read as {}", how_read(e.method));
        if !e.repairs.is_empty() {
            let names: Vec<String> = e
                .repairs
                .iter()
                .map(|r| {
                    serde_json::to_value(r)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                })
                .collect();
            let _ = write!(out, " (repaired: {})", names.join(", "));
        }
        let n = e.errors.len();
        let _ = writeln!(
            out,
            " and has {n} error{}; fix {}:",
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "each" }
        );
    }
    let tail = format!(
        "End your turn with only the corrected JSON value, nothing else (attempt {} of {}).",
        ctx.block + 1,
        ctx.max_blocks + 1
    );
    // Room for the shape line and the tail.
    let reserve = tail.len() + 200;
    let mut listed = 0;
    for v in &e.errors {
        if listed == MAX_ERRORS {
            break;
        }
        let at = if v.instance_path.is_empty() {
            "(root)"
        } else {
            &v.instance_path
        };
        let message = middle_out(&v.message, 160);
        let mut line = if v.kind == Some(ViolationKind::Invariant) {
            format!("- {at}: rule failed: {message}")
        } else {
            format!("- {at}: {message}")
        };
        cut(&mut line, MAX_ERROR_LINE);
        if out.len() + line.len() + 1 + reserve > MAX_REASON_BYTES {
            break;
        }
        out.push_str(&line);
        out.push('\n');
        listed += 1;
    }
    if listed < e.errors.len() {
        let _ = writeln!(out, "- and {} more", e.errors.len() - listed);
    }
    if let Some(schema) = ctx.schema {
        let room = MAX_REASON_BYTES.saturating_sub(out.len() + tail.len() + 20);
        if room > 40 {
            let _ = writeln!(out, "Required shape: {}", shape_line(schema, room));
        }
    }
    out.push_str(&tail);
    cut(&mut out, MAX_REASON_BYTES);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{ExtractOptions, extract_text};
    use crate::validate::Validator;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object",
               "properties": {"action": {"enum": ["complete", "continue"]},
                              "confidence": {"type": "number"}},
               "required": ["action", "confidence"],
               "additionalProperties": false})
    }

    fn reason_for(text: &str, block: u32) -> String {
        let s = schema();
        let v = Validator::new(&s).unwrap();
        let e = extract_text(
            text,
            &ExtractOptions {
                validator: Some(&v),
                ..ExtractOptions::default()
            },
        );
        block_reason(&BlockContext {
            extraction: &e,
            against: "the schema loop-action.json",
            schema: Some(&s),
            empty: text.trim().is_empty(),
            block,
            max_blocks: 3,
        })
    }

    #[test]
    fn reasons_name_paths_method_shape_and_attempt() {
        let r = reason_for(
            "Done!\n```json\n{\"action\": \"finished\", \"confidence\": \"high\", \"x\": 1,}\n```",
            0,
        );
        assert!(r.starts_with("agentshape: your final message must contain one JSON value matching the schema loop-action.json. It was read as JSON that needed repair (repaired: trailing_comma) and has 3 errors; fix each:\n"), "{r}");
        assert!(r.contains("- /action: \"finished\" is not one of"), "{r}");
        assert!(
            r.contains("- /confidence: \"high\" is not of type \"number\""),
            "{r}"
        );
        assert!(
            r.contains("- (root): Additional properties are not allowed"),
            "{r}"
        );
        assert!(
            r.contains(
                "Required shape: {\"action\": \"complete\"|\"continue\", \"confidence\": number}\n"
            ),
            "{r}"
        );
        assert!(r.ends_with("(attempt 1 of 4)."), "{r}");

        let prose = reason_for("I fixed the bug and all tests pass.", 2);
        assert!(
            prose.contains("It contains no JSON value.\nRequired shape:"),
            "{prose}"
        );
        assert!(prose.ends_with("(attempt 3 of 4)."));
        let empty = reason_for("  ", 0);
        assert!(empty.contains("It was empty."), "{empty}");
    }

    #[test]
    fn a_reason_never_passes_2_kb() {
        let mut props = serde_json::Map::new();
        let mut value = serde_json::Map::new();
        for i in 0..300 {
            props.insert(format!("field_number_{i}"), json!({"type": "integer"}));
            value.insert(format!("field_number_{i}"), json!("x".repeat(300)));
        }
        let s = json!({"type": "object", "properties": props});
        let v = Validator::new(&s).unwrap();
        let text = serde_json::to_string(&Value::Object(value)).unwrap();
        let e = extract_text(
            &text,
            &ExtractOptions {
                validator: Some(&v),
                ..ExtractOptions::default()
            },
        );
        assert_eq!(e.errors.len(), 300);
        let r = block_reason(&BlockContext {
            extraction: &e,
            against: "the schema of profile big",
            schema: Some(&s),
            empty: false,
            block: 0,
            max_blocks: 3,
        });
        assert!(r.len() <= MAX_REASON_BYTES, "{}", r.len());
        assert!(r.contains("is not of type \"integer\"\n"), "{r}");
        let listed = r.lines().filter(|l| l.starts_with("- /field")).count();
        assert!(r.contains(&format!("- and {} more\n", 300 - listed)), "{r}");
        assert!(listed >= 5, "{r}");
        assert!(r.contains("Required shape: {"), "{r}");
        assert!(r.ends_with("(attempt 1 of 4)."));
    }
}
