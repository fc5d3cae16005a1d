//! A tool call drawn as what it did, with its result (Note \[Calls and
//! their results\] in `lines`): shell commands ([`shell`]), file edits
//! ([`diff`]), file reads, to-do lists, web fetches and searches,
//! sub-agents, and anything else as its JSON, pretty and collapsed.
//!
//! [`shell`]: super::shell
//! [`diff`]: super::diff

use maud::{Markup, html};
use serde_json::Value;

use super::highlight::Budget;
use super::outcome::{Outcome, result_text};
use super::{diff, first_line, markdown, shell};
use agentshape_store::query::Session;

use crate::pages::numbers::thousands;
use crate::pages::session::session_href;
use crate::pages::sessions;

/// One tool call and what the page knows of it.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    pub(crate) name: &'a str,
    pub(crate) input: &'a Value,
    /// Its result, when on the same page.
    pub(crate) result: Option<Outcome<'a>>,
    /// The sub-agent it started (its agent id), when a progress row names it.
    pub(crate) child: Option<&'a str>,
    /// That sub-agent's session, when the page knows it.
    pub(crate) child_session: Option<&'a Session>,
}

/// A call's status beside its name: failed, or no result on this page.
fn status(call: &Call<'_>) -> Markup {
    html! {
        @match call.result {
            Some(r) if r.is_error => { " " span.exit.failed { "failed" } },
            None => { " " span.exit.muted title="the call's result is not on this page" { "no result" } },
            Some(_) => {},
        }
    }
}

/// A result folded under a summary (its first line).
fn folded_result(call: &Call<'_>, what: &str) -> Markup {
    html! {
        @if let Some(r) = call.result {
            @let text = r.content.map(result_text);
            details.result.failed[r.is_error] {
                summary {
                    span.tag { @if r.is_error { "error" } @else { (what) } } " "
                    @match &text {
                        Some(t) => (first_line(t)),
                        None => span.muted { "(content not kept)" },
                    }
                }
                pre { (text.as_deref().unwrap_or("The decoder keeps no tool-result text; the forensic log has it.")) }
            }
        }
    }
}

/// The head of a call: its tag, name and what follows.
fn head(call: &Call<'_>, what: &Markup) -> Markup {
    html! {
        div.tool-head {
            span.tag { "tool" } " " span.tool-name { (call.name) } " " (what) (status(call))
        }
    }
}

fn read_view(call: &Call<'_>) -> Option<Markup> {
    let path = ["file_path", "absolute_path", "path"]
        .iter()
        .find_map(|k| call.input.get(*k).and_then(Value::as_str))?;
    let offset = call.input.get("offset").and_then(Value::as_u64);
    let limit = call.input.get("limit").and_then(Value::as_u64);
    // Claude's offset is a line number; Gemini's counts lines skipped.
    let from = offset.map(|o| if call.name == "Read" { o.max(1) } else { o + 1 });
    let range = match (from, limit) {
        (Some(f), Some(n)) => Some(format!("lines {f}–{}", f + n.saturating_sub(1))),
        (Some(f), None) => Some(format!("from line {f}")),
        (None, Some(n)) => Some(format!("first {n} lines")),
        (None, None) => None,
    };
    Some(html! {
        (head(call, &html! { code.path { (path) } @if let Some(r) = range { " " span.muted.read-range { (r) } } }))
        (folded_result(call, "content"))
    })
}

/// A to-do list's item: its text and status.
fn todo_item(item: &Value) -> Option<(&str, &str)> {
    let text = ["content", "step", "description"]
        .iter()
        .find_map(|k| item.get(*k).and_then(Value::as_str))?;
    Some((
        text,
        item.get("status")
            .and_then(Value::as_str)
            .unwrap_or("pending"),
    ))
}

fn todo_view(call: &Call<'_>) -> Option<Markup> {
    let items = call
        .input
        .get("todos")
        .or_else(|| call.input.get("plan"))?
        .as_array()?;
    let items: Vec<(&str, &str)> = items.iter().filter_map(todo_item).collect();
    let done = items.iter().filter(|(_, s)| *s == "completed").count();
    Some(html! {
        (head(call, &html! { span.muted { (done) " of " (items.len()) " done" } }))
        @if let Some(e) = call.input.get("explanation").and_then(Value::as_str) { p.muted.note { (e) } }
        ul.checklist {
            @for (text, st) in &items {
                @let (class, mark) = match *st {
                    "completed" => ("todo done", "☑"),
                    "in_progress" => ("todo doing", "◐"),
                    "cancelled" => ("todo cancelled", "☒"),
                    _ => ("todo", "☐"),
                };
                li class=(class) data-status=(st) { span.box aria-hidden="true" { (mark) } " " (text) }
            }
        }
        @if call.result.is_some_and(|r| r.is_error) { (folded_result(call, "result")) }
    })
}

/// A web address worth a link: `http(s)://` and nothing a browser would
/// read otherwise (no spaces or controls).
fn web_link(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://"))
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn web_view(call: &Call<'_>) -> Option<Markup> {
    let s = |k: &str| call.input.get(k).and_then(Value::as_str);
    let url = s("url");
    let query = s("query");
    let prompt = s("prompt");
    if url.is_none() && query.is_none() && prompt.is_none() {
        return None;
    }
    Some(html! {
        (head(call, &html! {
            @if let Some(u) = url {
                @if web_link(u) {
                    a.url href=(u) rel="noopener noreferrer nofollow" { (u) }
                } @else {
                    code.url { (u) }
                }
            } @else if let Some(q) = query {
                span.muted { "search " } q.query { (q) }
            }
        }))
        @if let Some(p) = prompt { p.muted.note { (first_line(p)) } }
        (folded_result(call, "result"))
    })
}

fn task_view(call: &Call<'_>, budget: &mut Budget) -> Option<Markup> {
    let s = |k: &str| call.input.get(k).and_then(Value::as_str);
    let description = s("description");
    let prompt = s("prompt");
    if description.is_none() && prompt.is_none() {
        return None;
    }
    let report = call.result.and_then(|r| r.content).map(result_text);
    Some(html! {
        div.tool-head {
            span.tag { "sub-agent" } " "
            @if let Some(t) = s("subagent_type") { span.tool-name { (t) } " " }
            (description.unwrap_or(""))
            (status(call))
            @if let Some(id) = call.child {
                " " a.child href=(session_href(&format!("agent-{id}"))) { "its session" }
            }
            @if let Some(c) = call.child_session {
                " " span.muted.child-facts {
                    (thousands(c.input_tokens)) " in / " (thousands(c.output_tokens)) " out"
                    @if c.cost_usd.is_some() { " · " (sessions::cost(c)) }
                }
            }
        }
        @if let Some(p) = prompt {
            details.prompt { summary { span.tag { "prompt" } " " (first_line(p)) } pre { (p) } }
        }
        @if let Some(r) = &report {
            details.result.failed[call.result.is_some_and(|r| r.is_error)] {
                summary { span.tag { "report" } " " (first_line(r)) }
                (markdown::render(r, budget))
            }
        }
    })
}

/// Anything else: its name and input's first line, the input pretty, the
/// result folded.
fn generic_view(call: &Call<'_>) -> Markup {
    let compact = call.input.to_string();
    html! {
        details.input {
            summary { span.tag { "tool" } " " span.tool-name { (call.name) } " " (first_line(&compact)) (status(call)) }
            pre { (serde_json::to_string_pretty(call.input).unwrap_or(compact)) }
        }
        (folded_result(call, "result"))
    }
}

/// The view of `call`.
pub(crate) fn view(call: &Call<'_>, budget: &mut Budget) -> Markup {
    let name = call.name;
    let specific = if shell::SHELL_TOOLS.contains(&name) {
        match diff::patch_text(call.input) {
            // Codex's older `apply_patch`, a shell command.
            Some(_) => diff::view("apply_patch", call.input)
                .map(|d| html! { (head(call, &html! {})) (d) (folded_result(call, "result")) }),
            None => shell::view(call.input, call.result.as_ref()).map(|s| {
                html! {
                    div.tool-head { span.tag { "shell" } " " span.tool-name { (name) } }
                    (s)
                }
            }),
        }
    } else if diff::EDIT_TOOLS.contains(&name) {
        diff::view(name, call.input).map(|d| {
            html! {
                (head(call, &html! {}))
                (d)
                @if call.result.is_some_and(|r| r.is_error) { (folded_result(call, "result")) }
            }
        })
    } else {
        match name {
            "Read" | "read_file" => read_view(call),
            "TodoWrite" | "update_plan" | "write_todos" => todo_view(call),
            "WebFetch" | "WebSearch" | "web_search" | "web_fetch" | "google_web_search" => {
                web_view(call)
            }
            "Task" | "Agent" => task_view(call, budget),
            _ => None,
        }
    };
    html! {
        div.tool.failed[call.result.is_some_and(|r| r.is_error)] {
            @match specific {
                Some(m) => (m),
                None => (generic_view(call)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::pages::session::transcript::highlight::PAGE_BUDGET;

    fn draw(name: &str, input: &Value, result: Option<Outcome<'_>>, child: Option<&str>) -> String {
        let call = Call {
            name,
            input,
            result,
            child,
            child_session: None,
        };
        view(&call, &mut Budget::new(PAGE_BUDGET)).into_string()
    }

    fn ok(content: &str) -> Outcome<'_> {
        Outcome {
            content: Some(content),
            is_error: false,
        }
    }

    #[test]
    fn a_read_shows_its_path_and_range_with_the_content_collapsed() {
        let html = draw(
            "Read",
            &json!({"file_path": "/a/b.rs", "offset": 10, "limit": 5}),
            Some(ok("     10→fn x()")),
            None,
        );
        assert!(
            html.contains(r#"<code class="path">/a/b.rs</code>"#),
            "{html}"
        );
        assert!(html.contains("lines 10–14"), "{html}");
        assert!(html.contains(r#"<details class="result">"#), "{html}");
        assert!(!html.contains("<details class=\"result\" open"), "{html}");
        // Gemini: the output inside its functionResponse; offset counts skipped lines.
        let gemini = r#"[{"functionResponse":{"id":"r1","name":"read_file","response":{"output":"hello from gemini"}}}]"#;
        let html = draw(
            "read_file",
            &json!({"file_path": "t.txt", "offset": 0, "limit": 2}),
            Some(ok(gemini)),
            None,
        );
        assert!(html.contains("lines 1–2"), "{html}");
        assert!(html.contains("<pre>hello from gemini</pre>"), "{html}");
    }

    #[test]
    fn a_todo_list_is_a_checklist() {
        let input = json!({"todos": [
            {"content": "Read the logs", "status": "completed", "activeForm": "Reading"},
            {"content": "Fix <it>", "status": "in_progress"},
            {"content": "Test", "status": "pending"}]});
        let html = draw("TodoWrite", &input, Some(ok("ok")), None);
        assert!(html.contains("1 of 3 done"), "{html}");
        assert!(html.contains(r#"<li class="todo done" data-status="completed"><span class="box" aria-hidden="true">☑</span> Read the logs</li>"#), "{html}");
        assert!(html.contains("◐</span> Fix &lt;it&gt;"), "{html}");
        // Codex's plan has the same shape under other names.
        let plan = json!({"explanation": "why", "plan": [{"step": "a", "status": "completed"}]});
        assert!(draw("update_plan", &plan, None, None).contains("☑</span> a"));
    }

    #[test]
    fn a_web_call_shows_its_address_or_query() {
        let html = draw(
            "WebFetch",
            &json!({"url": "https://example.com/x?a=1&b=2", "prompt": "Summarise"}),
            Some(ok("text")),
            None,
        );
        assert!(html.contains(r#"<a class="url" href="https://example.com/x?a=1&amp;b=2" rel="noopener noreferrer nofollow">"#), "{html}");
        let html = draw(
            "WebFetch",
            &json!({"url": "javascript:alert(1)"}),
            None,
            None,
        );
        assert!(!html.contains("href=\"javascript"), "{html}");
        assert!(
            html.contains(r#"<code class="url">javascript:alert(1)</code>"#),
            "{html}"
        );
        let html = draw("WebSearch", &json!({"query": "rust <b>"}), None, None);
        assert!(
            html.contains(r#"<q class="query">rust &lt;b&gt;</q>"#),
            "{html}"
        );
        // Codex: the search action.
        assert!(
            draw(
                "web_search",
                &json!({"type": "search", "query": "q1"}),
                None,
                None
            )
            .contains(">q1</q>")
        );
    }

    #[test]
    fn a_sub_agent_links_to_its_session_with_its_description() {
        let input = json!({"description": "Explore logs", "prompt": "Find **it**", "subagent_type": "Explore"});
        let html = draw(
            "Task",
            &input,
            Some(ok("## Found\n\n**ffmpeg** fails")),
            Some("a17f"),
        );
        assert!(
            html.contains(r#"<a class="child" href="/sessions/agent-a17f">its session</a>"#),
            "{html}"
        );
        assert!(html.contains("Explore logs"), "{html}");
        assert!(html.contains("<h2>Found</h2>"), "{html}");
        assert!(html.contains("<strong>ffmpeg</strong>"), "{html}");
        assert!(!draw("Task", &input, None, None).contains("class=\"child\""));
    }

    #[test]
    fn anything_else_is_its_json_pretty_and_collapsed_and_errors_are_marked() {
        let err = Some(Outcome {
            content: Some("no such pattern"),
            is_error: true,
        });
        let html = draw("Grep", &json!({"pattern": "x<y"}), err, None);
        assert!(
            html.starts_with(r#"<div class="tool failed"><details class="input">"#),
            "{html}"
        );
        assert!(
            html.contains("{\n  &quot;pattern&quot;: &quot;x&lt;y&quot;\n}"),
            "{html}"
        );
        assert!(
            html.contains(r#"<details class="result failed">"#),
            "{html}"
        );
        assert!(html.contains("no such pattern"), "{html}");
        // A known tool with an input of another shape falls back to JSON.
        let html = draw("Bash", &json!({"script": "ls"}), None, None);
        assert!(html.contains(r#"<details class="input">"#), "{html}");
    }
}
