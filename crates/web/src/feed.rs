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

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agentshape_store::{FeedRow, SqliteStore, Store};
use axum::response::sse::Event;
use futures_util::Stream;
use tokio::sync::{OwnedSemaphorePermit, broadcast};

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

/// The most bytes of bodies the tailer reads per query (and then holds, as
/// [`Row`]s, until it has published them): 500 rows of 64 KiB were 32 MiB
/// at once.
const TAIL_PAGE_BYTES: usize = 4 << 20;

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
            let (Some(_), Ok(rows)) = (version, s.feed_page(last, PAGE, TAIL_PAGE_BYTES)) else {
                store = None;
                std::thread::sleep(check);
                continue;
            };
            let full = page_full(&rows, PAGE, TAIL_PAGE_BYTES);
            // A full page: more may be there without another commit.
            seen = if full { None } else { version };
            if !rows.is_empty() {
                active = Instant::now();
            }
            for row in rows {
                last = row.id;
                // No subscriber is fine: nobody is watching.
                let _ = state
                    .tail
                    .send(Arc::new(Row::new(&row, state.masker.as_ref())));
            }
        }
    });
}

/// See Note \[Feed on Postgres\]: read by id every `poll`; a failed read (the
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
        let rows = pg
            .feed_page(last, PAGE, TAIL_PAGE_BYTES)
            .unwrap_or_default();
        let full = page_full(&rows, PAGE, TAIL_PAGE_BYTES);
        for row in rows {
            last = row.id;
            let _ = state
                .tail
                .send(Arc::new(Row::new(&row, state.masker.as_ref())));
        }
        if !full {
            std::thread::sleep(poll);
        }
    }
}

/// Whether a page read with these limits stopped at one of them, so more
/// rows may follow without another commit.
fn page_full(rows: &[FeedRow], limit: usize, max_bytes: usize) -> bool {
    rows.len() >= limit || rows.iter().map(|r| r.body.len()).sum::<usize>() >= max_bytes
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
    pub(crate) fn new(row: &FeedRow, masker: Option<&agentshape_core::secrets::Masker>) -> Self {
        // The output door (Note \[Page door\] in `mask`): rows written
        // before masking existed, or with `--no-mask`, are masked here.
        let text = match masker {
            Some(m) => m.mask_json_text(&row.body).text,
            None => std::borrow::Cow::Borrowed(row.body.as_str()),
        };
        let body = serde_json::from_str::<serde_json::Value>(&text)
            .unwrap_or_else(|_| serde_json::Value::String(text.clone().into_owned()));
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

/// How many catching-up clients read the store at once. Each read opens a
/// connection and holds a page of rows and their events while it builds
/// them: 300 clients connecting at once would otherwise each do so at the
/// same moment, on as many blocking threads.
pub(crate) const FEED_READS: usize = 4;

/// About how many bytes of rows one client holds read from the store but
/// not yet handed to its connection (Note \[Pull, not push\]): a read
/// stops at the row that reaches it.
const CATCH_UP_BYTES: usize = 128 * 1024;

/// One client's feed, read as its connection drains.
///
/// Note \[Pull, not push\]: a client used to have a task that read the
/// rows after its resume point from the store and pushed them into a
/// 256-row channel: a client that never read held 256 rows in the channel
/// plus the 500-row page the task was pushing, up to ~48 MiB of 64 KiB
/// rows each (300 such clients took `serve` past 1.4 GB). Now nothing runs
/// ahead of the socket: the response body *is* this stream, and hyper polls
/// it only when the previous event went out (its write buffer is capped at
/// `MAX_HEAD_BYTES`, Note \[Connections\]). Each poll hands out a row
/// already read, or reads the next batch from the store by id, or waits on
/// the tailer's channel. A batch ends at the row that brings its bodies to
/// [`CATCH_UP_BYTES`] (`Store::feed_page`), so what one stalled client
/// holds is one batch (at most that plus one row), one event in hyper's
/// buffer and the kernel's socket buffer, whatever the feed's size and its
/// rows' sizes. Sizing a batch by a count, from the largest row of the
/// batch before, did not hold (issue 40): a first batch of small rows set
/// the next at 500 rows, and on a session of 64 KiB tool results each
/// stalled client held about twice the whole feed (100 of them took
/// `serve` past 2 GB). The Last-Event-ID contract (Note \[One
/// tailer\]) is unchanged: subscribe first, then the store after the last id
/// sent, then the channel skipping ids already sent, back to the store on
/// `Lagged`.
pub(crate) struct Follow {
    state: Arc<State>,
    rx: broadcast::Receiver<Arc<Row>>,
    /// The id of the last row handed out.
    last: i64,
    /// Rows read from the store, not yet handed out.
    pending: VecDeque<Arc<Row>>,
    /// Reading from the store (at the start, and after `Lagged`).
    catching_up: bool,
    /// This client's place under the connection cap, given back on drop.
    _slot: Option<OwnedSemaphorePermit>,
}

impl Follow {
    /// Follow the feed after `after` (Note \[One tailer\]: subscribe
    /// before the first store read).
    pub(crate) fn new(state: Arc<State>, after: i64, slot: Option<OwnedSemaphorePermit>) -> Self {
        let rx = state.tail.subscribe();
        Follow {
            state,
            rx,
            last: after,
            pending: VecDeque::new(),
            catching_up: true,
            _slot: slot,
        }
    }

    /// The next row; `None` only when the tailer is gone (the server stops).
    pub(crate) async fn next(&mut self) -> Option<Arc<Row>> {
        loop {
            if let Some(row) = self.pending.pop_front() {
                self.last = row.id;
                return Some(row);
            }
            if self.catching_up {
                self.read_batch().await;
                continue;
            }
            match self.rx.recv().await {
                Ok(row) if row.id <= self.last => {}
                Ok(row) => {
                    self.last = row.id;
                    return Some(row);
                }
                // Too slow for the channel: back to the store.
                Err(broadcast::error::RecvError::Lagged(_)) => self.catching_up = true,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// Read the next batch after `last` into `pending`; a batch that
    /// stopped at neither limit ends the catch-up. A busy or briefly unreadable store is tried again
    /// 200 ms later rather than ending the stream (the client would only
    /// reconnect here).
    async fn read_batch(&mut self) {
        let st = Arc::clone(&self.state);
        let after = self.last;
        // Never closed: the semaphore lives as long as the state.
        let Ok(turn) = Arc::clone(&self.state.feed_reads).acquire_owned().await else {
            return;
        };
        let rows = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            st.feed_page(after, PAGE, CATCH_UP_BYTES)
        })
        .await;
        let Ok(Ok(rows)) = rows else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            return;
        };
        self.state.feed_rows_read.fetch_add(
            u64::try_from(rows.len()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        self.catching_up = page_full(&rows, PAGE, CATCH_UP_BYTES);
        self.pending.extend(
            rows.iter()
                .map(|row| Arc::new(Row::new(row, self.state.masker.as_ref()))),
        );
    }
}

/// The client's feed as the stream of SSE events the response body is.
pub(crate) fn events(follow: Follow) -> impl Stream<Item = Result<Event, Infallible>> + Send {
    futures_util::stream::unfold(follow, |mut f| async move {
        let row = f.next().await?;
        Some((Ok(event_of(&row)), f))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use agentshape_store::{FeedEntry, SqliteStore};

    fn entry(i: usize) -> FeedEntry {
        FeedEntry {
            seq: None,
            session_id: "s".into(),
            kind: "event".into(),
            body: format!("{{\"n\":{i}}}"),
            created_at: "2025-07-14T03:12:00.000Z".into(),
        }
    }

    fn state(path: std::path::PathBuf, tail: broadcast::Sender<Arc<Row>>) -> Arc<State> {
        let mut config = crate::Config::new(agentshape_store::StoreUrl::Sqlite(path));
        config.max_feed_clients = 4;
        Arc::new(State::new(config, None, tail))
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
        let state = state(path, tail);
        let mut follow = Follow::new(Arc::clone(&state), 0, None);
        let mut ids = Vec::new();
        // The first rows, then the client stops reading while 40 rows are
        // published on a broadcast channel that keeps 2, so it must lag.
        for _ in 0..3 {
            ids.push(follow.next().await.unwrap().id);
        }
        writer.append_feed(&entries[10..]).unwrap();
        for row in writer.feed_after(10, 100).unwrap() {
            let _ = state
                .tail
                .send(Arc::new(Row::new(&row, state.masker.as_ref())));
        }
        while ids.len() < 50 {
            let row = tokio::time::timeout(Duration::from_secs(10), follow.next())
                .await
                .unwrap()
                .unwrap();
            ids.push(row.id);
        }
        assert_eq!(ids, (1..=50).collect::<Vec<i64>>());
        // Nothing more: the rows still in the channel were skipped as seen.
        assert!(
            tokio::time::timeout(Duration::from_millis(300), follow.next())
                .await
                .is_err()
        );
    }

    /// Note [Pull, not push]: a client that takes one row of a 1,000-row
    /// feed of 64 KiB rows and then stops has made the server read a few
    /// rows, not the feed (the push model read 500 at once and queued 256).
    #[tokio::test]
    async fn a_client_that_stops_reading_holds_one_batch_not_the_feed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.db");
        let mut writer = SqliteStore::open(&path).unwrap();
        let body = format!("{{\"pad\":\"{}\"}}", "x".repeat(64 * 1024 - 16));
        let entries: Vec<FeedEntry> = (0..1000)
            .map(|_| FeedEntry {
                body: body.clone(),
                ..entry(0)
            })
            .collect();
        writer.append_feed(&entries).unwrap();
        let (tail, _) = broadcast::channel(16);
        let state = state(path, tail);
        let mut follow = Follow::new(Arc::clone(&state), 0, None);
        assert_eq!(follow.next().await.unwrap().id, 1);
        // However long it waits, nothing reads ahead of the consumer.
        tokio::time::sleep(Duration::from_millis(200)).await;
        // A batch ends at the row that reaches CATCH_UP_BYTES: 3 rows
        // just under 64 KiB.
        let read = state.feed_rows_read.load(Ordering::Relaxed);
        assert!(read <= 3, "read {read} rows for 1 sent");
        let bound = CATCH_UP_BYTES + body.len();
        let held: usize = follow.pending.iter().map(|r| r.data.len()).sum();
        assert!(held <= bound, "holds {held} bytes");
        // Drained, it reads on in batches of about CATCH_UP_BYTES and
        // gets every row once, in order.
        let mut last = 1;
        for want in 2..=1000 {
            let row = follow.next().await.unwrap();
            assert_eq!(row.id, want);
            last = row.id;
            let held: usize = follow.pending.iter().map(|r| r.data.len()).sum();
            assert!(held <= bound, "holds {held} bytes");
        }
        assert_eq!(last, 1000);
        assert_eq!(state.feed_rows_read.load(Ordering::Relaxed), 1000);
    }

    /// Issue 40 §4: small rows first, then big ones (a session's start,
    /// then its tool results). The batch after a batch of small rows used
    /// to be sized by them (500 rows), and a stalled client held 500 big
    /// rows; a batch now stops at its byte budget whatever the rows.
    #[tokio::test]
    async fn a_batch_stops_at_its_bytes_when_big_rows_follow_small_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mixed.db");
        let mut writer = SqliteStore::open(&path).unwrap();
        let body = format!("{{\"pad\":\"{}\"}}", "x".repeat(64 * 1024 - 16));
        let mut entries: Vec<FeedEntry> = (0..3).map(entry).collect();
        entries.extend((0..600).map(|_| FeedEntry {
            body: body.clone(),
            ..entry(0)
        }));
        writer.append_feed(&entries).unwrap();
        let (tail, _) = broadcast::channel(16);
        let state = state(path, tail);
        let mut follow = Follow::new(Arc::clone(&state), 0, None);
        let limit = CATCH_UP_BYTES + 2 * body.len();
        for want in 1..=603 {
            assert_eq!(follow.next().await.unwrap().id, want);
            let held: usize = follow.pending.iter().map(|r| r.data.len()).sum();
            assert!(held <= limit, "holds {held} bytes after row {want}");
            let read = state.feed_rows_read.load(Ordering::Relaxed);
            assert!(
                read <= u64::try_from(want).unwrap() + 4,
                "read {read} rows for {want} sent"
            );
        }
    }

    /// Note [Tailer wake]: a commit reaches the channel through the change
    /// counter, without waiting for the fallback poll (an hour here).
    #[tokio::test]
    async fn the_tailer_wakes_on_a_commit_not_on_the_poll() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wake.db");
        let mut writer = SqliteStore::open(&path).unwrap();
        let (tail, mut rx) = broadcast::channel(16);
        let state = state(path, tail);
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
        let made = Row::new(&row, None);
        assert_eq!(made.kind, "ev il");
        let data: serde_json::Value = serde_json::from_str(&made.data).unwrap();
        assert_eq!(
            data,
            serde_json::json!({"id": 7, "session_id": "s", "kind": "ev\nil", "created_at": "t", "body": "not json"})
        );
        let _ = event_of(&made);
    }
}
