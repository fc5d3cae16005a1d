//! What an export holds, read from the store: the session, every page of
//! its transcript, and each session below it with its own (Note
//! \[Export\]); and where a sub-agent's transcript goes in its parent's.

use agentshape_store::query::{self, Session, Source};
use serde_json::Value;

use crate::pages::session::transcript::{self, Row};

/// One session and its whole transcript.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    pub(crate) session: Session,
    /// 0 for the exported session, 1 for a child, 2 for a grandchild, ...
    pub(crate) depth: usize,
    pub(crate) rows: Vec<Row>,
    /// The transcript came from the forensic log (no feed rows).
    pub(crate) from_log: bool,
    /// The forensic log was longer than a transcript reads: its end is missing.
    pub(crate) truncated: bool,
    /// Its stored calls per model (the header's mix).
    pub(crate) models: Vec<query::usage::ModelShare>,
}

/// The exported session and every session below it, each after its parent.
#[derive(Debug, Clone)]
pub(crate) struct Bundle {
    pub(crate) root: Part,
    pub(crate) subs: Vec<Part>,
    /// The tree was longer than [`query::MAX_TREE`]: later sessions are not in it.
    pub(crate) tree_cut: bool,
}

/// Read session `id` and its tree; `None` for an unknown id.
///
/// # Errors
/// When the store cannot be read.
pub(crate) fn load(store: &dyn Source, id: &str) -> agentshape_store::Result<Option<Bundle>> {
    let Some(detail) = query::session(store, id)? else {
        return Ok(None);
    };
    let tree_cut = detail.tree.len() >= query::MAX_TREE;
    let root = part(store, detail.session, 0)?;
    let subs = detail
        .tree
        .into_iter()
        .map(|n| part(store, n.session, n.depth))
        .collect::<agentshape_store::Result<Vec<_>>>()?;
    Ok(Some(Bundle {
        root,
        subs,
        tree_cut,
    }))
}

/// `s` with every page of its transcript, one after another. A session
/// whose rows come from its forensic log (Note \[Transcript source\]) has
/// each page decoded from the log's start, so its export costs about
/// pages²/2 pages of decoding: a second or so for a log of a few thousand
/// rows, far more for one of the 64 MiB a transcript reads at most.
fn part(store: &dyn Source, s: Session, depth: usize) -> agentshape_store::Result<Part> {
    let mut rows = Vec::new();
    let mut after = 0;
    loop {
        let t = transcript::load(store, &s, after)?;
        let from_log = t.source == transcript::Source::Log;
        rows.extend(t.rows.into_iter().map(without_paths));
        match t.next {
            // A next page strictly after this one, or the loop would not end.
            Some(next) if next > after => after = next,
            _ => {
                let models = query::usage::session_models(store, &s.id)?;
                return Ok(Part {
                    models,
                    session: s,
                    depth,
                    rows,
                    from_log,
                    truncated: t.truncated,
                });
            }
        }
    }
}

/// Keys of a row's body naming a path of the machine that stored it: the
/// `started` row's forensic log (Note \[Export\]).
const MACHINE_PATHS: &[&str] = &["raw_log_path", "source_path", "transcript_path"];

fn without_paths(mut r: Row) -> Row {
    if let Some(m) = r.body.as_object_mut() {
        for k in MACHINE_PATHS {
            m.remove(*k);
        }
    }
    r
}

impl Bundle {
    /// The sessions whose parent is `id`, in tree order.
    pub(crate) fn children<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Part> + 'a {
        self.subs
            .iter()
            .filter(move |p| p.session.parent_id.as_deref() == Some(id))
    }

    /// The children of `parent` placed in its transcript, as `(index,
    /// child)` in row order (the child goes before row `index`, or at the
    /// end when it is the row count), and those that are not.
    pub(crate) fn placed<'a>(
        &'a self,
        parent: &'a Part,
    ) -> (Vec<(usize, &'a Part)>, Vec<&'a Part>) {
        let mut placed = Vec::new();
        let mut rest = Vec::new();
        for c in self.children(&parent.session.id) {
            match place(&parent.rows, &c.session.id) {
                Some(i) => placed.push((i, c)),
                None => rest.push(c),
            }
        }
        // Stable: children spawned at one place keep the tree's order.
        placed.sort_by_key(|(i, _)| *i);
        (placed, rest)
    }
}

/// The event of a row, when it is one.
fn event(r: &Row) -> Option<&Value> {
    (r.kind == "event").then(|| r.body.get("event")).flatten()
}

fn field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Where in `rows` the child session `child` was spawned: before the
/// result of the `Task` call its `sub_agent` progress rows name, else just
/// after its last progress row, else (an inline 1.0.x sub-agent, whose id
/// is its first line's) before the row of that line; `None` when the
/// parent's rows do not name it (runtime's Note \[Native session ids\]).
pub(crate) fn place(rows: &[Row], child: &str) -> Option<usize> {
    let agent = child.strip_prefix("agent-").unwrap_or(child);
    let names = |e: &Value| {
        field(e, "type") == Some("sub_agent")
            && matches!(field(e, "agent_id"), Some(a) if a == agent || a == child)
    };
    let progress: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| event(r).is_some_and(names))
        .map(|(i, _)| i)
        .collect();
    if let (Some(&first), Some(&last)) = (progress.first(), progress.last()) {
        let call = progress
            .iter()
            .find_map(|&i| event(&rows[i]).and_then(|e| field(e, "tool_use_id")));
        let result = call.and_then(|call| {
            rows.iter().enumerate().skip(first).find_map(|(i, r)| {
                event(r)
                    .filter(|e| {
                        field(e, "type") == Some("tool_result")
                            && field(e, "tool_use_id") == Some(call)
                    })
                    .map(|_| i)
            })
        });
        return Some(result.unwrap_or(last + 1));
    }
    rows.iter()
        .position(|r| field(&r.body, "uuid") == Some(agent))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn row(id: i64, body: Value) -> Row {
        Row {
            id,
            session_id: "p".into(),
            kind: "event".into(),
            created_at: String::new(),
            body,
        }
    }

    fn ev(id: i64, event: &Value) -> Row {
        row(id, json!({"kind": "event", "event": event}))
    }

    #[test]
    fn a_child_goes_before_its_calls_result_else_after_its_progress_else_at_its_first_line() {
        let rows = vec![
            ev(1, &json!({"type": "tool_use", "id": "t1", "name": "Task"})),
            ev(
                2,
                &json!({"type": "sub_agent", "agent_id": "a1", "tool_use_id": "t1"}),
            ),
            ev(
                3,
                &json!({"type": "sub_agent", "agent_id": "a1", "tool_use_id": "t1"}),
            ),
            ev(4, &json!({"type": "text", "text": "meanwhile"})),
            ev(
                5,
                &json!({"type": "tool_result", "tool_use_id": "t1", "content": "done"}),
            ),
            ev(6, &json!({"type": "sub_agent", "agent_id": "a2"})),
            row(
                7,
                json!({"kind": "event", "event": {"type": "text"}, "uuid": "u-9", "sidechain": true}),
            ),
        ];
        assert_eq!(place(&rows, "agent-a1"), Some(4));
        assert_eq!(place(&rows, "agent-a2"), Some(6));
        assert_eq!(place(&rows, "agent-u-9"), Some(6));
        assert_eq!(place(&rows, "agent-zz"), None);
        assert_eq!(place(&[], "agent-a1"), None);
    }
}
