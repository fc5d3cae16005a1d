//! The session's lines on the store's live feed, queued by the pipeline and
//! flushed in small batches by the loop that also beats the heartbeat.
//!
//! Note \[Live feed\]: DESIGN.md's "Live feed contract" puts, for each
//! session, `started`, then what the agent did, then `ended` on the feed.
//! The `started` and `ended` rows are written by the store with the session
//! row; this module carries what lies between: every message the pipeline
//! gives the in-process hub (`event`, `partial`), with the same JSON body.
//! - The pipeline never touches the store: it pushes into a [`FeedQueue`]
//!   shared with the select loop of `run_session`, which flushes it when
//!   [`FeedQueue::due`] says so (Note \[Flush policy\]) and drains it before
//!   the final `write_session`, so the feed reads started → lines in order
//!   → ended.
//! - Bounded: at most [`FeedOptions::max_pending`] entries wait. When the
//!   store is slower than the agent, later entries are dropped and counted,
//!   and one `feed_gap` entry (`{"dropped": n}`) stands where they were.
//!   Reading the agent never waits for the store and memory never grows
//!   without bound.
//! - Each body is capped at [`FeedOptions::max_body`] bytes: long strings
//!   are cut and the body gets `"truncated": true` and its full size in
//!   `bytes`. The forensic log keeps every byte; the feed is for watching.
//! - A failed flush is not fatal (the forensic log is the record): it is
//!   counted and the same entries are tried again after
//!   [`FeedOptions::retry`], while new ones queue behind them up to the bound.
//!   A failure may come after the write landed, so each entry is numbered
//!   when queued and the store keeps a numbered entry once (Note \[Feed
//!   writes land once\] in the store's `writes`).
//!
//! Note \[Flush policy\]: a watcher wants a line within milliseconds (issue
//! 9: agent line → browser under 50 ms at p99), and a store wants few,
//! large transactions. So the first entry pushed into an empty queue starts
//! a short window ([`FeedOptions::flush`], 5 ms by default): whatever else
//! arrives in it goes in the same transaction, and a full batch
//! ([`FeedOptions::batch`]) is written at once. Batching under load comes by
//! itself: while one transaction runs (the select loop is busy writing),
//! the agent's next lines pile up and the next flush takes them all. An
//! idle session costs nothing: no timer runs while the queue is empty (the
//! old policy, a 100 ms tick, cost up to 100 ms of latency and woke an idle
//! run ten times a second). A failed flush waits [`FeedOptions::retry`]
//! before the next try, so a busy store is not hammered every few ms.
//! Measured with `crates/cli/benches/serve_load.rs` (README).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentshape_store::{FeedEntry, Store, time};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::hub::HubBody;

/// How a session feeds the store: intervals, batch size and bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedOptions {
    /// How often a running session refreshes its heartbeat (default
    /// [`agentshape_store::HEARTBEAT_INTERVAL_MS`]).
    pub heartbeat: Duration,
    /// The longest a queued entry waits before a flush is tried (default
    /// 5 ms): the window in which entries are gathered into one transaction
    /// (Note \[Flush policy\]).
    pub flush: Duration,
    /// After a failed flush, how long before the next try (default 100 ms).
    pub retry: Duration,
    /// A flush is tried as soon as this many entries are pending (default 64);
    /// also the most entries written in one transaction.
    pub batch: usize,
    /// The most entries waiting; later ones are dropped and counted (default 10,000).
    pub max_pending: usize,
    /// The most bytes of one entry's body (default 64 KiB).
    pub max_body: usize,
}

impl Default for FeedOptions {
    fn default() -> Self {
        FeedOptions {
            heartbeat: Duration::from_millis(
                u64::try_from(agentshape_store::HEARTBEAT_INTERVAL_MS).unwrap_or(5_000),
            ),
            flush: Duration::from_millis(5),
            retry: Duration::from_millis(100),
            batch: 64,
            max_pending: 10_000,
            max_body: 64 * 1024,
        }
    }
}

/// What feeding did, for the caller to report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FeedStats {
    /// Entries written to the feed.
    pub written: u64,
    /// Entries dropped because the queue was full.
    pub dropped: u64,
    /// Flushes that failed (their entries were tried again).
    pub failed_flushes: u64,
    /// Bodies cut to [`FeedOptions::max_body`].
    pub truncated: u64,
}

#[derive(Debug, Default)]
struct Pending {
    entries: VecDeque<FeedEntry>,
    /// Dropped since the last `feed_gap` entry.
    gap: u64,
    /// When the oldest pending entry was queued (Note \[Flush policy\]).
    since: Option<Instant>,
    /// No flush before this, after a failed one.
    not_before: Option<Instant>,
    /// The number the next queued entry gets (Note \[Feed writes land
    /// once\] in the store's `writes`).
    next_seq: i64,
    stats: FeedStats,
}

impl Pending {
    /// Queue `entry` with the next number.
    fn queue(&mut self, mut entry: FeedEntry) {
        entry.seq = Some(self.next_seq);
        self.next_seq += 1;
        self.entries.push_back(entry);
    }

    /// How long until a flush is due: `Some(ZERO)` now, `None` never (nothing pending).
    fn due_in(&self, opts: &FeedOptions, now: Instant) -> Option<Duration> {
        if self.entries.is_empty() && self.gap == 0 {
            return None;
        }
        let ready = if self.entries.len() >= opts.batch.max(1) {
            now
        } else {
            self.since.map_or(now, |t| t + opts.flush)
        };
        let at = self.not_before.map_or(ready, |nb| ready.max(nb));
        Some(at.saturating_duration_since(now))
    }
}

/// The queue between the pipeline and the store (Note \[Live feed\]).
/// Cheap to clone; every clone shares the queue.
#[derive(Debug, Clone)]
pub struct FeedQueue {
    session_id: String,
    opts: FeedOptions,
    pending: Arc<Mutex<Pending>>,
    /// Woken when the queue stops being empty and when a batch fills.
    wake: Arc<Notify>,
}

impl FeedQueue {
    /// An empty queue for one session.
    pub fn new(session_id: &str, opts: FeedOptions) -> Self {
        FeedQueue {
            session_id: session_id.to_owned(),
            opts,
            pending: Arc::default(),
            wake: Arc::new(Notify::new()),
        }
    }

    /// The options.
    pub fn options(&self) -> &FeedOptions {
        &self.opts
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        // A panic while holding the lock leaves a queue that is still consistent.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queue what the hub gets for `body`; never blocks on the store.
    pub fn push(&self, body: &HubBody) {
        let kind = match body {
            HubBody::Started { .. } => "started",
            HubBody::Event { .. } => "event",
            HubBody::Partial { .. } => "partial",
            HubBody::Ended { .. } => "ended",
        };
        // Serialised before the lock; dropped entries still cost this, but
        // never more than `max_body` bytes of memory beyond the event itself.
        let (text, truncated) = capped_body(body, self.opts.max_body);
        // Numbered when queued (a dropped entry takes no number).
        let entry = FeedEntry {
            session_id: self.session_id.clone(),
            kind: kind.to_owned(),
            body: text,
            created_at: time::now(),
            seq: None,
        };
        let mut p = self.lock();
        if truncated {
            p.stats.truncated += 1;
        }
        // Room for a pending `feed_gap` entry and this one.
        let need = if p.gap > 0 { 2 } else { 1 };
        if p.entries.len() + need > self.opts.max_pending {
            p.gap += 1;
            p.stats.dropped += 1;
            return;
        }
        self.close_gap(&mut p);
        p.queue(entry);
        if p.since.is_none() {
            p.since = Some(Instant::now());
            self.wake.notify_one();
        }
        if p.entries.len() == self.opts.batch.max(1) {
            self.wake.notify_one();
        }
    }

    /// Put the `feed_gap` entry for the dropped ones in the queue.
    fn close_gap(&self, p: &mut Pending) {
        if p.gap > 0 {
            let gap = FeedEntry {
                session_id: self.session_id.clone(),
                kind: "feed_gap".to_owned(),
                body: json!({ "dropped": p.gap }).to_string(),
                created_at: time::now(),
                seq: None,
            };
            p.queue(gap);
            p.gap = 0;
        }
    }

    /// Resolves when a flush is due (Note \[Flush policy\]): a full batch
    /// is pending, or the oldest pending entry has waited
    /// [`FeedOptions::flush`], and not sooner than [`FeedOptions::retry`]
    /// after a failed flush. Pending forever while the queue is empty, with
    /// no timer running. Cancel-safe: it keeps no state of its own.
    pub async fn due(&self) {
        loop {
            // Created before the check, so a push in between is not missed.
            let woken = self.wake.notified();
            let wait = self.lock().due_in(&self.opts, Instant::now());
            match wait {
                Some(d) if d.is_zero() => return,
                Some(d) => {
                    tokio::select! {
                        () = tokio::time::sleep(d) => {}
                        () = woken => {}
                    }
                }
                None => woken.await,
            }
        }
    }

    /// Write pending entries, oldest first, a batch per transaction, at most
    /// `max_batches` batches, each with the store's short patience so a busy
    /// store never holds up the agent's stream. Stops at the first failure,
    /// which is counted: those entries stay first in the queue for the next try.
    pub fn flush(&self, store: &mut dyn Store, max_batches: usize) {
        self.write(store, max_batches, false);
    }

    fn write(&self, store: &mut dyn Store, max_batches: usize, patient: bool) {
        for _ in 0..max_batches {
            let batch: Vec<FeedEntry> = {
                let mut p = self.lock();
                if p.entries.is_empty() && p.gap > 0 {
                    self.close_gap(&mut p);
                }
                p.entries
                    .iter()
                    .take(self.opts.batch.max(1))
                    .cloned()
                    .collect()
            };
            if batch.is_empty() {
                return;
            }
            let ok = if patient {
                store.append_feed(&batch).is_ok()
            } else {
                store.append_feed_now(&batch).is_ok()
            };
            let mut p = self.lock();
            if !ok {
                p.stats.failed_flushes += 1;
                p.not_before = Some(Instant::now() + self.opts.retry);
                return;
            }
            p.not_before = None;
            p.entries.drain(..batch.len());
            p.stats.written += batch.len() as u64;
            // What is left (or came in meanwhile) gets its own window.
            p.since = (!p.entries.is_empty()).then(Instant::now);
        }
    }

    /// Write everything left (before the session's final row), with the
    /// store's full busy timeout and retries: the stream has ended, so
    /// waiting costs the agent nothing, and the last lines are the ones a
    /// watcher wants most.
    pub fn drain(&self, store: &mut dyn Store) {
        self.write(store, usize::MAX, true);
    }

    /// Entries waiting.
    pub fn pending(&self) -> usize {
        self.lock().entries.len()
    }

    /// What feeding did so far.
    pub fn stats(&self) -> FeedStats {
        self.lock().stats
    }
}

/// A writer that keeps at most `cap` bytes and counts them all.
struct Capped {
    buf: Vec<u8>,
    cap: usize,
    total: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.total = self.total.saturating_add(b.len());
        if self.buf.len() < self.cap {
            let room = self.cap - self.buf.len();
            self.buf.extend_from_slice(&b[..b.len().min(room)]);
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `body` as JSON text of at most `cap` bytes, and whether it was cut.
pub(crate) fn capped_body<T: Serialize>(body: &T, cap: usize) -> (String, bool) {
    let mut w = Capped {
        buf: Vec::new(),
        cap: cap.saturating_add(1),
        total: 0,
    };
    if serde_json::to_writer(&mut w, body).is_ok() && w.total <= cap {
        // serde_json writes UTF-8: no copy (an import writes every line).
        let text = String::from_utf8(w.buf)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        return (text, false);
    }
    let total = w.total;
    let Ok(mut value) = serde_json::to_value(body) else {
        return (json!({"truncated": true, "bytes": total}).to_string(), true);
    };
    if let Value::Object(m) = &mut value {
        m.insert("truncated".to_owned(), Value::Bool(true));
        m.insert("bytes".to_owned(), json!(total));
    }
    // Cut long strings shorter, in place, until the whole fits.
    let mut limit = cap / 2;
    while limit >= 16 {
        cut_strings(&mut value, limit);
        let text = value.to_string();
        if text.len() <= cap {
            return (text, true);
        }
        limit /= 2;
    }
    // Too many small parts: only the kind survives.
    let kind = value.get_mut("kind").map_or(Value::Null, Value::take);
    (
        json!({"kind": kind, "truncated": true, "bytes": total}).to_string(),
        true,
    )
}

/// Cut every string longer than `limit` bytes (at a char boundary).
fn cut_strings(v: &mut Value, limit: usize) {
    match v {
        Value::String(s) if s.len() > limit => {
            let mut end = limit;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
        }
        Value::Array(a) => a.iter_mut().for_each(|x| cut_strings(x, limit)),
        Value::Object(m) => m.values_mut().for_each(|x| cut_strings(x, limit)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentshape_core::Event;
    use agentshape_store::SqliteStore;

    fn text(s: &str) -> HubBody {
        HubBody::Event {
            event: Event::Text { text: s.to_owned() },
        }
    }

    fn opts(max_pending: usize) -> FeedOptions {
        FeedOptions {
            batch: 4,
            max_pending,
            max_body: 1024,
            ..FeedOptions::default()
        }
    }

    #[test]
    fn a_full_queue_drops_and_counts_into_one_gap_entry() {
        let q = FeedQueue::new("s", opts(5));
        for i in 0..12 {
            q.push(&text(&format!("t{i}")));
        }
        assert_eq!(q.pending(), 5);
        assert_eq!(q.stats().dropped, 7);
        let mut store = SqliteStore::open_in_memory().unwrap();
        q.drain(&mut store);
        q.push(&text("after"));
        q.drain(&mut store);
        let rows = store.feed_after(0, 100).unwrap();
        let kinds: Vec<&str> = rows.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "event", "event", "event", "event", "event", "feed_gap", "event"
            ]
        );
        assert_eq!(rows[5].body, r#"{"dropped":7}"#);
        assert!(rows[6].body.contains("after"));
        assert_eq!(q.stats().written, 7);
    }

    /// Note [Feed writes land once]: each queued entry, the gap entry
    /// too, takes the next number; a dropped one takes none. A batch
    /// written again (its first answer lost) is stored once.
    #[test]
    fn queued_entries_are_numbered_in_order_and_a_resent_batch_lands_once() {
        let q = FeedQueue::new("s", opts(3));
        for i in 0..5 {
            q.push(&text(&format!("t{i}")));
        }
        q.push(&text("late"));
        let seqs: Vec<Option<i64>> = q.lock().entries.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [Some(0), Some(1), Some(2)]);
        let mut store = SqliteStore::open_in_memory().unwrap();
        let sent: Vec<FeedEntry> = q.lock().entries.iter().cloned().collect();
        store.append_feed(&sent).unwrap();
        // The answer was lost: the queue still holds the batch and sends it.
        q.drain(&mut store);
        q.push(&text("after"));
        q.drain(&mut store);
        let rows = store.feed_after(0, 100).unwrap();
        let kinds: Vec<&str> = rows.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["event", "event", "event", "feed_gap", "event"]);
        let seqs = agentshape_testkit::sqlite::rows(
            store.connection(),
            "SELECT seq FROM feed ORDER BY id",
        );
        assert_eq!(seqs, [["0"], ["1"], ["2"], ["3"], ["4"]]);
    }

    #[test]
    fn a_gap_at_the_end_is_written_by_the_drain() {
        let q = FeedQueue::new("s", opts(2));
        for i in 0..3 {
            q.push(&text(&format!("t{i}")));
        }
        let mut store = SqliteStore::open_in_memory().unwrap();
        q.drain(&mut store);
        let kinds: Vec<String> = store
            .feed_after(0, 100)
            .unwrap()
            .into_iter()
            .map(|r| r.kind)
            .collect();
        assert_eq!(kinds, ["event", "event", "feed_gap"]);
    }

    #[test]
    fn a_huge_body_is_cut_and_flagged() {
        let q = FeedQueue::new("s", opts(10));
        let big = "é".repeat(1_000_000);
        q.push(&text(&big));
        q.push(&text("small"));
        let mut store = SqliteStore::open_in_memory().unwrap();
        q.drain(&mut store);
        let rows = store.feed_after(0, 100).unwrap();
        assert!(rows[0].body.len() <= 1024, "{}", rows[0].body.len());
        let v: Value = serde_json::from_str(&rows[0].body).unwrap();
        assert_eq!(v["truncated"], true);
        assert_eq!(v["kind"], "event");
        assert!(v["bytes"].as_u64().unwrap() > 2_000_000, "{}", v["bytes"]);
        assert!(v["event"]["text"].as_str().unwrap().starts_with("éé"));
        let v: Value = serde_json::from_str(&rows[1].body).unwrap();
        assert_eq!(
            v,
            json!({"kind": "event", "event": {"type": "text", "text": "small"}})
        );
        assert_eq!(q.stats().truncated, 1);
    }

    /// A hang guard: generous, never a speed assertion.
    const GUARD: Duration = Duration::from_secs(10);

    /// `true` when `due` has not resolved within `ms` (it must not resolve at all).
    async fn not_due(q: &FeedQueue, ms: u64) -> bool {
        tokio::time::timeout(Duration::from_millis(ms), q.due())
            .await
            .is_err()
    }

    /// Note [Flush policy]: a line waits a few ms, not a 100 ms tick.
    #[test]
    fn the_default_window_is_a_few_milliseconds() {
        let d = FeedOptions::default();
        assert!(d.flush <= Duration::from_millis(10), "{:?}", d.flush);
        assert!(d.retry >= Duration::from_millis(50), "{:?}", d.retry);
        assert_eq!(d.batch, 64);
        assert_eq!(d.max_pending, 10_000);
    }

    #[tokio::test]
    async fn nothing_is_due_while_the_queue_is_empty() {
        let q = FeedQueue::new(
            "s",
            FeedOptions {
                flush: Duration::from_millis(1),
                ..opts(10)
            },
        );
        assert!(not_due(&q, 100).await);
        // Written and empty again: idle again.
        q.push(&text("one"));
        tokio::time::timeout(GUARD, q.due()).await.unwrap();
        let mut store = SqliteStore::open_in_memory().unwrap();
        q.flush(&mut store, 1);
        assert!(not_due(&q, 100).await);
    }

    #[tokio::test]
    async fn one_line_is_due_after_the_window_and_lines_in_it_share_a_batch() {
        let q = FeedQueue::new(
            "s",
            FeedOptions {
                flush: Duration::from_millis(20),
                ..opts(10)
            },
        );
        let waiter = {
            let q = q.clone();
            tokio::spawn(async move { q.due().await })
        };
        for i in 0..3 {
            q.push(&text(&format!("t{i}")));
        }
        tokio::time::timeout(GUARD, waiter).await.unwrap().unwrap();
        let mut store = SqliteStore::open_in_memory().unwrap();
        // One batch takes all three.
        q.flush(&mut store, 1);
        assert_eq!(q.pending(), 0);
        assert_eq!(store.feed_after(0, 10).unwrap().len(), 3);
    }

    #[tokio::test]
    async fn a_full_batch_is_due_at_once() {
        let q = FeedQueue::new(
            "s",
            FeedOptions {
                flush: Duration::from_secs(3600),
                ..opts(10)
            },
        );
        for i in 0..3 {
            q.push(&text(&format!("t{i}")));
        }
        assert!(
            not_due(&q, 100).await,
            "a partial batch waits for its window"
        );
        q.push(&text("t3"));
        tokio::time::timeout(GUARD, q.due()).await.unwrap();
    }

    #[tokio::test]
    async fn after_a_failed_flush_the_next_try_waits_retry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = SqliteStore::open(&path).unwrap();
        let q = FeedQueue::new(
            "s",
            FeedOptions {
                flush: Duration::from_millis(1),
                retry: Duration::from_secs(3600),
                ..opts(10)
            },
        );
        q.push(&text("one"));
        tokio::time::timeout(GUARD, q.due()).await.unwrap();
        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute_batch("BEGIN EXCLUSIVE").unwrap();
        q.flush(&mut store, 1);
        assert_eq!(q.stats().failed_flushes, 1);
        q.push(&text("two"));
        assert!(
            not_due(&q, 100).await,
            "a busy store is not retried at once"
        );
        other.execute_batch("ROLLBACK").unwrap();
        q.drain(&mut store);
        assert_eq!(store.feed_after(0, 10).unwrap().len(), 2);
    }

    #[test]
    fn a_failed_flush_keeps_the_entries_for_the_next_try() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.db");
        let mut store = SqliteStore::open(&path).unwrap();
        let q = FeedQueue::new("s", opts(10));
        q.push(&text("one"));
        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute_batch("BEGIN EXCLUSIVE").unwrap();
        q.flush(&mut store, 1);
        assert_eq!(q.stats().failed_flushes, 1);
        assert_eq!(q.pending(), 1);
        other.execute_batch("ROLLBACK").unwrap();
        q.flush(&mut store, 1);
        assert_eq!(q.pending(), 0);
        assert_eq!(store.feed_after(0, 10).unwrap().len(), 1);
    }
}
