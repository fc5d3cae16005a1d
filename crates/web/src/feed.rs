//! The live feed: one tailer watching the store, every SSE client fed from it.
//!
//! Note \[One tailer\]: a single thread reads `feed_after(last, PAGE)` when
//! the store changed (Note \[Tailer wake\]) and publishes each new row on a
//! broadcast channel, so 200 clients cost one query per change, not 200. A
//! client first subscribes, then reads
//! the rows after its resume point from the store (its own connection), then
//! takes rows from the channel, skipping ids it already sent. Rows the tailer
//! published before the subscription were committed before it, so the
//! store read sees them: no gap. Skipping ids at or below the last one sent:
//! no duplicate. A client too slow for the channel (`Lagged`) goes back to
//! the store from its last id, so it misses nothing either. Feed ids are
//! committed in order (SQLite has one writer), so "after the last id" is exact.
//!
//! Note \[Tailer wake\]: issue 9 wants an agent's line in the browser within
//! 50 ms at p99. Polling `feed_after` every 100 ms cost up to 100 ms; polling
//! it every few ms would cost a query each time. Instead the tailer keeps one
//! connection and asks it `PRAGMA data_version` every
//! [`Config::check`](crate::Config::check) (2 ms): a counter SQLite bumps when
//! another connection commits, read from shared memory in microseconds, no
//! table touched. Only when it moved does the tailer query. The version is
//! read *before* the query, so a commit that lands during the query moves it
//! again and is read next time: nothing waits for the fallback. The fallback
//! is a query every [`Config::poll`](crate::Config::poll) (100 ms) whatever
//! the counter says, in case a file system or a replaced file hides a
//! change. After [`IDLE_AFTER`] without a new row the checks slow to one
//! every [`IDLE_CHECKS`] × `check` (10 ms): the first line after a quiet
//! spell waits a few ms more, every later one is back on the fast path, and
//! an idle server wakes about a hundred times a second for a few
//! microseconds each (measured by `serve_load`: README).
//!
//! Note \[Feed on Postgres\]: Postgres has no `data_version`; its tailer
//! reads the feed by id every `poll` (100 ms) on the store's pooled
//! connection, a query on the primary key that finds nothing most of the
//! time. Ids become visible in id order there too (Note \[Feed order on
//! Postgres\] in the store), so resuming from the last id loses nothing.
//! `LISTEN/NOTIFY` would cut the latency below the poll; not needed yet.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agentshape_store::{FeedRow, SqliteStore, Store};
use axum::response::sse::Event;
use tokio::sync::{broadcast, mpsc};

use crate::State;

/// Rows the broadcast channel keeps for slow clients before they lag.
///
/// The ring keeps its last `CHANNEL` rows alive whether or not anyone still
/// needs them, and a row may carry up to 64 KiB of body plus its event text,
/// so this is also the server's memory bound for the live feed: 512 rows is
/// at most ~64 MiB, typically well under 1 MiB. A client that falls further
/// behind loses nothing: it reads the rows it missed from the store by id.
pub(crate) const CHANNEL: usize = 512;

/// Rows read from the store per query.
const PAGE: usize = 500;

/// Without a new row for this long, the tailer checks less often (Note \[Tailer wake\]).
const IDLE_AFTER: Duration = Duration::from_secs(1);

/// How many times `check` the tailer sleeps between checks when idle.
const IDLE_CHECKS: u32 = 5;

/// The store's change counter on this connection (Note \[Tailer wake\]);
/// `None` when it cannot be read (the connection is then replaced).
fn data_version(store: &SqliteStore) -> Option<i64> {
    // Cached: the tailer asks hundreds of times a second.
    let mut stmt = store
        .connection()
        .prepare_cached("PRAGMA data_version")
        .ok()?;
    stmt.query_row([], |r| r.get::<_, i64>(0)).ok()
}

/// How the tailer paces itself (Note \[Tailer wake\]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pace {
    /// How often the change counter is read.
    pub(crate) check: Duration,
    /// The longest between two queries, changed or not.
    pub(crate) poll: Duration,
}

/// Start the tailer thread (Note \[One tailer\]); it ends when `stop` is set.
/// A thread, not a task: SQLite calls block.
pub(crate) fn spawn_tailer(state: &Arc<State>, after: i64, pace: Pace, stop: Arc<AtomicBool>) {
    let state = Arc::clone(state);
    let check = pace.check.max(Duration::from_micros(100));
    if let Some(pg) = state.pg.clone() {
        std::thread::spawn(move || tail_postgres(&state, &pg, after, pace.poll, &stop));
        return;
    }
    std::thread::spawn(move || {
        let mut last = after;
        let mut store: Option<SqliteStore> = None;
        let mut seen: Option<i64> = None;
        let mut queried = Instant::now();
        let mut active = Instant::now();
        let mut first = true;
        while !stop.load(Ordering::Relaxed) {
            if store.is_none() {
                store = state.open_sqlite().ok();
                seen = None;
            }
            let Some(s) = store.as_ref() else {
                std::thread::sleep(pace.poll.max(check));
                continue;
            };
            let version = data_version(s);
            let changed = version.is_none() || version != seen;
            if !(first || changed || queried.elapsed() >= pace.poll) {
                let idle = active.elapsed() >= IDLE_AFTER;
                std::thread::sleep(if idle {
                    (check * IDLE_CHECKS).min(pace.poll.max(check))
                } else {
                    check
                });
                continue;
            }
            first = false;
            queried = Instant::now();
            // A failed read (busy store, file replaced) drops the connection
            // and tries again: the tailer never gives up.
            let (Some(_), Ok(rows)) = (version, s.feed_after(last, PAGE)) else {
                store = None;
                std::thread::sleep(check);
                continue;
            };
            let full = rows.len() == PAGE;
            // A full page: more may be there without another commit.
            seen = if full { None } else { version };
            if !rows.is_empty() {
                active = Instant::now();
            }
            for row in rows {
                last = row.id;
                // No subscriber is fine: nobody is watching.
                let _ = state.tail.send(Arc::new(Row::new(&row)));
            }
        }
    });
}

/// Note \[Feed on Postgres\]: read by id every `poll`; a failed read (the
/// server restarting) is tried again at the next poll.
fn tail_postgres(
    state: &State,
    pg: &agentshape_store::PgStore,
    after: i64,
    poll: Duration,
    stop: &AtomicBool,
) {
    let mut last = after;
    while !stop.load(Ordering::Relaxed) {
        let rows = pg.feed_after(last, PAGE).unwrap_or_default();
        let full = rows.len() == PAGE;
        for row in rows {
            last = row.id;
            let _ = state.tail.send(Arc::new(Row::new(&row)));
        }
        if !full {
            std::thread::sleep(poll);
        }
    }
}

/// A feed row ready to send. Its SSE `data` is made once, by the tailer
/// (or by a client catching up from the store), and shared by every client:
/// with 200 clients, parsing and re-serialising the body per client was most
/// of `serve`'s CPU under load (measured by `serve_load`).
#[derive(Debug)]
pub(crate) struct Row {
    /// The feed row id: the SSE `id:`.
    pub(crate) id: i64,
    /// The kind with line breaks replaced: the SSE `event:`.
    kind: String,
    /// `{id, session_id, kind, created_at, body}` as compact JSON, with the
    /// body as JSON (as a string when the stored text is not JSON).
    data: String,
}

impl Row {
    /// Make the event's parts of a stored row.
    pub(crate) fn new(row: &FeedRow) -> Self {
        let body = serde_json::from_str::<serde_json::Value>(&row.body)
            .unwrap_or_else(|_| serde_json::Value::String(row.body.clone()));
        let data = serde_json::json!({
            "id": row.id,
            "session_id": row.session_id,
            "kind": row.kind,
            "created_at": row.created_at,
            "body": body,
        });
        // `Event::event` panics on a line break; a kind is a word, but it
        // comes from another process.
        let kind = row
            .kind
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .collect();
        // Compact JSON has no raw line breaks, so `data` cannot split or panic.
        Row {
            id: row.id,
            kind,
            data: data.to_string(),
        }
    }
}

/// The SSE event of a feed row: `id:` row id, `event:` kind, `data:` JSON
/// (see [`Row`]).
pub(crate) fn event_of(row: &Row) -> Event {
    Event::default()
        .id(row.id.to_string())
        .event(&row.kind)
        .data(&row.data)
}

/// Rows for one client, in order; the handler turns them into SSE events.
pub(crate) type Sink = mpsc::Sender<Arc<Row>>;

/// Send the stored rows after `*last` to the client; `false` once the client is gone.
async fn catch_up(state: &Arc<State>, last: &mut i64, out: &Sink) -> bool {
    loop {
        let st = Arc::clone(state);
        let after = *last;
        let rows = tokio::task::spawn_blocking(move || st.feed_after(after, PAGE)).await;
        // Busy or briefly unreadable: wait and try again rather than end
        // the stream (the client would only reconnect here).
        let Ok(Ok(rows)) = rows else {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(200)) => continue,
                () = out.closed() => return false,
            }
        };
        let full = rows.len() == PAGE;
        for row in rows {
            let id = row.id;
            if out.send(Arc::new(Row::new(&row))).await.is_err() {
                return false;
            }
            *last = id;
        }
        if !full {
            return true;
        }
    }
}

/// Feed one client from the row after `after` on, until it goes away.
pub(crate) fn spawn_client(state: Arc<State>, after: i64, out: Sink) {
    tokio::spawn(async move {
        // Subscribe before reading the store (Note [One tailer]).
        let mut rx = state.tail.subscribe();
        let mut last = after;
        loop {
            if !catch_up(&state, &mut last, &out).await {
                return;
            }
            loop {
                let got = tokio::select! {
                    got = rx.recv() => got,
                    () = out.closed() => return,
                };
                match got {
                    Ok(row) if row.id <= last => {}
                    Ok(row) => {
                        let id = row.id;
                        if out.send(row).await.is_err() {
                            return;
                        }
                        last = id;
                    }
                    // Too slow for the channel: back to the store.
                    Err(broadcast::error::RecvError::Lagged(_)) => break,
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use agentshape_store::{FeedEntry, SqliteStore};

    fn entry(i: usize) -> FeedEntry {
        FeedEntry {
            session_id: "s".into(),
            kind: "event".into(),
            body: format!("{{\"n\":{i}}}"),
            created_at: "2025-07-14T03:12:00.000Z".into(),
        }
    }

    /// Note [One tailer]: a client too slow for the channel loses nothing
    /// and repeats nothing: it reads what it missed from the store.
    #[tokio::test]
    async fn a_lagging_client_gets_every_row_once_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("feed.db");
        let mut writer = SqliteStore::open(&path).unwrap();
        let entries: Vec<FeedEntry> = (0..50).map(entry).collect();
        writer.append_feed(&entries[..10]).unwrap();
        let (tail, _) = broadcast::channel(2);
        let state = Arc::new(State {
            store: agentshape_store::StoreUrl::Sqlite(path),
            pg: None,
            token: None,
            keep_alive: Duration::from_secs(15),
            schemas: None,
            tail,
        });
        // A one-row channel: the client blocks while we publish 40 rows on
        // a broadcast channel that keeps 2, so it must lag.
        let (tx, mut rx) = mpsc::channel(1);
        spawn_client(Arc::clone(&state), 0, tx);
        tokio::time::sleep(Duration::from_millis(100)).await;
        writer.append_feed(&entries[10..]).unwrap();
        for row in writer.feed_after(10, 100).unwrap() {
            let _ = state.tail.send(Arc::new(Row::new(&row)));
        }
        let mut ids = Vec::new();
        while ids.len() < 50 {
            let row = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .unwrap()
                .unwrap();
            ids.push(row.id);
        }
        assert_eq!(ids, (1..=50).collect::<Vec<i64>>());
        // Nothing more: the rows still in the channel were skipped as seen.
        assert!(
            tokio::time::timeout(Duration::from_millis(300), rx.recv())
                .await
                .is_err()
        );
    }

    /// Note [Tailer wake]: a commit reaches the channel through the change
    /// counter, without waiting for the fallback poll (an hour here).
    #[tokio::test]
    async fn the_tailer_wakes_on_a_commit_not_on_the_poll() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wake.db");
        let mut writer = SqliteStore::open(&path).unwrap();
        let (tail, mut rx) = broadcast::channel(16);
        let state = Arc::new(State {
            store: agentshape_store::StoreUrl::Sqlite(path),
            pg: None,
            token: None,
            keep_alive: Duration::from_secs(15),
            schemas: None,
            tail,
        });
        let stop = Arc::new(AtomicBool::new(false));
        let pace = Pace {
            check: Duration::from_millis(2),
            poll: Duration::from_secs(3600),
        };
        spawn_tailer(&state, 0, pace, Arc::clone(&stop));
        // Let the first (unconditional) read pass, then write twice.
        tokio::time::sleep(Duration::from_millis(100)).await;
        for i in 0..2 {
            writer.append_feed(&[entry(i)]).unwrap();
            let row = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .expect("the tailer saw the commit")
                .unwrap();
            let data: serde_json::Value = serde_json::from_str(&row.data).unwrap();
            assert_eq!(data["body"], serde_json::json!({ "n": i }));
        }
        stop.store(true, Ordering::Relaxed);
    }

    #[test]
    fn an_event_survives_a_kind_with_a_line_break_and_a_body_that_is_not_json() {
        let row = FeedRow {
            id: 7,
            session_id: "s".into(),
            kind: "ev\nil".into(),
            body: "not json".into(),
            created_at: "t".into(),
        };
        let made = Row::new(&row);
        assert_eq!(made.kind, "ev il");
        let data: serde_json::Value = serde_json::from_str(&made.data).unwrap();
        assert_eq!(
            data,
            serde_json::json!({"id": 7, "session_id": "s", "kind": "ev\nil", "created_at": "t", "body": "not json"})
        );
        let _ = event_of(&made);
    }
}
