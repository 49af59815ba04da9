//! A tap on every native message a runner exchanges with an agent, both ways, as it went
//! over the wire: the test kit's recorder writes fixtures from it.

use std::sync::Arc;

/// Which way a native message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Sent to the agent (a stdin line, an HTTP request).
    ToAgent,
    /// Received from the agent (a stdout line, an SSE event, an HTTP response).
    FromAgent,
}

/// Where tapped messages go.
pub trait TapSink: Send + Sync + 'static {
    /// One message (`text` exactly as it went over the wire; `via` names the channel when
    /// the agent has several, e.g. `http` beside an event stream).
    fn message(&self, direction: Direction, via: Option<&str>, text: &str);
}

/// A cheap handle on a [`TapSink`].
#[derive(Clone)]
pub struct Tap(Arc<dyn TapSink>);

impl Tap {
    /// Wraps a sink.
    pub fn new(sink: Arc<dyn TapSink>) -> Self {
        Self(sink)
    }

    /// Records one line of a stdio agent.
    pub fn line(&self, direction: Direction, text: &str) {
        self.0.message(direction, None, text);
    }

    /// Records one message on channel `via`.
    pub fn message(&self, direction: Direction, via: Option<&str>, text: &str) {
        self.0.message(direction, via, text);
    }
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tap")
    }
}
