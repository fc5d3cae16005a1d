//! The SQLite backend: one file (`agentshape.db` by default), WAL, migrations
//! embedded and applied on open.
//!
//! Migrations: Note \[Migrations\] in `migrate`. Here the version is
//! `PRAGMA user_version`, and the check and the migrations happen inside one
//! `BEGIN IMMEDIATE` transaction that re-reads it under the write lock.
//!
//! Note \[Many writers\]: every connection has a busy timeout, and every
//! write runs in an immediate transaction (a deferred one that upgrades to a
//! write fails at once with `SQLITE_BUSY`, without waiting). A write still busy
//! after the timeout is retried a bounded number of times with jittered
//! backoff, then reported as [`ErrorKind::Busy`](crate::ErrorKind::Busy).
//! Both bounds come from the environment so tests (and impatient scripts)
//! can shorten them: `AGENTSHAPE_STORE_BUSY_MS` (busy timeout per attempt,
//! default 5000) and `AGENTSHAPE_STORE_RETRIES` (extra attempts, default 5).

use std::path::Path;
use std::time::Duration;

use rusqlite::{
    Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params,
};

use agentshape_core::secrets::{MaskKey, Masker};

use crate::error::{Context, Error, Result};
use crate::migrate::{self, Plan};
use crate::secrets::{self, Spot};
use crate::{
    Claim, ClaimRequest, FeedEntry, FeedRow, HookCall, HookChain, HookSaved, LEVELS, LOST_AFTER_MS,
    LeaseState, MemoryLine, NEW_MEMORY_CONFIDENCE, NativeMark, NativeReport, Overview,
    REINFORCE_STEP, SessionLine, SessionRecord, Store, WriteReport, hooks, parse_memory_key, time,
};

/// The schema version this build writes.
fn known_version() -> i64 {
    migrate::latest(migrate::SQLITE)
}

/// The busy timeout and retry budget (Note \[Many writers\]).
#[derive(Debug, Clone, Copy)]
struct Patience {
    busy: Duration,
    retries: u32,
}

impl Patience {
    fn from_env() -> Self {
        let num = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Patience {
            busy: Duration::from_millis(num("AGENTSHAPE_STORE_BUSY_MS").unwrap_or(5_000)),
            retries: num("AGENTSHAPE_STORE_RETRIES")
                .map_or(5, |n| u32::try_from(n).unwrap_or(u32::MAX)),
        }
    }
}

/// A pause before retry `attempt` (1-based): 20 ms doubling, capped, plus
/// jitter so racing processes do not retry in lockstep.
fn backoff(attempt: u32) -> Duration {
    let base = 20u64 << attempt.min(6);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    let jitter = (nanos ^ u64::from(std::process::id()).wrapping_mul(2_654_435_761)) % (base + 1);
    Duration::from_millis(base + jitter)
}

/// Run `f` again while it fails busy, at most `retries` more times.
fn retrying<T>(patience: Patience, mut f: impl FnMut() -> Result<T>) -> Result<T> {
    let mut attempt = 0;
    loop {
        match f() {
            Err(e) if e.is_busy() && attempt < patience.retries => {
                attempt += 1;
                std::thread::sleep(backoff(attempt));
            }
            other => return other,
        }
    }
}

/// Create the database file 0600 when it does not exist yet: sessions hold
/// prompts and answers, and SQLite gives `-wal`/`-shm` the database's mode.
fn create_private(path: &Path) -> Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    match opts.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(Error::Io {
            context: format!("creating store `{}`", path.display()),
            source,
        }),
    }
}

/// A SQLite store.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    /// The schema version of the file (lower than the known one only for a
    /// read-only store of an older build, which cannot be migrated).
    pub(crate) version: i64,
    patience: Patience,
    /// Note \[Import checkpoints\]: raised on the first `save_native`.
    bulk: bool,
    /// The store's mask key (Note \[Store door\] in `secrets`).
    key: Option<MaskKey>,
    /// What rows go through before they are written; `None`: masking off.
    masker: Option<Masker>,
}

impl SqliteStore {
    /// Open (creating it 0600 if needed) the database at `path`, switch it to
    /// WAL and apply pending migrations (Note \[Migrations\]).
    ///
    /// # Errors
    /// When the file cannot be created, opened or migrated, or is from a newer build.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_patient(path, Patience::from_env())
    }

    /// [`SqliteStore::open`] with its own patience instead of the
    /// environment's (Note \[Many writers\]): each attempt waits at most
    /// `busy` for a lock, and a write still busy is tried `retries` more
    /// times. `agentshape hook` opens with a short one and no retry, so a
    /// locked store costs it a bounded wait, never the answer.
    ///
    /// # Errors
    /// As [`SqliteStore::open`]; a store locked longer than the patience is
    /// [`ErrorKind::Busy`](crate::ErrorKind::Busy).
    pub fn open_with_patience(path: &Path, busy: Duration, retries: u32) -> Result<Self> {
        Self::open_patient(path, Patience { busy, retries })
    }

    fn open_patient(path: &Path, patience: Patience) -> Result<Self> {
        let name = path.display().to_string();
        create_private(path)?;
        let conn = Connection::open(path).context(|| format!("opening `{name}`"))?;
        conn.busy_timeout(patience.busy)
            .context(|| format!("configuring `{name}`"))?;
        // WAL lets a dashboard read while a run writes; NORMAL sync is safe under WAL.
        retrying(patience, || {
            conn.pragma_update(None, "journal_mode", "WAL")
                .context(|| format!("enabling WAL on `{name}`"))
        })?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .context(|| format!("configuring `{name}`"))?;
        Self::init(conn, &name, patience)
    }

    /// Open an existing database for reading only: nothing is created or
    /// migrated (`sessions`, `memories list`).
    ///
    /// # Errors
    /// [`Error::Missing`] when the file does not exist; a file that is not a
    /// database; a database from a newer build.
    ///
    /// Note \[Not a store\]: a 0-byte file is a valid, empty SQLite
    /// database, and any SQLite file opens; reading one that agentshape
    /// never initialised used to fail on its first query ("no such table",
    /// 74). A read-only command says what it is instead: an empty database
    /// is [`Error::Empty`] (the store is missing: 66, as for an empty
    /// Postgres database), one with tables but no `sessions` table is
    /// [`Error::NotAStore`] (a data error: 65). `run` and `ingest` open
    /// for writing and initialise an empty file as they would create one.
    pub fn open_read_only(path: &Path) -> Result<Self> {
        let name = path.display().to_string();
        if !path.is_file() {
            return Err(Error::Missing { path: name });
        }
        let patience = Patience::from_env();
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .context(|| format!("opening `{name}`"))?;
        conn.busy_timeout(patience.busy)
            .context(|| format!("configuring `{name}`"))?;
        // Reading the schema is what tells random bytes from a database,
        // and an empty or foreign database from a store (Note \[Not a
        // store\]).
        let (version, tables, ours) = retrying(patience, || {
            conn.query_row(
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE name = 'sessions') \
                 FROM sqlite_master WHERE type = 'table'",
                [],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
            )
            .and_then(|(tables, ours)| {
                let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
                Ok((v, tables, ours))
            })
            .context(|| format!("reading the schema of `{name}`"))
        })?;
        if tables == 0 && version == 0 {
            return Err(Error::Empty { path: name });
        }
        if ours == 0 && version <= known_version() {
            return Err(Error::NotAStore { path: name });
        }
        if version > known_version() {
            return Err(Error::TooNew {
                path: name,
                found: version,
                known: known_version(),
            });
        }
        let key = if version >= 6 { read_key(&conn) } else { None };
        Ok(SqliteStore {
            conn,
            version,
            patience,
            bulk: false,
            masker: key.as_ref().and_then(secrets::process_masker),
            key,
        })
    }

    /// An in-memory database (tests, examples).
    ///
    /// # Errors
    /// When migrations fail.
    pub fn open_in_memory() -> Result<Self> {
        let conn = Connection::open_in_memory().context(|| "opening in-memory store".to_owned())?;
        Self::init(conn, ":memory:", Patience::from_env())
    }

    fn init(mut conn: Connection, name: &str, patience: Patience) -> Result<Self> {
        conn.pragma_update(None, "foreign_keys", "ON")
            .context(|| format!("configuring `{name}`"))?;
        let version = retrying(patience, || migrate(&mut conn, name))?;
        let fresh = secrets::new_key()?;
        let key = retrying(patience, || ensure_key(&conn, name, &fresh))?;
        Ok(SqliteStore {
            conn,
            version,
            patience,
            bulk: false,
            masker: secrets::process_masker(&key),
            key: Some(key),
        })
    }

    /// Rewrite the file without the text that rows no longer hold: merge
    /// the search index (its deleted entries), checkpoint the WAL and
    /// VACUUM, so text masked over by `secrets mask` is gone from the file's
    /// free pages too (Note \[Masking a stored store\] in `secrets`).
    ///
    /// # Errors
    /// When the database cannot be written.
    pub fn compact(&self) -> Result<()> {
        let ctx = || "compacting the store after masking".to_owned();
        let has_fts: bool = self
            .conn
            .query_row(
                "SELECT COUNT(*) > 0 FROM sqlite_master WHERE name = 'feed_fts'",
                [],
                |r| r.get(0),
            )
            .context(ctx)?;
        if has_fts {
            self.conn
                .execute("INSERT INTO feed_fts (feed_fts) VALUES ('optimize')", [])
                .context(ctx)?;
        }
        self.conn
            .execute_batch(
                "PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
            )
            .context(ctx)
    }

    /// The underlying connection, for ad-hoc queries (tests, reports).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Run one write transaction (immediate), retried while busy.
    fn write_tx<T>(
        &mut self,
        what: &dyn Fn() -> String,
        mut f: impl FnMut(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let conn = &mut self.conn;
        retrying(self.patience, || {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .context(what)?;
            let out = f(&tx).context(what)?;
            tx.commit().context(what)?;
            Ok(out)
        })
    }
}

/// The store's mask key: `fresh` when none is stored yet, else the stored
/// one; insert-if-absent then read back, so racing openers agree (Note
/// \[Store door\] in `secrets`).
fn ensure_key(conn: &Connection, name: &str, fresh: &MaskKey) -> Result<MaskKey> {
    let ctx = || format!("reading the mask key of `{name}`");
    // A store that has its key is only read: opening it must not need a
    // write (a locked or read-only store then fails where a write is
    // attempted, with that write's own exit code).
    if let Some(key) = read_key(conn) {
        return Ok(key);
    }
    conn.execute(
        "INSERT INTO store_meta (key, value) VALUES (?1, ?2), (?3, ?4) ON CONFLICT (key) DO NOTHING",
        params![
            secrets::MASK_KEY,
            fresh.to_hex(),
            secrets::MASKED_SINCE,
            time::now()
        ],
    )
    .context(ctx)?;
    let stored: String = conn
        .query_row(
            "SELECT value FROM store_meta WHERE key = ?1",
            [secrets::MASK_KEY],
            |r| r.get(0),
        )
        .context(ctx)?;
    secrets::parse_key(&stored)
}

/// The stored mask key of a store opened read-only, if it has one.
fn read_key(conn: &Connection) -> Option<MaskKey> {
    let stored: String = conn
        .query_row(
            "SELECT value FROM store_meta WHERE key = ?1",
            [secrets::MASK_KEY],
            |r| r.get(0),
        )
        .ok()?;
    secrets::parse_key(&stored).ok()
}

/// Write what the door masked: one `secrets_found` row per secret (feed
/// secrets name the row they are in) and the session's count; with masking
/// off, the session is marked as holding raw text (Note \[Store door\]).
fn record_spots(
    tx: &Transaction<'_>,
    masking: bool,
    sessions: &[&str],
    spots: &[(&str, &str, Spot, Option<i64>)],
    made: bool,
) -> rusqlite::Result<()> {
    if !masking {
        for id in sessions {
            tx.prepare_cached(secrets::UNMASKED)?.execute([id])?;
        }
        return Ok(());
    }
    {
        let mut ins = tx.prepare_cached(secrets::SQLITE_INSERT_FOUND)?;
        for (session, at, spot, feed_id) in spots {
            ins.execute(params![
                session,
                spot.rule,
                spot.fingerprint,
                spot.place,
                feed_id,
                at
            ])?;
        }
    }
    for id in sessions {
        tx.prepare_cached(secrets::SQLITE_RECOUNT)?
            .execute(params![id, made])?;
    }
    Ok(())
}

/// Insert feed entries; the row ids of those `want` names (by index).
fn feed_insert_ids(
    tx: &Transaction<'_>,
    entries: &[FeedEntry],
    want: &[Spot],
) -> rusqlite::Result<Vec<Option<i64>>> {
    let mut ids = vec![None; entries.len()];
    for (i, e) in entries.iter().enumerate() {
        feed_insert(tx, e)?;
        if want.iter().any(|s| s.feed_index == Some(i)) {
            ids[i] = Some(tx.last_insert_rowid());
        }
    }
    Ok(ids)
}

/// The `secrets_found` rows of a feed batch: (session, time, spot, row id).
fn feed_spots<'a>(
    entries: &'a [FeedEntry],
    spots: Vec<Spot>,
    ids: &[Option<i64>],
) -> Vec<(&'a str, &'a str, Spot, Option<i64>)> {
    spots
        .into_iter()
        .filter_map(|s| {
            let i = s.feed_index?;
            let e = entries.get(i)?;
            Some((e.session_id.as_str(), e.created_at.as_str(), s, ids[i]))
        })
        .collect()
}

/// Apply the missing migrations (Note \[Migrations\]); the resulting version.
fn migrate(conn: &mut Connection, name: &str) -> Result<i64> {
    let known = known_version();
    let read = |c: &Connection| -> Result<i64> {
        c.pragma_query_value(None, "user_version", |r| r.get(0))
            .context(|| format!("reading the schema version of `{name}`"))
    };
    let too_new = |found| Error::TooNew {
        path: name.to_owned(),
        found,
        known,
    };
    match migrate::plan(migrate::SQLITE, read(conn)?) {
        Plan::Current => return Ok(known),
        Plan::TooNew { found, .. } => return Err(too_new(found)),
        Plan::Apply(_) => {}
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .context(|| format!("migrating `{name}`"))?;
    // Re-read under the write lock: another process may have migrated since.
    let pending = match migrate::plan(migrate::SQLITE, read(&tx)?) {
        Plan::Current => &[][..],
        Plan::TooNew { found, .. } => return Err(too_new(found)),
        Plan::Apply(list) => list,
    };
    for m in pending {
        tx.execute_batch(m.sql)
            .context(|| format!("applying migration {} to `{name}`", m.version))?;
    }
    tx.pragma_update(None, "user_version", known)
        .context(|| format!("migrating `{name}`"))?;
    tx.commit().context(|| format!("migrating `{name}`"))?;
    Ok(known)
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Insert the session row, or (`update`) overwrite the `running` row that
/// `start_session` left. A finished row has no heartbeat (it only means
/// something while running), so a row written by `run` and one rebuilt by
/// `ingest` are identical.
fn insert_session(tx: &Transaction<'_>, r: &SessionRecord, update: bool) -> rusqlite::Result<()> {
    put_session(tx, r, if update { Put::Replace } else { Put::Insert })
}

/// How [`put_session`] writes the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Put {
    /// A new row.
    Insert,
    /// Every column from the record.
    Replace,
    /// As `Replace`, but the verdict, output, extraction method and profile
    /// the record lacks are kept: a native import knows none of them, and
    /// must not erase what `agentshape hook` wrote (Note \[Hook chains\]).
    Fill,
}

fn put_session(tx: &Transaction<'_>, r: &SessionRecord, how: Put) -> rusqlite::Result<()> {
    let escalation = r.escalation.as_ref().map(ToString::to_string);
    // Compact JSON text (serde_json's `Display`), so `run` and `ingest` write
    // byte-identical columns for the same value.
    let output = r.output.as_ref().map(ToString::to_string);
    let verdict = r.verdict.as_ref().map(ToString::to_string);
    let sql = if how == Put::Fill {
        "UPDATE sessions SET parent_id = ?2, tier = ?3, profile = COALESCE(?4, profile),
            agent = ?5, model = ?6,
            status = ?7, exit_code = ?8, started_at = ?9, ended_at = ?10, cost_usd = ?11,
            duration_ms = ?12, num_turns = ?13, input_tokens = ?14, output_tokens = ?15,
            extraction_method = COALESCE(?16, extraction_method), error = ?17,
            error_category = ?18, summary = ?19,
            escalation = ?20, raw_log_path = ?21, output = COALESCE(?22, output),
            verdict = COALESCE(?23, verdict),
            project = ?24, git_branch = ?25, agent_version = ?26, cache_read_tokens = ?27,
            cache_write_tokens = ?28, cost_estimated = ?29, source_path = ?30,
            heartbeat_at = NULL
         WHERE id = ?1"
    } else if how == Put::Replace {
        "UPDATE sessions SET parent_id = ?2, tier = ?3, profile = ?4, agent = ?5, model = ?6,
            status = ?7, exit_code = ?8, started_at = ?9, ended_at = ?10, cost_usd = ?11,
            duration_ms = ?12, num_turns = ?13, input_tokens = ?14, output_tokens = ?15,
            extraction_method = ?16, error = ?17, error_category = ?18, summary = ?19,
            escalation = ?20, raw_log_path = ?21, output = ?22, verdict = ?23,
            project = ?24, git_branch = ?25, agent_version = ?26, cache_read_tokens = ?27,
            cache_write_tokens = ?28, cost_estimated = ?29, source_path = ?30,
            heartbeat_at = NULL
         WHERE id = ?1"
    } else {
        "INSERT INTO sessions (id, parent_id, tier, profile, agent, model, status, exit_code,
            started_at, ended_at, cost_usd, duration_ms, num_turns, input_tokens, output_tokens,
            extraction_method, error, error_category, summary, escalation, raw_log_path,
            output, verdict, project, git_branch, agent_version, cache_read_tokens,
            cache_write_tokens, cost_estimated, source_path)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23,
            ?24, ?25, ?26, ?27, ?28, ?29, ?30)"
    };
    tx.execute(
        sql,
        params![
            r.id,
            r.parent_id,
            r.tier,
            r.profile,
            r.agent,
            r.model,
            r.status,
            r.exit_code,
            r.started_at,
            r.ended_at,
            r.cost_usd,
            r.duration_ms.map(to_i64),
            r.num_turns.map(to_i64),
            to_i64(r.input_tokens),
            to_i64(r.output_tokens),
            r.extraction_method,
            r.error,
            r.error_category,
            r.summary,
            escalation,
            r.raw_log_path,
            output,
            verdict,
            r.project,
            r.git_branch,
            r.agent_version,
            to_i64(r.cache_read_tokens),
            to_i64(r.cache_write_tokens),
            r.cost_estimated,
            r.source_path,
        ],
    )?;
    Ok(())
}

/// Replace a session's `session_tools` rows with the record's.
fn put_tools(tx: &Transaction<'_>, r: &SessionRecord) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM session_tools WHERE session_id = ?1")?
        .execute([&r.id])?;
    let mut ins = tx.prepare_cached(
        "INSERT INTO session_tools (session_id, tool, calls, errors) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (session_id, tool) DO UPDATE SET calls = calls + excluded.calls,
            errors = errors + excluded.errors",
    )?;
    for t in &r.tools {
        ins.execute(params![r.id, t.tool, to_i64(t.calls), to_i64(t.errors)])?;
    }
    Ok(())
}

/// An inode or device number as SQLite's signed integer, bit for bit (so
/// it reads back exactly).
pub(crate) fn bits_i64(n: u64) -> i64 {
    i64::from_ne_bytes(n.to_ne_bytes())
}

/// The inverse of [`bits_i64`].
pub(crate) fn bits_u64(n: i64) -> u64 {
    u64::from_ne_bytes(n.to_ne_bytes())
}

/// Note \[Import checkpoints\]: an import writes about as many bytes
/// into the feed as it reads (tool results are kept), and at SQLite's
/// default a WAL checkpoint, two `fsync`s, comes every 1,000 pages (4 MB):
/// on a disk where an `fsync` costs 25 ms that was half of an import's
/// time. A connection that imports checkpoints every this many pages (64
/// MB) instead; the WAL file grows to that size meanwhile and is reused
/// after. Other connections keep the default.
const IMPORT_CHECKPOINT_PAGES: i64 = 16_384;

const MARK_COLS: &str =
    "path, session_id, agent, dev, inode, size, byte_offset, mtime_ms, lines, updated_at";

fn mark_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<NativeMark> {
    Ok(NativeMark {
        path: r.get(0)?,
        session_id: r.get(1)?,
        agent: r.get(2)?,
        dev: bits_u64(r.get(3)?),
        inode: bits_u64(r.get(4)?),
        size: bits_u64(r.get(5)?),
        offset: bits_u64(r.get(6)?),
        mtime_ms: r.get(7)?,
        lines: bits_u64(r.get(8)?),
        updated_at: r.get(9)?,
        reset: false,
        expect_offset: None,
    })
}

/// Which tables a native save may write, by the store's version, and
/// whether it is a usage-only pass ([`Store::save_usage`]).
#[derive(Debug, Clone, Copy)]
struct Tables {
    usage_calls: bool,
    usage_files: bool,
    usage_only: bool,
}

/// [`Store::save_native`]'s transaction (Note \[Import marks\]), and
/// [`Store::save_usage`]'s: no feed, no offset check, its mark in
/// `usage_files`.
fn save_native_tx(
    tx: &Transaction<'_>,
    r: &SessionRecord,
    feed: &[FeedEntry],
    spots: &[Spot],
    mark: &NativeMark,
    tables: Tables,
) -> rusqlite::Result<(NativeReport, Vec<Option<i64>>)> {
    let mut report = NativeReport::default();
    let usage_table = tables.usage_calls;
    if !mark.reset && !tables.usage_only {
        let stored: Option<i64> = tx
            .prepare_cached("SELECT byte_offset FROM native_files WHERE path = ?1")?
            .query_row([&mark.path], |row| row.get(0))
            .optional()?;
        if stored.map(bits_u64) != mark.expect_offset {
            report.conflict = true;
            return Ok((report, Vec::new()));
        }
    }
    if let Some(parent) = &r.parent_id
        && stored_status(tx, parent)?.is_none()
    {
        let mut holder = SessionRecord::new(parent, &r.started_at, "running");
        holder.agent.clone_from(&r.agent);
        holder.project.clone_from(&r.project);
        insert_session(tx, &holder, false)?;
        report.placeholder_parent = true;
    }
    if tables.usage_only {
        // A usage pass reads its file whole: its calls replace the last.
        tx.prepare_cached("DELETE FROM usage_calls WHERE session_id = ?1")?
            .execute([&r.id])?;
    } else if mark.reset {
        report.feed_dropped = tx
            .prepare_cached("DELETE FROM feed WHERE session_id = ?1")?
            .execute([&r.id])?;
        if usage_table {
            tx.prepare_cached("DELETE FROM usage_calls WHERE session_id = ?1")?
                .execute([&r.id])?;
        }
    }
    let update = stored_status(tx, &r.id)?.is_some();
    put_session(tx, r, if update { Put::Fill } else { Put::Insert })?;
    report.inserted = !update;
    put_tools(tx, r)?;
    if usage_table {
        put_usage(tx, r)?;
    }
    let ids = feed_insert_ids(tx, feed, spots)?;
    report.feed = feed.len();
    if tables.usage_files && !tables.usage_only {
        // Imported now: the usage pass's mark has served its turn.
        tx.prepare_cached("DELETE FROM usage_files WHERE path = ?1")?
            .execute([&mark.path])?;
    }
    let table = if tables.usage_only {
        "usage_files"
    } else {
        "native_files"
    };
    tx.prepare_cached(&format!(
        "INSERT INTO {table} (path, session_id, agent, dev, inode, size, byte_offset,
            mtime_ms, lines, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (path) DO UPDATE SET session_id = excluded.session_id,
            agent = excluded.agent, dev = excluded.dev, inode = excluded.inode,
            size = excluded.size, byte_offset = excluded.byte_offset,
            mtime_ms = excluded.mtime_ms, lines = excluded.lines,
            updated_at = excluded.updated_at"
    ))?
    .execute(params![
        mark.path,
        mark.session_id,
        mark.agent,
        bits_i64(mark.dev),
        bits_i64(mark.inode),
        bits_i64(mark.size),
        bits_i64(mark.offset),
        mark.mtime_ms,
        bits_i64(mark.lines),
        mark.updated_at,
    ])?;
    Ok((report, ids))
}

/// A session's model calls, each upserted by its key; a key another
/// session stored first stays that session's (counted once: a resumed
/// session repeats its parent's messages in its own file).
fn put_usage(tx: &Transaction<'_>, r: &SessionRecord) -> rusqlite::Result<()> {
    if r.usage.is_empty() {
        return Ok(());
    }
    let mut up = tx.prepare_cached(
        "INSERT INTO usage_calls (key, session_id, at_ms, model, sidechain, input_tokens,
            output_tokens, reasoning_tokens, cache_read_tokens, cache_write_5m_tokens,
            cache_write_1h_tokens)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (key) DO UPDATE SET at_ms = excluded.at_ms, model = excluded.model,
            sidechain = excluded.sidechain, input_tokens = excluded.input_tokens,
            output_tokens = excluded.output_tokens, reasoning_tokens = excluded.reasoning_tokens,
            cache_read_tokens = excluded.cache_read_tokens,
            cache_write_5m_tokens = excluded.cache_write_5m_tokens,
            cache_write_1h_tokens = excluded.cache_write_1h_tokens
         WHERE usage_calls.session_id = excluded.session_id",
    )?;
    for u in &r.usage {
        let t = &u.tokens;
        up.execute(params![
            u.key,
            r.id,
            u.at_ms,
            u.model,
            u.sidechain,
            to_i64(t.input),
            to_i64(t.output),
            to_i64(t.reasoning),
            to_i64(t.cache_read),
            to_i64(t.cache_write_5m),
            to_i64(t.cache_write_1h),
        ])?;
    }
    Ok(())
}

fn write(
    tx: &Transaction<'_>,
    r: &SessionRecord,
    update: bool,
    report: &mut WriteReport,
) -> rusqlite::Result<()> {
    insert_session(tx, r, update)?;
    put_tools(tx, r)?;
    let at = r.ended_at.as_deref().unwrap_or(&r.started_at);
    {
        let mut ev = tx.prepare_cached(
            "INSERT INTO events (session_id, level, service, message, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for e in &r.events {
            if !LEVELS.contains(&e.level.as_str()) {
                report.events_rejected += 1;
                report.warnings.push(format!(
                    "event rejected: level `{}` is not one of info, warning, critical",
                    e.level
                ));
                continue;
            }
            ev.execute(params![r.id, e.level, e.service, e.message, at])?;
            report.events += 1;
        }
    }
    {
        let mut find = tx.prepare_cached(
            "SELECT id, confidence FROM memories
             WHERE active = 1 AND category = ?1 AND service IS ?2 ORDER BY id LIMIT 1",
        )?;
        let mut reinforce = tx.prepare_cached(
            "UPDATE memories SET confidence = ?2, observation = ?3, updated_at = ?4, session_id = ?5, tier = ?6
             WHERE id = ?1",
        )?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO memories (service, category, observation, confidence, active, created_at, updated_at, session_id, tier)
             VALUES (?1, ?2, ?3, ?4, 1, ?5, ?5, ?6, ?7)",
        )?;
        for m in &r.memories {
            let Some(key) = parse_memory_key(&m.key) else {
                report.memories_rejected += 1;
                report.warnings.push(format!(
                    "memory rejected: key `{}` is not `service:category` or `category`",
                    m.key
                ));
                continue;
            };
            let found: Option<(i64, f64)> = find
                .query_row(params![key.category, key.service], |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })
                .optional()?;
            if let Some((id, confidence)) = found {
                // Rounded to hundredths so 0.7 + 0.1 + 0.1 reads 0.9, not 0.8999999.
                let raised = (((confidence + REINFORCE_STEP) * 100.0).round() / 100.0).min(1.0);
                reinforce.execute(params![id, raised, m.value, at, r.id, r.tier])?;
                report.memories_reinforced += 1;
            } else {
                insert.execute(params![
                    key.service,
                    key.category,
                    m.value,
                    NEW_MEMORY_CONFIDENCE,
                    at,
                    r.id,
                    r.tier
                ])?;
                report.memories_new += 1;
            }
        }
    }
    {
        let mut svc = tx.prepare_cached(
            "INSERT INTO services_checked (session_id, name, status, detail) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for s in &r.services {
            svc.execute(params![r.id, s.name, s.status, s.detail])?;
            report.services += 1;
        }
    }
    if let Some(parent) = &r.parent_id {
        let mut esc = tx.prepare_cached(
            "INSERT INTO escalations (parent_id, child_id, service, tier, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for service in &r.escalated_for {
            esc.execute(params![parent, r.id, service, r.tier, r.started_at])?;
        }
    }
    Ok(())
}

fn stored_status(tx: &Transaction<'_>, id: &str) -> rusqlite::Result<Option<String>> {
    tx.query_row("SELECT status FROM sessions WHERE id = ?1", [id], |r| {
        r.get(0)
    })
    .optional()
}

/// A `FeedRow` from `SELECT id, session_id, kind, body, created_at FROM feed`.
pub(crate) fn feed_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<FeedRow> {
    Ok(FeedRow {
        id: r.get(0)?,
        session_id: r.get(1)?,
        kind: r.get(2)?,
        body: r.get(3)?,
        created_at: r.get(4)?,
    })
}

fn feed_insert(tx: &Transaction<'_>, e: &FeedEntry) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO feed (session_id, kind, body, created_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![e.session_id, e.kind, e.body, e.created_at])?;
    Ok(())
}

/// Note \[Hook chains\] in the crate root: the blocked calls of (`?1`,
/// `?2`) in the turn's chain (since the last call without
/// `stop_hook_active`, after the last one let through with a verdict), and
/// how many of them came with `stop_hook_active` (index `hook_calls_session`).
pub(crate) const HOOK_CHAIN: &str = "SELECT COUNT(*) FILTER (WHERE verdict = 'blocked'),
        COUNT(*) FILTER (WHERE stop_hook_active <> 0)
     FROM hook_calls
     WHERE session_id = ?1 AND agent_id IS ?2 AND event IN ('Stop', 'SubagentStop')
       AND id > COALESCE((SELECT MAX(id) FROM hook_calls
                          WHERE session_id = ?1 AND agent_id IS ?2
                            AND event IN ('Stop', 'SubagentStop')
                            AND verdict NOT IN ('blocked', 'gave_up')), 0)
       AND id >= COALESCE((SELECT MAX(id) FROM hook_calls
                           WHERE session_id = ?1 AND agent_id IS ?2
                             AND event IN ('Stop', 'SubagentStop')
                             AND stop_hook_active = 0), 0)";

/// Note \[Escalation claims\] in the crate root: what counts against the
/// cooldown of `?1` since `?2`, at `?3`. Shared by both backends' SQL.
pub(crate) const CLAIM_COUNT: &str = "SELECT
    (SELECT COUNT(*) FROM escalations WHERE service = ?1 AND created_at >= ?2)
  + (SELECT COUNT(*) FROM escalation_claims c
     WHERE c.service = ?1 AND c.created_at >= ?2
       AND NOT EXISTS (SELECT 1 FROM escalations e
                       WHERE e.child_id = c.child_id AND e.service = c.service)
       AND (c.expires_at > ?3 OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = c.child_id)))";

/// The services of a claim, sorted and without duplicates: one row each,
/// and (on Postgres) locks taken in one order.
pub(crate) fn claim_services(request: &ClaimRequest) -> Vec<&str> {
    let mut services: Vec<&str> = request.services.iter().map(String::as_str).collect();
    services.sort_unstable();
    services.dedup();
    services
}

fn claim_tx(tx: &Transaction<'_>, r: &ClaimRequest) -> rusqlite::Result<Claim> {
    if r.tier > r.max_tier {
        return Ok(Claim::MaxTier);
    }
    let services = claim_services(r);
    let mut count = tx.prepare_cached(CLAIM_COUNT)?;
    for service in &services {
        let n: i64 = count.query_row(params![service, r.since, r.now], |row| row.get(0))?;
        let n = u64::try_from(n).unwrap_or(0);
        if n >= r.max_per_window {
            return Ok(Claim::Cooldown {
                service: (*service).to_owned(),
                count: n,
            });
        }
    }
    let mut insert = tx.prepare_cached(
        "INSERT INTO escalation_claims (parent_id, child_id, service, tier, holder, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for service in &services {
        insert.execute(params![
            r.parent_id,
            r.child_id,
            service,
            r.tier,
            r.holder,
            r.now,
            r.expires_at
        ])?;
    }
    Ok(Claim::Granted)
}

/// Take or renew a lease inside an immediate transaction (the file's write
/// lock serialises takers). SQLite's clock is this machine's: the file is
/// local to it.
fn lease_tx(
    tx: &Transaction<'_>,
    name: &str,
    holder: &str,
    ttl_ms: u64,
) -> rusqlite::Result<LeaseState> {
    let now_ms = time::now_ms();
    let now = time::format_ms(now_ms);
    let expires_at = time::format_ms(now_ms.saturating_add(to_i64(ttl_ms)));
    let current: Option<(String, String)> = tx
        .query_row(
            "SELECT holder, expires_at FROM leases WHERE name = ?1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    match current {
        Some((other, until)) if other != holder && until > now => Ok(LeaseState::Busy {
            holder: other,
            expires_at: until,
        }),
        Some((other, _)) => {
            let acquired = if other == holder { "acquired_at" } else { "?3" };
            tx.execute(
                &format!(
                    "UPDATE leases SET holder = ?2, acquired_at = {acquired}, expires_at = ?4 WHERE name = ?1"
                ),
                params![name, holder, now, expires_at],
            )?;
            Ok(LeaseState::Held { expires_at })
        }
        None => {
            tx.execute(
                "INSERT INTO leases (name, holder, acquired_at, expires_at) VALUES (?1, ?2, ?3, ?4)",
                params![name, holder, now, expires_at],
            )?;
            Ok(LeaseState::Held { expires_at })
        }
    }
}

impl Store for SqliteStore {
    fn mask_key(&self) -> Option<MaskKey> {
        self.key.clone()
    }

    fn set_masker(&mut self, masker: Option<Masker>) {
        self.masker = masker;
    }

    fn masker(&self) -> Option<&Masker> {
        self.masker.as_ref()
    }

    fn location(&self) -> Option<String> {
        self.conn
            .path()
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
    }

    fn write_session(&mut self, record: &SessionRecord) -> Result<WriteReport> {
        let what = || format!("writing session `{}`", record.id);
        let has_feed = self.version >= 2;
        let door = self.version >= 8;
        let masking = self.masker.is_some();
        let (record, spots) = match &self.masker {
            Some(m) => secrets::mask_record(m, record),
            None => (std::borrow::Cow::Borrowed(record), Vec::new()),
        };
        let record = &*record;
        let at = record.ended_at.as_deref().unwrap_or(&record.started_at);
        let rows: Vec<(&str, &str, Spot, Option<i64>)> = spots
            .into_iter()
            .map(|s| (record.id.as_str(), at, s, None))
            .collect();
        self.write_tx(&what, |tx| {
            let mut report = WriteReport::default();
            let update = match stored_status(tx, &record.id)?.as_deref() {
                None => false,
                Some("running") => true,
                Some(_) => return Ok(report),
            };
            write(tx, record, update, &mut report)?;
            if door {
                record_spots(tx, masking, &[&record.id], &rows, true)?;
            }
            if has_feed {
                // `valid` and the error count let a live page show the
                // verdict without a reload; null when there is no verdict.
                let verdict = record.verdict.as_ref();
                let body = serde_json::json!({
                    "status": record.status,
                    "extraction_method": record.extraction_method,
                    "valid": verdict.and_then(|v| v.get("valid")).and_then(serde_json::Value::as_bool),
                    "errors": verdict
                        .and_then(|v| v.get("errors"))
                        .and_then(serde_json::Value::as_array)
                        .map(Vec::len),
                });
                feed_insert(
                    tx,
                    &FeedEntry {
                        session_id: record.id.clone(),
                        kind: "ended".to_owned(),
                        body: body.to_string(),
                        created_at: record.ended_at.clone().unwrap_or_else(time::now),
                    },
                )?;
            }
            report.inserted = true;
            Ok(report)
        })
    }

    fn start_session(&mut self, record: &SessionRecord) -> Result<()> {
        let what = || format!("recording the start of session `{}`", record.id);
        let door = self.version >= 8;
        let masking = self.masker.is_some();
        let (record, spots) = match &self.masker {
            Some(m) => secrets::mask_record(m, record),
            None => (std::borrow::Cow::Borrowed(record), Vec::new()),
        };
        let record = &*record;
        let rows: Vec<(&str, &str, Spot, Option<i64>)> = spots
            .into_iter()
            .map(|s| (record.id.as_str(), record.started_at.as_str(), s, None))
            .collect();
        let taken = self.write_tx(&what, |tx| {
            match stored_status(tx, &record.id)? {
                Some(s) if s == "running" => return Ok(None),
                Some(s) => return Ok(Some(s)),
                None => {}
            }
            let mut running = record.clone();
            "running".clone_into(&mut running.status);
            insert_session(tx, &running, false)?;
            if door {
                record_spots(tx, masking, &[&record.id], &rows, true)?;
            }
            tx.execute(
                "UPDATE sessions SET heartbeat_at = ?2 WHERE id = ?1",
                params![record.id, record.started_at],
            )?;
            let body = serde_json::json!({
                "tier": record.tier,
                "parent_id": record.parent_id,
                "agent": record.agent,
                "profile": record.profile,
                "raw_log_path": record.raw_log_path,
            });
            feed_insert(
                tx,
                &FeedEntry {
                    session_id: record.id.clone(),
                    kind: "started".to_owned(),
                    body: body.to_string(),
                    created_at: record.started_at.clone(),
                },
            )?;
            Ok(None)
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
        self.conn
            .busy_timeout(Duration::from_millis(250))
            .context(what)?;
        let result = self
            .conn
            .execute(
                "UPDATE sessions SET heartbeat_at = ?2 WHERE id = ?1 AND status = 'running'",
                params![id, at],
            )
            .context(what);
        self.conn.busy_timeout(self.patience.busy).context(what)?;
        result.map(|_| ())
    }

    fn append_feed(&mut self, entries: &[FeedEntry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let what = || format!("appending {} feed entries", entries.len());
        let (door, masking) = (self.version >= 8, self.masker.is_some());
        let (entries, spots) = self.mask_feed(entries);
        self.write_tx(&what, |tx| {
            let ids = feed_insert_ids(tx, &entries, &spots)?;
            if door {
                let rows = feed_spots(&entries, spots.clone(), &ids);
                record_spots(tx, masking, &secrets::sessions_of(&entries), &rows, false)?;
            }
            Ok(())
        })
    }

    fn append_feed_now(&mut self, entries: &[FeedEntry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let what = || format!("appending {} feed entries", entries.len());
        let (door, masking) = (self.version >= 8, self.masker.is_some());
        let (entries, spots) = self.mask_feed(entries);
        // Short patience, no retry: see the trait's doc.
        self.conn
            .busy_timeout(Duration::from_millis(250))
            .context(what)?;
        let result = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .context(what)?;
            let ids = feed_insert_ids(&tx, &entries, &spots).context(what)?;
            if door {
                let rows = feed_spots(&entries, spots.clone(), &ids);
                record_spots(&tx, masking, &secrets::sessions_of(&entries), &rows, false)
                    .context(what)?;
            }
            tx.commit().context(what)
        })();
        self.conn.busy_timeout(self.patience.busy).context(what)?;
        result
    }

    fn feed_after(&self, after_id: i64, limit: usize) -> Result<Vec<FeedRow>> {
        self.feed_page(after_id, limit, usize::MAX)
    }

    fn feed_page(&self, after_id: i64, limit: usize, max_bytes: usize) -> Result<Vec<FeedRow>> {
        let ctx = || format!("reading the feed after {after_id}");
        if self.version < 2 {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, session_id, kind, body, created_at FROM feed
                 WHERE id > ?1 ORDER BY id LIMIT ?2",
            )
            .context(ctx)?;
        let rows = stmt
            .query_map(
                params![after_id, i64::try_from(limit).unwrap_or(i64::MAX)],
                feed_row,
            )
            .context(ctx)?;
        // Rows are read one at a time: stopping here reads no more.
        let (mut out, mut bytes) = (Vec::new(), 0usize);
        for row in rows {
            if bytes >= max_bytes {
                break;
            }
            let row = row.context(ctx)?;
            bytes = bytes.saturating_add(row.body.len());
            out.push(row);
        }
        Ok(out)
    }

    fn has_session(&self, id: &str) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)",
                [id],
                |r| r.get(0),
            )
            .context(|| format!("looking up session `{id}`"))
    }

    fn escalations_since(&self, service: &str, since: &str) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM escalations WHERE service = ?1 AND created_at >= ?2",
                params![service, since],
                |r| r.get(0),
            )
            .context(|| format!("counting escalations for `{service}`"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn claim_escalation(&mut self, request: &ClaimRequest) -> Result<Claim> {
        let what = || format!("claiming an escalation from `{}`", request.parent_id);
        self.write_tx(&what, |tx| claim_tx(tx, request))
    }

    fn acquire_lease(&mut self, name: &str, holder: &str, ttl_ms: u64) -> Result<LeaseState> {
        let what = || format!("taking the lease `{name}`");
        self.write_tx(&what, |tx| lease_tx(tx, name, holder, ttl_ms))
    }

    fn release_lease(&mut self, name: &str, holder: &str) -> Result<bool> {
        let what = || format!("releasing the lease `{name}`");
        self.write_tx(&what, |tx| {
            tx.execute(
                "DELETE FROM leases WHERE name = ?1 AND holder = ?2",
                params![name, holder],
            )
            .map(|n| n > 0)
        })
    }

    fn prune_memories(&mut self, before: &str) -> Result<u64> {
        let n = self.write_tx(&|| "pruning memories".to_owned(), |tx| {
            tx.execute(
                "UPDATE memories SET active = 0 WHERE active = 1 AND updated_at < ?1",
                [before],
            )
        })?;
        Ok(n as u64)
    }

    fn native_marks(&self) -> Result<Vec<NativeMark>> {
        self.marks_where("ORDER BY path", &[])
    }

    fn native_mark(&self, path: &str) -> Result<Option<NativeMark>> {
        Ok(self.marks_where("WHERE path = ?1", &[&path])?.pop())
    }

    fn save_native(
        &mut self,
        record: &SessionRecord,
        feed: &[FeedEntry],
        mark: &NativeMark,
    ) -> Result<NativeReport> {
        self.save_marked(record, feed, mark, false)
    }

    fn save_usage(&mut self, record: &SessionRecord, mark: &NativeMark) -> Result<NativeReport> {
        self.save_marked(record, &[], mark, true)
    }

    fn usage_marks(&self) -> Result<Vec<NativeMark>> {
        if self.version < 13 {
            return Ok(Vec::new());
        }
        self.marks_in("usage_files", "ORDER BY path", &[])
    }

    fn hook_chain(&self, session_id: &str, agent_id: Option<&str>) -> Result<HookChain> {
        // The ids as the door wrote them (Note [Names and ids] in `secrets`).
        let (session_id, agent_id) = match &self.masker {
            Some(m) => (m.safe_id(session_id), agent_id.map(|a| m.safe_id(a))),
            None => (
                std::borrow::Cow::Borrowed(session_id),
                agent_id.map(std::borrow::Cow::Borrowed),
            ),
        };
        let (session_id, agent_id) = (&*session_id, agent_id.as_deref());
        if self.version < 9 {
            return Ok(HookChain::default());
        }
        let ctx = || format!("reading the hook chain of session `{session_id}`");
        let (blocks, active): (i64, i64) = self
            .conn
            .prepare_cached(HOOK_CHAIN)
            .context(ctx)?
            .query_row(params![session_id, agent_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .context(ctx)?;
        Ok(HookChain {
            blocks: u32::try_from(blocks).unwrap_or(u32::MAX),
            active: u32::try_from(active).unwrap_or(u32::MAX),
        })
    }

    fn save_hook(&mut self, call: &HookCall, feed: &[FeedEntry]) -> Result<HookSaved> {
        let what = || {
            format!(
                "recording a {} hook call of session `{}`",
                call.event, call.session_id
            )
        };
        let (door, masking) = (self.version >= 8, self.masker.is_some());
        let (call, call_spots) = match &self.masker {
            Some(m) => secrets::mask_hook(m, call),
            None => (std::borrow::Cow::Borrowed(call), Vec::new()),
        };
        let call = &*call;
        let (feed, spots) = self.mask_feed(feed);
        self.write_tx(&what, |tx| {
            let inserted = stored_status(tx, &call.session_id)?.is_none();
            if inserted {
                insert_session(tx, &hooks::session_record(call), false)?;
            }
            if let Some(verdict) = hooks::verdict(call) {
                tx.prepare_cached(
                    "UPDATE sessions SET verdict = ?2, extraction_method = ?3, output = ?4,
                        profile = COALESCE(?5, profile)
                     WHERE id = ?1",
                )?
                .execute(params![
                    call.session_id,
                    verdict.to_string(),
                    call.method,
                    hooks::json_text(call.output.as_ref()),
                    call.profile,
                ])?;
            }
            tx.prepare_cached(
                "INSERT INTO hook_calls (session_id, agent_id, agent_type, event, verdict, method,
                    errors, blocks, stop_hook_active, profile, reason, message, warning, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?
            .execute(params![
                call.session_id,
                call.agent_id,
                call.agent_type,
                call.event,
                call.verdict,
                call.method,
                hooks::json_text(call.errors.as_ref()),
                call.blocks,
                call.stop_hook_active,
                call.profile,
                call.reason,
                call.message,
                call.warning,
                call.created_at,
            ])?;
            let id = tx.last_insert_rowid();
            let ids = feed_insert_ids(tx, &feed, &spots)?;
            if hooks::has_feed_row(call) {
                feed_insert(tx, &hooks::feed_entry(id, call))?;
            }
            if door {
                let mut rows: Vec<(&str, &str, Spot, Option<i64>)> = call_spots
                    .iter()
                    .map(|s| {
                        (
                            call.session_id.as_str(),
                            call.created_at.as_str(),
                            s.clone(),
                            None,
                        )
                    })
                    .collect();
                rows.extend(feed_spots(&feed, spots.clone(), &ids));
                let mut sessions = secrets::sessions_of(&feed);
                if !sessions.contains(&call.session_id.as_str()) {
                    sessions.push(&call.session_id);
                }
                record_spots(tx, masking, &sessions, &rows, inserted)?;
            }
            Ok(HookSaved {
                id,
                session_inserted: inserted,
            })
        })
    }

    fn overview(&self) -> Result<Overview> {
        let ctx = || "reading the store overview".to_owned();
        let c = &self.conn;
        let count = |sql: &str| -> Result<u64> {
            let n: i64 = c.query_row(sql, [], |r| r.get(0)).context(ctx)?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        let grouped = |sql: &str| -> Result<Vec<(String, u64)>> {
            let mut stmt = c.prepare(sql).context(ctx)?;
            let rows = stmt
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                .context(ctx)?;
            let mut out = Vec::new();
            for row in rows {
                let (k, n) = row.context(ctx)?;
                out.push((k, u64::try_from(n).unwrap_or(0)));
            }
            Ok(out)
        };
        let mut o = Overview {
            sessions_by_status: grouped(
                "SELECT status, COUNT(*) FROM sessions GROUP BY status ORDER BY status",
            )?,
            events_by_level: grouped(
                "SELECT level, COUNT(*) FROM events GROUP BY level ORDER BY level",
            )?,
            active_memories: count("SELECT COUNT(*) FROM memories WHERE active = 1")?,
            inactive_memories: count("SELECT COUNT(*) FROM memories WHERE active = 0")?,
            services_checked: count("SELECT COUNT(*) FROM services_checked")?,
            escalations: count("SELECT COUNT(*) FROM escalations")?,
            ..Overview::default()
        };
        // A read-only store of version 1 has no heartbeat column.
        let heartbeat = if self.version >= 2 {
            "s.heartbeat_at"
        } else {
            "NULL"
        };
        let cutoff = time::format_ms(time::now_ms().saturating_sub(LOST_AFTER_MS));
        let mut stmt = c
            .prepare(&format!(
                "SELECT s.id, s.parent_id, s.tier, s.status, s.extraction_method, s.error_category,
                        (SELECT COUNT(*) FROM events e WHERE e.session_id = s.id), s.summary,
                        {heartbeat}, s.status = 'running' AND COALESCE({heartbeat}, s.started_at) < ?1,
                        s.raw_log_path
                 FROM sessions s ORDER BY s.started_at, s.id"
            ))
            .context(ctx)?;
        let rows = stmt
            .query_map([&cutoff], |r| {
                Ok(SessionLine {
                    id: r.get(0)?,
                    parent_id: r.get(1)?,
                    tier: r.get(2)?,
                    status: r.get(3)?,
                    extraction_method: r.get(4)?,
                    error_category: r.get(5)?,
                    events: u64::try_from(r.get::<_, i64>(6)?).unwrap_or(0),
                    summary: r.get(7)?,
                    heartbeat_at: r.get(8)?,
                    lost: r.get(9)?,
                    raw_log_path: r.get(10)?,
                })
            })
            .context(ctx)?;
        for row in rows {
            o.sessions.push(row.context(ctx)?);
        }
        o.lost = o.sessions.iter().filter(|s| s.lost).count() as u64;
        let mut stmt = c
            .prepare(
                "SELECT service, category, observation, confidence FROM memories
                 WHERE active = 1 ORDER BY confidence DESC, id",
            )
            .context(ctx)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(MemoryLine {
                    service: r.get(0)?,
                    category: r.get(1)?,
                    observation: r.get(2)?,
                    confidence: r.get(3)?,
                })
            })
            .context(ctx)?;
        for row in rows {
            o.memories.push(row.context(ctx)?);
        }
        Ok(o)
    }
}

impl SqliteStore {
    /// Feed entries through the door (Note \[Store door\] in `secrets`).
    fn mask_feed<'a>(
        &self,
        entries: &'a [FeedEntry],
    ) -> (std::borrow::Cow<'a, [FeedEntry]>, Vec<Spot>) {
        match &self.masker {
            Some(m) => secrets::mask_feed(m, entries),
            None => (std::borrow::Cow::Borrowed(entries), Vec::new()),
        }
    }

    /// [`Store::save_native`] and [`Store::save_usage`]: the record and
    /// feed through the masking door, then one transaction.
    fn save_marked(
        &mut self,
        record: &SessionRecord,
        feed: &[FeedEntry],
        mark: &NativeMark,
        usage_only: bool,
    ) -> Result<NativeReport> {
        let mark = match &self.masker {
            Some(m) => secrets::mask_mark(m, mark),
            None => std::borrow::Cow::Borrowed(mark),
        };
        let mark = &*mark;
        if !self.bulk {
            // Note [Import checkpoints]; a failure only keeps the default.
            let _ = self
                .conn
                .pragma_update(None, "wal_autocheckpoint", IMPORT_CHECKPOINT_PAGES);
            self.bulk = true;
        }
        let (door, masking) = (self.version >= 8, self.masker.is_some());
        let (record, rec_spots) = match &self.masker {
            Some(m) => secrets::mask_record(m, record),
            None => (std::borrow::Cow::Borrowed(record), Vec::new()),
        };
        let record = &*record;
        // Named after masking: an error message is printed too.
        let what = || format!("importing session `{}` from `{}`", record.id, mark.path);
        let (feed, spots) = self.mask_feed(feed);
        let at = record.ended_at.as_deref().unwrap_or(&record.started_at);
        let tables = Tables {
            usage_calls: self.version >= 12,
            usage_files: self.version >= 13,
            usage_only,
        };
        self.write_tx(&what, |tx| {
            let (report, ids) = save_native_tx(tx, record, &feed, &spots, mark, tables)?;
            if door && !report.conflict {
                let mut rows: Vec<(&str, &str, Spot, Option<i64>)> = rec_spots
                    .iter()
                    .map(|s| (record.id.as_str(), at, s.clone(), None))
                    .collect();
                rows.extend(feed_spots(&feed, spots.clone(), &ids));
                let mut ids = secrets::sessions_of(&feed);
                if !ids.contains(&record.id.as_str()) {
                    ids.push(&record.id);
                }
                record_spots(tx, masking, &ids, &rows, report.inserted)?;
            }
            Ok(report)
        })
    }

    fn marks_where(
        &self,
        filter: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<NativeMark>> {
        if self.version < 6 {
            return Ok(Vec::new());
        }
        self.marks_in("native_files", filter, params)
    }

    /// The marks of `table` (`native_files` or `usage_files`).
    fn marks_in(
        &self,
        table: &str,
        filter: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<NativeMark>> {
        let ctx = || format!("reading the file marks ({table})");
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {MARK_COLS} FROM {table} {filter}"))
            .context(ctx)?;
        let rows = stmt.query_map(params, mark_row).context(ctx)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().context(ctx)
    }
}

impl rusqlite::ToSql for crate::rows::Cell {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use crate::rows::Cell;
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Cell::Null => ValueRef::Null,
            Cell::Int(v) => ValueRef::Integer(*v),
            Cell::Real(v) => ValueRef::Real(*v),
            Cell::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

impl crate::rows::Rows for SqliteStore {
    fn read(&self, sql: &str, params: &[crate::rows::Cell]) -> Result<Vec<Vec<crate::rows::Cell>>> {
        // The dashboard queries' reader: one conversion of SQLite values to cells.
        crate::query::Source::cells(self, sql, params, &|| "reading rows to copy".to_owned())
    }

    fn write_all(&mut self, stmts: &[(String, Vec<crate::rows::Cell>)]) -> Result<Vec<u64>> {
        self.write_tx(&|| "copying rows in".to_owned(), |tx| {
            // Checked at commit: a batch may hold a child before its parent.
            tx.pragma_update(None, "defer_foreign_keys", "ON")?;
            let mut out = Vec::with_capacity(stmts.len());
            for (sql, params) in stmts {
                let n = tx
                    .prepare_cached(sql)?
                    .execute(rusqlite::params_from_iter(params))?;
                out.push(n as u64);
            }
            Ok(out)
        })
    }
}

impl crate::rows::Copyable for SqliteStore {
    fn copy_rows(&self) -> &dyn crate::rows::Rows {
        self
    }
    fn copy_rows_mut(&mut self) -> &mut dyn crate::rows::Rows {
        self
    }
}
