//! The Postgres backend: the store several machines share.
//!
//! Same [`Store`](crate::Store) trait, same logical schema (Note \[One logical schema\]),
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
//! - The session write ([`Store::write_session`](crate::Store::write_session)) is idempotent, so it is
//!   tried again through an outage, with a backoff of 100 ms doubling to
//!   2 s (jittered), until the server has been unreachable for
//!   [`OUTAGE_ENV`] (default 30 s; counted from the first failure of the
//!   outage, so a run waits for it once). So are the run's last feed lines
//!   ([`Store::append_feed`](crate::Store::append_feed), which `run` drains just before the session):
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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use postgres::types::{IsNull, ToSql, Type};
use postgres::{Client, Statement, Transaction};

use agentshape_core::secrets::MaskKey;

use crate::backend::{Backend, Body, Door, Since, Wait, What};
use crate::conninfo::redact;
use crate::error::{Error, ErrorKind, PgContext, Result};
use crate::migrate::{self, Migration, PG_MIGRATION_LOCK, Plan};
use crate::rows::Cell;
use crate::secrets;
use crate::tls::{SslMode, Tls};
use crate::tx::{Arg, Batch, Dialect, Inserted, MemoryPut, Row, Tx, Ty, dollars};
use crate::{FeedRow, LeaseState, NEW_MEMORY_CONFIDENCE, REINFORCE_STEP, time};

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
    stmts: Stmts,
}

/// Prepare `sql` once per connection (Note \[Pool\]).
fn stmt(
    tx: &mut Transaction<'_>,
    cache: &mut Stmts,
    sql: &str,
) -> std::result::Result<Statement, postgres::Error> {
    if let Some(s) = cache.get(sql) {
        return Ok(s.clone());
    }
    let s = tx.prepare(sql)?;
    cache.insert(sql.to_owned(), s.clone());
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
    /// The store's mask key and masker (Note \[Store door\] in `secrets`).
    door: Door,
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

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
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

/// A connection's prepared statements, by their SQL.
type Stmts = HashMap<String, Statement>;

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
    /// (instead of [`CONNECT_ENV`]'s), and [`Store::save_hook`](crate::Store::save_hook) waits at most
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
            door: Door::with_key(Some(key)),
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
            door: Door::with_key(key),
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
        f: &(dyn Fn(&mut Transaction<'_>, &mut Stmts) -> Result<T> + Sync),
    ) -> Result<T> {
        self.write_tx_how(false, what, patience, retries, f)
    }

    /// [`PgStore::write_tx`] for a call that must not wait on a connect
    /// (Note \[Store outage\]).
    fn write_tx_now<T: Send>(
        &self,
        what: &(dyn Fn() -> String + Sync),
        patience: Duration,
        f: &(dyn Fn(&mut Transaction<'_>, &mut Stmts) -> Result<T> + Sync),
    ) -> Result<T> {
        self.write_tx_how(true, what, Some(patience), 0, f)
    }

    fn write_tx_how<T: Send>(
        &self,
        now: bool,
        what: &(dyn Fn() -> String + Sync),
        patience: Option<Duration>,
        retries: u32,
        f: &(dyn Fn(&mut Transaction<'_>, &mut Stmts) -> Result<T> + Sync),
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
                let out = f(&mut tx, stmts)?;
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
        f: &(dyn Fn(&mut Transaction<'_>, &mut Stmts) -> Result<T> + Sync),
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
            let args: Vec<Arg<'_>> = params.iter().map(Arg::from).collect();
            let rows = conn.client.query(sql, &as_sql(&args)).pg(ctx)?;
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

/// Note \[One statement per table\]: each statement is a round trip, so
/// the rows of a [`Batch`] (a session's events, services, tools, model
/// calls; a feed batch) go in as arrays, one per column, unnested in
/// order: 1,000 events are one statement, not 1,000.
fn batch_sql(batch: &Batch, ids: bool) -> String {
    let n = batch.cols.len();
    let arrays: Vec<String> = batch
        .cols
        .iter()
        .enumerate()
        .map(|(i, (_, ty))| {
            let ty = match ty {
                Ty::Text => "text",
                Ty::Int => "bigint",
                Ty::Bool => "boolean",
            };
            format!("${}::{ty}[]", i + 1)
        })
        .collect();
    let cols: Vec<String> = (1..=n).map(|i| format!("c{i}")).collect();
    format!(
        "INSERT INTO {} ({}) SELECT {} FROM UNNEST({}) WITH ORDINALITY AS u({}, n) ORDER BY n{}{}",
        batch.table,
        batch.names(),
        cols.join(", "),
        arrays.join(", "),
        cols.join(", "),
        batch.tail,
        if ids { " RETURNING id" } else { "" },
    )
}

/// One column of a batch as the array Postgres unnests.
enum Column<'a> {
    Text(Vec<Option<&'a str>>),
    Int(Vec<Option<i64>>),
    Bool(Vec<Option<bool>>),
}

impl Column<'_> {
    fn as_param(&self) -> &(dyn ToSql + Sync) {
        match self {
            Column::Text(v) => v,
            Column::Int(v) => v,
            Column::Bool(v) => v,
        }
    }
}

/// The columns of `rows`, typed as `batch` says.
fn columns<'a>(batch: &Batch, rows: &'a [Vec<Arg<'_>>]) -> Vec<Column<'a>> {
    batch
        .cols
        .iter()
        .enumerate()
        .map(|(i, (_, ty))| {
            let vals = rows.iter().map(move |r| r.get(i).unwrap_or(&Arg::Null));
            match ty {
                Ty::Text => Column::Text(
                    vals.map(|a| match a {
                        Arg::Text(s) => Some(&**s),
                        _ => None,
                    })
                    .collect(),
                ),
                Ty::Int => Column::Int(
                    vals.map(|a| match a {
                        Arg::Int(v) => Some(*v),
                        Arg::Bool(b) => Some(i64::from(*b)),
                        _ => None,
                    })
                    .collect(),
                ),
                Ty::Bool => Column::Bool(
                    vals.map(|a| match a {
                        Arg::Bool(b) => Some(*b),
                        Arg::Int(v) => Some(*v != 0),
                        _ => None,
                    })
                    .collect(),
                ),
            }
        })
        .collect()
}

impl ToSql for Arg<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Arg::Null => Ok(IsNull::Yes),
            #[allow(clippy::cast_precision_loss)] // a whole number for a float column
            Arg::Int(v) if *ty == Type::FLOAT8 => (*v as f64).to_sql(ty, out),
            Arg::Int(v) if *ty == Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
            Arg::Int(v) if *ty == Type::BOOL => (*v != 0).to_sql(ty, out),
            Arg::Int(v) => v.to_sql(ty, out),
            Arg::Bool(b) if *ty == Type::BOOL => b.to_sql(ty, out),
            Arg::Bool(b) if *ty == Type::INT4 => i32::from(*b).to_sql(ty, out),
            Arg::Bool(b) => i64::from(*b).to_sql(ty, out),
            Arg::Real(v) => v.to_sql(ty, out),
            Arg::Text(s) => (&**s).to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// One Postgres write transaction as a [`Tx`] (Note \[One write\] in
/// `tx`): statements prepared once per connection.
struct PgTx<'t, 'c> {
    tx: &'t mut Transaction<'c>,
    stmts: &'t mut Stmts,
    what: &'t dyn Fn() -> String,
}

impl PgTx<'_, '_> {
    fn prepared(&mut self, sql: &str) -> Result<Statement> {
        stmt(self.tx, self.stmts, sql).pg(self.what)
    }
}

fn as_sql<'a>(args: &'a [Arg<'_>]) -> Vec<&'a (dyn ToSql + Sync)> {
    args.iter().map(|a| a as &(dyn ToSql + Sync)).collect()
}

/// The advisory lock of a class and a key (Note \[Claims on Postgres\],
/// Note \[Two importers\]).
///
/// Note \[Claims on Postgres\]: counting and inserting under READ
/// COMMITTED would race (both supervisors count 1 of 2, both insert). Each
/// claim first takes a transaction-scoped advisory lock per service, in
/// sorted order (two claims over overlapping services cannot deadlock),
/// then counts: every statement after the lock sees what the previous
/// holder committed. The lock ends with the transaction, which never spans
/// an agent run. Distinct services never wait on each other (a hash
/// collision only serialises two claims, never wrongs them).
const KEY_LOCK_SQL: &str = "SELECT pg_advisory_xact_lock($1, hashtext($2))";

const FEED_LOCK_SQL: &str = "SELECT pg_advisory_xact_lock($1)";

/// Note \[Reinforcing on Postgres\] (the module's doc): one statement,
/// the arithmetic on the locked row.
const UPSERT_MEMORY: &str = "INSERT INTO memories
        (service, category, observation, confidence, active, created_at, updated_at, session_id, tier)
     VALUES ($1, $2, $3, $4, 1, $5, $5, $6, $7)
     ON CONFLICT (category, (COALESCE(service, ''))) WHERE active = 1 DO UPDATE SET
        confidence = LEAST(1.0, round(memories.confidence::numeric + $8::float8::numeric, 2))::float8,
        observation = EXCLUDED.observation, updated_at = EXCLUDED.updated_at,
        session_id = EXCLUDED.session_id, tier = EXCLUDED.tier
     RETURNING (xmax = 0)";

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

impl Tx for PgTx<'_, '_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64> {
        let s = self.prepared(&dollars(sql))?;
        self.tx.execute(&s, &as_sql(args)).pg(self.what)
    }

    fn row(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Option<Vec<Cell>>> {
        let s = self.prepared(&dollars(sql))?;
        let row = self.tx.query_opt(&s, &as_sql(args)).pg(self.what)?;
        row.map(|r| cells(&r)).transpose().pg(self.what)
    }

    fn insert_id(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<i64> {
        let s = self.prepared(&format!("{} RETURNING id", dollars(sql)))?;
        let row = self.tx.query_one(&s, &as_sql(args)).pg(self.what)?;
        Ok(row.get(0))
    }

    fn insert_rows(&mut self, batch: &Batch, rows: &[Row<'_>], ids: bool) -> Result<Inserted> {
        let s = self.prepared(&batch_sql(batch, ids))?;
        let cols = columns(batch, rows);
        let args: Vec<&(dyn ToSql + Sync)> = cols.iter().map(Column::as_param).collect();
        if !ids {
            return Ok((self.tx.execute(&s, &args).pg(self.what)?, Vec::new()));
        }
        // In entry order: the feed lock makes ids increase in that order.
        let mut got: Vec<i64> = self
            .tx
            .query(&s, &args)
            .pg(self.what)?
            .iter()
            .map(|r| r.get(0))
            .collect();
        got.sort_unstable();
        Ok((got.len() as u64, got))
    }

    fn lock(&mut self, class: i32, key: &str) -> Result<()> {
        let s = self.prepared(KEY_LOCK_SQL)?;
        self.tx.execute(&s, &[&class, &key]).pg(self.what)?;
        Ok(())
    }

    fn defer_constraints(&mut self) -> Result<()> {
        self.tx
            .batch_execute("SET CONSTRAINTS ALL DEFERRED")
            .pg(self.what)
    }

    fn feed_lock(&mut self) -> Result<()> {
        let s = self.prepared(FEED_LOCK_SQL)?;
        self.tx.execute(&s, &[&FEED_LOCK]).pg(self.what)?;
        Ok(())
    }

    fn put_memory(&mut self, m: &MemoryPut<'_>) -> Result<bool> {
        let s = self.prepared(UPSERT_MEMORY)?;
        let row = self
            .tx
            .query_one(
                &s,
                &[
                    &m.service,
                    &m.category,
                    &m.value,
                    &NEW_MEMORY_CONFIDENCE,
                    &m.at,
                    &m.session_id,
                    &m.tier,
                    &REINFORCE_STEP,
                ],
            )
            .pg(self.what)?;
        Ok(row.get::<_, bool>(0))
    }

    fn take_lease(&mut self, name: &str, holder: &str, ttl_ms: u64) -> Result<LeaseState> {
        let s = self.prepared(LEASE_UPSERT)?;
        let ttl = to_i64(ttl_ms);
        if let Some(row) = self
            .tx
            .query_opt(&s, &[&name, &holder, &ttl])
            .pg(self.what)?
        {
            return Ok(LeaseState::Held {
                expires_at: row.get(0),
            });
        }
        // Not ours and unexpired: the upsert locked the row for this
        // transaction, so it reads as it stands.
        let row = self
            .tx
            .query_one(
                "SELECT holder, expires_at FROM leases WHERE name = $1",
                &[&name],
            )
            .pg(self.what)?;
        Ok(LeaseState::Busy {
            holder: row.get(0),
            expires_at: row.get(1),
        })
    }
}

/// A `FeedRow` from `SELECT id, session_id, kind, body, created_at`.
fn feed_row(r: &postgres::Row) -> FeedRow {
    FeedRow {
        id: r.get(0),
        session_id: r.get(1),
        kind: r.get(2),
        body: r.get(3),
        created_at: r.get(4),
    }
}

impl Backend for PgStore {
    const SINCE: Since = Since {
        feed: 0,
        door: 5,
        marks: 0,
        hooks: 6,
        usage_calls: 9,
        usage_files: 10,
    };

    fn write<T: Send>(&mut self, wait: Wait, what: What<'_>, f: Body<'_, T>) -> Result<T> {
        let body = |tx: &mut Transaction<'_>, stmts: &mut Stmts| f(&mut PgTx { tx, stmts, what });
        match wait {
            Wait::Patient => self.write_tx(what, None, RETRIES, &body),
            Wait::Outage => self.write_tx_through_outage(what, &body),
            Wait::Now => self.write_tx_now(what, Duration::from_millis(250), &body),
            // Not through an outage: a hook answers within its deadline and
            // records what it can; with patience, not retried either.
            Wait::Hook => {
                let retries = if self.patience.is_some() { 0 } else { RETRIES };
                self.write_tx(what, self.patience, retries, &body)
            }
        }
    }

    fn feed_rows(&self, after_id: i64, limit: usize, max_bytes: usize) -> Result<Vec<FeedRow>> {
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
            Ok(rows.iter().map(feed_row).collect())
        })
    }

    fn door_mut(&mut self) -> &mut Door {
        &mut self.door
    }

    fn where_is(&self) -> Option<String> {
        Some(self.pool.url.clone())
    }

    fn schema(&self) -> i64 {
        PgStore::version(self)
    }

    fn reached_how(&self) -> Option<String> {
        PgStore::transport(self)
    }

    fn door(&self) -> &Door {
        &self.door
    }
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
