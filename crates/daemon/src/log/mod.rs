//! The per-session event log the daemon owns.
//!
//! Events get contiguous sequence numbers from 1. Readers (polling and SSE) read from the
//! log, never from a lossy broadcast: a slow or reconnecting reader sees every event, in
//! order. Appends wake readers through a `watch` channel holding the last sequence.
//! [`MemoryLog`] keeps events in memory; [`FileLog`] also appends them to a JSON-lines file
//! so a session's history survives a daemon restart.

mod file;
mod memory;

pub use file::FileLog;
pub use memory::MemoryLog;

use std::sync::Arc;

use sandbox_universal::UniversalEvent;
use tokio::sync::watch;

/// One logged event with its JSON (without `raw`) rendered once at append time.
#[derive(Debug)]
pub struct StoredEvent {
    /// The event, including `raw` when the agent provided it.
    pub event: UniversalEvent,
    /// The event as JSON without `raw`, the common case for readers.
    pub json: Box<str>,
}

impl StoredEvent {
    /// Wraps an event, rendering its JSON without `raw`.
    pub fn new(mut event: UniversalEvent) -> Self {
        let raw = event.raw.take();
        let json = serde_json::to_string(&event)
            .expect("events serialize")
            .into_boxed_str();
        event.raw = raw;
        Self { event, json }
    }

    /// The event as JSON, with or without its native `raw` payload.
    pub fn to_json(&self, include_raw: bool) -> std::borrow::Cow<'_, str> {
        if include_raw && self.event.raw.is_some() {
            std::borrow::Cow::Owned(serde_json::to_string(&self.event).expect("events serialize"))
        } else {
            std::borrow::Cow::Borrowed(&self.json)
        }
    }
}

/// Storage of one session's events. In memory today; a durable implementation can sit
/// behind the same trait.
pub trait EventLog: Send + Sync {
    /// Appends an event, assigning it the next sequence number, and wakes readers.
    fn append(&self, event: UniversalEvent) -> Arc<StoredEvent>;
    /// Up to `limit` events with `sequence > after`, oldest first.
    fn read(&self, after: u64, limit: usize) -> Vec<Arc<StoredEvent>>;
    /// The last sequence number (0 when empty).
    fn last_sequence(&self) -> u64;
    /// A receiver that changes whenever an event is appended.
    fn subscribe(&self) -> watch::Receiver<u64>;
}

/// A sample event for the log tests.
#[cfg(test)]
pub(crate) fn sample_event(delta: &str) -> UniversalEvent {
    use sandbox_universal::{EventPayload, EventSource, ItemDelta};
    UniversalEvent {
        sequence: 0,
        time: chrono::Utc::now(),
        session_id: "s".into(),
        native_session_id: None,
        source: EventSource::Agent,
        synthetic: false,
        payload: EventPayload::ItemDelta(ItemDelta {
            item_id: "i".into(),
            delta: delta.into(),
        }),
        raw: Some(serde_json::json!({"native": delta})),
    }
}
