//! Sub-agents under their parent in the Sessions list (Note \[Sub-agents in
//! a list\] in the store's `query::nested`): a page's top-level sessions,
//! each with the sessions below it, drawn as one `tbody` per family.
//!
//! Note \[Disclosure without script\]: `<details>` cannot hold table rows,
//! so a family's lower rows are in the page and the stylesheet hides them
//! while the checkbox of its first row ("3 sub-agents") is not checked
//! (`tbody.family:not(:has(input.expand:checked)) tr.sub`). Opening needs
//! no script, nothing flashes open before a script runs, and the rule
//! stays inside one family because each is its own `tbody`.

use std::collections::{HashMap, HashSet};

use agentshape_store::query::{MAX_TREE_DEPTH, Session};

/// A top-level session and the sessions below it, depth first (each after
/// its parent, oldest first among siblings), with their depth (1: a child).
#[derive(Debug)]
pub(super) struct Family<'a> {
    pub(super) top: &'a Session,
    pub(super) below: Vec<(usize, &'a Session)>,
}

/// `rows` (a page's top-level sessions, in order) with `subs` (the
/// sessions below them, any order) under them. A sub-session whose parent
/// is neither is dropped (the store reads only those below `rows`); a
/// cycle cannot loop, and no family is deeper than the store reads.
pub(super) fn families<'a>(rows: &'a [Session], subs: &'a [Session]) -> Vec<Family<'a>> {
    let mut children: HashMap<&str, Vec<&Session>> = HashMap::new();
    for s in subs {
        if let Some(p) = s.parent_id.as_deref() {
            children.entry(p).or_default().push(s);
        }
    }
    for list in children.values_mut() {
        list.sort_by(|a, b| {
            (a.started_at.as_bytes(), a.id.as_bytes())
                .cmp(&(b.started_at.as_bytes(), b.id.as_bytes()))
        });
    }
    let mut seen: HashSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    rows.iter()
        .map(|top| {
            let mut below = Vec::new();
            let mut stack: Vec<(usize, &Session)> = children
                .get(top.id.as_str())
                .map(|c| c.iter().rev().map(|s| (1, *s)).collect())
                .unwrap_or_default();
            while let Some((depth, s)) = stack.pop() {
                if !seen.insert(s.id.as_str()) {
                    continue;
                }
                below.push((depth, s));
                if depth < MAX_TREE_DEPTH {
                    if let Some(c) = children.get(s.id.as_str()) {
                        stack.extend(c.iter().rev().map(|c| (depth + 1, *c)));
                    }
                }
            }
            Family { top, below }
        })
        .collect()
}

/// Whether a session below another is an escalation (a run retried a tier
/// up) rather than a sub-agent (started by an agent, at the first tier).
fn escalated(s: &Session) -> bool {
    s.tier > 1
}

/// What the disclosure of a family says: `1 sub-agent`, `3 sub-agents`,
/// `2 escalations`, or `4 sessions below` when both.
pub(super) fn below_label(below: &[(usize, &Session)]) -> String {
    let n = below.len();
    let imported = below.iter().filter(|(_, s)| !escalated(s)).count();
    let what = if imported == n {
        if n == 1 { "sub-agent" } else { "sub-agents" }
    } else if imported == 0 {
        if n == 1 { "escalation" } else { "escalations" }
    } else if n == 1 {
        "session below"
    } else {
        "sessions below"
    };
    format!("{n} {what}")
}

/// How a row whose parent is not on the page names it: a sub-agent or an
/// escalated run.
pub(super) fn parent_label(s: &Session) -> &'static str {
    if escalated(s) {
        "escalated from"
    } else {
        "sub-agent of"
    }
}
