//! The export as Markdown (Note \[Export\]): the facts as a list, user
//! prompts quoted, assistant text as it was written (it is Markdown),
//! tool calls as fenced JSON, results and thinking folded in `<details>`
//! as fenced blocks, each sub-agent a section where it was spawned.
//! Bookkeeping rows (usage, progress, message boundaries) are left out.

use std::fmt::Write as _;

use serde_json::Value;

use super::bundle::{Bundle, Part};
use super::facts::facts;
use crate::pages::session::transcript::Row;

/// The whole document.
pub(crate) fn render(b: &Bundle) -> String {
    let mut out = String::new();
    let s = &b.root.session;
    let _ = writeln!(out, "# Session {}\n", code(&s.id));
    head(&mut out, &b.root);
    out.push_str("## Transcript\n\n");
    part(&mut out, b, &b.root, 2);
    let (_, rest) = b.placed(&b.root);
    if !rest.is_empty() {
        out.push_str("## Sub-agents\n\n");
        for c in rest {
            sub_agent(&mut out, b, c, 3);
        }
    }
    let _ = writeln!(
        out,
        "---\n\n*Exported from an agentshape store by agentshape {}: the session's facts and \
         transcript as stored, secrets masked as the store masked them.*",
        env!("CARGO_PKG_VERSION")
    );
    out
}

/// The facts list and the summary.
fn head(out: &mut String, p: &Part) {
    for (label, text) in facts(p) {
        let _ = writeln!(out, "- **{label}:** {}", one_line(&text));
    }
    if let Some(sum) = &p.session.summary {
        let _ = writeln!(out, "\n{}", quote(sum));
    }
    if let Some(e) = &p.session.error {
        let _ = writeln!(out, "\n**Error:** {}", one_line(e));
    }
    out.push('\n');
}

/// `p`'s rows, each placed child as a section before the row it goes
/// before; a sub-agent's unplaced children at its end.
fn part(out: &mut String, b: &Bundle, p: &Part, level: usize) {
    let (placed, unplaced) = b.placed(p);
    let mut next = placed.into_iter().peekable();
    for (i, r) in p.rows.iter().enumerate() {
        while let Some((_, c)) = next.next_if(|(at, _)| *at == i) {
            sub_agent(out, b, c, level + 1);
        }
        row(out, r);
    }
    for (_, c) in next {
        sub_agent(out, b, c, level + 1);
    }
    if p.depth > 0 {
        for c in unplaced {
            sub_agent(out, b, c, level + 1);
        }
    }
    if p.rows.is_empty() {
        out.push_str("*No transcript rows of its own.*\n\n");
    }
}

fn sub_agent(out: &mut String, b: &Bundle, c: &Part, level: usize) {
    let hashes = "#".repeat(level.min(6));
    let _ = writeln!(out, "{hashes} Sub-agent {}\n", code(&c.session.id));
    head(out, c);
    // The tree is at most `MAX_TREE_DEPTH` deep; a deeper part is a cycle.
    if c.depth <= agentshape_store::query::MAX_TREE_DEPTH {
        part(out, b, c, level);
    }
    let _ = writeln!(out, "*End of sub-agent {}.*\n", code(&c.session.id));
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// One row, or nothing for bookkeeping.
fn row(out: &mut String, r: &Row) {
    let b = &r.body;
    let time = r.created_at.get(11..19).unwrap_or("");
    let when = if time.is_empty() {
        String::new()
    } else {
        format!(" · {time}")
    };
    match r.kind.as_str() {
        "event" => {}
        "hook" => {
            let _ = writeln!(
                out,
                "*hook {} · {}*\n",
                one_line(str_of(b, "event")),
                one_line(str_of(b, "verdict"))
            );
            return;
        }
        "feed_gap" => {
            out.push_str("*Some lines are not shown (feed gap).*\n\n");
            return;
        }
        _ => return,
    }
    let ev = b.get("event").unwrap_or(&Value::Null);
    match str_of(ev, "type") {
        "user_text" => {
            let _ = writeln!(out, "**User**{when}\n\n{}\n", quote(str_of(ev, "text")));
        }
        "text" => {
            let model = b
                .get("model")
                .and_then(Value::as_str)
                .map_or(String::new(), |m| format!(" ({})", one_line(m)));
            let _ = writeln!(
                out,
                "**Assistant**{model}{when}\n\n{}\n",
                str_of(ev, "text")
            );
        }
        "thinking" => folded(out, "Thinking", "", str_of(ev, "text")),
        "tool_use" => {
            let input = ev
                .get("input")
                .and_then(|v| serde_json::to_string_pretty(v).ok())
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "**Tool call** `{}`{when}\n\n{}\n",
                inline(str_of(ev, "name")),
                fenced("json", &input)
            );
        }
        "tool_result" => {
            let error = ev.get("is_error").and_then(Value::as_bool) == Some(true);
            let label = if error { "Tool error" } else { "Result" };
            let text = ev
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or("(the result's text was not kept)");
            folded(out, label, "", text);
        }
        "compact_summary" => folded(out, "Compact summary", "", str_of(ev, "text")),
        "compaction" => out.push_str("---\n\n*Context compacted.*\n\n"),
        "api_error" => {
            let _ = writeln!(
                out,
                "> **API error:** {}\n",
                one_line(str_of(ev, "message"))
            );
        }
        "warning" => {
            let _ = writeln!(out, "> **Warning:** {}\n", one_line(str_of(ev, "message")));
        }
        _ => {}
    }
}

/// `text` in a fenced block inside `<details>`, `label` its summary.
fn folded(out: &mut String, label: &str, lang: &str, text: &str) {
    let _ = writeln!(
        out,
        "<details><summary>{label}</summary>\n\n{}\n\n</details>\n",
        fenced(lang, text)
    );
}

/// `text` in a fence longer than any run of backticks inside it.
pub(crate) fn fenced(lang: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = text.strip_suffix('\n').unwrap_or(text);
    format!("{fence}{lang}\n{body}\n{fence}")
}

/// `text` as a block quote, every line quoted.
fn quote(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                ">".to_owned()
            } else {
                format!("> {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` on one line (line breaks as spaces).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` as inline code, whatever backticks it holds.
fn code(text: &str) -> String {
    let t = one_line(text);
    let longest = t.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest + 1);
    let pad = if t.starts_with('`') || t.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{t}{pad}{ticks}")
}

/// A tool name inside single backticks.
fn inline(text: &str) -> String {
    one_line(text).replace('`', "'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_is_longer_than_any_backticks_inside() {
        assert_eq!(fenced("", "a"), "```\na\n```");
        assert_eq!(fenced("json", "x ```` y\n"), "`````json\nx ```` y\n`````");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(quote("a\n\nb"), "> a\n>\n> b");
    }
}
