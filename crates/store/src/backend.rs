//! What a backend gives the store, and the [`Store`] methods written once
//! on top of it (Note \[One write\] in `tx`): the masking door, the
//! transaction bodies of `writes`, and the reads as the dashboard's
//! queries read (Note \[Queries on both backends\] in `query`).
//!
//! A backend keeps only what differs: how it connects, pools and waits
//! ([`Backend::write`]: SQLite's busy retry, Postgres's outage retry),
//! its schema versions ([`Since`]), and the feed page.

use std::borrow::Cow;

use agentshape_core::secrets::{MaskKey, Masker};

use crate::error::{Error, Result};
use crate::query::{self, Source};
use crate::rows::{Cell, Copyable, Rows};
use crate::secrets::{self, Spot};
use crate::tx::{Arg, Tx};
use crate::writes::{self, SpotRow, Tables};
use crate::{
    Claim, ClaimRequest, FeedEntry, FeedRow, HookCall, HookChain, HookSaved, LOST_AFTER_MS,
    LeaseState, MemoryLine, NativeMark, NativeReport, Overview, Session, SessionLine, Store,
    WriteReport, time,
};

/// The schema version from which a backend has each table a write may
/// touch (a read-only store may be older than this build).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Since {
    /// The heartbeat column and the feed.
    pub feed: i64,
    /// The masking door's tables.
    pub door: i64,
    /// `native_files`.
    pub marks: i64,
    /// `hook_calls`.
    pub hooks: i64,
    /// `usage_calls`.
    pub usage_calls: i64,
    /// `usage_files`.
    pub usage_files: i64,
}

/// The masking door of a store: its key, and the masker every written
/// row goes through; `None`: masking off (Note \[Store door\] in `secrets`).
#[derive(Debug, Clone)]
pub struct Door {
    /// The store's mask key.
    pub key: Option<MaskKey>,
    /// What rows go through before they are written.
    pub masker: Option<Masker>,
}

impl Door {
    /// The door of a store with this key: the process's masker with it.
    pub(crate) fn with_key(key: Option<MaskKey>) -> Self {
        Door {
            masker: key.as_ref().and_then(secrets::process_masker),
            key,
        }
    }
}

/// What a backend's schema has, by its version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Has {
    /// The heartbeat column and the feed.
    pub feed: bool,
    /// The masking door's tables (`secrets_found`, `secrets_masked`).
    pub door: bool,
    /// Native import marks (`native_files`).
    pub marks: bool,
    /// `hook_calls`.
    pub hooks: bool,
    /// `usage_calls`.
    pub usage_calls: bool,
    /// `usage_files`.
    pub usage_files: bool,
}

/// How long a write may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Retried while busy.
    Patient,
    /// As `Patient`, and through an outage of the server (Note \[Store
    /// outage\] in `postgres`): the write is idempotent.
    Outage,
    /// A short wait and no retry: a heartbeat, a live-feed flush.
    Now,
    /// A hook call: the patience the store was opened with.
    Hook,
}

/// What a write is doing, for its error.
pub type What<'a> = &'a (dyn Fn() -> String + Sync);

/// A write transaction's body (Note \[One write\] in `tx`).
pub type Body<'a, T> = &'a (dyn Fn(&mut dyn Tx) -> Result<T> + Sync);

/// A backend (SQLite, Postgres) of the one [`Store`] implementation.
pub trait Backend: Source + Send {
    /// From which schema version it has each table.
    const SINCE: Since;
    /// Its schema version.
    fn schema(&self) -> i64;
    /// Its masking door.
    fn door(&self) -> &Door;
    /// Its masking door, to set the masker.
    fn door_mut(&mut self) -> &mut Door;
    /// Run one write transaction, waiting as `wait` says.
    ///
    /// # Errors
    /// When the database cannot be written; nothing is written then.
    fn write<T: Send>(&mut self, wait: Wait, what: What<'_>, f: Body<'_, T>) -> Result<T>;
    /// [`Store::feed_page`], as this backend reads it best.
    ///
    /// # Errors
    /// When the database cannot be read.
    fn feed_rows(&self, after_id: i64, limit: usize, max_bytes: usize) -> Result<Vec<FeedRow>>;
    /// [`Store::location`].
    fn where_is(&self) -> Option<String>;
    /// [`Store::transport`].
    fn reached_how(&self) -> Option<String> {
        None
    }
    /// Called before a native import's first write.
    fn importing(&mut self) {}
}

/// What `b`'s schema has.
fn has<B: Backend>(b: &B) -> Has {
    let (v, s) = (b.schema(), B::SINCE);
    Has {
        feed: v >= s.feed,
        door: v >= s.door,
        marks: v >= s.marks,
        hooks: v >= s.hooks,
        usage_calls: v >= s.usage_calls,
        usage_files: v >= s.usage_files,
    }
}

/// The masker of `b`, if masking is on.
fn masker_of<B: Backend>(b: &B) -> Option<&Masker> {
    b.door().masker.as_ref()
}

/// Text through the masker, when masking is on.
fn masked<'a, T: Clone>(
    m: Option<&Masker>,
    value: &'a T,
    mask: impl FnOnce(&Masker, &'a T) -> (Cow<'a, T>, Vec<Spot>),
) -> (Cow<'a, T>, Vec<Spot>) {
    match m {
        Some(m) => mask(m, value),
        None => (Cow::Borrowed(value), Vec::new()),
    }
}

/// Feed entries through the door (Note \[Store door\] in `secrets`).
fn mask_feed<'a>(
    m: Option<&Masker>,
    entries: &'a [FeedEntry],
) -> (Cow<'a, [FeedEntry]>, Vec<Spot>) {
    match m {
        Some(m) => secrets::mask_feed(m, entries),
        None => (Cow::Borrowed(entries), Vec::new()),
    }
}

/// The sessions a save touches: the feed's, and `id`.
fn sessions_with<'a>(feed: &'a [FeedEntry], id: &'a str) -> Vec<&'a str> {
    let mut sessions = secrets::sessions_of(feed);
    if !sessions.contains(&id) {
        sessions.push(id);
    }
    sessions
}

/// [`Store::save_native`] and [`Store::save_usage`]: the record, feed and
/// mark through the door, then one transaction.
fn save_marked<B: Backend>(
    b: &mut B,
    record: &Session,
    feed: &[FeedEntry],
    mark: &NativeMark,
    usage_only: bool,
) -> Result<NativeReport> {
    let mark = match masker_of(b) {
        Some(m) => secrets::mask_mark(m, mark),
        None => Cow::Borrowed(mark),
    };
    let mark = &*mark;
    b.importing();
    let has = has(b);
    let masking = masker_of(b).is_some();
    let (record, rec_spots) = masked(masker_of(b), record, secrets::mask_record);
    let record = &*record;
    // Named after masking: an error message is printed too.
    let what = || format!("importing session `{}` from `{}`", record.id, mark.path);
    let (feed, spots) = mask_feed(masker_of(b), feed);
    let at = record.ended_at.as_deref().unwrap_or(&record.started_at);
    let sessions = sessions_with(&feed, &record.id);
    let tables = Tables {
        usage_calls: has.usage_calls,
        usage_files: has.usage_files,
        usage_only,
    };
    // Safe to retry: the transaction either happened whole or not at all.
    b.write(Wait::Outage, &what, &|tx| {
        let (report, ids) =
            writes::save_native(tx, record, &feed, !spots.is_empty(), mark, tables)?;
        if has.door && !report.conflict {
            let mut rows: Vec<SpotRow<'_>> = rec_spots
                .iter()
                .map(|s| (record.id.as_str(), at, s.clone(), None))
                .collect();
            rows.extend(writes::feed_spots(&feed, &spots, &ids));
            writes::record_spots(tx, masking, &sessions, &rows, report.inserted)?;
        }
        Ok(report)
    })
}

/// [`Store::append_feed`] and [`Store::append_feed_now`].
fn append<B: Backend>(b: &mut B, entries: &[FeedEntry], wait: Wait) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let what = || format!("appending {} feed entries", entries.len());
    let (door, masking) = (has(b).door, masker_of(b).is_some());
    let (entries, spots) = mask_feed(masker_of(b), entries);
    let sessions = secrets::sessions_of(&entries);
    let body = |resent: bool, tx: &mut dyn Tx| {
        tx.feed_lock()?;
        let with_ids = !spots.is_empty();
        let ids = if resent {
            writes::feed_resend(tx, &entries, with_ids)?
        } else {
            writes::feed_insert(tx, &entries, with_ids)?
        };
        if door {
            let rows = writes::feed_spots(&entries, &spots, &ids);
            writes::record_spots(tx, masking, &sessions, &rows, false)?;
        }
        Ok(())
    };
    // Written as new first: only a batch sent again meets the index
    // (Note [Feed writes land once] in `writes`).
    match b.write(wait, &what, &|tx| body(false, tx)) {
        Err(e) if e.is_feed_resend() => b.write(wait, &what, &|tx| body(true, tx)),
        done => done,
    }
}

/// The first cell of the first row as a count.
fn count_of(rows: &[Vec<Cell>]) -> u64 {
    match rows.first().and_then(|r| r.first()) {
        Some(Cell::Int(n)) => u64::try_from(*n).unwrap_or(0),
        _ => 0,
    }
}

/// The marks of `table` (`native_files` or `usage_files`).
fn marks_in(
    store: &dyn Source,
    table: &str,
    filter: &str,
    args: &[Cell],
) -> Result<Vec<NativeMark>> {
    let what = || format!("reading the file marks ({table})");
    let sql = format!("SELECT {} FROM {table} {filter}", writes::MARK_COLS);
    store
        .cells(&sql, args, &what)?
        .iter()
        .map(|r| {
            let int = |i| query::int(query::at(r, i));
            let bits = |i| int(i).map(writes::bits_u64);
            Ok(NativeMark {
                path: query::text(query::at(r, 0))?,
                session_id: query::text(query::at(r, 1))?,
                agent: query::text(query::at(r, 2))?,
                dev: bits(3)?,
                inode: bits(4)?,
                size: bits(5)?,
                offset: bits(6)?,
                mtime_ms: int(7)?,
                lines: bits(8)?,
                updated_at: query::text(query::at(r, 9))?,
                reset: false,
                expect_offset: None,
            })
        })
        .collect()
}

/// Note \[Hook chains\] in the crate root: the blocked calls of (`?1`,
/// `?2`) in the turn's chain (since the last call without
/// `stop_hook_active`, after the last one let through with a verdict), and
/// how many of them came with `stop_hook_active` (index `hook_calls_session`).
pub(crate) fn hook_chain_sql(pg: bool) -> String {
    let (same_agent, active) = if pg {
        ("agent_id IS NOT DISTINCT FROM ?2::text", "stop_hook_active")
    } else {
        ("agent_id IS ?2", "stop_hook_active <> 0")
    };
    format!(
        "SELECT COUNT(*) FILTER (WHERE verdict = 'blocked'), COUNT(*) FILTER (WHERE {active})
         FROM hook_calls
         WHERE session_id = ?1 AND {same_agent} AND event IN ('Stop', 'SubagentStop')
           AND id > COALESCE((SELECT MAX(id) FROM hook_calls
                              WHERE session_id = ?1 AND {same_agent}
                                AND event IN ('Stop', 'SubagentStop')
                                AND verdict NOT IN ('blocked', 'gave_up')), 0)
           AND id >= COALESCE((SELECT MAX(id) FROM hook_calls
                               WHERE session_id = ?1 AND {same_agent}
                                 AND event IN ('Stop', 'SubagentStop')
                                 AND NOT ({active})), 0)"
    )
}

/// [`Store::overview`].
fn overview(store: &dyn Source, has: Has) -> Result<Overview> {
    let what = || "reading the store overview".to_owned();
    let pg = matches!(store.backend(), query::Backend::Postgres { .. });
    let collate = if pg { " COLLATE \"C\"" } else { "" };
    let count = |sql: &str| -> Result<u64> { Ok(count_of(&store.cells(sql, &[], &what)?)) };
    let grouped = |sql: &str| -> Result<Vec<(String, u64)>> {
        store
            .cells(sql, &[], &what)?
            .iter()
            .map(|r| {
                let n = query::int(query::at(r, 1))?;
                Ok((query::text(query::at(r, 0))?, u64::try_from(n).unwrap_or(0)))
            })
            .collect()
    };
    let mut o = Overview {
        sessions_by_status: grouped(&format!(
            "SELECT status, COUNT(*) FROM sessions GROUP BY status ORDER BY status{collate}"
        ))?,
        events_by_level: grouped(&format!(
            "SELECT level, COUNT(*) FROM events GROUP BY level ORDER BY level{collate}"
        ))?,
        active_memories: count("SELECT COUNT(*) FROM memories WHERE active = 1")?,
        inactive_memories: count("SELECT COUNT(*) FROM memories WHERE active = 0")?,
        services_checked: count("SELECT COUNT(*) FROM services_checked")?,
        escalations: count("SELECT COUNT(*) FROM escalations")?,
        ..Overview::default()
    };
    // A read-only store of version 1 has no heartbeat column.
    let heartbeat = if has.feed { "s.heartbeat_at" } else { "NULL" };
    let cutoff = time::format_ms(time::now_ms().saturating_sub(LOST_AFTER_MS));
    let sql = format!(
        "SELECT s.id, s.parent_id, s.tier, s.status, s.extraction_method, s.error_category,
                (SELECT COUNT(*) FROM events e WHERE e.session_id = s.id), s.summary,
                {heartbeat}, s.status = 'running' AND COALESCE({heartbeat}, s.started_at) < ?1,
                s.raw_log_path
         FROM sessions s ORDER BY s.started_at{collate}, s.id{collate}"
    );
    for r in store.cells(&sql, &[Cell::Text(cutoff)], &what)? {
        let cell = |i| query::at(&r, i);
        o.sessions.push(SessionLine {
            id: query::text(cell(0))?,
            parent_id: query::opt_text(cell(1))?,
            tier: u32::try_from(query::int(cell(2))?).unwrap_or(0),
            status: query::text(cell(3))?,
            extraction_method: query::opt_text(cell(4))?,
            error_category: query::opt_text(cell(5))?,
            events: u64::try_from(query::int(cell(6))?).unwrap_or(0),
            summary: query::opt_text(cell(7))?,
            heartbeat_at: query::opt_text(cell(8))?,
            lost: query::flag(cell(9))?,
            raw_log_path: query::opt_text(cell(10))?,
        });
    }
    o.lost = o.sessions.iter().filter(|s| s.lost).count() as u64;
    let sql = "SELECT service, category, observation, confidence FROM memories
               WHERE active = 1 ORDER BY confidence DESC, id";
    for r in store.cells(sql, &[], &what)? {
        o.memories.push(MemoryLine {
            service: query::opt_text(query::at(&r, 0))?,
            category: query::text(query::at(&r, 1))?,
            observation: query::text(query::at(&r, 2))?,
            confidence: query::real(query::at(&r, 3))?,
        });
    }
    Ok(o)
}

impl<B: Backend> Store for B {
    fn write_session(&mut self, record: &Session) -> Result<WriteReport> {
        let what = || format!("writing session `{}`", record.id);
        let has = has(self);
        let masking = masker_of(self).is_some();
        let (record, spots) = masked(masker_of(self), record, secrets::mask_record);
        let record = &*record;
        let at = record.ended_at.as_deref().unwrap_or(&record.started_at);
        let rows: Vec<SpotRow<'_>> = spots
            .into_iter()
            .map(|s| (record.id.as_str(), at, s, None))
            .collect();
        let door = has.door.then_some((masking, rows.as_slice()));
        // Idempotent (a finished session is never rewritten): safe to retry
        // through an outage (Note [Store outage] in `postgres`).
        self.write(Wait::Outage, &what, &|tx| {
            writes::write_session(tx, record, door, has.feed)
        })
    }

    fn start_session(&mut self, record: &Session) -> Result<()> {
        let what = || format!("recording the start of session `{}`", record.id);
        let has = has(self);
        let masking = masker_of(self).is_some();
        let (record, spots) = masked(masker_of(self), record, secrets::mask_record);
        let record = &*record;
        let rows: Vec<SpotRow<'_>> = spots
            .into_iter()
            .map(|s| (record.id.as_str(), record.started_at.as_str(), s, None))
            .collect();
        let door = has.door.then_some((masking, rows.as_slice()));
        let taken = self.write(Wait::Patient, &what, &|tx| {
            writes::start_session(tx, record, door)
        })?;
        match taken {
            Some(status) => Err(Error::IdTaken {
                id: record.id.clone(),
                status,
            }),
            None => Ok(()),
        }
    }

    fn heartbeat(&mut self, id: &str, at: &str) -> Result<()> {
        let what = || format!("heartbeat of session `{id}`");
        // Short patience: a missed beat is harmless, a blocked runner is not.
        self.write(Wait::Now, &what, &|tx| {
            tx.exec(
                "UPDATE sessions SET heartbeat_at = ?2 WHERE id = ?1 AND status = 'running'",
                &[Arg::text(id), Arg::text(at)],
            )
            .map(|_| ())
        })
    }

    fn append_feed(&mut self, entries: &[FeedEntry]) -> Result<()> {
        // The run's last lines, before its session (Note [Store outage]).
        append(self, entries, Wait::Outage)
    }

    fn append_feed_now(&mut self, entries: &[FeedEntry]) -> Result<()> {
        // Short patience, no retry: see the trait's doc.
        append(self, entries, Wait::Now)
    }

    fn feed_after(&self, after_id: i64, limit: usize) -> Result<Vec<FeedRow>> {
        self.feed_rows(after_id, limit, usize::MAX)
    }

    fn feed_page(&self, after_id: i64, limit: usize, max_bytes: usize) -> Result<Vec<FeedRow>> {
        self.feed_rows(after_id, limit, max_bytes)
    }

    fn has_session(&self, id: &str) -> Result<bool> {
        let rows = self.cells(
            "SELECT COUNT(*) FROM sessions WHERE id = ?1",
            &[Cell::Text(id.to_owned())],
            &|| format!("looking up session `{id}`"),
        )?;
        Ok(count_of(&rows) > 0)
    }

    fn escalations_since(&self, service: &str, since: &str) -> Result<u64> {
        let rows = self.cells(
            "SELECT COUNT(*) FROM escalations WHERE service = ?1 AND created_at >= ?2",
            &[Cell::Text(service.to_owned()), Cell::Text(since.to_owned())],
            &|| format!("counting escalations for `{service}`"),
        )?;
        Ok(count_of(&rows))
    }

    fn claim_escalation(&mut self, request: &ClaimRequest) -> Result<Claim> {
        let what = || format!("claiming an escalation from `{}`", request.parent_id);
        self.write(Wait::Patient, &what, &|tx| writes::claim(tx, request))
    }

    fn acquire_lease(&mut self, name: &str, holder: &str, ttl_ms: u64) -> Result<LeaseState> {
        let what = || format!("taking the lease `{name}`");
        self.write(Wait::Patient, &what, &|tx| {
            tx.take_lease(name, holder, ttl_ms)
        })
    }

    fn release_lease(&mut self, name: &str, holder: &str) -> Result<bool> {
        let what = || format!("releasing the lease `{name}`");
        self.write(Wait::Patient, &what, &|tx| {
            let n = tx.exec(
                "DELETE FROM leases WHERE name = ?1 AND holder = ?2",
                &[Arg::text(name), Arg::text(holder)],
            )?;
            Ok(n > 0)
        })
    }

    fn prune_memories(&mut self, before: &str) -> Result<u64> {
        self.write(Wait::Patient, &|| "pruning memories".to_owned(), &|tx| {
            tx.exec(
                "UPDATE memories SET active = 0 WHERE active = 1 AND updated_at < ?1",
                &[Arg::text(before)],
            )
        })
    }

    fn overview(&self) -> Result<Overview> {
        overview(self, has(self))
    }

    fn native_marks(&self) -> Result<Vec<NativeMark>> {
        if !has(self).marks {
            return Ok(Vec::new());
        }
        marks_in(self, "native_files", "ORDER BY path", &[])
    }

    fn native_mark(&self, path: &str) -> Result<Option<NativeMark>> {
        if !has(self).marks {
            return Ok(None);
        }
        let args = [Cell::Text(path.to_owned())];
        Ok(marks_in(self, "native_files", "WHERE path = ?1", &args)?.pop())
    }

    fn save_native(
        &mut self,
        record: &Session,
        feed: &[FeedEntry],
        mark: &NativeMark,
    ) -> Result<NativeReport> {
        save_marked(self, record, feed, mark, false)
    }

    fn save_usage(&mut self, record: &Session, mark: &NativeMark) -> Result<NativeReport> {
        save_marked(self, record, &[], mark, true)
    }

    fn usage_marks(&self) -> Result<Vec<NativeMark>> {
        if !has(self).usage_files {
            return Ok(Vec::new());
        }
        marks_in(self, "usage_files", "ORDER BY path", &[])
    }

    fn hook_chain(&self, session_id: &str, agent_id: Option<&str>) -> Result<HookChain> {
        // The ids as the door wrote them (Note [Names and ids] in `secrets`).
        let (session_id, agent_id) = match masker_of(self) {
            Some(m) => (m.safe_id(session_id), agent_id.map(|a| m.safe_id(a))),
            None => (Cow::Borrowed(session_id), agent_id.map(Cow::Borrowed)),
        };
        if !has(self).hooks {
            return Ok(HookChain::default());
        }
        let pg = matches!(self.backend(), query::Backend::Postgres { .. });
        let args = [
            Cell::Text(session_id.clone().into_owned()),
            agent_id.map_or(Cell::Null, |a| Cell::Text(a.into_owned())),
        ];
        let what = || format!("reading the hook chain of session `{session_id}`");
        let rows = self.cells(&hook_chain_sql(pg), &args, &what)?;
        let n = |i| match rows.first().map(|r| query::at(r, i)) {
            Some(Cell::Int(n)) => u32::try_from(*n).unwrap_or(u32::MAX),
            _ => 0,
        };
        Ok(HookChain {
            blocks: n(0),
            active: n(1),
        })
    }

    fn save_hook(&mut self, call: &HookCall, feed: &[FeedEntry]) -> Result<HookSaved> {
        let what = || {
            format!(
                "recording a {} hook call of session `{}`",
                call.event, call.session_id
            )
        };
        let (door, masking) = (has(self).door, masker_of(self).is_some());
        let (call, call_spots) = masked(masker_of(self), call, secrets::mask_hook);
        let call = &*call;
        let (feed, spots) = mask_feed(masker_of(self), feed);
        let sessions = sessions_with(&feed, &call.session_id);
        self.write(Wait::Hook, &what, &|tx| {
            let (saved, ids) = writes::save_hook(tx, call, &feed, !spots.is_empty())?;
            if door {
                let mut rows: Vec<SpotRow<'_>> = call_spots
                    .iter()
                    .map(|s| {
                        let at = call.created_at.as_str();
                        (call.session_id.as_str(), at, s.clone(), None)
                    })
                    .collect();
                rows.extend(writes::feed_spots(&feed, &spots, &ids));
                writes::record_spots(tx, masking, &sessions, &rows, saved.session_inserted)?;
            }
            Ok(saved)
        })
    }

    fn mask_key(&self) -> Option<MaskKey> {
        self.door().key.clone()
    }

    fn set_masker(&mut self, masker: Option<Masker>) {
        self.door_mut().masker = masker;
    }

    fn masker(&self) -> Option<&Masker> {
        masker_of(self)
    }

    fn location(&self) -> Option<String> {
        self.where_is()
    }

    fn transport(&self) -> Option<String> {
        self.reached_how()
    }
}

impl<B: Backend> Rows for B {
    fn read(&self, sql: &str, params: &[Cell]) -> Result<Vec<Vec<Cell>>> {
        // The dashboard queries' reader: one conversion of values to cells.
        self.cells(sql, params, &|| "reading rows to copy".to_owned())
    }

    fn write_all(&mut self, stmts: &[(String, Vec<Cell>)]) -> Result<Vec<u64>> {
        self.write(Wait::Patient, &|| "copying rows in".to_owned(), &|tx| {
            tx.defer_constraints()?;
            // Feed rows are among them (Note [Feed order on Postgres]).
            tx.feed_lock()?;
            let mut out = Vec::with_capacity(stmts.len());
            for (sql, params) in stmts {
                let args: Vec<Arg<'_>> = params.iter().map(Arg::from).collect();
                out.push(tx.exec(sql, &args)?);
            }
            Ok(out)
        })
    }
}

impl<B: Backend> Copyable for B {
    fn copy_rows(&self) -> &dyn Rows {
        self
    }
    fn copy_rows_mut(&mut self) -> &mut dyn Rows {
        self
    }
}
