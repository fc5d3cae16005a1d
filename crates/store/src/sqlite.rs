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

use agentshape_core::secrets::MaskKey;

use crate::backend::{Backend, Body, Door, Since, Wait, What};
use crate::error::{Context, Error, Result};
use crate::migrate::{self, Plan};
use crate::rows::Cell;
use crate::secrets;
use crate::tx::{Arg, Batch, Dialect, Inserted, MemoryPut, Row, Tx};
use crate::{FeedRow, LeaseState, NEW_MEMORY_CONFIDENCE, REINFORCE_STEP, time};

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
    /// The store's mask key and masker (Note \[Store door\] in `secrets`).
    door: Door,
    patience: Patience,
    /// See Note \[Import checkpoints\]: raised on the first `save_native`.
    bulk: bool,
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
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
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
            door: Door::with_key(key),
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
        // Every write's SQL is written once and prepared by its text (see
        // Note \[One write\] in `tx.rs`): one import touches more distinct
        // statements than rusqlite's default 16 cached ones.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
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
            door: Door::with_key(Some(key)),
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

/// Note \[Import checkpoints\]: an import writes about as many bytes
/// into the feed as it reads (tool results are kept), and at SQLite's
/// default a WAL checkpoint, two `fsync`s, comes every 1,000 pages (4 MB):
/// on a disk where an `fsync` costs 25 ms that was half of an import's
/// time. A connection that imports checkpoints every this many pages (64
/// MB) instead; the WAL file grows to that size meanwhile and is reused
/// after. Other connections keep the default.
const IMPORT_CHECKPOINT_PAGES: i64 = 16_384;

/// One SQLite write transaction as a [`Tx`] (Note \[One write\] in `tx`):
/// a batch is one cached statement run per row.
struct SqliteTx<'t, 'c> {
    tx: &'t Transaction<'c>,
    what: &'t dyn Fn() -> String,
}

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Arg::Null => ValueRef::Null,
            Arg::Int(v) => ValueRef::Integer(*v),
            Arg::Real(v) => ValueRef::Real(*v),
            Arg::Bool(b) => ValueRef::Integer(i64::from(*b)),
            Arg::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

/// Prepared statements kept per connection (rusqlite's default is 16).
const STATEMENT_CACHE: usize = 128;

impl Tx for SqliteTx<'_, '_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64> {
        let n = self
            .tx
            .prepare_cached(sql)
            .and_then(|mut s| s.execute(rusqlite::params_from_iter(args)))
            .context(self.what)?;
        Ok(n as u64)
    }

    fn row(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Option<Vec<Cell>>> {
        self.tx
            .prepare_cached(sql)
            .and_then(|mut s| {
                let n = s.column_count();
                s.query_row(rusqlite::params_from_iter(args), |r| {
                    (0..n).map(|i| r.get_ref(i).map(Cell::from)).collect()
                })
                .optional()
            })
            .context(self.what)
    }

    fn insert_id(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<i64> {
        self.exec(sql, args)?;
        Ok(self.tx.last_insert_rowid())
    }

    fn insert_rows(&mut self, batch: &Batch, rows: &[Row<'_>], ids: bool) -> Result<Inserted> {
        let marks: Vec<String> = (1..=batch.cols.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({}){}",
            batch.table,
            batch.names(),
            marks.join(", "),
            batch.tail
        );
        let mut stmt = self.tx.prepare_cached(&sql).context(self.what)?;
        let (mut n, mut got) = (0u64, Vec::new());
        for row in rows {
            n += stmt
                .execute(rusqlite::params_from_iter(row))
                .context(self.what)? as u64;
            if ids {
                got.push(self.tx.last_insert_rowid());
            }
        }
        Ok((n, got))
    }

    fn lock(&mut self, _class: i32, _key: &str) -> Result<()> {
        // The immediate transaction holds the file's write lock already.
        Ok(())
    }

    fn feed_lock(&mut self) -> Result<()> {
        Ok(())
    }

    fn defer_constraints(&mut self) -> Result<()> {
        self.tx
            .pragma_update(None, "defer_foreign_keys", "ON")
            .context(self.what)
    }

    fn put_memory(&mut self, m: &MemoryPut<'_>) -> Result<bool> {
        put_memory(self.tx, m).context(self.what)
    }

    fn take_lease(&mut self, name: &str, holder: &str, ttl_ms: u64) -> Result<LeaseState> {
        lease_tx(self.tx, name, holder, ttl_ms).context(self.what)
    }
}

/// Reinforce the active memory of `m`'s service and category, or insert
/// it: SQLite serialises writers, so "find, then update" cannot race
/// (Note \[Reinforcing on Postgres\] in `postgres`). Whether it was new.
fn put_memory(tx: &Transaction<'_>, m: &MemoryPut<'_>) -> rusqlite::Result<bool> {
    let found: Option<(i64, f64)> = tx
        .prepare_cached(
            "SELECT id, confidence FROM memories
             WHERE active = 1 AND category = ?1 AND service IS ?2 ORDER BY id LIMIT 1",
        )?
        .query_row(params![m.category, m.service], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()?;
    if let Some((id, confidence)) = found {
        // Rounded to hundredths so 0.7 + 0.1 + 0.1 reads 0.9, not 0.8999999.
        let raised = (((confidence + REINFORCE_STEP) * 100.0).round() / 100.0).min(1.0);
        tx.prepare_cached(
            "UPDATE memories SET confidence = ?2, observation = ?3, updated_at = ?4, session_id = ?5, tier = ?6
             WHERE id = ?1",
        )?
        .execute(params![id, raised, m.value, m.at, m.session_id, m.tier])?;
        return Ok(false);
    }
    tx.prepare_cached(
        "INSERT INTO memories (service, category, observation, confidence, active, created_at, updated_at, session_id, tier)
         VALUES (?1, ?2, ?3, ?4, 1, ?5, ?5, ?6, ?7)",
    )?
    .execute(params![
        m.service,
        m.category,
        m.value,
        NEW_MEMORY_CONFIDENCE,
        m.at,
        m.session_id,
        m.tier
    ])?;
    Ok(true)
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl SqliteStore {
    /// One write transaction with a short busy timeout and no retry (a
    /// heartbeat, a live-feed flush: see [`Store::append_feed_now`](crate::Store::append_feed_now)).
    fn write_now<T>(
        &mut self,
        what: &dyn Fn() -> String,
        f: &dyn Fn(&mut dyn Tx) -> Result<T>,
    ) -> Result<T> {
        self.conn
            .busy_timeout(Duration::from_millis(250))
            .context(what)?;
        let result = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .context(what)?;
            let out = f(&mut SqliteTx { tx: &tx, what })?;
            tx.commit().context(what)?;
            Ok(out)
        })();
        self.conn.busy_timeout(self.patience.busy).context(what)?;
        result
    }
}

impl Backend for SqliteStore {
    const SINCE: Since = Since {
        feed: 2,
        door: 8,
        marks: 6,
        hooks: 9,
        usage_calls: 12,
        usage_files: 13,
    };

    fn write<T: Send>(&mut self, wait: Wait, what: What<'_>, f: Body<'_, T>) -> Result<T> {
        if wait == Wait::Now {
            return self.write_now(what, f);
        }
        let conn = &mut self.conn;
        retrying(self.patience, || {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .context(what)?;
            let out = f(&mut SqliteTx { tx: &tx, what })?;
            tx.commit().context(what)?;
            Ok(out)
        })
    }

    fn feed_rows(&self, after_id: i64, limit: usize, max_bytes: usize) -> Result<Vec<FeedRow>> {
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
                |r| {
                    Ok(FeedRow {
                        id: r.get(0)?,
                        session_id: r.get(1)?,
                        kind: r.get(2)?,
                        body: r.get(3)?,
                        created_at: r.get(4)?,
                    })
                },
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

    fn schema(&self) -> i64 {
        self.version
    }

    fn where_is(&self) -> Option<String> {
        self.conn
            .path()
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
    }

    fn door(&self) -> &Door {
        &self.door
    }

    fn importing(&mut self) {
        if !self.bulk {
            // Note [Import checkpoints]; a failure only keeps the default.
            let _ = self
                .conn
                .pragma_update(None, "wal_autocheckpoint", IMPORT_CHECKPOINT_PAGES);
            self.bulk = true;
        }
    }

    fn door_mut(&mut self) -> &mut Door {
        &mut self.door
    }
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
