//! The channel through which a running agent hands universal events to the daemon.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sandbox_universal::{EventPayload, EventSource};
use serde_json::Value;

/// One event as produced by a driver, before the daemon gives it a sequence number.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentEvent {
    /// The typed payload.
    pub payload: EventPayload,
    /// The native JSON the event came from, if any.
    pub raw: Option<Value>,
    /// Whether the event has no native counterpart.
    pub synthetic: bool,
    /// Who produced the event.
    pub source: EventSource,
}

impl AgentEvent {
    /// An event converted from native output.
    pub fn native(payload: EventPayload, raw: Option<Value>) -> Self {
        Self {
            payload,
            raw,
            synthetic: false,
            source: EventSource::Agent,
        }
    }

    /// An agent-side event synthesised to complete the universal lifecycle.
    pub fn synthetic(payload: EventPayload) -> Self {
        Self {
            payload,
            raw: None,
            synthetic: true,
            source: EventSource::Agent,
        }
    }
}

/// Receives the events of one session. The daemon implements this; tests use
/// [`CollectingSink`].
pub trait EventConsumer: Send + Sync {
    /// Records one event (in order).
    fn emit(&self, event: AgentEvent);
    /// Records the agent's own session id once it is known.
    fn set_native_session_id(&self, id: &str);
    /// A new id, unique within the session, such as `itm_12`.
    fn next_id(&self, prefix: &str) -> String;
}

/// What a converter needs from its session: fresh ids, and a place to note the agent's own
/// session id. Converters get this, never the sink: they return events, they do not emit
/// them, so they can be re-run on stored native output.
pub trait SessionIds {
    /// A new session-unique id with the given prefix, such as `itm_12`.
    fn next_id(&self, prefix: &str) -> String;
    /// Records the agent's own session id once it is known.
    fn set_native_session_id(&self, id: &str);
}

impl SessionIds for EventSink {
    fn next_id(&self, prefix: &str) -> String {
        self.0.next_id(prefix)
    }

    fn set_native_session_id(&self, id: &str) {
        self.0.set_native_session_id(id);
    }
}

/// A cheap, cloneable handle on a session's [`EventConsumer`].
#[derive(Clone)]
pub struct EventSink(Arc<dyn EventConsumer>);

impl EventSink {
    /// Wraps a consumer.
    pub fn new(consumer: Arc<dyn EventConsumer>) -> Self {
        Self(consumer)
    }

    /// Records one event.
    pub fn emit(&self, event: AgentEvent) {
        self.0.emit(event);
    }

    /// Records several events in order.
    pub fn emit_all(&self, events: impl IntoIterator<Item = AgentEvent>) {
        for event in events {
            self.0.emit(event);
        }
    }

    /// Records the agent's own session id.
    pub fn set_native_session_id(&self, id: &str) {
        self.0.set_native_session_id(id);
    }

    /// A new session-unique id with the given prefix.
    pub fn next_id(&self, prefix: &str) -> String {
        self.0.next_id(prefix)
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventSink")
    }
}

/// An [`EventConsumer`] that keeps everything in memory: for converter and driver tests.
#[derive(Default)]
pub struct CollectingSink {
    events: Mutex<Vec<AgentEvent>>,
    native_session_id: Mutex<Option<String>>,
    counter: AtomicU64,
}

impl CollectingSink {
    /// A new empty sink, already wrapped for drivers.
    pub fn new() -> (Arc<Self>, EventSink) {
        let sink = Arc::new(Self::default());
        let handle = EventSink::new(sink.clone());
        (sink, handle)
    }

    /// Everything emitted so far.
    pub fn events(&self) -> Vec<AgentEvent> {
        self.events.lock().expect("sink lock").clone()
    }

    /// The native session id, once set.
    pub fn native_session_id(&self) -> Option<String> {
        self.native_session_id.lock().expect("sink lock").clone()
    }
}

impl EventConsumer for CollectingSink {
    fn emit(&self, event: AgentEvent) {
        self.events.lock().expect("sink lock").push(event);
    }

    fn set_native_session_id(&self, id: &str) {
        *self.native_session_id.lock().expect("sink lock") = Some(id.to_string());
    }

    fn next_id(&self, prefix: &str) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}_{n}")
    }
}
