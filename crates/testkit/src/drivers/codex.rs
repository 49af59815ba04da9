//! Codex `app-server`: newline-delimited JSON-RPC (without the `jsonrpc` member) on
//! stdio. `initialize` → `initialized` → `account/login/start` → `thread/start` →
//! `turn/start` (thread and turn params are the daemon's, from its `default` mode); a turn ends
//! with the `turn/completed` notification. Approvals and questions are server→client
//! requests (`item/commandExecution/requestApproval`, `item/fileChange/requestApproval`,
//! `item/tool/requestUserInput`) answered with `{"id": …, "result": …}`.

use std::time::{Duration, Instant};

use sandbox_agents::codex::launch::TurnSettings;
use sandbox_agents::codex::launch::policy;
use sandbox_universal::PermissionMode;
use serde_json::{Value, json};

use super::error::{DriverError, Result};
use super::stdio::StdioAgent;
use super::transcript::Transcript;
use crate::offline::Launch;

/// The lines of one turn, up to and including `turn/completed`.
#[derive(Clone, Debug)]
pub struct Turn {
    /// Everything the server sent during the turn.
    pub lines: Vec<Value>,
    /// Params of `turn/completed` (`turn.status` is `completed`, `interrupted` or `failed`).
    pub completed: Value,
}

/// A running `codex app-server` with one thread.
pub struct Codex {
    agent: StdioAgent,
    next_id: i64,
    settings: TurnSettings,
    /// The thread's id.
    pub thread_id: String,
}

impl Codex {
    /// Starts the server, initializes (with the experimental API, needed for
    /// `requestUserInput`), logs in with [`crate::offline::codex::API_KEY`] and starts a
    /// thread in the launch's cwd with the daemon's `default`-mode policy on
    /// [`crate::offline::codex::model`].
    pub async fn start(launch: &Launch, transcript: Transcript, limit: Duration) -> Result<Self> {
        Self::start_on(launch, crate::offline::codex::model(), transcript, limit).await
    }

    /// [`Codex::start`] on this model; `None` names no model, so Codex uses its default
    /// ([`crate::offline::codex::DEFAULT_MODEL`], code mode).
    pub async fn start_on(
        launch: &Launch,
        model: Option<String>,
        transcript: Transcript,
        limit: Duration,
    ) -> Result<Self> {
        Self::start_with(launch, model, json!({}), transcript, limit).await
    }

    /// [`Codex::start_on`] with `extra` (an object) merged into the `thread/start`
    /// params, e.g. `{"config": {"mcp_servers": {…}}}`.
    pub async fn start_with(
        launch: &Launch,
        model: Option<String>,
        extra: Value,
        transcript: Transcript,
        limit: Duration,
    ) -> Result<Self> {
        let agent = StdioAgent::spawn(launch, transcript)?;
        let settings = TurnSettings {
            policy: policy(PermissionMode::Default),
            effort: None,
            cwd: launch.cwd.display().to_string(),
            model,
        };
        let mut codex = Self {
            agent,
            next_id: 1,
            thread_id: String::new(),
            settings,
        };
        let deadline = Instant::now() + limit;
        codex
            .request(
                "initialize",
                json!({"clientInfo": {"name": "sandbox-testkit", "title": "sandbox-testkit", "version": "0.1"},
                       "capabilities": {"experimentalApi": true}}),
                deadline,
            )
            .await?;
        codex.agent.send(json!({"method": "initialized"})).await?;
        codex
            .request(
                "account/login/start",
                json!({"type": "apiKey", "apiKey": crate::offline::codex::API_KEY}),
                deadline,
            )
            .await?;
        let mut params = codex.settings.thread_start();
        if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
            params.extend(extra);
        }
        let started = codex.request("thread/start", params, deadline).await?;
        codex.thread_id = started["thread"]["id"]
            .as_str()
            .ok_or_else(|| {
                DriverError::Protocol(format!("thread/start result without id: {started}"))
            })?
            .to_owned();
        Ok(codex)
    }

    /// Sends a request and waits for its response, skipping notifications.
    async fn request(&mut self, method: &str, params: Value, deadline: Instant) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.agent
            .send(json!({"id": id, "method": method, "params": params}))
            .await?;
        loop {
            let msg = self
                .agent
                .recv(&format!("the response to {method}"), remaining(deadline))
                .await?;
            if msg["id"] == id && msg.get("method").is_none() {
                return match msg.get("error") {
                    Some(error) => Err(DriverError::Protocol(format!("{method} failed: {error}"))),
                    None => Ok(msg["result"].clone()),
                };
            }
        }
    }

    /// Starts a turn with a text input and reads until `turn/completed`. `react` sees
    /// every line and returns lines to write back (replies to server requests, an
    /// interrupt, ...).
    pub async fn turn(
        &mut self,
        prompt: &str,
        limit: Duration,
        mut react: impl FnMut(&Value) -> Vec<Value>,
    ) -> Result<Turn> {
        let id = self.next_id;
        self.next_id += 1;
        let params = self.settings.turn_start(&self.thread_id, prompt);
        self.agent
            .send(json!({"id": id, "method": "turn/start", "params": params}))
            .await?;
        let deadline = Instant::now() + limit;
        let mut lines = Vec::new();
        loop {
            let msg = self
                .agent
                .recv("turn/completed", remaining(deadline))
                .await?;
            if msg["id"] == id && msg.get("error").is_some() {
                return Err(DriverError::Protocol(format!("turn/start failed: {msg}")));
            }
            for reply in react(&msg) {
                self.agent.send(reply).await?;
            }
            let done = msg["method"] == "turn/completed";
            lines.push(msg.clone());
            if done {
                return Ok(Turn {
                    lines,
                    completed: msg["params"].clone(),
                });
            }
        }
    }

    /// Closes stdin and waits for the server to exit.
    pub async fn close(self) {
        self.agent.close(Duration::from_secs(10)).await;
    }
}

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// Whether `msg` is a server→client request with this method.
pub fn is_request(msg: &Value, method: &str) -> bool {
    msg["method"] == method && msg.get("id").is_some()
}

/// The reply to server request `msg`.
pub fn reply(msg: &Value, result: Value) -> Value {
    json!({"id": msg["id"], "result": result})
}

/// Answer to an approval request: `accept`, `acceptForSession`, `decline` or `cancel`.
pub fn decision(decision: &str) -> Value {
    json!({"decision": decision})
}

/// Answer to `item/tool/requestUserInput`: `{"answers": {<question id>: {"answers": [...]}}}`.
pub fn answers(request: &Value, mut choose: impl FnMut(&Value) -> Vec<String>) -> Value {
    let answers: serde_json::Map<String, Value> = request["params"]["questions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|q| Some((q["id"].as_str()?.to_owned(), json!({"answers": choose(q)}))))
        .collect();
    json!({"answers": answers})
}

/// A `turn/interrupt` request for the turn announced by `turn/started` line `msg`.
pub fn interrupt(thread_id: &str, turn_started: &Value) -> Value {
    json!({"id": "interrupt-1", "method": "turn/interrupt",
           "params": {"threadId": thread_id, "turnId": turn_started["params"]["turn"]["id"]}})
}
