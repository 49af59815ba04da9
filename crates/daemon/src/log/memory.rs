//! The in-memory event log.

use std::sync::{Arc, RwLock};

use sandbox_universal::UniversalEvent;
use tokio::sync::watch;

use super::{EventLog, StoredEvent};

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
        let stored = Arc::new(StoredEvent::new(event));
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

impl MemoryLog {
    /// A log that starts with already-recorded events (their sequences must be 1..=n).
    pub fn with_events(events: Vec<UniversalEvent>) -> Self {
        let stored: Vec<Arc<StoredEvent>> = events
            .into_iter()
            .map(|e| Arc::new(StoredEvent::new(e)))
            .collect();
        let last = stored.len() as u64;
        Self {
            events: RwLock::new(stored),
            head: watch::Sender::new(last),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::sample_event as event;

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
