//! The per-session event log the daemon owns.
//!
//! Events get contiguous sequence numbers from 1. Readers (polling and SSE) read from the
//! log, never from a lossy broadcast: a slow or reconnecting reader sees every event, in
//! order. Appends wake readers through a `watch` channel holding the last sequence.

use std::sync::{Arc, RwLock};

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

/// The in-memory [`EventLog`].
#[derive(Debug)]
pub struct MemoryLog {
    events: RwLock<Vec<Arc<StoredEvent>>>,
    head: watch::Sender<u64>,
}

impl Default for MemoryLog {
    fn default() -> Self {
        Self {
            events: RwLock::new(Vec::new()),
            head: watch::Sender::new(0),
        }
    }
}

impl EventLog for MemoryLog {
    fn append(&self, mut event: UniversalEvent) -> Arc<StoredEvent> {
        let mut events = self.events.write().expect("log lock");
        event.sequence = events.len() as u64 + 1;
        let json = {
            let raw = event.raw.take();
            let json = serde_json::to_string(&event).expect("events serialize");
            event.raw = raw;
            json.into_boxed_str()
        };
        let stored = Arc::new(StoredEvent { event, json });
        events.push(stored.clone());
        let sequence = events.len() as u64;
        drop(events);
        self.head.send_replace(sequence);
        stored
    }

    fn read(&self, after: u64, limit: usize) -> Vec<Arc<StoredEvent>> {
        let events = self.events.read().expect("log lock");
        let start = usize::try_from(after)
            .unwrap_or(usize::MAX)
            .min(events.len());
        let end = start.saturating_add(limit).min(events.len());
        events[start..end].to_vec()
    }

    fn last_sequence(&self) -> u64 {
        *self.head.borrow()
    }

    fn subscribe(&self) -> watch::Receiver<u64> {
        self.head.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use sandbox_universal::{EventPayload, EventSource, ItemDelta};

    fn event(delta: &str) -> UniversalEvent {
        UniversalEvent {
            sequence: 0,
            time: Utc::now(),
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

    #[test]
    fn sequences_are_contiguous_and_reads_page() {
        let log = MemoryLog::default();
        for i in 0..5 {
            assert_eq!(log.append(event(&i.to_string())).event.sequence, i + 1);
        }
        assert_eq!(log.last_sequence(), 5);
        let page: Vec<u64> = log.read(1, 2).iter().map(|e| e.event.sequence).collect();
        assert_eq!(page, vec![2, 3]);
        assert!(log.read(5, 10).is_empty());
        assert!(log.read(u64::MAX, 10).is_empty());
        assert_eq!(log.read(0, usize::MAX).len(), 5);
    }

    #[test]
    fn raw_is_only_rendered_on_request() {
        let log = MemoryLog::default();
        let stored = log.append(event("x"));
        assert!(!stored.to_json(false).contains("native"));
        assert!(stored.to_json(true).contains("\"raw\":{\"native\":\"x\"}"));
    }

    #[tokio::test]
    async fn appends_wake_subscribers() {
        let log = MemoryLog::default();
        let mut rx = log.subscribe();
        log.append(event("x"));
        rx.changed().await.unwrap();
        assert_eq!(*rx.borrow(), 1);
    }
}
