//! Claude Code in stream-json mode: user lines in; `system`, `stream_event`,
//! `assistant`, `user`, `control_request` and `result` lines out. A turn ends with
//! `result`. Permission prompts (including `AskUserQuestion`) arrive as
//! `control_request{subtype:"can_use_tool"}` and are answered with `control_response`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::error::{DriverError, Result};
use super::stdio::StdioAgent;
use super::transcript::Transcript;
use crate::offline::Launch;

/// The lines of one turn, up to and including its `result`.
#[derive(Clone, Debug)]
pub struct Turn {
    /// Everything the agent printed during the turn.
    pub lines: Vec<Value>,
    /// The `result` line.
    pub result: Value,
}

/// A running Claude Code session.
pub struct Claude {
    agent: StdioAgent,
}

impl Claude {
    /// Starts Claude Code and completes the `initialize` control request.
    pub async fn start(launch: &Launch, transcript: Transcript, limit: Duration) -> Result<Self> {
        let mut agent = StdioAgent::spawn(launch, transcript)?;
        agent
            .send(json!({"type": "control_request", "request_id": "init-1",
                         "request": {"subtype": "initialize", "hooks": null}}))
            .await?;
        let deadline = Instant::now() + limit;
        loop {
            let msg = agent
                .recv("initialize response", remaining(deadline))
                .await?;
            if msg["type"] == "control_response" && msg["response"]["request_id"] == "init-1" {
                break;
            }
        }
        Ok(Self { agent })
    }

    /// Sends a user message and reads until `result`. `react` sees every line and
    /// returns the lines to write back (control responses, an interrupt, ...).
    pub async fn turn(
        &mut self,
        prompt: &str,
        limit: Duration,
        mut react: impl FnMut(&Value) -> Vec<Value>,
    ) -> Result<Turn> {
        self.agent.send(user_message(prompt)).await?;
        let deadline = Instant::now() + limit;
        let mut lines = Vec::new();
        loop {
            let msg = self
                .agent
                .recv("the turn's result", remaining(deadline))
                .await?;
            for reply in react(&msg) {
                self.agent.send(reply).await?;
            }
            let done = msg["type"] == "result";
            lines.push(msg.clone());
            if done {
                return Ok(Turn { lines, result: msg });
            }
        }
    }

    /// Closes stdin and waits for Claude Code to exit.
    pub async fn close(self) {
        self.agent.close(Duration::from_secs(10)).await;
    }
}

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// A user turn line.
pub fn user_message(text: &str) -> Value {
    json!({"type": "user", "session_id": "", "parent_tool_use_id": null,
           "message": {"role": "user", "content": [{"type": "text", "text": text}]}})
}

/// The `can_use_tool` request inside a line, if it is one.
pub fn permission_request(msg: &Value) -> Option<&Value> {
    (msg["type"] == "control_request" && msg["request"]["subtype"] == "can_use_tool")
        .then(|| &msg["request"])
}

/// A `control_response` answering the control request `msg` with `response`.
pub fn control_response(msg: &Value, response: Value) -> Value {
    json!({"type": "control_response",
           "response": {"subtype": "success", "request_id": msg["request_id"], "response": response}})
}

/// Allow the tool with its input unchanged.
pub fn allow(request: &Value) -> Value {
    json!({"behavior": "allow", "updatedInput": request["input"]})
}

/// Deny the tool; the model gets an error `tool_result` with `message`.
pub fn deny(message: &str) -> Value {
    json!({"behavior": "deny", "message": message})
}

/// Answer an `AskUserQuestion` request: allow it with `updatedInput` = the input plus
/// `answers`, a map from question text to the chosen label(s), several labels joined
/// with `", "` (the format Claude Code 2.1.330 turns into its tool result).
pub fn answer_questions(request: &Value, mut choose: impl FnMut(&Value) -> Vec<String>) -> Value {
    let mut input = request["input"].clone();
    let answers: serde_json::Map<String, Value> = input["questions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|q| {
            Some((
                q["question"].as_str()?.to_owned(),
                json!(choose(q).join(", ")),
            ))
        })
        .collect();
    input["answers"] = Value::Object(answers);
    json!({"behavior": "allow", "updatedInput": input})
}

/// The `interrupt` control request, which cancels the running turn.
pub fn interrupt(request_id: &str) -> Value {
    json!({"type": "control_request", "request_id": request_id, "request": {"subtype": "interrupt"}})
}

/// Fails unless `turn` ended with a `result` whose text is `expected`.
pub fn expect_result_text(turn: &Turn, expected: &str) -> Result<()> {
    if turn.result["result"] == expected && turn.result["is_error"] == false {
        Ok(())
    } else {
        Err(DriverError::Protocol(format!(
            "unexpected result: {}",
            turn.result
        )))
    }
}
