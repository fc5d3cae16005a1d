//! The Postgres backend: the store several machines share.
//!
//! Same [`Store`] trait, same logical schema (Note \[One logical schema\]),
//! same behaviour as SQLite: one transaction per session, idempotent writes,
//! the live feed tailed by id. Built on the synchronous `postgres` client
//! with a small pool of connections, each with its prepared statements.
//!
//! Note \[Off the runtime\]: the `postgres` client runs each connection on a
//! private current-thread tokio runtime and blocks on it, and blocking on
//! (or dropping) a runtime from inside another runtime panics. The store is
//! called from async code (the runner writes from its session future), so
//! every call that touches a connection — including dropping one — goes
//! through `off_runtime`: run directly on a plain thread, or on a scoped
//! helper thread when the caller is inside a runtime. SQLite blocks the
//! caller the same way; only the thread differs.
//!
//! Note \[Connect deadline\]: the client's `connect_timeout` bounds only the
//! socket connect; a server that accepts and never answers would hold the
//! start-up handshake forever. Each connect runs on its own thread and is
//! given up after the deadline ([`CONNECT_ENV`], default 5000 ms) with
//! [`Error::ConnectTimeout`]; the abandoned thread ends when the socket does.
//!
//! Note \[Pool\]: a hand-written pool of idle connections rather than r2d2:
//! r2d2 reports a failed connect as text, and callers need its kind (exit
//! codes, and retrying when a database restarts). A connection goes back to
//! the pool after each call unless it is closed; at most [`MAX_IDLE`] stay.
//!
//! Note \[Store outage\]: a database that restarts or refuses connections
//! while a `run` is in progress must cost no line and must not stall the
//! agent. The runtime writes the forensic log first, so nothing is lost
//! whatever the store does; what the store does is this:
//! - A failure that says the server is gone ([`ErrorKind::Unavailable`]:
//!   refused, reset, `57P01` shutting down, connect deadline) drops that
//!   connection and forgets every idle one: the next call connects anew.
//! - The session write ([`Store::write_session`]) is idempotent, so it is
//!   tried again through an outage, with a backoff of 100 ms doubling to
//!   2 s (jittered), until the server has been unreachable for
//!   [`OUTAGE_ENV`] (default 30 s; counted from the first failure of the
//!   outage, so a run waits for it once). So are the run's last feed lines
//!   ([`Store::append_feed`], which `run` drains just before the session):
//!   a database back within the deadline gets every line and the session,
//!   in order, as if nothing happened. (A feed batch whose commit was
//!   cut off by the outage may have committed and is written again: a
//!   watcher may see such a line twice; the forensic log and the session's
//!   rows never are.)
//!   Past it the error goes to the caller: `run` prints the agent's result
//!   as usual, then one line saying the session is only in its forensic
//!   log with the exact `agentshape ingest --store … LOG` command, and
//!   exits 75 (temporary failure), the code of an unreachable store.
//! - Heartbeats and live-feed flushes never wait for a connect longer than
//!   [`NOW_PATIENCE`], and while such a connect is still under way the
//!   next ones fail at once instead of starting another (a connect that
//!   succeeds late leaves its connection in the pool). The feed keeps its
//!   entries and retries them, bounded: past the queue's bound entries are
//!   dropped and counted (runtime's Note \[Live feed\]); a missed heartbeat
//!   is harmless. The stream of the agent is read throughout.
//!
//! Note \[Feed order on Postgres\]: `serve` tails the feed by id, which is
//! only safe if ids become visible in id order. With concurrent writers a
//! sequence does not give that (a transaction that drew id 10 may commit
//! after one that drew 11, and a tailer at 11 would never see 10). Every
//! transaction that appends to the feed takes one advisory lock
//! ([`FEED_LOCK`]) just before its feed rows and holds it to commit, so ids
//! are drawn and committed one writer at a time. Session writes append
//! their `ended` row last, so the lock is held only for the commit.
//!
//! Note \[Reinforcing on Postgres\]: SQLite serialises writers, so
//! "find the active memory, then update it" cannot race there. On Postgres
//! two sessions can, losing one reinforcement (or inserting the memory
//! twice). A partial unique index keeps one active memory per
//! (category, service), and each memory is one `INSERT … ON CONFLICT … DO
//! UPDATE` whose arithmetic (raise by [`REINFORCE_STEP`], round to
//! hundredths, cap at 1) happens in SQL on the locked row: concurrent
//! reinforcements queue on the row and each sees the previous one.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use postgres::{Client, Statement, Transaction};

use agentshape_core::secrets::{MaskKey, Masker};

use crate::conninfo::redact;
use crate::error::{Error, ErrorKind, PgContext, Result};
use crate::migrate::{self, Migration, PG_MIGRATION_LOCK, Plan};
use crate::secrets::{self, Spot};
use crate::tls::{SslMode, Tls};
use crate::{
    Claim, ClaimRequest, FeedEntry, FeedRow, HookCall, HookChain, HookSaved, LEVELS, LOST_AFTER_MS,
    LeaseState, MemoryLine, NEW_MEMORY_CONFIDENCE, NativeMark, NativeReport, Overview,
    REINFORCE_STEP, SessionLine, SessionRecord, Store, WriteReport, hooks, parse_memory_key, time,
};

/// The environment variable bounding each connect, in milliseconds.
pub const CONNECT_ENV: &str = "AGENTSHAPE_STORE_CONNECT_MS";

/// Idle connections kept per store.
pub const MAX_IDLE: usize = 4;

/// The advisory lock feed writers hold to commit (Note \[Feed order on
/// Postgres\]); ASCII "agshfeed".
pub const FEED_LOCK: i64 = 0x6167_7368_6665_6564;

/// Run `f` where blocking on a private runtime is allowed (Note \[Off the
/// runtime\]). A panic in `f` is resumed on the caller's thread.
pub(crate) fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(v) => v,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

fn connect_deadline() -> Duration {
    let ms = std::env::var(CONNECT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(5_000);
    Duration::from_millis(ms.max(1))
}

/// The environment variable bounding how long a session write waits for a
/// store that cannot be reached, in milliseconds (Note \[Store outage\]).
pub const OUTAGE_ENV: &str = "AGENTSHAPE_STORE_OUTAGE_MS";

/// How long a session write waits through an outage by default.
pub const OUTAGE_DEFAULT_MS: u64 = 30_000;

/// The longest a heartbeat or a live-feed flush waits for a new connection.
pub const NOW_PATIENCE: Duration = Duration::from_millis(250);

fn outage_deadline() -> Duration {
    let ms = std::env::var(OUTAGE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(OUTAGE_DEFAULT_MS);
    Duration::from_millis(ms)
}

/// The pause before reconnect `attempt` (1-based): 100 ms doubling to 2 s,
/// with jitter so a fleet that lost its database does not come back in step.
fn outage_backoff(attempt: u32) -> Duration {
    let base = (100u64 << attempt.saturating_sub(1).min(5)).min(2_000);
    Duration::from_millis(base / 2 + fastish_jitter(base / 2))
}

/// How many more times a busy transaction (deadlock, serialization failure,
/// lock timeout) is tried, with the SQLite backend's backoff.
const RETRIES: u32 = 5;

/// One connection and the statements prepared on it.
struct Conn {
    client: Client,
    stmts: HashMap<&'static str, Statement>,
}

/// Prepare `sql` once per connection (Note \[Pool\]).
fn stmt(
    tx: &mut Transaction<'_>,
    cache: &mut HashMap<&'static str, Statement>,
    sql: &'static str,
) -> std::result::Result<Statement, postgres::Error> {
    if let Some(s) = cache.get(sql) {
        return Ok(s.clone());
    }
    let s = tx.prepare(sql)?;
    cache.insert(sql, s.clone());
    Ok(s)
}

/// The connections of one store (Note \[Pool\]).
struct Pool {
    config: postgres::Config,
    /// `sslmode` and its roots (Note \[sslmode\] in `tls`).
    tls: Tls,
    /// The URL for messages, password redacted.
    url: String,
    /// Shared with connect threads, which leave a connection made after
    /// its caller stopped waiting here (Note \[Store outage\]).
    idle: Arc<Mutex<Vec<Conn>>>,
    deadline: Duration,
    /// A connect for a caller that could not wait is still under way.
    connecting: Arc<AtomicBool>,
    /// When the server stopped answering, while it still does not
    /// (Note \[Store outage\]: the outage deadline counts from here).
    down_since: Mutex<Option<std::time::Instant>>,
}

impl Pool {
    /// Record that a call failed because the server is gone (or that one
    /// succeeded): the start of the current outage, if any.
    fn note_outage(&self, down: bool) {
        if let Ok(mut since) = self.down_since.lock() {
            match (down, *since) {
                (true, None) => *since = Some(std::time::Instant::now()),
                (false, Some(_)) => *since = None,
                _ => {}
            }
        }
    }

    /// How long the server has been unreachable (zero when it answers).
    fn down_for(&self) -> Duration {
        self.down_since
            .lock()
            .ok()
            .and_then(|s| *s)
            .map_or(Duration::ZERO, |t| t.elapsed())
    }

    /// A pooled connection, or a new one within the deadline.
    fn get(&self) -> Result<Conn> {
        let reused = self
            .idle
            .lock()
            .ok()
            .and_then(|mut idle| idle.pop())
            .filter(|c| !c.client.is_closed());
        match reused {
            Some(c) => Ok(c),
            None => self.connect(),
        }
    }

    /// Note \[Connect deadline\].
    fn connect(&self) -> Result<Conn> {
        self.connect_within(self.deadline)
    }

    /// A connection for a call that must not wait (the heartbeat, the live
    /// feed): a pooled one, else a connect given at most [`NOW_PATIENCE`];
    /// while an earlier such connect is still under way, none is started
    /// and the call fails at once (Note \[Store outage\]).
    fn get_now(&self) -> Result<Conn> {
        let reused = self
            .idle
            .lock()
            .ok()
            .and_then(|mut idle| idle.pop())
            .filter(|c| !c.client.is_closed());
        if let Some(c) = reused {
            return Ok(c);
        }
        if self.connecting.load(Ordering::Acquire) {
            return Err(Error::ConnectTimeout {
                url: self.url.clone(),
                after_ms: 0,
            });
        }
        self.connect_within(self.deadline.min(NOW_PATIENCE))
    }

    /// Connect on a thread of its own, waiting at most `wait`. A connect
    /// that succeeds after the caller gave up leaves its connection in the
    /// pool for the next call.
    fn connect_within(&self, wait: Duration) -> Result<Conn> {
        let (tx, rx) = mpsc::sync_channel(1);
        let config = self.config.clone();
        let tls = self.tls.connector();
        let idle = Arc::clone(&self.idle);
        let connecting = Arc::clone(&self.connecting);
        connecting.store(true, Ordering::Release);
        let spawned = std::thread::Builder::new()
            .name("agentshape-pg-connect".to_owned())
            .spawn(move || {
                let result = config.connect(tls);
                connecting.store(false, Ordering::Release);
                // The receiver may be gone (the caller stopped waiting).
                if let Err(mpsc::SendError(Ok(client))) = tx.send(result) {
                    let conn = Conn {
                        client,
                        stmts: HashMap::new(),
                    };
                    match idle.lock() {
                        Ok(mut idle) if idle.len() < MAX_IDLE => idle.push(conn),
                        // Dropped here, off any runtime.
                        _ => drop(conn),
                    }
                }
            });
        if let Err(source) = spawned {
            self.connecting.store(false, Ordering::Release);
            return Err(Error::Io {
                context: format!("connecting to `{}`", self.url),
                source,
            });
        }
        match rx.recv_timeout(wait) {
            Ok(Ok(client)) => Ok(Conn {
                client,
                stmts: HashMap::new(),
            }),
            Ok(Err(source)) => Err(Error::Postgres {
                context: format!(
                    "cannot connect to the store `{}`{}",
                    self.url,
                    self.tls.error_note()
                ),
                source,
            }),
            Err(_) => Err(Error::ConnectTimeout {
                url: self.url.clone(),
                after_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }

    /// Forget every idle connection: after the server went away they are
    /// all dead, and each would cost a failed call to find out.
    fn forget_idle(&self) {
        let idle = self
            .idle
            .lock()
            .map(|mut idle| std::mem::take(&mut *idle))
            .unwrap_or_default();
        drop(idle);
    }

    fn put(&self, conn: Conn) {
        if conn.client.is_closed() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_IDLE
        {
            idle.push(conn);
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let idle = self
            .idle
            .lock()
            .map(|mut idle| std::mem::take(&mut *idle))
            .unwrap_or_default();
        off_runtime(move || drop(idle));
    }
}

/// A Postgres store. Cheap to clone: clones share the pool.
#[derive(Clone)]
pub struct PgStore {
    pool: Arc<Pool>,
    /// The schema version found (a read-only store may be older).
    version: i64,
    /// The store's mask key (Note \[Store door\] in `secrets`).
    key: Option<MaskKey>,
    /// What rows go through before they are written; `None`: masking off.
    masker: Option<Masker>,
    /// A caller that must not wait ([`PgStore::open_with_patience`]): the
    /// lock timeout of its hook writes, which are then not retried.
    patience: Option<Duration>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &self.pool.url)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// A connection string read as the store reads it: the client's
/// [`postgres::Config`] and the TLS options it does not know (`verify-*`
/// modes, `sslrootcert`), taken out first (Note \[sslmode\] in `tls`).
pub(crate) struct PgConfig {
    pub config: postgres::Config,
    pub mode: SslMode,
    pub root_cert: Option<std::path::PathBuf>,
}

/// Read `url` (a `postgres://` URL or `key=value` pairs).
///
/// # Errors
/// [`Error::BadUrl`] (a usage error): what the client cannot read, an
/// unknown `sslmode`.
pub(crate) fn read_config(url: &str) -> Result<PgConfig> {
    let bad = |reason: String| Error::BadUrl {
        url: redact(url),
        reason,
    };
    let (rest, tls) = crate::conninfo::split_tls(url, &["sslmode", "sslrootcert"]);
    let config: postgres::Config = rest
        .parse()
        .map_err(|e| bad(format!("not a Postgres URL the client can read: {e}")))?;
    let mut mode = SslMode::Prefer;
    let mut root_cert = None;
    for (key, value) in tls {
        match key {
            "sslmode" => mode = SslMode::parse(&value).map_err(bad)?,
            _ if value.is_empty() => {}
            _ => root_cert = Some(std::path::PathBuf::from(value)),
        }
    }
    Ok(PgConfig {
        config,
        mode,
        root_cert,
    })
}

fn pool(url: &str, read_only: bool, deadline: Option<Duration>) -> Result<Pool> {
    let redacted = redact(url);
    let PgConfig {
        mut config,
        mode,
        root_cert,
    } = read_config(url)?;
    let hosts = config.get_hosts();
    let local = !hosts.is_empty()
        && hosts
            .iter()
            .all(|h| matches!(h, postgres::config::Host::Unix(_)));
    let tls = Tls::new(mode, root_cert, local).map_err(|reason| Error::BadUrl {
        url: redacted.clone(),
        reason,
    })?;
    config.ssl_mode(tls.client_mode());
    let deadline = deadline.unwrap_or_else(connect_deadline);
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(deadline);
    }
    if config.get_application_name().is_none() {
        config.application_name("agentshape");
    }
    if read_only {
        // Enforced by the server, not just by us.
        let opts = format!(
            "{} -c default_transaction_read_only=on",
            config.get_options().unwrap_or("")
        );
        config.options(opts.trim());
    }
    Ok(Pool {
        config,
        tls,
        url: redacted,
        idle: Arc::default(),
        deadline,
        connecting: Arc::default(),
        down_since: Mutex::new(None),
    })
}

/// The applied version: the highest row of `schema_migrations`, 0 when the
/// table does not exist.
fn read_version(c: &mut impl postgres::GenericClient) -> std::result::Result<i64, postgres::Error> {
    let exists: bool = c
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let v: Option<i64> = c
        .query_one("SELECT MAX(version) FROM schema_migrations", &[])?
        .get(0);
    Ok(v.unwrap_or(0))
}

/// Note \[Migrations\], on Postgres: one transaction under an advisory lock.
fn migrate_pg(c: &mut Client, url: &str) -> Result<i64> {
    let ctx = || format!("migrating the store `{url}`");
    let known = migrate::latest(migrate::POSTGRES);
    let too_new = |found| Error::TooNew {
        path: url.to_owned(),
        found,
        known,
    };
    // Most opens find the schema current: check without taking the lock.
    match migrate::plan(migrate::POSTGRES, read_version(c).pg(ctx)?) {
        Plan::Current => return Ok(known),
        Plan::TooNew { found, .. } => return Err(too_new(found)),
        Plan::Apply(_) => {}
    }
    let mut tx = c.transaction().pg(ctx)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&PG_MIGRATION_LOCK])
        .pg(ctx)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version    BIGINT PRIMARY KEY,
            name       TEXT NOT NULL,
            applied_at TEXT NOT NULL
        )",
    )
    .pg(ctx)?;
    let pending: &[Migration] =
        match migrate::plan(migrate::POSTGRES, read_version(&mut tx).pg(ctx)?) {
            Plan::Current => &[],
            Plan::TooNew { found, .. } => return Err(too_new(found)),
            Plan::Apply(list) => list,
        };
    for m in pending {
        tx.batch_execute(m.sql)
            .pg(|| format!("applying migration {} to `{url}`", m.name))?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
            &[&m.version, &m.name, &time::now()],
        )
        .pg(ctx)?;
    }
    tx.commit().pg(ctx)?;
    Ok(known)
}

/// The store's mask key, made race-free (Note \[Store door\] in `secrets`).
fn ensure_key_pg(c: &mut Client, url: &str, fresh: &MaskKey) -> Result<MaskKey> {
    let ctx = || format!("reading the mask key of `{url}`");
    // Read first: a store that has its key needs no write to be opened.
    if let Ok(Some(row)) = c.query_opt(
        "SELECT value FROM store_meta WHERE key = $1",
        &[&secrets::MASK_KEY],
    ) && let Ok(key) = secrets::parse_key(&row.get::<_, String>(0))
    {
        return Ok(key);
    }
    c.execute(
        "INSERT INTO store_meta (key, value) VALUES ($1, $2), ($3, $4) ON CONFLICT (key) DO NOTHING",
        &[
            &secrets::MASK_KEY,
            &fresh.to_hex(),
            &secrets::MASKED_SINCE,
            &time::now(),
        ],
    )
    .pg(ctx)?;
    let row = c
        .query_one(
            "SELECT value FROM store_meta WHERE key = $1",
            &[&secrets::MASK_KEY],
        )
        .pg(ctx)?;
    secrets::parse_key(&row.get::<_, String>(0))
}

const PG_INSERT_FOUND: &str = "INSERT INTO secrets_found
    (session_id, rule, fingerprint, place, feed_id, created_at)
    SELECT a, b, c, d, e, f
    FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[])
        AS t(a, b, c, d, e, f)";

const PG_RECOUNT: &str = "UPDATE sessions SET secrets_masked =
    (SELECT COUNT(*) FROM secrets_found f WHERE f.session_id = sessions.id)
    WHERE id = $1 AND (secrets_masked IS NOT NULL OR $2)";

const PG_UNMASKED: &str = "UPDATE sessions SET secrets_masked = NULL WHERE id = $1";

/// As SQLite's `record_spots` (Note \[Store door\] in `secrets`).
fn record_spots_pg(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    masking: bool,
    sessions: &[&str],
    rows: &[(&str, &str, Spot, Option<i64>)],
    made: bool,
) -> PgResult<()> {
    if !masking {
        let s = stmt(tx, stmts, PG_UNMASKED)?;
        for id in sessions {
            tx.execute(&s, &[id])?;
        }
        return Ok(());
    }
    if !rows.is_empty() {
        let s = stmt(tx, stmts, PG_INSERT_FOUND)?;
        let session: Vec<&str> = rows.iter().map(|r| r.0).collect();
        let rule: Vec<&str> = rows.iter().map(|r| r.2.rule.as_str()).collect();
        let fp: Vec<&str> = rows.iter().map(|r| r.2.fingerprint.as_str()).collect();
        let place: Vec<&str> = rows.iter().map(|r| r.2.place).collect();
        let feed: Vec<Option<i64>> = rows.iter().map(|r| r.3).collect();
        let at: Vec<&str> = rows.iter().map(|r| r.1).collect();
        tx.execute(&s, &[&session, &rule, &fp, &place, &feed, &at])?;
    }
    let s = stmt(tx, stmts, PG_RECOUNT)?;
    for id in sessions {
        tx.execute(&s, &[id, &made])?;
    }
    Ok(())
}

/// The `secrets_found` rows of a feed batch: (session, time, spot, row id).
fn feed_spots_pg<'a>(
    entries: &'a [FeedEntry],
    spots: &[Spot],
    ids: &[i64],
) -> Vec<(&'a str, &'a str, Spot, Option<i64>)> {
    spots
        .iter()
        .filter_map(|s| {
            let i = s.feed_index?;
            let e = entries.get(i)?;
            Some((
                e.session_id.as_str(),
                e.created_at.as_str(),
                s.clone(),
                ids.get(i).copied(),
            ))
        })
        .collect()
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A pause before retry `attempt` (1-based), as SQLite's.
fn backoff(attempt: u32) -> Duration {
    let base = 20u64 << attempt.min(6);
    Duration::from_millis(base + fastish_jitter(base))
}

fn fastish_jitter(base: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    (nanos ^ u64::from(std::process::id()).wrapping_mul(2_654_435_761)) % (base + 1)
}

type PgResult<T> = std::result::Result<T, postgres::Error>;
type Stmts = HashMap<&'static str, Statement>;

impl PgStore {
    /// Connect to `url` and apply pending migrations (Note \[Migrations\]).
    ///
    /// # Errors
    /// A URL the client cannot read ([`ErrorKind::Usage`]),
    /// a server that cannot be reached ([`ErrorKind::Unavailable`]),
    /// refused credentials, a schema from a newer build.
    pub fn open(url: &str) -> Result<Self> {
        Self::open_how(url, None)
    }

    /// [`PgStore::open`] for a caller that must not wait long
    /// (`agentshape hook`): each connect is given up after `patience`
    /// (instead of [`CONNECT_ENV`]'s), and [`Store::save_hook`] waits at most
    /// that long for a lock, without retrying.
    ///
    /// # Errors
    /// As [`PgStore::open`].
    pub fn open_with_patience(url: &str, patience: Duration) -> Result<Self> {
        Self::open_how(url, Some(patience))
    }

    fn open_how(url: &str, patience: Option<Duration>) -> Result<Self> {
        let pool = pool(url, false, patience)?;
        let fresh = secrets::new_key()?;
        let (version, key) = off_runtime(|| -> Result<(i64, MaskKey)> {
            let mut conn = pool.get()?;
            let v = migrate_pg(&mut conn.client, &pool.url)
                .and_then(|v| Ok((v, ensure_key_pg(&mut conn.client, &pool.url, &fresh)?)));
            pool.put(conn);
            v
        })?;
        Ok(PgStore {
            pool: Arc::new(pool),
            version,
            masker: secrets::process_masker(&key),
            key: Some(key),
            patience,
        })
    }

    /// Connect for reading only (the server refuses writes): nothing is
    /// created or migrated; a database without the agentshape schema is
    /// [`Error::Missing`].
    ///
    /// # Errors
    /// As [`PgStore::open`], and [`Error::Missing`].
    pub fn open_read_only(url: &str) -> Result<Self> {
        let pool = pool(url, true, None)?;
        let version = off_runtime(|| -> Result<i64> {
            let mut conn = pool.get()?;
            let v = read_version(&mut conn.client)
                .pg(|| format!("reading the schema of `{}`", pool.url));
            pool.put(conn);
            v
        })?;
        let known = migrate::latest(migrate::POSTGRES);
        if version == 0 {
            return Err(Error::Missing { path: redact(url) });
        }
        if version > known {
            return Err(Error::TooNew {
                path: redact(url),
                found: version,
                known,
            });
        }
        let key = if version >= 3 {
            off_runtime(|| {
                let mut conn = pool.get().ok()?;
                let k = conn
                    .client
                    .query_opt(
                        "SELECT value FROM store_meta WHERE key = $1",
                        &[&secrets::MASK_KEY],
                    )
                    .ok()
                    .flatten()
                    .and_then(|r| secrets::parse_key(&r.get::<_, String>(0)).ok());
                pool.put(conn);
                k
            })
        } else {
            None
        };
        Ok(PgStore {
            pool: Arc::new(pool),
            version,
            masker: key.as_ref().and_then(secrets::process_masker),
            key,
            patience: None,
        })
    }

    /// The URL, password redacted.
    pub fn url(&self) -> &str {
        &self.pool.url
    }

    /// How the store is reached when that is less than verified TLS (Note
    /// \[sslmode\] in `tls`): "connected with TLS, certificate not verified
    /// (sslmode=require)"; `None` for `verify-full` and Unix sockets.
    pub fn transport(&self) -> Option<String> {
        self.pool.tls.transport()
    }

    /// The schema version of the database.
    pub fn version(&self) -> i64 {
        self.version
    }

    /// Run `f` on a pooled connection, off the runtime.
    fn with_conn<T: Send>(&self, f: impl FnOnce(&mut Conn) -> Result<T> + Send) -> Result<T> {
        self.with_conn_how(false, f)
    }

    /// As [`PgStore::with_conn`]; `now`: never wait long for a connection
    /// (Note \[Store outage\]). A failure that says the server is gone
    /// forgets the idle connections too.
    fn with_conn_how<T: Send>(
        &self,
        now: bool,
        f: impl FnOnce(&mut Conn) -> Result<T> + Send,
    ) -> Result<T> {
        let pool = &self.pool;
        off_runtime(move || {
            let got = if now { pool.get_now() } else { pool.get() };
            let mut conn = match got {
                Ok(c) => c,
                Err(e) => {
                    pool.note_outage(e.kind() == ErrorKind::Unavailable);
                    return Err(e);
                }
            };
            let out = f(&mut conn);
            let down = matches!(&out, Err(e) if e.kind() == ErrorKind::Unavailable);
            if down {
                pool.forget_idle();
            }
            pool.note_outage(down);
            pool.put(conn);
            out
        })
    }

    /// One transaction, retried while busy (deadlock, serialization
    /// failure, lock timeout), with `lock_timeout` when `patience` is given.
    fn write_tx<T: Send>(
        &self,
        what: &(dyn Fn() -> String + Sync),
        patience: Option<Duration>,
        retries: u32,
        f: &(dyn Fn(&mut Transaction<'_>, &mut Stmts) -> PgResult<T> + Sync),
    ) -> Result<T> {
        self.write_tx_how(false, what, patience, retries, f)
    }

    /// [`PgStore::write_tx`] for a call that must not wait on a connect
    /// (Note \[Store outage\]).
    fn write_tx_now<T: Send>(
        &self,
        what: &(dyn Fn() -> String + Sync),
        patience: Duration,
        f: &(dyn Fn(&mut Transaction<'_>, &mut Stmts) -> PgResult<T> + Sync),
    ) -> Result<T> {
        self.write_tx_how(true, what, Some(patience), 0, f)
    }

    fn write_tx_how<T: Send>(
        &self,
        now: bool,
        what: &(dyn Fn() -> String + Sync),
        patience: Option<Duration>,
        retries: u32,
        f: &(dyn Fn(&mut Transaction<'_>, &mut Stmts) -> PgResult<T> + Sync),
    ) -> Result<T> {
        let mut attempt = 0;
        loop {
            let result = self.with_conn_how(now, |conn| {
                let Conn { client, stmts } = conn;
                let mut tx = client.transaction().pg(what)?;
                if let Some(p) = patience {
                    tx.batch_execute(&format!("SET LOCAL lock_timeout = {}", p.as_millis()))
                        .pg(what)?;
                }
                let out = f(&mut tx, stmts).pg(what)?;
                tx.commit().pg(what)?;
                Ok(out)
            });
            match result {
                Err(e) if e.is_busy() && attempt < retries => {
                    attempt += 1;
                    std::thread::sleep(backoff(attempt));
                }
                other => return other,
            }
        }
    }

    /// [`PgStore::write_tx`], and while the server cannot be reached
    /// (restarting, refusing connections) tried again with a bounded
    /// backoff until it has been unreachable for the outage deadline
    /// ([`OUTAGE_ENV`]): Note \[Store outage\]. The deadline counts from the
    /// first failure of the outage, so writes made one after another
    /// (the feed's last lines, then the session) wait for it once, not
    /// each in turn.
    fn write_tx_through_outage<T: Send>(
        &self,
        what: &(dyn Fn() -> String + Sync),
        f: &(dyn Fn(&mut Transaction<'_>, &mut Stmts) -> PgResult<T> + Sync),
    ) -> Result<T> {
        let deadline = outage_deadline();
        let mut attempt = 0u32;
        loop {
            match self.write_tx(what, None, RETRIES, f) {
                Err(e) if e.kind() == ErrorKind::Unavailable && self.pool.down_for() < deadline => {
                    attempt = attempt.saturating_add(1);
                    let left = deadline.saturating_sub(self.pool.down_for());
                    std::thread::sleep(outage_backoff(attempt).min(left));
                }
                other => return other,
            }
        }
    }

    /// The newest feed id (0 for an empty feed): where a new tailer starts.
    ///
    /// # Errors
    /// When the database cannot be read.
    pub fn feed_max_id(&self) -> Result<i64> {
        self.with_conn(|conn| {
            conn.client
                .query_one("SELECT COALESCE(MAX(id), 0)::BIGINT FROM feed", &[])
                .map(|r| r.get(0))
                .pg(|| "reading the newest feed id".to_owned())
        })
    }

    /// The rows of `sql` (`$N` placeholders) as cells: the dashboard's
    /// queries (Note \[Queries on both backends\] in `query`).
    pub(crate) fn query_cells(
        &self,
        sql: &str,
        params: &[crate::rows::Cell],
        what: &dyn Fn() -> String,
    ) -> Result<Vec<Vec<crate::rows::Cell>>> {
        let context = what();
        let ctx = || context.clone();
        self.with_conn(|conn| {
            let rows = conn.client.query(sql, &as_params(params)).pg(ctx)?;
            rows.iter().map(|r| cells(r).pg(ctx)).collect()
        })
    }

    /// Run a query through the simple protocol and return every value as
    /// text (`NULL` for null): ad-hoc reports and tests that compare rows
    /// across backends.
    ///
    /// # Errors
    /// When the query fails.
    pub fn query_text(&self, sql: &str) -> Result<Vec<Vec<String>>> {
        self.with_conn(|conn| {
            let msgs = conn
                .client
                .simple_query(sql)
                .pg(|| format!("running `{sql}`"))?;
            Ok(msgs
                .into_iter()
                .filter_map(|m| match m {
                    postgres::SimpleQueryMessage::Row(r) => Some(
                        (0..r.len())
                            .map(|i| r.get(i).unwrap_or("NULL").to_owned())
                            .collect(),
                    ),
                    _ => None,
                })
                .collect())
        })
    }
}

const INSERT_SESSION: &str =
    "INSERT INTO sessions (id, parent_id, tier, profile, agent, model, status, exit_code,
        started_at, ended_at, cost_usd, duration_ms, num_turns, input_tokens, output_tokens,
        extraction_method, error, error_category, summary, escalation, raw_log_path,
        output, verdict, heartbeat_at, project, git_branch, agent_version, cache_read_tokens,
        cache_write_tokens, cost_estimated, source_path)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
        $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31)
     ON CONFLICT (id) DO NOTHING";

const UPDATE_SESSION: &str =
    "UPDATE sessions SET parent_id = $2, tier = $3, profile = $4, agent = $5,
        model = $6, status = $7, exit_code = $8, started_at = $9, ended_at = $10, cost_usd = $11,
        duration_ms = $12, num_turns = $13, input_tokens = $14, output_tokens = $15,
        extraction_method = $16, error = $17, error_category = $18, summary = $19,
        escalation = $20, raw_log_path = $21, output = $22, verdict = $23, heartbeat_at = $24,
        project = $25, git_branch = $26, agent_version = $27, cache_read_tokens = $28,
        cache_write_tokens = $29, cost_estimated = $30, source_path = $31
     WHERE id = $1";

/// As [`UPDATE_SESSION`] for a native import: the verdict, output,
/// extraction method and profile the record lacks are kept (SQLite's
/// `Put::Fill`; Note \[Hook chains\]).
const UPDATE_SESSION_FILL: &str =
    "UPDATE sessions SET parent_id = $2, tier = $3, profile = COALESCE($4, profile), agent = $5,
        model = $6, status = $7, exit_code = $8, started_at = $9, ended_at = $10, cost_usd = $11,
        duration_ms = $12, num_turns = $13, input_tokens = $14, output_tokens = $15,
        extraction_method = COALESCE($16, extraction_method), error = $17, error_category = $18,
        summary = $19, escalation = $20, raw_log_path = $21, output = COALESCE($22, output),
        verdict = COALESCE($23, verdict), heartbeat_at = $24,
        project = $25, git_branch = $26, agent_version = $27, cache_read_tokens = $28,
        cache_write_tokens = $29, cost_estimated = $30, source_path = $31
     WHERE id = $1";

/// As SQLite's `HOOK_CHAIN` (Note \[Hook chains\]).
const HOOK_CHAIN_PG: &str = "SELECT COUNT(*) FILTER (WHERE verdict = 'blocked'),
        COUNT(*) FILTER (WHERE stop_hook_active)
     FROM hook_calls
     WHERE session_id = $1 AND agent_id IS NOT DISTINCT FROM $2::text
       AND event IN ('Stop', 'SubagentStop')
       AND id > COALESCE((SELECT MAX(id) FROM hook_calls
                          WHERE session_id = $1 AND agent_id IS NOT DISTINCT FROM $2::text
                            AND event IN ('Stop', 'SubagentStop')
                            AND verdict NOT IN ('blocked', 'gave_up')), 0)
       AND id >= COALESCE((SELECT MAX(id) FROM hook_calls
                           WHERE session_id = $1 AND agent_id IS NOT DISTINCT FROM $2::text
                             AND event IN ('Stop', 'SubagentStop')
                             AND NOT stop_hook_active), 0)";

const SET_HOOK_VERDICT: &str =
    "UPDATE sessions SET verdict = $2, extraction_method = $3, output = $4,
        profile = COALESCE($5, profile)
     WHERE id = $1";

const INSERT_HOOK: &str = "INSERT INTO hook_calls (session_id, agent_id, agent_type, event,
        verdict, method, errors, blocks, stop_hook_active, profile, reason, message, warning,
        created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     RETURNING id";

const DELETE_TOOLS: &str = "DELETE FROM session_tools WHERE session_id = $1";

/// A session's tools in one statement (Note \[One statement per table\]);
/// a tool named twice in a record is summed.
const INSERT_TOOLS: &str = "INSERT INTO session_tools (session_id, tool, calls, errors)
     SELECT $1, t, SUM(c), SUM(e)
     FROM UNNEST($2::text[], $3::bigint[], $4::bigint[]) AS u(t, c, e)
     GROUP BY t";

/// A session's model calls (SQLite's `put_usage`: a key another session
/// stored first stays that session's).
const UPSERT_USAGE: &str = "INSERT INTO usage_calls (key, session_id, at_ms, model, sidechain,
        input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
        cache_write_5m_tokens, cache_write_1h_tokens)
     SELECT k, $1, a, m, s, i, o, r, cr, cw5, cw1
     FROM UNNEST($2::text[], $3::bigint[], $4::text[], $5::boolean[], $6::bigint[],
                 $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[])
          AS u(k, a, m, s, i, o, r, cr, cw5, cw1)
     ON CONFLICT (key) DO UPDATE SET at_ms = excluded.at_ms, model = excluded.model,
        sidechain = excluded.sidechain, input_tokens = excluded.input_tokens,
        output_tokens = excluded.output_tokens, reasoning_tokens = excluded.reasoning_tokens,
        cache_read_tokens = excluded.cache_read_tokens,
        cache_write_5m_tokens = excluded.cache_write_5m_tokens,
        cache_write_1h_tokens = excluded.cache_write_1h_tokens
     WHERE usage_calls.session_id = excluded.session_id";

fn put_usage(tx: &mut Transaction<'_>, stmts: &mut Stmts, r: &SessionRecord) -> PgResult<()> {
    if r.usage.is_empty() {
        return Ok(());
    }
    let col = |f: &dyn Fn(&crate::UsageRecord) -> u64| -> Vec<i64> {
        r.usage.iter().map(|u| to_i64(f(u))).collect()
    };
    let keys: Vec<&str> = r.usage.iter().map(|u| u.key.as_str()).collect();
    let at: Vec<i64> = r.usage.iter().map(|u| u.at_ms).collect();
    let models: Vec<&str> = r.usage.iter().map(|u| u.model.as_str()).collect();
    let side: Vec<bool> = r.usage.iter().map(|u| u.sidechain).collect();
    let input = col(&|u| u.tokens.input);
    let output = col(&|u| u.tokens.output);
    let reasoning = col(&|u| u.tokens.reasoning);
    let read = col(&|u| u.tokens.cache_read);
    let w5 = col(&|u| u.tokens.cache_write_5m);
    let w1 = col(&|u| u.tokens.cache_write_1h);
    let up = stmt(tx, stmts, UPSERT_USAGE)?;
    tx.execute(
        &up,
        &[
            &r.id, &keys, &at, &models, &side, &input, &output, &reasoning, &read, &w5, &w1,
        ],
    )?;
    Ok(())
}

const MARK_COLS_PG: &str =
    "path, session_id, agent, dev, inode, size, byte_offset, mtime_ms, lines, updated_at";

const UPSERT_MARK: &str = "INSERT INTO native_files (path, session_id, agent, dev, inode, size,
        byte_offset, mtime_ms, lines, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (path) DO UPDATE SET session_id = EXCLUDED.session_id,
        agent = EXCLUDED.agent, dev = EXCLUDED.dev, inode = EXCLUDED.inode,
        size = EXCLUDED.size, byte_offset = EXCLUDED.byte_offset,
        mtime_ms = EXCLUDED.mtime_ms, lines = EXCLUDED.lines,
        updated_at = EXCLUDED.updated_at";

/// [`UPSERT_MARK`] for a usage-only pass's mark.
const UPSERT_USAGE_MARK: &str =
    "INSERT INTO usage_files (path, session_id, agent, dev, inode, size,
        byte_offset, mtime_ms, lines, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (path) DO UPDATE SET session_id = EXCLUDED.session_id,
        agent = EXCLUDED.agent, dev = EXCLUDED.dev, inode = EXCLUDED.inode,
        size = EXCLUDED.size, byte_offset = EXCLUDED.byte_offset,
        mtime_ms = EXCLUDED.mtime_ms, lines = EXCLUDED.lines,
        updated_at = EXCLUDED.updated_at";

/// Which tables a native save may write, by the store's version, and
/// whether it is a usage-only pass (SQLite's `Tables`).
#[derive(Debug, Clone, Copy)]
struct Tables {
    usage_calls: bool,
    usage_files: bool,
    usage_only: bool,
}

/// A `FeedRow` from `SELECT id, session_id, kind, body, created_at`.
fn feed_row_pg(r: &postgres::Row) -> FeedRow {
    FeedRow {
        id: r.get(0),
        session_id: r.get(1),
        kind: r.get(2),
        body: r.get(3),
        created_at: r.get(4),
    }
}

/// An inode or device number as a BIGINT, bit for bit.
fn bits_i64(n: u64) -> i64 {
    i64::from_ne_bytes(n.to_ne_bytes())
}

fn bits_u64(n: i64) -> u64 {
    u64::from_ne_bytes(n.to_ne_bytes())
}

fn mark_row(r: &postgres::Row) -> NativeMark {
    NativeMark {
        path: r.get(0),
        session_id: r.get(1),
        agent: r.get(2),
        dev: bits_u64(r.get(3)),
        inode: bits_u64(r.get(4)),
        size: bits_u64(r.get(5)),
        offset: bits_u64(r.get(6)),
        mtime_ms: r.get(7),
        lines: bits_u64(r.get(8)),
        updated_at: r.get(9),
        reset: false,
        expect_offset: None,
    }
}

/// The advisory lock class of an import mark (Note \[Two importers\]);
/// the second key is `hashtext(path)`. ASCII "agnf".
const MARK_LOCK_CLASS: i32 = 0x6167_6e66;

/// Replace a session's `session_tools` rows with the record's.
fn put_tools(tx: &mut Transaction<'_>, stmts: &mut Stmts, r: &SessionRecord) -> PgResult<()> {
    let del = stmt(tx, stmts, DELETE_TOOLS)?;
    tx.execute(&del, &[&r.id])?;
    if r.tools.is_empty() {
        return Ok(());
    }
    let ins = stmt(tx, stmts, INSERT_TOOLS)?;
    let names: Vec<&str> = r.tools.iter().map(|t| t.tool.as_str()).collect();
    let calls: Vec<i64> = r.tools.iter().map(|t| to_i64(t.calls)).collect();
    let errors: Vec<i64> = r.tools.iter().map(|t| to_i64(t.errors)).collect();
    tx.execute(&ins, &[&r.id, &names, &calls, &errors])?;
    Ok(())
}

/// [`Store::save_native`]'s transaction, as SQLite's (Note \[Import
/// marks\]); the feed lock is taken last, so it is held for the shortest
/// time.
fn save_native_pg(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    r: &SessionRecord,
    feed: &[FeedEntry],
    want_ids: bool,
    mark: &NativeMark,
    tables: Tables,
) -> PgResult<(NativeReport, Vec<i64>)> {
    let mut report = NativeReport::default();
    let usage_table = tables.usage_calls;
    // One importer of a path at a time (Note [Two importers]); a mark not
    // stored yet has no row to lock, hence the advisory lock.
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext($2))",
        &[&MARK_LOCK_CLASS, &mark.path],
    )?;
    if !mark.reset && !tables.usage_only {
        let stored: Option<i64> = tx
            .query_opt(
                "SELECT byte_offset FROM native_files WHERE path = $1",
                &[&mark.path],
            )?
            .map(|row| row.get(0));
        if stored.map(bits_u64) != mark.expect_offset {
            report.conflict = true;
            return Ok((report, Vec::new()));
        }
    }
    if let Some(parent) = &r.parent_id {
        let mut holder = SessionRecord::new(parent, &r.started_at, "running");
        holder.agent.clone_from(&r.agent);
        holder.project.clone_from(&r.project);
        report.placeholder_parent = put_session(tx, stmts, &holder, false, None)?;
    }
    if tables.usage_only {
        // A usage pass reads its file whole: its calls replace the last.
        tx.execute("DELETE FROM usage_calls WHERE session_id = $1", &[&r.id])?;
    } else if mark.reset {
        let n = tx.execute("DELETE FROM feed WHERE session_id = $1", &[&r.id])?;
        report.feed_dropped = usize::try_from(n).unwrap_or(usize::MAX);
        if usage_table {
            tx.execute("DELETE FROM usage_calls WHERE session_id = $1", &[&r.id])?;
        }
    }
    report.inserted = put_session(tx, stmts, r, false, None)?;
    if !report.inserted {
        put_session_sql(tx, stmts, r, UPDATE_SESSION_FILL, None)?;
    }
    put_tools(tx, stmts, r)?;
    if usage_table {
        put_usage(tx, stmts, r)?;
    }
    if tables.usage_files && !tables.usage_only {
        // Imported now: the usage pass's mark has served its turn.
        tx.execute("DELETE FROM usage_files WHERE path = $1", &[&mark.path])?;
    }
    let up = stmt(
        tx,
        stmts,
        if tables.usage_only {
            UPSERT_USAGE_MARK
        } else {
            UPSERT_MARK
        },
    )?;
    tx.execute(
        &up,
        &[
            &mark.path,
            &mark.session_id,
            &mark.agent,
            &bits_i64(mark.dev),
            &bits_i64(mark.inode),
            &bits_i64(mark.size),
            &bits_i64(mark.offset),
            &mark.mtime_ms,
            &bits_i64(mark.lines),
            &mark.updated_at,
        ],
    )?;
    let mut ids = Vec::new();
    if !feed.is_empty() {
        feed_lock(tx, stmts)?;
        ids = feed_insert_ids(tx, stmts, feed, want_ids)?;
    }
    report.feed = feed.len();
    Ok((report, ids))
}

const STATUS_FOR_UPDATE: &str = "SELECT status FROM sessions WHERE id = $1 FOR UPDATE";

/// Note \[One statement per table\]: each statement is a round trip, so a
/// session's events (and services, and a feed batch) go in as arrays,
/// unnested in order: 1,000 events are one statement, not 1,000.
const INSERT_EVENTS: &str = "INSERT INTO events (session_id, level, service, message, created_at)
     SELECT $1, l, s, m, $5
     FROM UNNEST($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(l, s, m, n)
     ORDER BY n";

const UPSERT_MEMORY: &str = "INSERT INTO memories
        (service, category, observation, confidence, active, created_at, updated_at, session_id, tier)
     VALUES ($1, $2, $3, $4, 1, $5, $5, $6, $7)
     ON CONFLICT (category, (COALESCE(service, ''))) WHERE active = 1 DO UPDATE SET
        confidence = LEAST(1.0, round(memories.confidence::numeric + $8::float8::numeric, 2))::float8,
        observation = EXCLUDED.observation, updated_at = EXCLUDED.updated_at,
        session_id = EXCLUDED.session_id, tier = EXCLUDED.tier
     RETURNING (xmax = 0)";

const INSERT_SERVICES: &str = "INSERT INTO services_checked (session_id, name, status, detail)
     SELECT $1, a, b, c
     FROM UNNEST($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(a, b, c, n)
     ORDER BY n";

const INSERT_ESCALATION: &str =
    "INSERT INTO escalations (parent_id, child_id, service, tier, created_at)
     VALUES ($1, $2, $3, $4, $5)";

const FEED_LOCK_SQL: &str = "SELECT pg_advisory_xact_lock($1)";

const INSERT_FEED: &str = "INSERT INTO feed (session_id, kind, body, created_at)
     SELECT a, b, c, d
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(a, b, c, d, n)
     ORDER BY n";

const INSERT_FEED_RETURNING: &str = "INSERT INTO feed (session_id, kind, body, created_at)
     SELECT a, b, c, d
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(a, b, c, d, n)
     ORDER BY n RETURNING id";

/// Insert (or, `update`, overwrite the running row) as SQLite's
/// `insert_session`; false when the insert found the id taken.
fn put_session(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    r: &SessionRecord,
    update: bool,
    heartbeat_at: Option<&str>,
) -> PgResult<bool> {
    let sql = if update {
        UPDATE_SESSION
    } else {
        INSERT_SESSION
    };
    put_session_sql(tx, stmts, r, sql, heartbeat_at)
}

/// [`put_session`] with the statement given (one of the session
/// statements, which all take the same parameters).
fn put_session_sql(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    r: &SessionRecord,
    sql: &'static str,
    heartbeat_at: Option<&str>,
) -> PgResult<bool> {
    let escalation = r.escalation.as_ref().map(ToString::to_string);
    let output = r.output.as_ref().map(ToString::to_string);
    let verdict = r.verdict.as_ref().map(ToString::to_string);
    let s = stmt(tx, stmts, sql)?;
    let n = tx.execute(
        &s,
        &[
            &r.id,
            &r.parent_id,
            &i64::from(r.tier),
            &r.profile,
            &r.agent,
            &r.model,
            &r.status,
            &r.exit_code.map(i64::from),
            &r.started_at,
            &r.ended_at,
            &r.cost_usd,
            &r.duration_ms.map(to_i64),
            &r.num_turns.map(to_i64),
            &to_i64(r.input_tokens),
            &to_i64(r.output_tokens),
            &r.extraction_method,
            &r.error,
            &r.error_category,
            &r.summary,
            &escalation,
            &r.raw_log_path,
            &output,
            &verdict,
            &heartbeat_at,
            &r.project,
            &r.git_branch,
            &r.agent_version,
            &to_i64(r.cache_read_tokens),
            &to_i64(r.cache_write_tokens),
            &r.cost_estimated,
            &r.source_path,
        ],
    )?;
    Ok(n == 1)
}

fn feed_lock(tx: &mut Transaction<'_>, stmts: &mut Stmts) -> PgResult<()> {
    let s = stmt(tx, stmts, FEED_LOCK_SQL)?;
    tx.execute(&s, &[&FEED_LOCK])?;
    Ok(())
}

/// Append feed rows in order, in one statement (Note \[One statement per
/// table\]); the caller holds [`FEED_LOCK`].
fn feed_insert(tx: &mut Transaction<'_>, stmts: &mut Stmts, entries: &[FeedEntry]) -> PgResult<()> {
    feed_insert_ids(tx, stmts, entries, false).map(|_| ())
}

/// [`feed_insert`]; with `ids`, the new rows' ids in entry order (the feed
/// lock makes them increase in that order).
fn feed_insert_ids(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    entries: &[FeedEntry],
    ids: bool,
) -> PgResult<Vec<i64>> {
    let s = stmt(
        tx,
        stmts,
        if ids {
            INSERT_FEED_RETURNING
        } else {
            INSERT_FEED
        },
    )?;
    let col = |f: fn(&FeedEntry) -> &str| entries.iter().map(f).collect::<Vec<&str>>();
    let params: [&(dyn postgres::types::ToSql + Sync); 4] = [
        &col(|e| &e.session_id),
        &col(|e| &e.kind),
        &col(|e| &e.body),
        &col(|e| &e.created_at),
    ];
    if !ids {
        tx.execute(&s, &params)?;
        return Ok(Vec::new());
    }
    let mut got: Vec<i64> = tx.query(&s, &params)?.iter().map(|r| r.get(0)).collect();
    got.sort_unstable();
    Ok(got)
}

/// The rows of a session (events, memories, services, escalations), as
/// SQLite's `write`.
fn children(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    r: &SessionRecord,
    report: &mut WriteReport,
) -> PgResult<()> {
    put_tools(tx, stmts, r)?;
    let at = r.ended_at.as_deref().unwrap_or(&r.started_at);
    let mut levels = Vec::with_capacity(r.events.len());
    let mut services = Vec::with_capacity(r.events.len());
    let mut messages = Vec::with_capacity(r.events.len());
    for e in &r.events {
        if !LEVELS.contains(&e.level.as_str()) {
            report.events_rejected += 1;
            report.warnings.push(format!(
                "event rejected: level `{}` is not one of info, warning, critical",
                e.level
            ));
            continue;
        }
        levels.push(e.level.as_str());
        services.push(e.service.as_deref());
        messages.push(e.message.as_str());
    }
    if !levels.is_empty() {
        let ev = stmt(tx, stmts, INSERT_EVENTS)?;
        let n = tx.execute(&ev, &[&r.id, &levels, &services, &messages, &at])?;
        report.events += usize::try_from(n).unwrap_or(usize::MAX);
    }
    let up = stmt(tx, stmts, UPSERT_MEMORY)?;
    let tier = i64::from(r.tier);
    for m in &r.memories {
        let Some(key) = parse_memory_key(&m.key) else {
            report.memories_rejected += 1;
            report.warnings.push(format!(
                "memory rejected: key `{}` is not `service:category` or `category`",
                m.key
            ));
            continue;
        };
        let row = tx.query_one(
            &up,
            &[
                &key.service,
                &key.category,
                &m.value,
                &NEW_MEMORY_CONFIDENCE,
                &at,
                &r.id,
                &tier,
                &REINFORCE_STEP,
            ],
        )?;
        if row.get::<_, bool>(0) {
            report.memories_new += 1;
        } else {
            report.memories_reinforced += 1;
        }
    }
    if !r.services.is_empty() {
        let svc = stmt(tx, stmts, INSERT_SERVICES)?;
        let names: Vec<&str> = r.services.iter().map(|s| s.name.as_str()).collect();
        let statuses: Vec<&str> = r.services.iter().map(|s| s.status.as_str()).collect();
        let details: Vec<Option<&str>> = r.services.iter().map(|s| s.detail.as_deref()).collect();
        let n = tx.execute(&svc, &[&r.id, &names, &statuses, &details])?;
        report.services += usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(parent) = &r.parent_id {
        let esc = stmt(tx, stmts, INSERT_ESCALATION)?;
        for service in &r.escalated_for {
            tx.execute(&esc, &[parent, &r.id, service, &tier, &r.started_at])?;
        }
    }
    Ok(())
}

/// The stored status of a session, locking its row.
fn status_for_update(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    id: &str,
) -> PgResult<Option<String>> {
    let s = stmt(tx, stmts, STATUS_FOR_UPDATE)?;
    Ok(tx.query_opt(&s, &[&id])?.map(|r| r.get(0)))
}

/// The advisory lock class of escalation claims (Note \[Claims on
/// Postgres\]); the second key is `hashtext(service)`. ASCII "agsc".
const CLAIM_LOCK_CLASS: i32 = 0x6167_7363;

/// Note \[Claims on Postgres\]: counting and inserting under READ
/// COMMITTED would race (both supervisors count 1 of 2, both insert). Each
/// claim first takes a transaction-scoped advisory lock per service, in
/// sorted order (two claims over overlapping services cannot deadlock),
/// then counts: every statement after the lock sees what the previous
/// holder committed. The lock ends with the transaction, which never spans
/// an agent run. Distinct services never wait on each other (a hash
/// collision only serialises two claims, never wrongs them).
const CLAIM_LOCK_SQL: &str = "SELECT pg_advisory_xact_lock($1, hashtext($2))";

/// As SQLite's `CLAIM_COUNT` (Note \[Escalation claims\]).
const CLAIM_COUNT_PG: &str = "SELECT
    (SELECT COUNT(*) FROM escalations WHERE service = $1 AND created_at >= $2)
  + (SELECT COUNT(*) FROM escalation_claims c
     WHERE c.service = $1 AND c.created_at >= $2
       AND NOT EXISTS (SELECT 1 FROM escalations e
                       WHERE e.child_id = c.child_id AND e.service = c.service)
       AND (c.expires_at > $3 OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = c.child_id)))";

const INSERT_CLAIM: &str = "INSERT INTO escalation_claims
        (parent_id, child_id, service, tier, holder, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// Take or renew a lease in one statement: the upsert locks the row, so
/// concurrent takers queue on it and each sees the previous one's result;
/// the row changes hands only when it is ours or expired, by the server's
/// clock (which every machine sharing the store agrees on), written as our
/// timestamp text (Note \[Text timestamps\]).
const LEASE_UPSERT: &str = "INSERT INTO leases (name, holder, acquired_at, expires_at)
     VALUES ($1, $2,
             to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),
             to_char((now() + $3::bigint * interval '1 millisecond') AT TIME ZONE 'UTC',
                     'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'))
     ON CONFLICT (name) DO UPDATE SET
        holder = EXCLUDED.holder,
        acquired_at = CASE WHEN leases.holder = EXCLUDED.holder
                           THEN leases.acquired_at ELSE EXCLUDED.acquired_at END,
        expires_at = EXCLUDED.expires_at
     WHERE leases.holder = EXCLUDED.holder OR leases.expires_at <= EXCLUDED.acquired_at
     RETURNING expires_at";

fn claim_pg(tx: &mut Transaction<'_>, stmts: &mut Stmts, r: &ClaimRequest) -> PgResult<Claim> {
    if r.tier > r.max_tier {
        return Ok(Claim::MaxTier);
    }
    let services = crate::sqlite::claim_services(r);
    let lock = stmt(tx, stmts, CLAIM_LOCK_SQL)?;
    for service in &services {
        tx.execute(&lock, &[&CLAIM_LOCK_CLASS, service])?;
    }
    let count = stmt(tx, stmts, CLAIM_COUNT_PG)?;
    for service in &services {
        let n = to_u64(tx.query_one(&count, &[service, &r.since, &r.now])?.get(0));
        if n >= r.max_per_window {
            return Ok(Claim::Cooldown {
                service: (*service).to_owned(),
                count: n,
            });
        }
    }
    let insert = stmt(tx, stmts, INSERT_CLAIM)?;
    let tier = i64::from(r.tier);
    for service in &services {
        tx.execute(
            &insert,
            &[
                &r.parent_id,
                &r.child_id,
                service,
                &tier,
                &r.holder,
                &r.now,
                &r.expires_at,
            ],
        )?;
    }
    Ok(Claim::Granted)
}

impl PgStore {
    fn claim(&self, request: &ClaimRequest) -> Result<Claim> {
        let what = || format!("claiming an escalation from `{}`", request.parent_id);
        self.write_tx(&what, None, RETRIES, &|tx, stmts| {
            claim_pg(tx, stmts, request)
        })
    }

    fn lease(&self, name: &str, holder: &str, ttl_ms: u64) -> Result<LeaseState> {
        let what = || format!("taking the lease `{name}`");
        let ttl = to_i64(ttl_ms);
        self.write_tx(&what, None, RETRIES, &|tx, stmts| {
            let upsert = stmt(tx, stmts, LEASE_UPSERT)?;
            if let Some(row) = tx.query_opt(&upsert, &[&name, &holder, &ttl])? {
                return Ok(LeaseState::Held {
                    expires_at: row.get(0),
                });
            }
            // Not ours and unexpired: the upsert locked the row for this
            // transaction, so it reads as it stands.
            let row = tx.query_one(
                "SELECT holder, expires_at FROM leases WHERE name = $1",
                &[&name],
            )?;
            Ok(LeaseState::Busy {
                holder: row.get(0),
                expires_at: row.get(1),
            })
        })
    }

    fn release(&self, name: &str, holder: &str) -> Result<bool> {
        let what = || format!("releasing the lease `{name}`");
        self.write_tx(&what, None, RETRIES, &|tx, _| {
            tx.execute(
                "DELETE FROM leases WHERE name = $1 AND holder = $2",
                &[&name, &holder],
            )
            .map(|n| n > 0)
        })
    }
}

impl PgStore {
    /// [`Store::save_native`] and [`Store::save_usage`] (SQLite's
    /// `save_marked`).
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
        let (door, masking) = (self.version >= 5, self.masker.is_some());
        let tables = Tables {
            usage_calls: self.version >= 9,
            usage_files: self.version >= 10,
            usage_only,
        };
        let (record, rec_spots) = self.mask_record(record);
        let record = &*record;
        // Named after masking: an error message is printed too.
        let what = || format!("importing session `{}` from `{}`", record.id, mark.path);
        let (feed, spots) = self.mask_feed(feed);
        let at = record.ended_at.as_deref().unwrap_or(&record.started_at);
        let mut sessions = secrets::sessions_of(&feed);
        if !sessions.contains(&record.id.as_str()) {
            sessions.push(&record.id);
        }
        // Safe to retry: the transaction either happened whole or not at all.
        self.write_tx_through_outage(&what, &|tx, stmts| {
            let (report, ids) =
                save_native_pg(tx, stmts, record, &feed, !spots.is_empty(), mark, tables)?;
            if door && !report.conflict {
                let mut rows: Vec<(&str, &str, Spot, Option<i64>)> = rec_spots
                    .iter()
                    .map(|s| (record.id.as_str(), at, s.clone(), None))
                    .collect();
                rows.extend(feed_spots_pg(&feed, &spots, &ids));
                record_spots_pg(tx, stmts, masking, &sessions, &rows, report.inserted)?;
            }
            Ok(report)
        })
    }

    /// A record through the door (Note \[Store door\] in `secrets`).
    fn mask_record<'a>(
        &self,
        record: &'a SessionRecord,
    ) -> (std::borrow::Cow<'a, SessionRecord>, Vec<Spot>) {
        match &self.masker {
            Some(m) => secrets::mask_record(m, record),
            None => (std::borrow::Cow::Borrowed(record), Vec::new()),
        }
    }

    /// Feed entries through the door.
    fn mask_feed<'a>(
        &self,
        entries: &'a [FeedEntry],
    ) -> (std::borrow::Cow<'a, [FeedEntry]>, Vec<Spot>) {
        match &self.masker {
            Some(m) => secrets::mask_feed(m, entries),
            None => (std::borrow::Cow::Borrowed(entries), Vec::new()),
        }
    }
}

impl Store for PgStore {
    fn mask_key(&self) -> Option<MaskKey> {
        self.key.clone()
    }

    fn set_masker(&mut self, masker: Option<Masker>) {
        self.masker = masker;
    }

    fn masker(&self) -> Option<&Masker> {
        self.masker.as_ref()
    }

    fn write_session(&mut self, record: &SessionRecord) -> Result<WriteReport> {
        let what = || format!("writing session `{}`", record.id);
        let (door, masking) = (self.version >= 5, self.masker.is_some());
        let (record, spots) = self.mask_record(record);
        let record = &*record;
        let at = record.ended_at.as_deref().unwrap_or(&record.started_at);
        let rows: Vec<(&str, &str, Spot, Option<i64>)> = spots
            .into_iter()
            .map(|s| (record.id.as_str(), at, s, None))
            .collect();
        // Idempotent (a finished session is never rewritten): safe to retry
        // through an outage (Note [Store outage]).
        self.write_tx_through_outage(&what, &|tx, stmts| {
            let mut report = WriteReport::default();
            // Insert first: of two writers racing on a new id, one inserts
            // and the other waits on the row, then finds it finished.
            if !put_session(tx, stmts, record, false, None)? {
                match status_for_update(tx, stmts, &record.id)?.as_deref() {
                    Some("running") => {
                        put_session(tx, stmts, record, true, None)?;
                    }
                    _ => return Ok(report),
                }
            }
            children(tx, stmts, record, &mut report)?;
            if door {
                record_spots_pg(tx, stmts, masking, &[&record.id], &rows, true)?;
            }
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
            feed_lock(tx, stmts)?;
            feed_insert(
                tx,
                stmts,
                &[FeedEntry {
                    session_id: record.id.clone(),
                    kind: "ended".to_owned(),
                    body: body.to_string(),
                    created_at: record.ended_at.clone().unwrap_or_else(time::now),
                }],
            )?;
            report.inserted = true;
            Ok(report)
        })
    }

    fn start_session(&mut self, record: &SessionRecord) -> Result<()> {
        let what = || format!("recording the start of session `{}`", record.id);
        let (door, masking) = (self.version >= 5, self.masker.is_some());
        let (record, spots) = self.mask_record(record);
        let record = &*record;
        let rows: Vec<(&str, &str, Spot, Option<i64>)> = spots
            .into_iter()
            .map(|s| (record.id.as_str(), record.started_at.as_str(), s, None))
            .collect();
        let taken = self.write_tx(&what, None, RETRIES, &|tx, stmts| {
            let mut running = record.clone();
            "running".clone_into(&mut running.status);
            if !put_session(tx, stmts, &running, false, Some(&record.started_at))? {
                return Ok(match status_for_update(tx, stmts, &record.id)? {
                    Some(s) if s == "running" => None,
                    other => Some(other.unwrap_or_default()),
                });
            }
            if door {
                record_spots_pg(tx, stmts, masking, &[&record.id], &rows, true)?;
            }
            let body = serde_json::json!({
                "tier": record.tier,
                "parent_id": record.parent_id,
                "agent": record.agent,
                "profile": record.profile,
                "raw_log_path": record.raw_log_path,
            });
            feed_lock(tx, stmts)?;
            feed_insert(
                tx,
                stmts,
                &[FeedEntry {
                    session_id: record.id.clone(),
                    kind: "started".to_owned(),
                    body: body.to_string(),
                    created_at: record.started_at.clone(),
                }],
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
        self.write_tx_now(&what, Duration::from_millis(250), &|tx, _| {
            tx.execute(
                "UPDATE sessions SET heartbeat_at = $2 WHERE id = $1 AND status = 'running'",
                &[&id, &at],
            )?;
            Ok(())
        })
    }

    fn append_feed(&mut self, entries: &[FeedEntry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let what = || format!("appending {} feed entries", entries.len());
        let (door, masking) = (self.version >= 5, self.masker.is_some());
        let (entries, spots) = self.mask_feed(entries);
        let sessions = secrets::sessions_of(&entries);
        // The run's last lines, before its session (Note [Store outage]).
        self.write_tx_through_outage(&what, &|tx, stmts| {
            feed_lock(tx, stmts)?;
            let ids = feed_insert_ids(tx, stmts, &entries, !spots.is_empty())?;
            if door {
                let rows = feed_spots_pg(&entries, &spots, &ids);
                record_spots_pg(tx, stmts, masking, &sessions, &rows, false)?;
            }
            Ok(())
        })
    }

    fn append_feed_now(&mut self, entries: &[FeedEntry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let what = || format!("appending {} feed entries", entries.len());
        let (door, masking) = (self.version >= 5, self.masker.is_some());
        let (entries, spots) = self.mask_feed(entries);
        let sessions = secrets::sessions_of(&entries);
        self.write_tx_now(&what, Duration::from_millis(250), &|tx, stmts| {
            feed_lock(tx, stmts)?;
            let ids = feed_insert_ids(tx, stmts, &entries, !spots.is_empty())?;
            if door {
                let rows = feed_spots_pg(&entries, &spots, &ids);
                record_spots_pg(tx, stmts, masking, &sessions, &rows, false)?;
            }
            Ok(())
        })
    }

    fn feed_after(&self, after_id: i64, limit: usize) -> Result<Vec<FeedRow>> {
        let ctx = || format!("reading the feed after {after_id}");
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with_conn(|conn| {
            let rows = conn
                .client
                .query(
                    "SELECT id, session_id, kind, body, created_at FROM feed
                     WHERE id > $1 ORDER BY id LIMIT $2",
                    &[&after_id, &limit],
                )
                .pg(ctx)?;
            Ok(rows.iter().map(feed_row_pg).collect())
        })
    }

    fn feed_page(&self, after_id: i64, limit: usize, max_bytes: usize) -> Result<Vec<FeedRow>> {
        let ctx = || format!("reading the feed after {after_id}");
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let max_bytes = i64::try_from(max_bytes).unwrap_or(i64::MAX);
        // The running total of the page's bodies: a row is sent when the
        // rows before it are under the budget (so the first always is).
        self.with_conn(|conn| {
            let rows = conn
                .client
                .query(
                    "SELECT id, session_id, kind, body, created_at FROM
                       (SELECT id, session_id, kind, body, created_at,
                               SUM(octet_length(body)) OVER (ORDER BY id)
                                 - octet_length(body) AS before
                        FROM (SELECT * FROM feed WHERE id > $1 ORDER BY id LIMIT $2) f) w
                     WHERE before < $3 ORDER BY id",
                    &[&after_id, &limit, &max_bytes],
                )
                .pg(ctx)?;
            Ok(rows.iter().map(feed_row_pg).collect())
        })
    }

    fn native_marks(&self) -> Result<Vec<NativeMark>> {
        self.with_conn(|conn| {
            let rows = conn
                .client
                .query(
                    &format!("SELECT {MARK_COLS_PG} FROM native_files ORDER BY path"),
                    &[],
                )
                .pg(|| "reading the native import marks".to_owned())?;
            Ok(rows.iter().map(mark_row).collect())
        })
    }

    fn native_mark(&self, path: &str) -> Result<Option<NativeMark>> {
        self.with_conn(|conn| {
            let row = conn
                .client
                .query_opt(
                    &format!("SELECT {MARK_COLS_PG} FROM native_files WHERE path = $1"),
                    &[&path],
                )
                .pg(|| format!("reading the import mark of `{path}`"))?;
            Ok(row.as_ref().map(mark_row))
        })
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
        if self.version < 10 {
            return Ok(Vec::new());
        }
        self.with_conn(|conn| {
            let rows = conn
                .client
                .query(
                    &format!("SELECT {MARK_COLS_PG} FROM usage_files ORDER BY path"),
                    &[],
                )
                .pg(|| "reading the usage pass marks".to_owned())?;
            Ok(rows.iter().map(mark_row).collect())
        })
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
        if self.version < 6 {
            return Ok(HookChain::default());
        }
        let ctx = || format!("reading the hook chain of session `{session_id}`");
        self.with_conn(|conn| {
            let row = conn
                .client
                .query_one(HOOK_CHAIN_PG, &[&session_id, &agent_id])
                .pg(ctx)?;
            Ok(HookChain {
                blocks: u32::try_from(row.get::<_, i64>(0)).unwrap_or(u32::MAX),
                active: u32::try_from(row.get::<_, i64>(1)).unwrap_or(u32::MAX),
            })
        })
    }

    fn save_hook(&mut self, call: &HookCall, feed: &[FeedEntry]) -> Result<HookSaved> {
        let what = || {
            format!(
                "recording a {} hook call of session `{}`",
                call.event, call.session_id
            )
        };
        let (door, masking) = (self.version >= 5, self.masker.is_some());
        let (call, call_spots) = match &self.masker {
            Some(m) => secrets::mask_hook(m, call),
            None => (std::borrow::Cow::Borrowed(call), Vec::new()),
        };
        let call = &*call;
        let (feed, spots) = self.mask_feed(feed);
        let mut sessions = secrets::sessions_of(&feed);
        if !sessions.contains(&call.session_id.as_str()) {
            sessions.push(&call.session_id);
        }
        let session = hooks::session_record(call);
        let verdict = hooks::verdict(call).map(|v| v.to_string());
        let output = hooks::json_text(call.output.as_ref());
        let errors = hooks::json_text(call.errors.as_ref());
        // Not through an outage: a hook answers within its deadline and
        // records what it can; with patience, not retried either.
        let retries = if self.patience.is_some() { 0 } else { RETRIES };
        self.write_tx(&what, self.patience, retries, &|tx, stmts| {
            let inserted = put_session(tx, stmts, &session, false, None)?;
            if let Some(verdict) = &verdict {
                let s = stmt(tx, stmts, SET_HOOK_VERDICT)?;
                tx.execute(
                    &s,
                    &[
                        &call.session_id,
                        verdict,
                        &call.method,
                        &output,
                        &call.profile,
                    ],
                )?;
            }
            let s = stmt(tx, stmts, INSERT_HOOK)?;
            let id: i64 = tx
                .query_one(
                    &s,
                    &[
                        &call.session_id,
                        &call.agent_id,
                        &call.agent_type,
                        &call.event,
                        &call.verdict,
                        &call.method,
                        &errors,
                        &i64::from(call.blocks),
                        &call.stop_hook_active,
                        &call.profile,
                        &call.reason,
                        &call.message,
                        &call.warning,
                        &call.created_at,
                    ],
                )?
                .get(0);
            feed_lock(tx, stmts)?;
            let ids = if feed.is_empty() {
                Vec::new()
            } else {
                feed_insert_ids(tx, stmts, &feed, !spots.is_empty())?
            };
            if hooks::has_feed_row(call) {
                feed_insert(tx, stmts, &[hooks::feed_entry(id, call)])?;
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
                rows.extend(feed_spots_pg(&feed, &spots, &ids));
                record_spots_pg(tx, stmts, masking, &sessions, &rows, inserted)?;
            }
            Ok(HookSaved {
                id,
                session_inserted: inserted,
            })
        })
    }

    fn has_session(&self, id: &str) -> Result<bool> {
        self.with_conn(|conn| {
            conn.client
                .query_one(
                    "SELECT EXISTS(SELECT 1 FROM sessions WHERE id = $1)",
                    &[&id],
                )
                .map(|r| r.get(0))
                .pg(|| format!("looking up session `{id}`"))
        })
    }

    fn escalations_since(&self, service: &str, since: &str) -> Result<u64> {
        self.with_conn(|conn| {
            conn.client
                .query_one(
                    "SELECT COUNT(*) FROM escalations WHERE service = $1 AND created_at >= $2",
                    &[&service, &since],
                )
                .map(|r| to_u64(r.get(0)))
                .pg(|| format!("counting escalations for `{service}`"))
        })
    }

    fn claim_escalation(&mut self, request: &ClaimRequest) -> Result<Claim> {
        self.claim(request)
    }

    fn acquire_lease(&mut self, name: &str, holder: &str, ttl_ms: u64) -> Result<LeaseState> {
        self.lease(name, holder, ttl_ms)
    }

    fn release_lease(&mut self, name: &str, holder: &str) -> Result<bool> {
        self.release(name, holder)
    }

    fn prune_memories(&mut self, before: &str) -> Result<u64> {
        self.write_tx(
            &|| "pruning memories".to_owned(),
            None,
            RETRIES,
            &|tx, _| {
                tx.execute(
                    "UPDATE memories SET active = 0 WHERE active = 1 AND updated_at < $1",
                    &[&before],
                )
            },
        )
    }

    fn location(&self) -> Option<String> {
        Some(self.pool.url.clone())
    }

    fn transport(&self) -> Option<String> {
        PgStore::transport(self)
    }

    fn overview(&self) -> Result<Overview> {
        let ctx = || "reading the store overview".to_owned();
        let cutoff = time::format_ms(time::now_ms().saturating_sub(LOST_AFTER_MS));
        self.with_conn(|conn| {
            let c = &mut conn.client;
            let mut count = |sql: &str| -> Result<u64> {
                Ok(to_u64(c.query_one(sql, &[]).pg(ctx)?.get(0)))
            };
            let active_memories = count("SELECT COUNT(*) FROM memories WHERE active = 1")?;
            let inactive_memories = count("SELECT COUNT(*) FROM memories WHERE active = 0")?;
            let services_checked = count("SELECT COUNT(*) FROM services_checked")?;
            let escalations = count("SELECT COUNT(*) FROM escalations")?;
            let mut grouped = |sql: &str| -> Result<Vec<(String, u64)>> {
                Ok(c.query(sql, &[])
                    .pg(ctx)?
                    .iter()
                    .map(|r| (r.get::<_, String>(0), to_u64(r.get(1))))
                    .collect())
            };
            let mut o = Overview {
                sessions_by_status: grouped(
                    "SELECT status, COUNT(*) FROM sessions GROUP BY status ORDER BY status COLLATE \"C\"",
                )?,
                events_by_level: grouped(
                    "SELECT level, COUNT(*) FROM events GROUP BY level ORDER BY level COLLATE \"C\"",
                )?,
                active_memories,
                inactive_memories,
                services_checked,
                escalations,
                ..Overview::default()
            };
            let rows = c
                .query(
                    "SELECT s.id, s.parent_id, s.tier, s.status, s.extraction_method, s.error_category,
                            (SELECT COUNT(*) FROM events e WHERE e.session_id = s.id), s.summary,
                            s.heartbeat_at,
                            s.status = 'running' AND COALESCE(s.heartbeat_at, s.started_at) < $1,
                            s.raw_log_path
                     FROM sessions s ORDER BY s.started_at COLLATE \"C\", s.id COLLATE \"C\"",
                    &[&cutoff],
                )
                .pg(ctx)?;
            for r in &rows {
                o.sessions.push(SessionLine {
                    id: r.get(0),
                    parent_id: r.get(1),
                    tier: u32::try_from(r.get::<_, i64>(2)).unwrap_or(0),
                    status: r.get(3),
                    extraction_method: r.get(4),
                    error_category: r.get(5),
                    events: to_u64(r.get(6)),
                    summary: r.get(7),
                    heartbeat_at: r.get(8),
                    lost: r.get(9),
                    raw_log_path: r.get(10),
                });
            }
            o.lost = o.sessions.iter().filter(|s| s.lost).count() as u64;
            let rows = c
                .query(
                    "SELECT service, category, observation, confidence FROM memories
                     WHERE active = 1 ORDER BY confidence DESC, id",
                    &[],
                )
                .pg(ctx)?;
            o.memories = rows
                .iter()
                .map(|r| MemoryLine {
                    service: r.get(0),
                    category: r.get(1),
                    observation: r.get(2),
                    confidence: r.get(3),
                })
                .collect();
            Ok(o)
        })
    }
}

impl postgres::types::ToSql for crate::rows::Cell {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> std::result::Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        use crate::rows::Cell;
        use postgres::types::Type;
        match self {
            Cell::Null => Ok(postgres::types::IsNull::Yes),
            // SQLite keeps a whole REAL as an integer: widen it for float columns.
            Cell::Int(v) if *ty == Type::FLOAT8 => (*v as f64).to_sql(ty, out),
            Cell::Int(v) if *ty == Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
            Cell::Int(v) if *ty == Type::BOOL => (*v != 0).to_sql(ty, out),
            Cell::Int(v) => v.to_sql(ty, out),
            Cell::Real(v) => v.to_sql(ty, out),
            Cell::Text(s) => s.as_str().to_sql(ty, out),
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// `?` placeholders renumbered `$1`, `$2`, … (the copy's SQL has no `?`
/// inside strings).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            let _ = write!(out, "${n}");
        } else {
            out.push(ch);
        }
    }
    out
}

fn cells(row: &postgres::Row) -> std::result::Result<Vec<crate::rows::Cell>, postgres::Error> {
    use crate::rows::Cell;
    use postgres::types::Type;
    (0..row.len())
        .map(|i| {
            let ty = row.columns()[i].type_();
            Ok(if *ty == Type::INT8 {
                row.try_get::<_, Option<i64>>(i)?
                    .map_or(Cell::Null, Cell::Int)
            } else if *ty == Type::INT4 {
                row.try_get::<_, Option<i32>>(i)?
                    .map_or(Cell::Null, |v| Cell::Int(i64::from(v)))
            } else if *ty == Type::FLOAT8 {
                row.try_get::<_, Option<f64>>(i)?
                    .map_or(Cell::Null, Cell::Real)
            } else if *ty == Type::BOOL {
                row.try_get::<_, Option<bool>>(i)?
                    .map_or(Cell::Null, |b| Cell::Int(i64::from(b)))
            } else {
                row.try_get::<_, Option<String>>(i)?
                    .map_or(Cell::Null, Cell::Text)
            })
        })
        .collect()
}

fn as_params(params: &[crate::rows::Cell]) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|c| c as &(dyn postgres::types::ToSql + Sync))
        .collect()
}

impl crate::rows::Rows for PgStore {
    fn read(&self, sql: &str, params: &[crate::rows::Cell]) -> Result<Vec<Vec<crate::rows::Cell>>> {
        let ctx = || "reading rows to copy".to_owned();
        let sql = numbered(sql);
        self.with_conn(|conn| {
            let rows = conn.client.query(&sql, &as_params(params)).pg(ctx)?;
            rows.iter().map(|r| cells(r).pg(ctx)).collect()
        })
    }

    fn write_all(&mut self, stmts: &[(String, Vec<crate::rows::Cell>)]) -> Result<Vec<u64>> {
        self.write_tx(&|| "copying rows in".to_owned(), None, RETRIES, &|tx, _| {
            // Checked at commit: a batch may hold a child before its parent.
            tx.batch_execute("SET CONSTRAINTS ALL DEFERRED")?;
            // Feed rows are among them (Note [Feed order on Postgres]).
            tx.execute(FEED_LOCK_SQL, &[&FEED_LOCK])?;
            let mut out = Vec::with_capacity(stmts.len());
            for (sql, params) in stmts {
                out.push(tx.execute(&numbered(sql), &as_params(params))?);
            }
            Ok(out)
        })
    }
}

impl crate::rows::Copyable for PgStore {
    fn copy_rows(&self) -> &dyn crate::rows::Rows {
        self
    }
    fn copy_rows_mut(&mut self) -> &mut dyn crate::rows::Rows {
        self
    }
}
