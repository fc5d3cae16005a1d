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
//!   (Note \[One tailer\]), read from the store as the connection drains
//!   (Note \[Pull, not push\]), at most `max_feed_clients` at once (Note
//!   \[Feed cap\]).
//!
//! What one client may cost is bounded: its request head (32 KiB, the
//! client timeout), its body (the client timeout again, Note \[Slow
//! bodies\]), its feed connection, and a session page (one page of the
//! transcript, Note \[Transcript pages\]); see Note \[Connections\].
//!
//! Note \[Token\]: when a token is set every request, SSE included, must carry
//! it (`?token=T`, `Authorization: Bearer T` or the `agentshape_token`
//! cookie, checked in that order: a `?token=` is taken first and replaces the
//! cookie, so a browser holding the cookie of an earlier token logs in again
//! with the new one; a browser opens the dashboard once with the token in the
//! URL and then browses normally). It is compared in constant
//! time and never logged or echoed. Without a token, only loopback `Host`
//! names are served (DNS rebinding). Whatever the token, a request that
//! changes something (saving a schema) needs same-origin proof or a bearer
//! header (CSRF). Refusing a non-loopback address without a token is the
//! caller's job, and so is refusing a token under 16 characters there (the
//! CLI exits 64 for both): this crate serves whatever it is given.

// No unsafe code here; the workspace lint is `deny` only for one function of the runtime.
#![forbid(unsafe_code)]

mod api;
mod assets;
mod auth;
mod builder;
pub mod error;
pub mod export;
mod feed;
mod limits;
mod mask;
mod pages;
mod playground;
mod security;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use agentshape_store::query::Source;
use agentshape_store::{FeedRow, PgStore, SqliteStore, Store, StoreUrl};
use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use tokio::sync::{Semaphore, broadcast};

pub use auth::Token;
use error::ApiError;
pub use error::Error;

/// How `serve` runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Mask secrets in every page, API answer and feed event (default);
    /// false: `--no-mask`, said by a banner on every page.
    pub mask: bool,
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
    /// The most `GET /api/feed` connections open at once; beyond, `503`
    /// with `Retry-After` (Note \[Feed cap\] in `api`).
    pub max_feed_clients: usize,
    /// How long a client may take to send a request head, and then its
    /// body (Note \[Connections\]).
    pub client_timeout: Duration,
}

impl Config {
    /// The defaults for a store: check for changes every 2 ms, read the feed
    /// at least every 100 ms, keep-alive every 15 s, at most
    /// [`MAX_FEED_CLIENTS`] feed connections, [`CLIENT_TIMEOUT`] for a
    /// request head and for its body.
    pub fn new(store: StoreUrl) -> Self {
        Config {
            mask: true,
            store,
            token: None,
            poll: Duration::from_millis(100),
            check: Duration::from_millis(2),
            keep_alive: Duration::from_secs(15),
            schemas: None,
            max_feed_clients: MAX_FEED_CLIENTS,
            client_timeout: CLIENT_TIMEOUT,
        }
    }
}

/// The default cap on open feed connections (Note \[Feed cap\] in `api`).
pub const MAX_FEED_CLIENTS: usize = 256;

/// The default time a client has for its request head, and again for its
/// body (Note \[Connections\]).
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most bytes of a request head: the request line and the headers, line
/// ends and the blank line included (Note \[Connections\]).
pub const MAX_HEAD_BYTES: usize = 32 * 1024;

/// The send buffer asked of the kernel for each connection (Note \[Connections\]).
pub const SEND_BUFFER: usize = 256 * 1024;

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
    /// One permit per open feed connection (Note \[Feed cap\] in `api`).
    pub(crate) feed_slots: Arc<Semaphore>,
    /// Store reads of catching-up feed clients at once (Note \[Pull, not
    /// push\] in `feed`).
    pub(crate) feed_reads: Arc<Semaphore>,
    /// [`Config::max_feed_clients`], for the 503's message.
    pub(crate) max_feed_clients: usize,
    /// [`Config::client_timeout`]: also the deadline of a request body.
    pub(crate) client_timeout: Duration,
    /// Feed rows the clients have read from the store, all told: what the
    /// tests watch to see that nothing reads ahead of a stalled client
    /// (Note \[Pull, not push\] in `feed`).
    pub(crate) feed_rows_read: AtomicU64,
    /// What every response goes through (Note \[Page door\] in `mask`);
    /// `None`: `--no-mask`, and every page says so.
    pub(crate) masker: Option<agentshape_core::secrets::Masker>,
}

impl State {
    /// The shared state of a server on `config`'s store.
    pub(crate) fn new(
        config: Config,
        pg: Option<PgStore>,
        tail: broadcast::Sender<Arc<feed::Row>>,
    ) -> Self {
        State {
            store: config.store,
            pg,
            token: config.token,
            keep_alive: config.keep_alive,
            schemas: config.schemas,
            tail,
            feed_slots: Arc::new(Semaphore::new(config.max_feed_clients)),
            feed_reads: Arc::new(Semaphore::new(feed::FEED_READS)),
            max_feed_clients: config.max_feed_clients,
            client_timeout: config.client_timeout,
            feed_rows_read: AtomicU64::new(0),
            masker: None,
        }
    }

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

    /// Feed rows after `after`, at most `limit` and about `max_bytes` of
    /// bodies ([`Store::feed_page`]), from whichever backend (blocking).
    pub(crate) fn feed_page(
        &self,
        after: i64,
        limit: usize,
        max_bytes: usize,
    ) -> agentshape_store::Result<Vec<FeedRow>> {
        match &self.pg {
            Some(pg) => pg.feed_page(after, limit, max_bytes),
            None => self.open_sqlite()?.feed_page(after, limit, max_bytes),
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

/// What opening the store at bind time gives: the newest feed id, the
/// Postgres pool, the store's mask key.
type Opened = (
    i64,
    Option<PgStore>,
    Option<agentshape_core::secrets::MaskKey>,
);

/// Open (creating and migrating if needed) the store and bind `addr`.
///
/// # Errors
/// [`Error::Store`] when the store cannot be opened; [`Error::Bind`].
pub async fn bind(addr: SocketAddr, config: Config) -> Result<Bound, Error> {
    let url = config.store.clone();
    // Created here so the read-only connections below always find a
    // migrated file, even when `serve` starts before any `run`.
    let opened = tokio::task::spawn_blocking(move || -> Result<Opened, Error> {
        match &url {
            StoreUrl::Sqlite(path) => {
                let key = SqliteStore::open(path)?.mask_key();
                let store = SqliteStore::open_read_only(path)?;
                Ok((agentshape_store::query::feed_max_id(&store)?, None, key))
            }
            StoreUrl::Postgres(u) => {
                let pg = PgStore::open(u)?;
                let key = pg.mask_key();
                Ok((pg.feed_max_id()?, Some(pg), key))
            }
        }
    })
    .await
    .map_err(|e| Error::Serve(std::io::Error::other(e)))?;
    let (start_after, pg, key) = opened?;
    let masker = match (config.mask, key) {
        (false, _) => None,
        (true, Some(k)) => Some(
            agentshape_store::secrets::process_masker(&k)
                .unwrap_or_else(|| agentshape_core::secrets::Masker::builtin(k)),
        ),
        (true, None) => Some(agentshape_core::secrets::Masker::builtin(
            agentshape_store::secrets::new_key()?,
        )),
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Bind { addr, source })?;
    let (tail, _) = broadcast::channel(feed::CHANNEL);
    let pace = feed::Pace {
        check: config.check,
        poll: config.poll,
    };
    Ok(Bound {
        listener,
        state: Arc::new({
            let mut state = State::new(config, pg, tail);
            state.masker = masker;
            state
        }),
        pace,
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
        let app = router(Arc::clone(&self.state));
        let head_timeout = self.state.client_timeout;
        tokio::select! {
            () = accept_loop(self.listener, app, head_timeout) => Ok(()),
            () = shutdown => Ok(()),
        }
    }
}

/// The app: every route behind the token check. Here, at the root, because
/// it names every module that answers, and none of them names it back.
pub(crate) fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/api/sessions", get(api::sessions))
        .route("/api/sessions/{id}", get(api::session))
        .route("/api/events", get(api::events))
        .route("/api/overview", get(api::overview))
        .route("/api/memories", get(api::memories))
        .route("/api/alerts", get(api::alerts))
        .route("/api/feed", get(api::feed_sse))
        .route("/assets/{name}", get(assets::asset))
        .merge(pages::routes())
        .route("/sessions/{id}/export.html", get(export::download))
        .merge(builder::routes())
        .merge(playground::routes())
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "no such endpoint") })
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            limits::body_deadline,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            mask::responses,
        ))
        .layer(axum::middleware::from_fn(limits::utf8_path))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            auth::require_token,
        ))
        .layer(axum::middleware::from_fn(security::headers))
        .with_state(state)
}

/// Accept connections for good, each served on its own task.
///
/// Note \[Connections\]: `axum::serve` fixes hyper's settings, so `serve`
/// drives hyper itself, for these reasons:
/// - a request head (request line, headers, their line ends and the blank
///   line) is capped at [`MAX_HEAD_BYTES`], 32,768 bytes exactly: one more
///   gets `431` and the connection closes, before anything is routed.
///   hyper's own cap is its read buffer (`max_buf_size`), which one read
///   can overshoot by what the allocator rounded up: a 32 KiB buffer let
///   heads of about 48 KiB through, so the cap is `max_header_size`, which
///   counts the parsed head. Browsers send a few KiB; the dashboard's URLs
///   are short.
/// - the same 32 KiB caps hyper's write buffer: hyper polls a response body
///   (a feed, a page) for more only when what it holds is under it, so a
///   client that stops reading holds at most that plus one chunk in `serve`
///   (Note \[Pull, not push\] in `feed`).
/// - a client must send its head within the client timeout
///   ([`Config::client_timeout`], 30 s), and then its body within as long
///   again (Note \[Slow bodies\] in `limits`), so half-open connections and
///   trickled bodies do not pile up and hold file descriptors.
/// - the kernel's send buffer of a connection is capped at [`SEND_BUFFER`]
///   (the kernel doubles it for its own bookkeeping). Left to autotune,
///   each connection whose client stopped reading took up to 4 MiB of
///   kernel memory (`tcp_wmem`), filled from the feed as fast as `serve`
///   could read it: 300 such clients put over 1 GB in socket buffers, the
///   kernel's TCP memory came under pressure, and a client that did read
///   stalled (issue 40). 256 KiB still fills a 50 ms path at 5 MB/s.
/// - `TCP_NODELAY`: SSE writes are small; with Nagle's algorithm a frame can
///   wait for the client's delayed ACK (up to 40 ms on Linux), which alone
///   would break the 50 ms latency goal (issue 9).
///
/// An accept error (out of file descriptors) is waited out, not fatal: the
/// server answers again once connections close.
async fn accept_loop(listener: tokio::net::TcpListener, app: axum::Router, head_timeout: Duration) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        // A refused option only costs latency.
        let _ = stream.set_nodelay(true);
        // Refused, the kernel's own limits stand.
        let _ =
            nix::sys::socket::setsockopt(&stream, nix::sys::socket::sockopt::SndBuf, &SEND_BUFFER);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            // A broken or malformed connection ends here; hyper already
            // answered what it could (400, 431) and nothing else is affected.
            let _ = hyper::server::conn::http1::Builder::new()
                .max_buf_size(MAX_HEAD_BYTES)
                .max_header_size(MAX_HEAD_BYTES)
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(head_timeout)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// One page of a session's page as `GET /sessions/{id}?after=` draws it
/// (read, then rendered; no HTTP), and the `after` of the next page: for
/// the benchmark `benches/session_page.rs` (issue 41: a session page
/// renders in under 100 ms). `None` for an unknown id.
///
/// # Errors
/// When the store cannot be read.
#[doc(hidden)]
pub fn session_page_html(
    store: &dyn Source,
    id: &str,
    after: i64,
) -> agentshape_store::Result<Option<(String, Option<i64>)>> {
    Ok(pages::session::load(store, id, after)?
        .map(|l| (pages::session::render(&l).into_string(), l.transcript_next)))
}
