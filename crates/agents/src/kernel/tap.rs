//! A tap on every native message a runner exchanges with an agent, both ways, as it went
//! over the wire: the test kit's recorder writes fixtures from it.

use std::fmt::Display;
use std::sync::Arc;

use serde_json::{Value, json};

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

    /// Records one line of a stdio agent (formatted only here, so an untapped session
    /// never serializes a message twice).
    pub fn line(&self, direction: Direction, text: &dyn Display) {
        self.0.message(direction, None, &text.to_string());
    }

    /// Records one message on channel `via`.
    pub fn message(&self, direction: Direction, via: Option<&str>, text: &dyn Display) {
        self.0.message(direction, via, &text.to_string());
    }

    /// Records an HTTP request to the agent as `{"method", "path", "body"?}` on channel
    /// `http`.
    pub fn http_request(&self, method: &str, path: &str, body: Option<&Value>) {
        let mut request = json!({"method": method, "path": path});
        if let Some(body) = body {
            request["body"] = body.clone();
        }
        self.message(Direction::ToAgent, Some("http"), &request);
    }

    /// Records the JSON answer to an HTTP request on channel `http`.
    pub fn http_answer(&self, answer: &Value) {
        self.message(Direction::FromAgent, Some("http"), answer);
    }
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tap")
    }
}
