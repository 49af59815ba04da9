//! Pi in RPC mode: `{"type":"prompt"}` commands in; a `response` per command and the
//! agent events (`agent_start`, `turn_start`, `message_*`, `tool_execution_*`,
//! `turn_end`, `agent_end`) out. A prompt is done at `agent_end`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::error::Result;
use super::stdio::StdioAgent;
use super::transcript::Transcript;
use crate::offline::Launch;

/// The lines of one prompt, up to and including `agent_end`.
#[derive(Clone, Debug)]
pub struct Turn {
    /// Everything Pi printed.
    pub lines: Vec<Value>,
    /// The `agent_end` event.
    pub end: Value,
}

/// A running Pi RPC process.
pub struct Pi {
    agent: StdioAgent,
    next_id: u64,
}

impl Pi {
    /// Starts Pi (it reads commands as soon as it runs).
    pub fn start(launch: &Launch, transcript: Transcript) -> Result<Self> {
        Ok(Self {
            agent: StdioAgent::spawn(launch, transcript)?,
            next_id: 0,
        })
    }

    /// Sends a `prompt` and reads until `agent_end`; `react` may return lines to send
    /// (an `abort`, an `extension_ui_response`, ...).
    pub async fn prompt(
        &mut self,
        text: &str,
        limit: Duration,
        mut react: impl FnMut(&Value) -> Vec<Value>,
    ) -> Result<Turn> {
        let id = format!("req-{}", self.next_id);
        self.next_id += 1;
        self.agent
            .send(json!({"id": id, "type": "prompt", "message": text}))
            .await?;
        let deadline = Instant::now() + limit;
        let mut lines = Vec::new();
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            let msg = self.agent.recv("agent_end", wait).await?;
            for reply in react(&msg) {
                self.agent.send(reply).await?;
            }
            let done = msg["type"] == "agent_end";
            lines.push(msg.clone());
            if done {
                return Ok(Turn { lines, end: msg });
            }
        }
    }

    /// Closes stdin and waits for Pi to exit.
    pub async fn close(self) {
        self.agent.close(Duration::from_secs(10)).await;
    }
}

/// The `abort` command, which cancels the running prompt.
pub fn abort() -> Value {
    json!({"type": "abort"})
}
