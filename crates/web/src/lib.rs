//! # agentshape-web
//!
//! `agentshape serve` (issue 9): the dashboard's pages, rendered on the
//! server, over a JSON API on the store and the store's live feed as
//! Server-Sent Events, plus the schema builder and the playground.
//!
//! - `GET /api/sessions?status=&tier=&profile=&error_category=&method=&q=&limit=&before=`,
//!   `GET /api/sessions/{id}`, `GET /api/events?level=&after=&limit=`,
//!   `GET /api/memories`, `GET /api/overview`: read through
//!   [`agentshape_store::query`] on a read-only connection per request, so a
//!   request never waits on another and never writes.
//! - `GET /api/feed?after=`: the feed rows as SSE, `id:` = feed row id
//!   (Note \[One tailer\]).
//!
//! Note \[Token\]: when a token is set every request, SSE included, must carry
//! it (`Authorization: Bearer T`, the `agentshape_token` cookie, or `?token=T`,
//! which also sets that cookie so a browser opens the dashboard once with the
//! token in the URL and then browses normally). It is compared in constant
//! time and never logged or echoed. Without a token, only loopback `Host`
//! names are served (DNS rebinding). Whatever the token, a request that
//! changes something (saving a schema) needs same-origin proof or a bearer
//! header (CSRF). Refusing a non-loopback address without a token is the
//! caller's job (the CLI exits 64): this crate serves whatever it is given.

// No unsafe code here; the workspace lint is `deny` only for one function of the runtime.
#![forbid(unsafe_code)]

mod api;
mod assets;
mod auth;
mod builder;
pub mod error;
mod feed;
mod pages;
mod playground;
mod security;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agentshape_store::query::Source;
use agentshape_store::{FeedRow, PgStore, SqliteStore, Store, StoreUrl};
use tokio::sync::broadcast;

pub use auth::Token;
pub use error::Error;

/// How `serve` runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The store: a SQLite file (created and migrated when missing), or a
    /// Postgres URL (migrated; its live feed is tailed as Note \[Feed on
    /// Postgres\] in `feed` says).
    pub store: StoreUrl,
    /// The bearer token every request needs (Note \[Token\]); `None`: no check.
    pub token: Option<Token>,
    /// The longest between two reads of the feed table, whether or not the
    /// store says it changed (Note \[Tailer wake\]).
    pub poll: Duration,
    /// How often the tailer asks the store whether it changed (Note \[Tailer wake\]).
    pub check: Duration,
    /// SSE keep-alive comment interval: proxies drop silent connections.
    pub keep_alive: Duration,
    /// The folder the schema builder opens and saves schemas in; `None`:
    /// the builder still builds, lints and downloads, but cannot save.
    pub schemas: Option<PathBuf>,
}

impl Config {
    /// The defaults for a store: check for changes every 2 ms, read the feed
    /// at least every 100 ms, keep-alive every 15 s.
    pub fn new(store: StoreUrl) -> Self {
        Config {
            store,
            token: None,
            poll: Duration::from_millis(100),
            check: Duration::from_millis(2),
            keep_alive: Duration::from_secs(15),
            schemas: None,
        }
    }
}

/// What every handler shares.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) store: StoreUrl,
    /// The pooled Postgres store, when `store` is one.
    pub(crate) pg: Option<PgStore>,
    pub(crate) token: Option<Token>,
    pub(crate) keep_alive: Duration,
    /// `--schemas`: see [`Config::schemas`].
    pub(crate) schemas: Option<PathBuf>,
    /// Rows published by the one tailer (Note \[One tailer\]).
    pub(crate) tail: broadcast::Sender<Arc<feed::Row>>,
}

impl State {
    /// What a page or API request reads: a fresh read-only SQLite
    /// connection (cheap, and under WAL it never waits on writers), or the
    /// pooled Postgres store. The queries are the same on both (Note
    /// \[Queries on both backends\] in `agentshape_store::query`).
    pub(crate) fn open(&self) -> agentshape_store::Result<Reader> {
        match &self.pg {
            Some(pg) => Ok(Reader::Postgres(pg.clone())),
            None => self.open_sqlite().map(Reader::Sqlite),
        }
    }

    /// A fresh read-only SQLite connection (the SQLite tailer's own).
    pub(crate) fn open_sqlite(&self) -> agentshape_store::Result<SqliteStore> {
        match &self.store {
            StoreUrl::Sqlite(path) => SqliteStore::open_read_only(path),
            StoreUrl::Postgres(_) => Err(agentshape_store::Error::Unsupported {
                what: "a SQLite connection".to_owned(),
            }),
        }
    }

    /// Feed rows after `after`, from whichever backend (blocking).
    pub(crate) fn feed_after(
        &self,
        after: i64,
        limit: usize,
    ) -> agentshape_store::Result<Vec<FeedRow>> {
        match &self.pg {
            Some(pg) => pg.feed_after(after, limit),
            None => self.open_sqlite()?.feed_after(after, limit),
        }
    }
}

/// A store opened for one request's reads.
pub(crate) enum Reader {
    /// A read-only SQLite connection.
    Sqlite(SqliteStore),
    /// The server's Postgres pool.
    Postgres(PgStore),
}

impl Reader {
    /// The store as the queries take it.
    pub(crate) fn source(&self) -> &dyn Source {
        match self {
            Reader::Sqlite(s) => s,
            Reader::Postgres(p) => p,
        }
    }
}

/// A bound, not yet serving, server: the address is known before the first
/// request (port 0 picks a free one).
#[derive(Debug)]
pub struct Bound {
    listener: tokio::net::TcpListener,
    state: Arc<State>,
    pace: feed::Pace,
    start_after: i64,
}

/// Open (creating and migrating if needed) the store and bind `addr`.
///
/// # Errors
/// [`Error::Store`] when the store cannot be opened; [`Error::Bind`].
pub async fn bind(addr: SocketAddr, config: Config) -> Result<Bound, Error> {
    let url = config.store.clone();
    // Created here so the read-only connections below always find a
    // migrated file, even when `serve` starts before any `run`.
    let opened = tokio::task::spawn_blocking(move || -> Result<(i64, Option<PgStore>), Error> {
        match &url {
            StoreUrl::Sqlite(path) => {
                drop(SqliteStore::open(path)?);
                let store = SqliteStore::open_read_only(path)?;
                Ok((agentshape_store::query::feed_max_id(&store)?, None))
            }
            StoreUrl::Postgres(u) => {
                let pg = PgStore::open(u)?;
                Ok((pg.feed_max_id()?, Some(pg)))
            }
        }
    })
    .await
    .map_err(|e| Error::Serve(std::io::Error::other(e)))?;
    let (start_after, pg) = opened?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Bind { addr, source })?;
    let (tail, _) = broadcast::channel(feed::CHANNEL);
    Ok(Bound {
        listener,
        state: Arc::new(State {
            store: config.store,
            pg,
            token: config.token,
            keep_alive: config.keep_alive,
            schemas: config.schemas,
            tail,
        }),
        pace: feed::Pace {
            check: config.check,
            poll: config.poll,
        },
        start_after,
    })
}

/// Stops the tailer thread when the server stops, however it stops.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Bound {
    /// The address actually bound.
    ///
    /// # Errors
    /// When the socket cannot say (should not happen once bound).
    pub fn local_addr(&self) -> Result<SocketAddr, Error> {
        self.listener.local_addr().map_err(Error::Serve)
    }

    /// Serve until `shutdown` completes. Open SSE streams are not waited
    /// for: they never end by themselves.
    ///
    /// # Errors
    /// [`Error::Serve`] when accepting fails for good.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        let stop = Arc::new(AtomicBool::new(false));
        let _guard = StopOnDrop(Arc::clone(&stop));
        feed::spawn_tailer(&self.state, self.start_after, self.pace, stop);
        let app = api::router(Arc::clone(&self.state));
        tokio::select! {
            () = accept_loop(self.listener, app) => Ok(()),
            () = shutdown => Ok(()),
        }
    }
}

/// The most bytes of a request head (request line and headers) a
/// connection buffers (Note \[Connections\]).
const MAX_HEAD_BYTES: usize = 32 * 1024;

/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// Accept connections for good, each served on its own task.
///
/// Note \[Connections\]: `axum::serve` fixes hyper's settings, so `serve`
/// drives hyper itself, for three reasons:
/// - a request head is capped at [`MAX_HEAD_BYTES`] (hyper's default is
///   about 400 KiB): an over-long request line or header gets `431` and
///   the connection closes, before anything is routed. Browsers send a few
///   KiB; the dashboard's URLs are short.
/// - a client must send its head within [`HEAD_TIMEOUT`], so half-open
///   connections that never finish a request do not pile up.
/// - `TCP_NODELAY`: SSE writes are small; with Nagle's algorithm a frame can
///   wait for the client's delayed ACK (up to 40 ms on Linux), which alone
///   would break the 50 ms latency goal (issue 9).
///
/// An accept error (out of file descriptors) is waited out, not fatal: the
/// server answers again once connections close.
async fn accept_loop(listener: tokio::net::TcpListener, app: axum::Router) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        // A refused option only costs latency.
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            // A broken or malformed connection ends here; hyper already
            // answered what it could (400, 431) and nothing else is affected.
            let _ = hyper::server::conn::http1::Builder::new()
                .max_buf_size(MAX_HEAD_BYTES)
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}
