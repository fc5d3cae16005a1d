//! The store door: secrets are masked before anything is written (issue 29).
//!
//! Note \[Store door\]: every row a session writes (`write_session`,
//! `start_session`, `append_feed`, `save_native`) goes through the store's
//! [`Masker`] first, on both backends, so a store never holds a credential
//! an agent printed, whichever command wrote it. What was masked is counted
//! (`sessions.secrets_masked`, one `secrets_found` row per secret: rule,
//! keyed fingerprint, place; never the secret). The key of the fingerprints
//! is made once per store (32 random bytes, `store_meta.mask_key`), by the
//! first process that opens it for writing: insert-if-absent, then read
//! back, so processes opening a new store at once agree on one key. A store
//! opened with masking off ([`crate::Store::set_masker`] with `None`,
//! `--no-mask`) writes raw text and leaves `secrets_masked` NULL, the mark
//! `agentshape secrets mask` looks for.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agentshape_core::secrets::{Detector, Found, MaskKey, Masker};
use serde_json::Value;

use crate::{Error, FeedEntry, HookCall, Result, Session, Verdict};

/// The `store_meta` key of the store's mask key (64 hex digits).
pub const MASK_KEY: &str = "mask_key";

/// The `store_meta` key of when the mask key was made (RFC 3339): rows
/// written before may be unmasked.
pub const MASKED_SINCE: &str = "masked_since";

/// Note \[Process masking\]: a command decides once, for every store it
/// opens (a run's store, an `ops` lease's, an import's two), whether rows
/// are masked and with which rules (`--no-mask`, `mask = false`, the
/// user's rule file); each store opened after [`set_process_masking`]
/// takes it. Off by neither: masking is the default.
static MASKING_OFF: AtomicBool = AtomicBool::new(false);
static RULES: Mutex<Option<Arc<Detector>>> = Mutex::new(None);

/// Set, for the stores this process opens from now on, whether rows are
/// masked (`on`) and with which detector (`None`: the built-in rules).
pub fn set_process_masking(on: bool, detector: Option<Arc<Detector>>) {
    MASKING_OFF.store(!on, Ordering::SeqCst);
    if let Ok(mut r) = RULES.lock() {
        *r = detector;
    }
}

/// Whether masking is off for this process (Note \[Process masking\]).
pub fn process_masking_off() -> bool {
    MASKING_OFF.load(Ordering::SeqCst)
}

/// The masker a store opened now uses with `key` (Note \[Process masking\]).
pub fn process_masker(key: &MaskKey) -> Option<Masker> {
    if process_masking_off() {
        return None;
    }
    let rules = RULES.lock().ok().and_then(|r| r.clone());
    Some(match rules {
        Some(d) => Masker::new(d, key.clone()),
        None => Masker::builtin(key.clone()),
    })
}

/// A fresh key from the operating system's randomness.
///
/// # Errors
/// When the operating system has no randomness to give.
pub fn new_key() -> Result<MaskKey> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Io {
        context: "making the store's mask key".to_owned(),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(MaskKey::from_bytes(bytes))
}

/// A stored key, read back.
pub(crate) fn parse_key(text: &str) -> Result<MaskKey> {
    MaskKey::from_hex(text.trim()).map_err(|e| Error::Unexpected {
        what: format!("store_meta.{MASK_KEY}: {e}"),
    })
}

/// One secret masked on its way into the store: where, never what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    /// The rule that found it.
    pub rule: String,
    /// Its keyed fingerprint.
    pub fingerprint: String,
    /// The column or table it was in (`summary`, `output`, `feed`, ...).
    pub place: &'static str,
    /// For `feed`: the index of the entry in the batch written.
    pub feed_index: Option<usize>,
}

fn spots(found: Vec<Found>, place: &'static str, feed_index: Option<usize>) -> Vec<Spot> {
    found
        .into_iter()
        .map(|f| Spot {
            rule: f.rule,
            fingerprint: f.fingerprint,
            place,
            feed_index,
        })
        .collect()
}

fn text(m: &Masker, s: &mut String, place: &'static str, out: &mut Vec<Spot>) {
    let masked = m.mask_str(s);
    if let Cow::Owned(t) = masked.text {
        let found = masked.found;
        *s = t;
        out.extend(spots(found, place, None));
    }
}

fn opt_text(m: &Masker, s: &mut Option<String>, place: &'static str, out: &mut Vec<Spot>) {
    if let Some(s) = s {
        text(m, s, place, out);
    }
}

/// An id through the door (core's Note \[Safe ids\]): replaced whole by
/// its keyed form when it holds a secret, which is counted where it was.
fn id(m: &Masker, s: &mut String, place: &'static str, out: &mut Vec<Spot>) {
    if let Cow::Owned(safe) = m.safe_id(s) {
        out.extend(spots(m.scan(s), place, None));
        *s = safe;
    }
}

fn opt_id(m: &Masker, s: &mut Option<String>, place: &'static str, out: &mut Vec<Spot>) {
    if let Some(s) = s {
        id(m, s, place, out);
    }
}

fn value(m: &Masker, v: &mut Option<Value>, place: &'static str, out: &mut Vec<Spot>) {
    if let Some(v) = v {
        out.extend(spots(m.mask_value(v), place, None));
    }
}

/// A column of JSON text (the escalation) masked as the value it holds,
/// so a secret is found inside its strings as in any other value, and
/// the text is rewritten (compact) only when one was. Text that is not
/// JSON (a store edited by hand) is masked as text.
fn json_text(m: &Masker, t: &mut Option<String>, place: &'static str, out: &mut Vec<Spot>) {
    let Some(t) = t else { return };
    match serde_json::from_str::<Value>(t) {
        Ok(mut v) => {
            let found = spots(m.mask_value(&mut v), place, None);
            if !found.is_empty() {
                out.extend(found);
                *t = v.to_string();
            }
        }
        Err(_) => text(m, t, place, out),
    }
}

/// The verdict masked as the JSON value it is stored as, so it is masked
/// (and its spots counted) as before it was typed. Masking rewrites only
/// text, so the value reads back as a verdict; were it not to, the verdict
/// is dropped rather than stored unmasked.
fn verdict(m: &Masker, v: &mut Option<Verdict>, out: &mut Vec<Spot>) {
    let Some(typed) = v.as_ref() else { return };
    let Ok(mut value) = serde_json::to_value(typed) else {
        *v = None;
        return;
    };
    let found = spots(m.mask_value(&mut value), "verdict", None);
    if !found.is_empty() {
        out.extend(found);
        *v = serde_json::from_value(value).ok();
    }
}

/// `record` with every free text masked: summary, error, output and verdict
/// (as JSON values: the same shape), escalation, events' messages,
/// memories' observations, services' details; its names and paths
/// (project, branch, models, version, profile, files, tools) as text, and
/// its ids (its own, its parent's, the ones it escalated for) through
/// [`Masker::safe_id`] (Note \[Names and ids\]). Borrowed when nothing
/// was found.
///
/// Note \[Names and ids\]: a secret reaches the store (issue 40 §1) not
/// only in what an agent says but in what it is called: a session id, the
/// working folder, the branch, a tool's or a model's name. Every string a
/// row holds goes through the door, whatever its column: names and paths
/// are masked text (so a search or a filter on them sees only the masked
/// form), ids are replaced whole, the same way in every table.
pub fn mask_record<'a>(m: &Masker, record: &'a Session) -> (Cow<'a, Session>, Vec<Spot>) {
    let mut r = record.clone();
    let mut out = Vec::new();
    id(m, &mut r.id, "id", &mut out);
    opt_id(m, &mut r.parent_id, "parent_id", &mut out);
    for e in &mut r.escalated_for {
        id(m, e, "escalated_for", &mut out);
    }
    opt_text(m, &mut r.project, "project", &mut out);
    opt_text(m, &mut r.git_branch, "git_branch", &mut out);
    opt_text(m, &mut r.model, "model", &mut out);
    opt_text(m, &mut r.agent_version, "agent_version", &mut out);
    opt_text(m, &mut r.profile, "profile", &mut out);
    opt_text(m, &mut r.source_path, "source_path", &mut out);
    opt_text(m, &mut r.raw_log_path, "raw_log_path", &mut out);
    for t in &mut r.tools {
        text(m, &mut t.tool, "tools", &mut out);
    }
    for u in &mut r.usage {
        text(m, &mut u.model, "usage", &mut out);
        text(m, &mut u.key, "usage", &mut out);
    }
    opt_text(m, &mut r.summary, "summary", &mut out);
    opt_text(m, &mut r.error, "error", &mut out);
    value(m, &mut r.output, "output", &mut out);
    verdict(m, &mut r.verdict, &mut out);
    json_text(m, &mut r.escalation, "escalation", &mut out);
    for e in &mut r.events {
        text(m, &mut e.message, "events", &mut out);
    }
    for mem in &mut r.memories {
        text(m, &mut mem.value, "memories", &mut out);
    }
    for s in &mut r.services {
        opt_text(m, &mut s.detail, "services", &mut out);
    }
    if out.is_empty() {
        (Cow::Borrowed(record), out)
    } else {
        (Cow::Owned(r), out)
    }
}

/// A hook call with its free text masked: the message, reason, warning
/// and errors (place `hook`: they are the `hook_calls` row's) and the
/// extracted output (place `output`: it goes to the session's column).
/// Borrowed when nothing was found.
pub fn mask_hook<'a>(m: &Masker, call: &'a HookCall) -> (Cow<'a, HookCall>, Vec<Spot>) {
    let mut c = call.clone();
    let mut out = Vec::new();
    id(m, &mut c.session_id, "id", &mut out);
    opt_id(m, &mut c.agent_id, "hook", &mut out);
    opt_text(m, &mut c.agent_type, "hook", &mut out);
    opt_text(m, &mut c.project, "project", &mut out);
    opt_text(m, &mut c.transcript_path, "hook", &mut out);
    opt_text(m, &mut c.profile, "hook", &mut out);
    opt_text(m, &mut c.message, "hook", &mut out);
    opt_text(m, &mut c.reason, "hook", &mut out);
    opt_text(m, &mut c.warning, "hook", &mut out);
    value(m, &mut c.errors, "hook", &mut out);
    value(m, &mut c.output, "output", &mut out);
    if out.is_empty() {
        (Cow::Borrowed(call), out)
    } else {
        (Cow::Owned(c), out)
    }
}

/// Feed entries with their bodies masked (as JSON text: the same shape);
/// borrowed when nothing was found.
pub fn mask_feed<'a>(m: &Masker, entries: &'a [FeedEntry]) -> (Cow<'a, [FeedEntry]>, Vec<Spot>) {
    let mut out = Vec::new();
    let mut owned: Option<Vec<FeedEntry>> = None;
    // Most batches are one session's rows: its id is looked at once.
    let mut last: Option<(&str, Cow<'_, str>)> = None;
    for (i, e) in entries.iter().enumerate() {
        let masked = m.mask_json_text(&e.body);
        if let Cow::Owned(body) = masked.text {
            let v = owned.get_or_insert_with(|| entries.to_vec());
            v[i].body = body;
            out.extend(spots(masked.found, "feed", Some(i)));
        }
        if last.as_ref().is_none_or(|(raw, _)| *raw != e.session_id) {
            last = Some((&e.session_id, m.safe_id(&e.session_id)));
        }
        if let Some((_, Cow::Owned(safe))) = &last {
            let v = owned.get_or_insert_with(|| entries.to_vec());
            v[i].session_id.clone_from(safe);
        }
    }
    match owned {
        Some(v) => (Cow::Owned(v), out),
        None => (Cow::Borrowed(entries), out),
    }
}

/// An import mark through the door: its file's path as masked text, its
/// session id as [`Masker::safe_id`] (Note \[Names and ids\]). The
/// importer looks marks up by the same masked path.
pub fn mask_mark<'a>(m: &Masker, mark: &'a crate::NativeMark) -> Cow<'a, crate::NativeMark> {
    let path = m.mask_str(&mark.path).text;
    let session = m.safe_id(&mark.session_id);
    if matches!((&path, &session), (Cow::Borrowed(_), Cow::Borrowed(_))) {
        return Cow::Borrowed(mark);
    }
    let mut out = mark.clone();
    out.path = path.into_owned();
    out.session_id = session.into_owned();
    Cow::Owned(out)
}

/// The session ids of a feed batch, each once, in first-seen order.
pub(crate) fn sessions_of(entries: &[FeedEntry]) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    for e in entries {
        if !ids.contains(&e.session_id.as_str()) {
            ids.push(&e.session_id);
        }
    }
    ids
}

/// Recounts `secrets_masked` from `secrets_found` for a session written
/// through the door (`?2`: the row was just made, so NULL means "not
/// counted yet", not "written unmasked").
pub(crate) const RECOUNT: &str = "UPDATE sessions SET secrets_masked =
    (SELECT COUNT(*) FROM secrets_found f WHERE f.session_id = sessions.id)
    WHERE id = ?1 AND (secrets_masked IS NOT NULL OR ?2)";

/// A session written with masking off may hold raw secrets.
pub(crate) const UNMASKED: &str = "UPDATE sessions SET secrets_masked = NULL WHERE id = ?1";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewEvent, NewMemory, ServiceCheck};

    const SECRET: &str = "ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7";

    fn masker() -> Masker {
        Masker::builtin(MaskKey::from_bytes([3; 32]))
    }

    #[test]
    fn every_text_of_a_record_is_masked_and_counted_by_place() {
        let mut r = Session::new("s", "2026-01-01T00:00:00Z", "completed");
        let line = format!("GITHUB_TOKEN={SECRET}");
        r.summary = Some(line.clone());
        r.error = Some(line.clone());
        r.output = Some(serde_json::json!({"summary": line, "n": 3, "list": [line]}));
        r.escalation = Some(serde_json::json!({"reason": line}).to_string());
        r.events.push(NewEvent {
            level: "info".into(),
            service: None,
            message: line.clone(),
        });
        r.memories.push(NewMemory {
            key: "db:auth".into(),
            value: line.clone(),
        });
        r.services.push(ServiceCheck {
            name: "db".into(),
            status: "healthy".into(),
            detail: Some(line.clone()),
        });
        let (masked, found) = mask_record(&masker(), &r);
        let all = serde_json::to_string(&*masked).unwrap();
        assert!(!all.contains(SECRET), "{all}");
        assert!(all.contains("[REDACTED:github-pat:"), "{all}");
        let places: Vec<&str> = found.iter().map(|s| s.place).collect();
        for p in [
            "summary",
            "error",
            "output",
            "escalation",
            "events",
            "memories",
            "services",
        ] {
            assert!(places.contains(&p), "{p} in {places:?}");
        }
        // The output keeps its shape.
        let out = masked.output.as_ref().unwrap();
        assert_eq!(out["n"], 3);
        assert_eq!(out["list"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_record_without_secrets_is_borrowed() {
        let mut r = Session::new("s", "2026-01-01T00:00:00Z", "completed");
        r.summary = Some("all healthy".into());
        let (masked, found) = mask_record(&masker(), &r);
        assert!(matches!(masked, Cow::Borrowed(_)));
        assert!(found.is_empty());
    }

    #[test]
    fn feed_bodies_are_masked_with_their_index() {
        let entries = vec![
            FeedEntry {
                seq: None,
                session_id: "s".into(),
                kind: "line".into(),
                body: r#"{"text":"fine"}"#.into(),
                created_at: "t".into(),
            },
            FeedEntry {
                seq: None,
                session_id: "s".into(),
                kind: "line".into(),
                body: serde_json::json!({"text": format!("export GITHUB_TOKEN={SECRET}")})
                    .to_string(),
                created_at: "t".into(),
            },
        ];
        let (masked, found) = mask_feed(&masker(), &entries);
        assert_eq!(masked[0].body, entries[0].body);
        assert!(!masked[1].body.contains(SECRET));
        let v: Value = serde_json::from_str(&masked[1].body).unwrap();
        assert!(
            v["text"]
                .as_str()
                .unwrap()
                .contains("[REDACTED:github-pat:")
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].feed_index, Some(1));
    }

    #[test]
    fn new_keys_differ() {
        assert_ne!(new_key().unwrap().to_hex(), new_key().unwrap().to_hex());
    }
}

/// One `secrets_found` row: where a secret was masked, never the secret.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FoundRow {
    /// The session it was in.
    pub session_id: String,
    /// The rule that found it.
    pub rule: String,
    /// Its keyed fingerprint.
    pub fingerprint: String,
    /// The column or table (`summary`, `output`, `feed`, ...).
    pub place: String,
    /// The feed row, for `feed`.
    pub feed_id: Option<i64>,
    /// When (the row's time).
    pub created_at: String,
}

/// The secrets masked in a store, newest first, at most `limit`.
///
/// # Errors
/// When the store cannot be read (or predates masking: no table).
pub fn found(store: &dyn crate::rows::Copyable, limit: usize) -> Result<Vec<FoundRow>> {
    use crate::rows::Cell;
    let rows = store.copy_rows().read(
        "SELECT session_id, rule, fingerprint, place, feed_id, created_at FROM secrets_found \
         ORDER BY created_at DESC, id DESC LIMIT ?",
        &[Cell::Int(i64::try_from(limit).unwrap_or(i64::MAX))],
    )?;
    let text = |c: &Cell| match c {
        Cell::Text(t) => t.clone(),
        Cell::Int(n) => n.to_string(),
        _ => String::new(),
    };
    Ok(rows
        .iter()
        .map(|r| FoundRow {
            session_id: text(&r[0]),
            rule: text(&r[1]),
            fingerprint: text(&r[2]),
            place: text(&r[3]),
            feed_id: match r[4] {
                Cell::Int(n) => Some(n),
                _ => None,
            },
            created_at: text(&r[5]),
        })
        .collect())
}

/// What [`mask_stored`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct MaskReport {
    /// Rows rewritten.
    pub rows: u64,
    /// Secrets masked in them (one `secrets_found` row each).
    pub secrets: u64,
    /// Secrets masked per place.
    pub by_place: std::collections::BTreeMap<String, u64>,
}

/// Rows read per batch by [`mask_stored`].
pub const MASK_BATCH: usize = 500;

/// The text columns [`mask_stored`] masks: (table, key column, session
/// column, time column, masked columns).
const STORED: &[(&str, &str, &str, &str, &[&str])] = &[
    (
        "sessions",
        "id",
        "id",
        "started_at",
        &["summary", "error", "output", "verdict", "escalation"],
    ),
    ("events", "id", "session_id", "created_at", &["message"]),
    (
        "memories",
        "id",
        "session_id",
        "created_at",
        &["observation"],
    ),
    ("services_checked", "id", "session_id", "''", &["detail"]),
    ("feed", "id", "session_id", "created_at", &["body"]),
    (
        "hook_calls",
        "id",
        "session_id",
        "created_at",
        &["message", "reason", "warning", "errors"],
    ),
];

/// Note \[Masking a stored store\]: `agentshape secrets mask` masks what a
/// store already holds (rows written before masking existed, or with
/// `--no-mask`): every text column of `STORED`, in batches of
/// [`MASK_BATCH`] rows, each batch one transaction. A changed row is
/// rewritten and its secrets recorded in `secrets_found`; a feed row is
/// deleted and inserted again with its id, so the search index (kept by
/// insert and delete triggers on SQLite) holds the masked text. Masking
/// masked text changes nothing, so a second run rewrites nothing.
/// Finally every session's `secrets_masked` is recounted.
///
/// # Errors
/// When the store cannot be read or written; batches done stay done.
pub fn mask_stored(store: &mut dyn crate::rows::Copyable, m: &Masker) -> Result<MaskReport> {
    use crate::rows::Cell;
    let mut report = MaskReport::default();
    for (table, key, session, at, cols) in STORED {
        let mut after = if *key == "id" && *table != "sessions" {
            Cell::Int(i64::MIN)
        } else {
            Cell::Text(String::new())
        };
        loop {
            let sql = format!(
                "SELECT {key}, {session}, {at}, {} FROM {table} WHERE {key} > ? ORDER BY {key} LIMIT ?",
                cols.join(", ")
            );
            let rows = store.copy_rows().read(
                &sql,
                &[
                    after.clone(),
                    Cell::Int(i64::try_from(MASK_BATCH).unwrap_or(i64::MAX)),
                ],
            )?;
            let Some(last) = rows.last() else { break };
            after = last[0].clone();
            let mut stmts: Vec<(String, Vec<Cell>)> = Vec::new();
            for row in &rows {
                let mut changed = Vec::new();
                let mut spots = Vec::new();
                for (i, col) in cols.iter().enumerate() {
                    let Cell::Text(t) = &row[3 + i] else { continue };
                    let masked = m.mask_json_text(t);
                    if let Cow::Owned(new) = masked.text {
                        changed.push((*col, new));
                        spots.extend(masked.found.into_iter().map(|f| (*col, f)));
                    }
                }
                if changed.is_empty() {
                    continue;
                }
                report.rows += 1;
                if *table == "feed" {
                    let body = changed[0].1.clone();
                    let full = store.copy_rows().read(
                        "SELECT session_id, kind, created_at, seq FROM feed WHERE id = ?",
                        &[row[0].clone()],
                    )?;
                    let Some(f) = full.first() else { continue };
                    stmts.push((
                        "DELETE FROM feed WHERE id = ?".to_owned(),
                        vec![row[0].clone()],
                    ));
                    stmts.push((
                        "INSERT INTO feed (id, session_id, kind, body, created_at, seq) VALUES (?, ?, ?, ?, ?, ?)"
                            .to_owned(),
                        vec![
                            row[0].clone(),
                            f[0].clone(),
                            f[1].clone(),
                            Cell::Text(body),
                            f[2].clone(),
                            f[3].clone(),
                        ],
                    ));
                } else {
                    for (col, new) in changed {
                        stmts.push((
                            format!("UPDATE {table} SET {col} = ? WHERE {key} = ?"),
                            vec![Cell::Text(new), row[0].clone()],
                        ));
                    }
                }
                let feed_id = if *table == "feed" {
                    row[0].clone()
                } else {
                    Cell::Null
                };
                let place_of = |col: &str| -> String {
                    match *table {
                        "sessions" => col.to_owned(),
                        "services_checked" => "services".to_owned(),
                        "hook_calls" => "hook".to_owned(),
                        t => t.to_owned(),
                    }
                };
                for (col, f) in spots {
                    let place = place_of(col);
                    *report.by_place.entry(place.clone()).or_default() += 1;
                    report.secrets += 1;
                    stmts.push((
                        "INSERT INTO secrets_found (session_id, rule, fingerprint, place, feed_id, created_at) \
                         VALUES (?, ?, ?, ?, ?, ?)"
                            .to_owned(),
                        vec![
                            row[1].clone(),
                            Cell::Text(f.rule),
                            Cell::Text(f.fingerprint),
                            Cell::Text(place),
                            feed_id.clone(),
                            match &row[2] {
                                Cell::Text(t) => Cell::Text(t.clone()),
                                _ => Cell::Text(String::new()),
                            },
                        ],
                    ));
                }
            }
            if !stmts.is_empty() {
                store.copy_rows_mut().write_all(&stmts)?;
            }
            if rows.len() < MASK_BATCH {
                break;
            }
        }
    }
    mask_names_and_ids(store, m, &mut report)?;
    store.copy_rows_mut().write_all(&[(
        "UPDATE sessions SET secrets_masked = \
         (SELECT COUNT(*) FROM secrets_found f WHERE f.session_id = sessions.id)"
            .to_owned(),
        Vec::new(),
    )])?;
    Ok(report)
}

/// The name and path columns [`mask_stored`] masks as text (Note \[Names
/// and ids\]): (table, column, place).
const NAMES: &[(&str, &str, &str)] = &[
    ("sessions", "project", "project"),
    ("sessions", "git_branch", "git_branch"),
    ("sessions", "model", "model"),
    ("sessions", "agent_version", "agent_version"),
    ("sessions", "profile", "profile"),
    ("sessions", "source_path", "source_path"),
    ("sessions", "raw_log_path", "raw_log_path"),
    ("session_tools", "tool", "tools"),
    ("usage_calls", "model", "usage"),
    ("usage_calls", "key", "usage"),
    ("native_files", "path", "native_files"),
    ("usage_files", "path", "usage_files"),
    ("hook_calls", "agent_type", "hook"),
    ("hook_calls", "profile", "hook"),
];

/// Every column that holds a session id (Note \[Names and ids\]): an id
/// with a secret is renamed in all of them in one transaction (foreign
/// keys are checked at its commit).
const ID_COLUMNS: &[(&str, &str)] = &[
    ("sessions", "id"),
    ("sessions", "parent_id"),
    ("events", "session_id"),
    ("memories", "session_id"),
    ("services_checked", "session_id"),
    ("escalations", "parent_id"),
    ("escalations", "child_id"),
    ("escalation_claims", "parent_id"),
    ("feed", "session_id"),
    ("session_tools", "session_id"),
    ("native_files", "session_id"),
    ("usage_files", "session_id"),
    ("usage_calls", "session_id"),
    ("secrets_found", "session_id"),
    ("hook_calls", "session_id"),
    ("hook_calls", "agent_id"),
    ("session_errors", "session_id"),
    ("alert_firings", "session_id"),
];

/// [`mask_stored`]'s second part: names and paths masked as text, each
/// distinct value once (every row holding it is updated; the trigger-kept
/// totals follow, and a total left at zero under the raw name is
/// dropped), then every session id holding a secret renamed to its
/// [`Masker::safe_id`] everywhere. Ids are not counted again in
/// `secrets_found` (their rows move to the new id).
fn mask_names_and_ids(
    store: &mut dyn crate::rows::Copyable,
    m: &Masker,
    report: &mut MaskReport,
) -> Result<()> {
    use crate::rows::Cell;
    let mut stmts: Vec<(String, Vec<Cell>)> = Vec::new();
    for (table, col, place) in NAMES {
        let rows = store.copy_rows().read(
            &format!("SELECT DISTINCT {col} FROM {table} WHERE {col} IS NOT NULL"),
            &[],
        )?;
        for row in rows {
            let Some(Cell::Text(raw)) = row.first() else {
                continue;
            };
            let masked = m.mask_str(raw);
            if let Cow::Owned(new) = masked.text {
                report.rows += 1;
                report.secrets += masked.found.len() as u64;
                *report.by_place.entry((*place).to_owned()).or_default() +=
                    masked.found.len() as u64;
                stmts.push((
                    format!("UPDATE {table} SET {col} = ? WHERE {col} = ?"),
                    vec![Cell::Text(new), Cell::Text(raw.clone())],
                ));
            }
        }
    }
    let ids = store.copy_rows().read("SELECT id FROM sessions", &[])?;
    for row in ids {
        let Some(Cell::Text(raw)) = row.first() else {
            continue;
        };
        if let Cow::Owned(safe) = m.safe_id(raw) {
            report.rows += 1;
            report.secrets += 1;
            *report.by_place.entry("id".to_owned()).or_default() += 1;
            for (table, col) in ID_COLUMNS {
                stmts.push((
                    format!("UPDATE {table} SET {col} = ? WHERE {col} = ?"),
                    vec![Cell::Text(safe.clone()), Cell::Text(raw.clone())],
                ));
            }
        }
    }
    if stmts.is_empty() {
        return Ok(());
    }
    // SQLite's trigger-kept totals (Postgres has none): a name's total
    // left at zero keeps the raw name as its key.
    let sqlite = store
        .copy_rows()
        .read("SELECT 1 FROM sqlite_master LIMIT 1", &[])
        .is_ok();
    if sqlite {
        for sql in [
            "DELETE FROM tool_totals WHERE calls = 0 AND errors = 0",
            "DELETE FROM session_days_by WHERE sessions = 0",
            "DELETE FROM session_outcome_days WHERE runs = 0",
            "DELETE FROM session_error_days WHERE n = 0",
        ] {
            stmts.push((sql.to_owned(), Vec::new()));
        }
    }
    store.copy_rows_mut().write_all(&stmts)?;
    Ok(())
}

/// Sessions that may hold raw secrets (written before masking existed, or
/// with `--no-mask`): `secrets_masked` is NULL.
///
/// # Errors
/// When the store cannot be read.
pub fn unmasked_sessions(store: &dyn crate::rows::Copyable) -> Result<u64> {
    // A placeholder parent (Note [Parents not imported] in `query`) holds
    // only what its masked child gave it.
    let sql = format!(
        "SELECT COUNT(*) FROM sessions s WHERE s.secrets_masked IS NULL AND NOT {}",
        crate::query::PLACEHOLDER
    );
    let rows = store.copy_rows().read(&sql, &[])?;
    Ok(match rows.first().and_then(|r| r.first()) {
        Some(crate::rows::Cell::Int(n)) => u64::try_from(*n).unwrap_or(0),
        _ => 0,
    })
}
