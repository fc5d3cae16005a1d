//! Noise folded: runs of sub-agent progress rows become one line, empty
//! replies are not drawn (Note \[Folded rows\] in `lines`).
//!
//! Claude Code 2.1.x writes a `progress` line to the parent's file each
//! time a sub-agent does something (70 in a row in one real session), and
//! each became a row "sub-agent … reported progress". A run of them (rows
//! hidden anyway may sit between) is one line, "N progress updates from
//! sub-agent X", which opens to their times.

use maud::{Markup, html};
use serde_json::Value;

use super::{Row, str_of};
use crate::pages::session::session_href;

/// A run of progress rows of one sub-agent: its rows' indexes, in order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Run<'a> {
    pub(crate) agent: &'a str,
    pub(crate) rows: Vec<usize>,
}

/// The event of an `event` row.
fn event_of(r: &Row) -> Option<&Value> {
    (r.kind == "event").then(|| r.body.get("event")).flatten()
}

/// A text or thinking row with nothing to read.
pub(crate) fn empty(r: &Row) -> bool {
    event_of(r).is_some_and(|e| {
        matches!(
            e.get("type").and_then(Value::as_str),
            Some("text" | "thinking")
        ) && e
            .get("text")
            .and_then(Value::as_str)
            .is_none_or(|t| t.trim().is_empty())
    })
}

/// The sub-agent a progress row is of.
pub(crate) fn progress_of(r: &Row) -> Option<&str> {
    let e = event_of(r)?;
    (e.get("type").and_then(Value::as_str) == Some("sub_agent")).then(|| str_of(e, "agent_id"))
}

/// The runs of two or more progress rows of one sub-agent; a row with
/// `hidden[i]` set does not end a run.
pub(crate) fn progress_runs<'a>(rows: &'a [Row], hidden: &[bool]) -> Vec<Run<'a>> {
    let mut runs = Vec::new();
    let mut open: Option<Run<'a>> = None;
    for (i, r) in rows.iter().enumerate() {
        match progress_of(r) {
            Some(agent) => match &mut open {
                Some(run) if run.agent == agent => run.rows.push(i),
                _ => {
                    runs.extend(open.take());
                    open = Some(Run {
                        agent,
                        rows: vec![i],
                    });
                }
            },
            None if hidden.get(i).copied().unwrap_or(false) => {}
            None => runs.extend(open.take()),
        }
    }
    runs.extend(open);
    runs.retain(|r| r.rows.len() > 1);
    runs
}

/// The one line a run is drawn as.
pub(crate) fn run_line(run: &Run<'_>, rows: &[Row]) -> Markup {
    html! {
        details.progress {
            summary {
                span.tag { "progress" } " "
                (run.rows.len()) " progress updates from sub-agent " code { (run.agent) }
                " " a.child href=(session_href(&format!("agent-{}", run.agent))) { "its session" }
            }
            ol.times {
                @for i in &run.rows {
                    @let r = &rows[*i];
                    li { a href={ "#row-" (r.id) } title=(r.created_at) { (r.created_at.get(11..19).unwrap_or("row")) } }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ev(id: i64, event: &Value) -> Row {
        Row {
            id,
            session_id: "s".into(),
            kind: "event".into(),
            created_at: String::new(),
            body: json!({"kind": "event", "event": event}),
        }
    }

    fn progress(id: i64, agent: &str) -> Row {
        ev(
            id,
            &json!({"type": "sub_agent", "agent_id": agent, "tool_use_id": "t"}),
        )
    }

    #[test]
    fn runs_of_one_agent_fold_and_a_visible_row_or_another_agent_ends_them() {
        let rows = vec![
            progress(1, "a"),
            progress(2, "a"),
            ev(3, &json!({"type": "usage"})),
            progress(4, "a"),
            progress(5, "b"),
            ev(6, &json!({"type": "text", "text": "hi"})),
            progress(7, "b"),
            progress(8, "b"),
        ];
        let hidden = [false, false, true, false, false, false, false, false];
        let runs = progress_runs(&rows, &hidden);
        assert_eq!(
            runs,
            vec![
                Run {
                    agent: "a",
                    rows: vec![0, 1, 3]
                },
                Run {
                    agent: "b",
                    rows: vec![6, 7]
                }
            ]
        );
        let html = run_line(&runs[0], &rows).into_string();
        assert!(
            html.contains("3 progress updates from sub-agent <code>a</code>"),
            "{html}"
        );
        assert!(html.contains(r#"href="/sessions/agent-a""#), "{html}");
        assert!(html.contains(r##"href="#row-4""##), "{html}");
    }

    #[test]
    fn empty_replies_are_empty() {
        assert!(empty(&ev(1, &json!({"type": "text", "text": " \n"}))));
        assert!(empty(&ev(1, &json!({"type": "thinking", "text": ""}))));
        assert!(!empty(&ev(1, &json!({"type": "text", "text": "x"}))));
        assert!(!empty(&ev(1, &json!({"type": "user_text", "text": ""}))));
    }
}
