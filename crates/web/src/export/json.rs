//! The export for programs (Note \[Export\]): one JSON document,
//! `{"session": {...}, "events": [...], "sub_agents": [{"session": {...},
//! "events": [...]}]}`, the events being the feed rows' bodies in order
//! (`{"kind": "event", "event": {...}, "line": N, "model": ...}` for an
//! imported session; runtime's Note \[Native feed rows\]), and the
//! sub-agents every session below this one, each after its parent (its
//! `parent_id` says which). A session is the store's session row without
//! the paths of the machine that stored it (`raw_log_path`, `source_path`).

use serde_json::{Map, Value, json};

use super::bundle::{Bundle, Part};

/// Fields of a session row an export never carries (Note \[Export\]).
const DROPPED: &[&str] = &["raw_log_path", "source_path"];

/// The document, one line.
pub(crate) fn render(b: &Bundle) -> String {
    let mut doc = part(&b.root);
    doc.insert(
        "sub_agents".to_owned(),
        Value::Array(b.subs.iter().map(|p| Value::Object(part(p))).collect()),
    );
    let mut text = Value::Object(doc).to_string();
    text.push('\n');
    text
}

fn part(p: &Part) -> Map<String, Value> {
    let mut session = serde_json::to_value(&p.session).unwrap_or_else(|_| json!({}));
    if let Some(m) = session.as_object_mut() {
        for k in DROPPED {
            m.remove(*k);
        }
    }
    let mut out = Map::new();
    out.insert("session".to_owned(), session);
    out.insert(
        "events".to_owned(),
        Value::Array(p.rows.iter().map(|r| r.body.clone()).collect()),
    );
    out
}
