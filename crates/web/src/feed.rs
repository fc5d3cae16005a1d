//! The live feed: one tailer polling the store, every SSE client fed from it.
//!
//! Note \[One tailer\]: a single thread polls `feed_after(last, PAGE)` every
//! `poll` and publishes each new row on a broadcast channel, so 200 clients
//! cost one query per poll, not 200. A client first subscribes, then reads
//! the rows after its resume point from the store (its own connection), then
//! takes rows from the channel, skipping ids it already sent. Rows the tailer
//! published before the subscription were committed before it, so the
//! store read sees them: no gap. Skipping ids at or below the last one sent:
//! no duplicate. A client too slow for the channel (`Lagged`) goes back to
//! the store from its last id, so it misses nothing either. Feed ids are
//! committed in order (SQLite has one writer), so "after the last id" is exact.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agentshape_store::{FeedRow, Store};
use axum::response::sse::Event;
use tokio::sync::{broadcast, mpsc};

use crate::State;

/// Rows the broadcast channel keeps for slow clients before they lag.
pub(crate) const CHANNEL: usize = 4096;

/// Rows read from the store per query.
const PAGE: usize = 500;

/// Start the tailer thread (Note \[One tailer\]); it ends when `stop` is set.
/// A thread, not a task: SQLite calls block.
pub(crate) fn spawn_tailer(state: &Arc<State>, after: i64, poll: Duration, stop: Arc<AtomicBool>) {
    let state = Arc::clone(state);
    std::thread::spawn(move || {
        let mut last = after;
        let mut store = None;
        while !stop.load(Ordering::Relaxed) {
            if store.is_none() {
                store = state.open().ok();
            }
            // A failed read (busy store, file replaced) drops the connection
            // and tries again next poll: the tailer never gives up.
            let rows = if let Some(Ok(rows)) = store.as_ref().map(|s| s.feed_after(last, PAGE)) {
                rows
            } else {
                store = None;
                Vec::new()
            };
            let full = rows.len() == PAGE;
            for row in rows {
                last = row.id;
                // No subscriber is fine: nobody is watching.
                let _ = state.tail.send(Arc::new(row));
            }
            if !full {
                std::thread::sleep(poll);
            }
        }
    });
}

/// The SSE event of a feed row: `id:` row id, `event:` kind, `data:` JSON
/// `{id, session_id, kind, created_at, body}` with the body as JSON (as a
/// string when the stored text is not JSON).
pub(crate) fn event_of(row: &FeedRow) -> Event {
    let body = serde_json::from_str::<serde_json::Value>(&row.body)
        .unwrap_or_else(|_| serde_json::Value::String(row.body.clone()));
    let data = serde_json::json!({
        "id": row.id,
        "session_id": row.session_id,
        "kind": row.kind,
        "created_at": row.created_at,
        "body": body,
    });
    // `Event::event` panics on a line break; a kind is a word, but it comes
    // from another process.
    let kind: String = row
        .kind
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    // Compact JSON has no raw line breaks, so `data` cannot split or panic.
    Event::default()
        .id(row.id.to_string())
        .event(kind)
        .data(data.to_string())
}

/// Rows for one client, in order; the handler turns them into SSE events.
pub(crate) type Sink = mpsc::Sender<Arc<FeedRow>>;

/// Send the stored rows after `*last` to the client; `false` once the client is gone.
async fn catch_up(state: &Arc<State>, last: &mut i64, out: &Sink) -> bool {
    loop {
        let st = Arc::clone(state);
        let after = *last;
        let rows = tokio::task::spawn_blocking(move || st.open()?.feed_after(after, PAGE)).await;
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
            if out.send(Arc::new(row)).await.is_err() {
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
            store: path,
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
            let _ = state.tail.send(Arc::new(row));
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

    #[test]
    fn an_event_survives_a_kind_with_a_line_break_and_a_body_that_is_not_json() {
        let row = FeedRow {
            id: 7,
            session_id: "s".into(),
            kind: "ev\nil".into(),
            body: "not json".into(),
            created_at: "t".into(),
        };
        let _ = event_of(&row);
    }
}
