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

use std::convert::Infallible;
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

type Sink = mpsc::Sender<Result<Event, Infallible>>;

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
            if out.send(Ok(event_of(&row))).await.is_err() {
                return false;
            }
            *last = row.id;
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
                        if out.send(Ok(event_of(&row))).await.is_err() {
                            return;
                        }
                        last = row.id;
                    }
                    // Too slow for the channel: back to the store.
                    Err(broadcast::error::RecvError::Lagged(_)) => break,
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        }
    });
}
