//! Native transcripts: every message exchanged with an agent, both directions, in order.
//! The fixture format is one JSON object per line: `{"dir":"in"|"out","via"?,"msg":{...}}`,
//! where `msg` is the message exactly as it went over the wire (key order preserved) and
//! `via` names the channel of an agent that has several (`"http"` for OpenCode's HTTP
//! calls and their answers; absent for stdio lines and SSE events).

use std::sync::{Arc, Mutex};

use sandbox_agents::kernel::{Direction, TapSink};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Direction of a transcript line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Sent to the agent (stdin line, HTTP request).
    In,
    /// Received from the agent (stdout line, SSE event, HTTP response).
    Out,
}

/// One line of a transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// Direction.
    pub dir: Dir,
    /// `"http"` for HTTP requests and answers of server agents (OpenCode), `"ask"` for
    /// the questions a per-turn agent's helper asks beside its stream (Amp); absent for
    /// stdio lines and SSE events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The native message; a JSON string when the agent printed a non-JSON line.
    pub msg: Value,
    /// The message's text as it went over the wire, when known.
    #[serde(skip)]
    pub raw: Option<String>,
}

impl Line {
    /// The fixture line: `{"dir":…,"via":…,"msg":<raw text or serialized msg>}`.
    pub fn to_json(&self) -> String {
        let dir = match self.dir {
            Dir::In => "in",
            Dir::Out => "out",
        };
        let via = self
            .via
            .as_ref()
            .map(|v| format!(",\"via\":{}", Value::String(v.clone())))
            .unwrap_or_default();
        let msg = self.raw.clone().unwrap_or_else(|| self.msg.to_string());
        format!("{{\"dir\":\"{dir}\"{via},\"msg\":{msg}}}")
    }
}

/// A shared, append-only transcript.
#[derive(Clone, Debug, Default)]
pub struct Transcript(Arc<Mutex<Vec<Line>>>);

impl Transcript {
    /// Appends a line built by the driver.
    pub fn push(&self, dir: Dir, via: Option<&str>, msg: Value) {
        self.append(Line {
            dir,
            via: via.map(str::to_owned),
            msg,
            raw: None,
        });
    }

    /// Appends a line received as `raw` text: kept verbatim when it is JSON, else stored
    /// as a JSON string. Returns the parsed message.
    pub fn push_raw(&self, dir: Dir, via: Option<&str>, raw: &str) -> Value {
        let (msg, raw) = match serde_json::from_str::<Value>(raw) {
            Ok(msg) => (msg, Some(raw.trim().to_owned())),
            Err(_) => (Value::String(raw.to_owned()), None),
        };
        self.append(Line {
            dir,
            via: via.map(str::to_owned),
            msg: msg.clone(),
            raw,
        });
        msg
    }

    fn append(&self, line: Line) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(line);
    }

    /// How many lines there are so far.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether there is no line yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of all lines so far.
    pub fn lines(&self) -> Vec<Line> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The tap of the daemon's session runners: `ToAgent` is `in`, `FromAgent` is `out`, the
/// text is kept verbatim.
impl TapSink for Transcript {
    fn message(&self, direction: Direction, via: Option<&str>, text: &str) {
        let dir = match direction {
            Direction::ToAgent => Dir::In,
            Direction::FromAgent => Dir::Out,
        };
        self.push_raw(dir, via, text);
    }
}

/// Serializes lines as JSON lines (the fixture format).
pub fn to_jsonl(lines: &[Line]) -> String {
    lines.iter().map(|l| l.to_json() + "\n").collect()
}

/// Parses a fixture file's text.
pub fn parse_jsonl(text: &str) -> serde_json::Result<Vec<Line>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_raw_key_order() {
        let t = Transcript::default();
        t.push(Dir::In, None, serde_json::json!({"type": "user"}));
        t.push_raw(Dir::Out, None, r#"{"z":1,"a":2}"#);
        t.push_raw(Dir::Out, Some("http"), "not json");
        let text = to_jsonl(&t.lines());
        assert_eq!(
            text,
            "{\"dir\":\"in\",\"msg\":{\"type\":\"user\"}}\n{\"dir\":\"out\",\"msg\":{\"z\":1,\"a\":2}}\n\
             {\"dir\":\"out\",\"via\":\"http\",\"msg\":\"not json\"}\n"
        );
        let parsed = parse_jsonl(&text).unwrap();
        assert_eq!(parsed.len(), 3);
        assert_eq!(parsed[1].msg["a"], 2);
        assert_eq!(parsed[2].via.as_deref(), Some("http"));
    }
}
