//! The store's writes, each written once over a [`Tx`] (Note \[One
//! write\] in `tx`): what a session, a native import, a hook call, a claim
//! and the feed put in the database, and in what order.

use crate::error::Result;
use crate::rows::Cell;
use crate::secrets::Spot;
use crate::session::columns::{JsonTexts, SESSION_SQL, session_args};
use crate::tx::{Arg, Batch, MemoryPut, Tx, Ty};
use crate::{
    Claim, ClaimRequest, FeedEntry, HookCall, HookSaved, LEVELS, NativeMark, NativeReport, Session,
    Status, WriteReport, hooks, parse_memory_key, time,
};

/// A `secrets_found` row to write: (session, time, spot, feed row id).
pub(crate) type SpotRow<'a> = (&'a str, &'a str, Spot, Option<i64>);

/// How a session row is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Put {
    /// A new row; nothing when the id is taken.
    Insert,
    /// Every column from the record.
    Replace,
    /// As `Replace`, but the verdict, output, extraction method and profile
    /// the record lacks are kept (a native import; Note \[Hook chains\]).
    Fill,
}

/// Write the session row; whether a row was written (false: an insert
/// found the id taken).
pub(crate) fn put_session(
    tx: &mut dyn Tx,
    r: &Session,
    how: Put,
    heartbeat_at: Option<&str>,
) -> Result<bool> {
    let json = JsonTexts::of(r);
    let sql = match how {
        Put::Insert => &SESSION_SQL.insert,
        Put::Replace => &SESSION_SQL.replace,
        Put::Fill => &SESSION_SQL.fill,
    };
    Ok(tx.exec(sql, &session_args(r, &json, heartbeat_at))? == 1)
}

/// The stored status of a session (its row locked for the transaction on
/// Postgres).
pub(crate) fn stored_status(tx: &mut dyn Tx, id: &str) -> Result<Option<String>> {
    let sql = match tx.dialect() {
        crate::tx::Dialect::Sqlite => "SELECT status FROM sessions WHERE id = ?1",
        crate::tx::Dialect::Postgres => "SELECT status FROM sessions WHERE id = ?1 FOR UPDATE",
    };
    Ok(match tx.row(sql, &[Arg::text(id)])?.as_deref() {
        Some([Cell::Text(s), ..]) => Some(s.clone()),
        _ => None,
    })
}

const FEED: Batch = Batch {
    table: "feed",
    cols: &[
        ("session_id", Ty::Text),
        ("kind", Ty::Text),
        ("body", Ty::Text),
        ("created_at", Ty::Text),
        ("seq", Ty::Int),
    ],
    tail: "",
};

/// The ids of a feed write's rows, one per entry in entry order: `None`
/// for an entry that was stored already (Note \[Feed writes land once\]).
/// Empty when the ids were not asked for.
pub(crate) type FeedIds = Vec<Option<i64>>;

/// Append feed rows in order; with `ids`, their row ids in entry order.
/// The caller holds the feed lock (Note \[Feed order on Postgres\]).
///
/// Note \[Feed writes land once\]: a run's feed queue numbers its entries
/// ([`FeedEntry::seq`], from 0 for each session, in the order written) and
/// sends a batch again after any failed write. A failure can come after
/// the COMMIT landed (the server went away before its answer was read;
/// the store's outage wait retries the transaction itself too), so the
/// same entries can arrive twice. The partial unique index
/// `feed_session_seq` refuses a numbered entry stored already, which
/// rolls the write back; the store then writes the batch again through
/// [`feed_resend`], which reads the highest number stored for each session
/// of the batch (under the feed lock) and skips the entries at or below
/// it, with their secrets' rows, which the first write made. A batch
/// written for the first time, nearly every one, costs no query: only the
/// index's upkeep. Unnumbered entries (`started`, `ended`, an import's
/// lines, the hook's rows, each written once by one transaction) are
/// never skipped.
pub(crate) fn feed_insert(tx: &mut dyn Tx, entries: &[FeedEntry], ids: bool) -> Result<FeedIds> {
    let kept = vec![true; entries.len()];
    insert_kept(tx, entries, &kept, ids)
}

/// [`feed_insert`] for a batch sent again: the numbered entries already
/// stored are skipped (Note \[Feed writes land once\]).
pub(crate) fn feed_resend(tx: &mut dyn Tx, entries: &[FeedEntry], ids: bool) -> Result<FeedIds> {
    let mut stored: Vec<(&str, Option<i64>)> = Vec::new();
    for e in entries.iter().filter(|e| e.seq.is_some()) {
        if stored.iter().any(|(s, _)| *s == e.session_id) {
            continue;
        }
        let row = tx.row(
            "SELECT MAX(seq) FROM feed WHERE session_id = ?1 AND seq IS NOT NULL",
            &[Arg::text(&e.session_id)],
        )?;
        let max = match row.as_deref() {
            Some([Cell::Int(n), ..]) => Some(*n),
            _ => None,
        };
        stored.push((&e.session_id, max));
    }
    let kept: Vec<bool> = entries
        .iter()
        .map(|e| {
            let max = stored
                .iter()
                .find(|(s, _)| *s == e.session_id)
                .and_then(|(_, max)| *max);
            match (e.seq, max) {
                (Some(seq), Some(max)) => seq > max,
                _ => true,
            }
        })
        .collect();
    insert_kept(tx, entries, &kept, ids)
}

/// Insert the entries `kept` marks; with `ids`, one per entry.
fn insert_kept(
    tx: &mut dyn Tx,
    entries: &[FeedEntry],
    kept: &[bool],
    ids: bool,
) -> Result<FeedIds> {
    let rows: Vec<Vec<Arg<'_>>> = entries
        .iter()
        .zip(kept)
        .filter(|(_, k)| **k)
        .map(|(e, _)| {
            vec![
                Arg::text(&e.session_id),
                Arg::text(&e.kind),
                Arg::text(&e.body),
                Arg::text(&e.created_at),
                Arg::opt_int(e.seq),
            ]
        })
        .collect();
    let got = if rows.is_empty() {
        Vec::new()
    } else {
        tx.insert_rows(&FEED, &rows, ids)?.1
    };
    if !ids {
        return Ok(Vec::new());
    }
    let mut got = got.into_iter();
    Ok(kept
        .iter()
        .map(|k| k.then(|| got.next()).flatten())
        .collect())
}

/// The `secrets_found` rows of a feed batch, `ids` as [`feed_insert`]
/// gave them: none for an entry stored already, whose first write
/// recorded its secrets.
pub(crate) fn feed_spots<'a>(
    entries: &'a [FeedEntry],
    spots: &[Spot],
    ids: &[Option<i64>],
) -> Vec<SpotRow<'a>> {
    spots
        .iter()
        .filter_map(|s| {
            let i = s.feed_index?;
            let e = entries.get(i)?;
            let id = match ids.get(i) {
                // Skipped: its first write recorded this secret.
                Some(None) => return None,
                Some(&id) => id,
                None => None,
            };
            Some((e.session_id.as_str(), e.created_at.as_str(), s.clone(), id))
        })
        .collect()
}

const FOUND: Batch = Batch {
    table: "secrets_found",
    cols: &[
        ("session_id", Ty::Text),
        ("rule", Ty::Text),
        ("fingerprint", Ty::Text),
        ("place", Ty::Text),
        ("feed_id", Ty::Int),
        ("created_at", Ty::Text),
    ],
    tail: "",
};

/// Write what the door masked: one `secrets_found` row per secret and
/// each session's count; with masking off, the sessions are marked as
/// holding raw text (Note \[Store door\] in `secrets`).
pub(crate) fn record_spots(
    tx: &mut dyn Tx,
    masking: bool,
    sessions: &[&str],
    rows: &[SpotRow<'_>],
    made: bool,
) -> Result<()> {
    if !masking {
        for id in sessions {
            tx.exec(crate::secrets::UNMASKED, &[Arg::text(id)])?;
        }
        return Ok(());
    }
    let found: Vec<Vec<Arg<'_>>> = rows
        .iter()
        .map(|(session, at, spot, feed_id)| {
            vec![
                Arg::text(session),
                Arg::text(&spot.rule),
                Arg::text(&spot.fingerprint),
                Arg::text(spot.place),
                Arg::opt_int(*feed_id),
                Arg::text(at),
            ]
        })
        .collect();
    if !found.is_empty() {
        tx.insert_rows(&FOUND, &found, false)?;
    }
    for id in sessions {
        tx.exec(crate::secrets::RECOUNT, &[Arg::text(id), Arg::Bool(made)])?;
    }
    Ok(())
}

const TOOLS: Batch = Batch {
    table: "session_tools",
    cols: &[
        ("session_id", Ty::Text),
        ("tool", Ty::Text),
        ("calls", Ty::Int),
        ("errors", Ty::Int),
    ],
    tail: "",
};

/// Replace a session's `session_tools` rows with the record's; a tool
/// named twice in a record is summed.
pub(crate) fn put_tools(tx: &mut dyn Tx, r: &Session) -> Result<()> {
    tx.exec(
        "DELETE FROM session_tools WHERE session_id = ?1",
        &[Arg::text(&r.id)],
    )?;
    let mut summed: Vec<(&str, u64, u64)> = Vec::new();
    for t in &r.tools {
        match summed.iter_mut().find(|s| s.0 == t.tool) {
            Some(s) => {
                s.1 = s.1.saturating_add(t.calls);
                s.2 = s.2.saturating_add(t.errors);
            }
            None => summed.push((&t.tool, t.calls, t.errors)),
        }
    }
    let rows: Vec<Vec<Arg<'_>>> = summed
        .iter()
        .map(|(tool, calls, errors)| {
            vec![
                Arg::text(&r.id),
                Arg::text(tool),
                Arg::count(*calls),
                Arg::count(*errors),
            ]
        })
        .collect();
    if !rows.is_empty() {
        tx.insert_rows(&TOOLS, &rows, false)?;
    }
    Ok(())
}

const USAGE: Batch = Batch {
    table: "usage_calls",
    cols: &[
        ("key", Ty::Text),
        ("session_id", Ty::Text),
        ("at_ms", Ty::Int),
        ("model", Ty::Text),
        ("sidechain", Ty::Bool),
        ("input_tokens", Ty::Int),
        ("output_tokens", Ty::Int),
        ("reasoning_tokens", Ty::Int),
        ("cache_read_tokens", Ty::Int),
        ("cache_write_5m_tokens", Ty::Int),
        ("cache_write_1h_tokens", Ty::Int),
    ],
    tail: " ON CONFLICT (key) DO UPDATE SET at_ms = excluded.at_ms, model = excluded.model,
        sidechain = excluded.sidechain, input_tokens = excluded.input_tokens,
        output_tokens = excluded.output_tokens, reasoning_tokens = excluded.reasoning_tokens,
        cache_read_tokens = excluded.cache_read_tokens,
        cache_write_5m_tokens = excluded.cache_write_5m_tokens,
        cache_write_1h_tokens = excluded.cache_write_1h_tokens
     WHERE usage_calls.session_id = excluded.session_id",
};

/// A session's model calls, each upserted by its key; a key another
/// session stored first stays that session's (counted once: a resumed
/// session repeats its parent's messages in its own file).
fn put_usage(tx: &mut dyn Tx, r: &Session) -> Result<()> {
    if r.usage.is_empty() {
        return Ok(());
    }
    let rows: Vec<Vec<Arg<'_>>> = r
        .usage
        .iter()
        .map(|u| {
            let t = &u.tokens;
            vec![
                Arg::text(&u.key),
                Arg::text(&r.id),
                Arg::Int(u.at_ms),
                Arg::text(&u.model),
                Arg::Bool(u.sidechain),
                Arg::count(t.input),
                Arg::count(t.output),
                Arg::count(t.reasoning),
                Arg::count(t.cache_read),
                Arg::count(t.cache_write_5m),
                Arg::count(t.cache_write_1h),
            ]
        })
        .collect();
    tx.insert_rows(&USAGE, &rows, false)?;
    Ok(())
}

const EVENTS: Batch = Batch {
    table: "events",
    cols: &[
        ("session_id", Ty::Text),
        ("level", Ty::Text),
        ("service", Ty::Text),
        ("message", Ty::Text),
        ("created_at", Ty::Text),
    ],
    tail: "",
};

const SERVICES: Batch = Batch {
    table: "services_checked",
    cols: &[
        ("session_id", Ty::Text),
        ("name", Ty::Text),
        ("status", Ty::Text),
        ("detail", Ty::Text),
    ],
    tail: "",
};

const ESCALATIONS: Batch = Batch {
    table: "escalations",
    cols: &[
        ("parent_id", Ty::Text),
        ("child_id", Ty::Text),
        ("service", Ty::Text),
        ("tier", Ty::Int),
        ("created_at", Ty::Text),
    ],
    tail: "",
};

/// The rows of a finished session: tools, events, memories, services,
/// escalations.
fn children(tx: &mut dyn Tx, r: &Session, report: &mut WriteReport) -> Result<()> {
    put_tools(tx, r)?;
    let at = r.ended_at.as_deref().unwrap_or(&r.started_at);
    let mut events = Vec::with_capacity(r.events.len());
    for e in &r.events {
        if !LEVELS.contains(&e.level.as_str()) {
            report.events_rejected += 1;
            report.warnings.push(format!(
                "event rejected: level `{}` is not one of info, warning, critical",
                e.level
            ));
            continue;
        }
        events.push(vec![
            Arg::text(&r.id),
            Arg::text(&e.level),
            Arg::opt_text(e.service.as_deref()),
            Arg::text(&e.message),
            Arg::text(at),
        ]);
    }
    if !events.is_empty() {
        let (n, _) = tx.insert_rows(&EVENTS, &events, false)?;
        report.events += usize::try_from(n).unwrap_or(usize::MAX);
    }
    for m in &r.memories {
        let Some(key) = parse_memory_key(&m.key) else {
            report.memories_rejected += 1;
            report.warnings.push(format!(
                "memory rejected: key `{}` is not `service:category` or `category`",
                m.key
            ));
            continue;
        };
        let new = tx.put_memory(&MemoryPut {
            service: key.service.as_deref(),
            category: &key.category,
            value: &m.value,
            at,
            session_id: &r.id,
            tier: r.tier,
        })?;
        if new {
            report.memories_new += 1;
        } else {
            report.memories_reinforced += 1;
        }
    }
    if !r.services.is_empty() {
        let rows: Vec<Vec<Arg<'_>>> = r
            .services
            .iter()
            .map(|s| {
                vec![
                    Arg::text(&r.id),
                    Arg::text(&s.name),
                    Arg::text(&s.status),
                    Arg::opt_text(s.detail.as_deref()),
                ]
            })
            .collect();
        let (n, _) = tx.insert_rows(&SERVICES, &rows, false)?;
        report.services += usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(parent) = &r.parent_id
        && !r.escalated_for.is_empty()
    {
        let rows: Vec<Vec<Arg<'_>>> = r
            .escalated_for
            .iter()
            .map(|service| {
                vec![
                    Arg::text(parent),
                    Arg::text(&r.id),
                    Arg::text(service),
                    Arg::Int(r.tier),
                    Arg::text(&r.started_at),
                ]
            })
            .collect();
        tx.insert_rows(&ESCALATIONS, &rows, false)?;
    }
    Ok(())
}

/// The `ended` feed row of a finished session: `valid` and the error
/// count let a live page show the verdict without a reload; null when
/// there is no verdict.
fn ended_entry(r: &Session) -> FeedEntry {
    let verdict = r.verdict.as_ref();
    let body = serde_json::json!({
        "status": r.status,
        "extraction_method": r.extraction_method,
        "valid": verdict.map(|v| v.valid),
        "errors": verdict.map(|v| v.errors.len()),
    });
    FeedEntry {
        seq: None,
        session_id: r.id.clone(),
        kind: "ended".to_owned(),
        body: body.to_string(),
        created_at: r.ended_at.clone().unwrap_or_else(time::now),
    }
}

/// [`Store::write_session`](crate::Store::write_session)'s transaction.
/// Insert first: of two writers racing on a new id, one inserts and the
/// other waits on the row (Postgres), then finds it finished.
pub(crate) fn write_session(
    tx: &mut dyn Tx,
    r: &Session,
    door: Option<(bool, &[SpotRow<'_>])>,
    feed: bool,
) -> Result<WriteReport> {
    let mut report = WriteReport::default();
    if !put_session(tx, r, Put::Insert, None)? {
        match stored_status(tx, &r.id)?.as_deref() {
            Some("running") => {
                put_session(tx, r, Put::Replace, None)?;
            }
            _ => return Ok(report),
        }
    }
    children(tx, r, &mut report)?;
    if let Some((masking, rows)) = door {
        record_spots(tx, masking, &[&r.id], rows, true)?;
    }
    if feed {
        tx.feed_lock()?;
        feed_insert(tx, &[ended_entry(r)], false)?;
    }
    report.inserted = true;
    Ok(report)
}

/// [`Store::start_session`](crate::Store::start_session)'s transaction:
/// `Some(status)` when a finished session has the id.
pub(crate) fn start_session(
    tx: &mut dyn Tx,
    r: &Session,
    door: Option<(bool, &[SpotRow<'_>])>,
) -> Result<Option<String>> {
    let mut running = r.clone();
    running.status = Status::Running;
    if !put_session(tx, &running, Put::Insert, Some(&r.started_at))? {
        return Ok(match stored_status(tx, &r.id)? {
            Some(s) if s == "running" => None,
            other => Some(other.unwrap_or_default()),
        });
    }
    if let Some((masking, rows)) = door {
        record_spots(tx, masking, &[&r.id], rows, true)?;
    }
    let body = serde_json::json!({
        "tier": r.tier,
        "parent_id": r.parent_id,
        "agent": r.agent,
        "profile": r.profile,
        "raw_log_path": r.raw_log_path,
    });
    tx.feed_lock()?;
    feed_insert(
        tx,
        &[FeedEntry {
            seq: None,
            session_id: r.id.clone(),
            kind: "started".to_owned(),
            body: body.to_string(),
            created_at: r.started_at.clone(),
        }],
        false,
    )?;
    Ok(None)
}

/// Which tables a native save may write, by the store's version, and
/// whether it is a usage-only pass ([`Store::save_usage`](crate::Store::save_usage)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tables {
    /// `usage_calls` exists.
    pub usage_calls: bool,
    /// `usage_files` exists.
    pub usage_files: bool,
    /// A usage-only pass: no feed, no offset check, its mark in `usage_files`.
    pub usage_only: bool,
}

/// The advisory lock class of an import mark (Note \[Two importers\]);
/// the key is the path. ASCII "agnf".
const MARK_LOCK_CLASS: i32 = 0x6167_6e66;

/// An inode or device number as a signed integer, bit for bit (so it
/// reads back exactly).
pub(crate) fn bits_i64(n: u64) -> i64 {
    i64::from_ne_bytes(n.to_ne_bytes())
}

/// The inverse of [`bits_i64`].
pub(crate) fn bits_u64(n: i64) -> u64 {
    u64::from_ne_bytes(n.to_ne_bytes())
}

/// The columns of a file mark (`native_files`, `usage_files`).
pub(crate) const MARK_COLS: &str =
    "path, session_id, agent, dev, inode, size, byte_offset, mtime_ms, lines, updated_at";

/// Upsert a mark into `native_files` or `usage_files`.
fn upsert_mark(tx: &mut dyn Tx, table: &str, mark: &NativeMark) -> Result<()> {
    let sql = format!(
        "INSERT INTO {table} ({MARK_COLS})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (path) DO UPDATE SET session_id = excluded.session_id,
            agent = excluded.agent, dev = excluded.dev, inode = excluded.inode,
            size = excluded.size, byte_offset = excluded.byte_offset,
            mtime_ms = excluded.mtime_ms, lines = excluded.lines,
            updated_at = excluded.updated_at"
    );
    tx.exec(
        &sql,
        &[
            Arg::text(&mark.path),
            Arg::text(&mark.session_id),
            Arg::text(&mark.agent),
            Arg::Int(bits_i64(mark.dev)),
            Arg::Int(bits_i64(mark.inode)),
            Arg::Int(bits_i64(mark.size)),
            Arg::Int(bits_i64(mark.offset)),
            Arg::Int(mark.mtime_ms),
            Arg::Int(bits_i64(mark.lines)),
            Arg::text(&mark.updated_at),
        ],
    )?;
    Ok(())
}

/// [`Store::save_native`](crate::Store::save_native)'s transaction (Note
/// \[Import marks\]), and [`Store::save_usage`](crate::Store::save_usage)'s;
/// the feed lock is taken last, so it is held for the shortest time.
pub(crate) fn save_native(
    tx: &mut dyn Tx,
    r: &Session,
    feed: &[FeedEntry],
    want_ids: bool,
    mark: &NativeMark,
    tables: Tables,
) -> Result<(NativeReport, FeedIds)> {
    let mut report = NativeReport::default();
    // One importer of a path at a time (Note [Two importers]); a mark not
    // stored yet has no row to lock, hence the advisory lock.
    tx.lock(MARK_LOCK_CLASS, &mark.path)?;
    if !mark.reset && !tables.usage_only {
        let stored = match tx
            .row(
                "SELECT byte_offset FROM native_files WHERE path = ?1",
                &[Arg::text(&mark.path)],
            )?
            .as_deref()
        {
            Some([Cell::Int(n), ..]) => Some(bits_u64(*n)),
            _ => None,
        };
        if stored != mark.expect_offset {
            report.conflict = true;
            return Ok((report, Vec::new()));
        }
    }
    if let Some(parent) = &r.parent_id {
        let mut holder = Session::new(parent, &r.started_at, "running");
        holder.agent.clone_from(&r.agent);
        holder.project.clone_from(&r.project);
        report.placeholder_parent = put_session(tx, &holder, Put::Insert, None)?;
    }
    let id = [Arg::text(&r.id)];
    if tables.usage_only {
        // A usage pass reads its file whole: its calls replace the last.
        tx.exec("DELETE FROM usage_calls WHERE session_id = ?1", &id)?;
    } else if mark.reset {
        let n = tx.exec("DELETE FROM feed WHERE session_id = ?1", &id)?;
        report.feed_dropped = usize::try_from(n).unwrap_or(usize::MAX);
        if tables.usage_calls {
            tx.exec("DELETE FROM usage_calls WHERE session_id = ?1", &id)?;
        }
    }
    report.inserted = put_session(tx, r, Put::Insert, None)?;
    if !report.inserted {
        put_session(tx, r, Put::Fill, None)?;
    }
    put_tools(tx, r)?;
    if tables.usage_calls {
        put_usage(tx, r)?;
    }
    if tables.usage_files && !tables.usage_only {
        // Imported now: the usage pass's mark has served its turn.
        tx.exec(
            "DELETE FROM usage_files WHERE path = ?1",
            &[Arg::text(&mark.path)],
        )?;
    }
    let table = if tables.usage_only {
        "usage_files"
    } else {
        "native_files"
    };
    upsert_mark(tx, table, mark)?;
    let mut ids = Vec::new();
    if !feed.is_empty() {
        tx.feed_lock()?;
        ids = feed_insert(tx, feed, want_ids)?;
    }
    report.feed = feed.len();
    Ok((report, ids))
}

/// [`Store::save_hook`](crate::Store::save_hook)'s transaction: the hook
/// row's id, whether the session row was made, and the ids of `feed`'s rows.
pub(crate) fn save_hook(
    tx: &mut dyn Tx,
    call: &HookCall,
    feed: &[FeedEntry],
    want_ids: bool,
) -> Result<(HookSaved, FeedIds)> {
    let inserted = put_session(tx, &hooks::session_record(call), Put::Insert, None)?;
    if let Some(verdict) = hooks::verdict(call) {
        let verdict = verdict.to_string();
        let output = hooks::json_text(call.output.as_ref());
        tx.exec(
            "UPDATE sessions SET verdict = ?2, extraction_method = ?3, output = ?4,
                profile = COALESCE(?5, profile)
             WHERE id = ?1",
            &[
                Arg::text(&call.session_id),
                Arg::text(&verdict),
                Arg::opt_text(call.method.as_deref()),
                Arg::opt_text(output.as_deref()),
                Arg::opt_text(call.profile.as_deref()),
            ],
        )?;
    }
    let errors = hooks::json_text(call.errors.as_ref());
    let id = tx.insert_id(
        "INSERT INTO hook_calls (session_id, agent_id, agent_type, event, verdict, method,
            errors, blocks, stop_hook_active, profile, reason, message, warning, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        &[
            Arg::text(&call.session_id),
            Arg::opt_text(call.agent_id.as_deref()),
            Arg::opt_text(call.agent_type.as_deref()),
            Arg::text(&call.event),
            Arg::text(&call.verdict),
            Arg::opt_text(call.method.as_deref()),
            Arg::opt_text(errors.as_deref()),
            Arg::Int(i64::from(call.blocks)),
            Arg::Bool(call.stop_hook_active),
            Arg::opt_text(call.profile.as_deref()),
            Arg::opt_text(call.reason.as_deref()),
            Arg::opt_text(call.message.as_deref()),
            Arg::opt_text(call.warning.as_deref()),
            Arg::text(&call.created_at),
        ],
    )?;
    tx.feed_lock()?;
    let ids = feed_insert(tx, feed, want_ids)?;
    if hooks::has_feed_row(call) {
        feed_insert(tx, &[hooks::feed_entry(id, call)], false)?;
    }
    Ok((
        HookSaved {
            id,
            session_inserted: inserted,
        },
        ids,
    ))
}

/// The advisory lock class of escalation claims (Note \[Claims on
/// Postgres\] in `postgres`); the key is the service. ASCII "agsc".
const CLAIM_LOCK_CLASS: i32 = 0x6167_7363;

/// Note \[Escalation claims\] in the crate root: what counts against the
/// cooldown of `?1` since `?2`, at `?3`.
pub(crate) const CLAIM_COUNT: &str = "SELECT
    (SELECT COUNT(*) FROM escalations WHERE service = ?1 AND created_at >= ?2)
  + (SELECT COUNT(*) FROM escalation_claims c
     WHERE c.service = ?1 AND c.created_at >= ?2
       AND NOT EXISTS (SELECT 1 FROM escalations e
                       WHERE e.child_id = c.child_id AND e.service = c.service)
       AND (c.expires_at > ?3 OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = c.child_id)))";

/// The services of a claim, sorted and without duplicates: one row each,
/// and (on Postgres) locks taken in one order.
fn claim_services(request: &ClaimRequest) -> Vec<&str> {
    let mut services: Vec<&str> = request.services.iter().map(String::as_str).collect();
    services.sort_unstable();
    services.dedup();
    services
}

/// [`Store::claim_escalation`](crate::Store::claim_escalation)'s
/// transaction: each service's lock first (in sorted order, so two claims
/// cannot deadlock), then the counts, then the claim rows.
pub(crate) fn claim(tx: &mut dyn Tx, r: &ClaimRequest) -> Result<Claim> {
    if r.tier > r.max_tier {
        return Ok(Claim::MaxTier);
    }
    let services = claim_services(r);
    for service in &services {
        tx.lock(CLAIM_LOCK_CLASS, service)?;
    }
    for service in &services {
        let args = [Arg::text(service), Arg::text(&r.since), Arg::text(&r.now)];
        let n = match tx.row(CLAIM_COUNT, &args)?.as_deref() {
            Some([Cell::Int(n), ..]) => u64::try_from(*n).unwrap_or(0),
            _ => 0,
        };
        if n >= r.max_per_window {
            return Ok(Claim::Cooldown {
                service: (*service).to_owned(),
                count: n,
            });
        }
    }
    for service in &services {
        tx.exec(
            "INSERT INTO escalation_claims
                (parent_id, child_id, service, tier, holder, created_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &[
                Arg::text(&r.parent_id),
                Arg::text(&r.child_id),
                Arg::text(service),
                Arg::Int(i64::from(r.tier)),
                Arg::text(&r.holder),
                Arg::text(&r.now),
                Arg::text(&r.expires_at),
            ],
        )?;
    }
    Ok(Claim::Granted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip() {
        for n in [0, 1, u64::MAX, 1 << 63] {
            assert_eq!(bits_u64(bits_i64(n)), n);
        }
    }
}
