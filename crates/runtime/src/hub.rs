//! The live hub: what a session is doing, as it happens, for any number of
//! subscribers (the `--live` feed on stderr today, the dashboard's SSE feed later).
//!
//! A tokio broadcast channel: publishing never blocks the agent's reader; a
//! subscriber that falls more than the channel's capacity behind loses the
//! oldest messages (and is told how many), which is right for a live view.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agentshape_core::Event;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

/// Whether a field of a partial object is finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldState {
    /// The agent has moved past it: its value will not change.
    Complete,
    /// Still being written, or required and not started.
    Pending,
}

/// What a hub message carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HubBody {
    /// A session started.
    Started {
        /// Tier.
        tier: u32,
        /// Parent session.
        parent_id: Option<String>,
    },
    /// A decoded event of the agent's stream.
    Event {
        /// The event.
        event: Event,
    },
    /// The structured object as far as the agent has written it (`--partial`).
    Partial {
        /// The value parsed tolerantly so far.
        value: Value,
        /// Each top-level field, complete or pending.
        fields: BTreeMap<String, FieldState>,
    },
    /// A session ended.
    Ended {
        /// Final status.
        status: String,
        /// Extraction method.
        extraction_method: Option<String>,
    },
}

/// One message on the hub.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HubMessage {
    /// The session it belongs to.
    pub session_id: String,
    /// Publication order across the hub.
    pub seq: u64,
    /// The content.
    #[serde(flatten)]
    pub body: HubBody,
}

/// The hub. Cheap to clone; every clone publishes to the same subscribers.
#[derive(Debug, Clone)]
pub struct Hub {
    tx: broadcast::Sender<Arc<HubMessage>>,
    seq: Arc<AtomicU64>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub::new(4096)
    }
}

impl Hub {
    /// A hub keeping up to `capacity` messages for slow subscribers.
    pub fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity.max(1));
        Hub {
            tx,
            seq: Arc::new(AtomicU64::new(0)),
        }
    }

    /// A new subscriber, receiving every message published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<HubMessage>> {
        self.tx.subscribe()
    }

    /// Whether anyone listens (publishing is skipped when nobody does).
    pub fn has_subscribers(&self) -> bool {
        self.tx.receiver_count() > 0
    }

    /// Publish a message for a session.
    pub fn publish(&self, session_id: &str, body: HubBody) {
        if !self.has_subscribers() {
            return;
        }
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        // An error only means every subscriber left meanwhile.
        let _ = self.tx.send(Arc::new(HubMessage {
            session_id: session_id.to_owned(),
            seq,
            body,
        }));
    }
}
