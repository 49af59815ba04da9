//! OpenCode `serve`: an HTTP API plus one SSE stream (`GET /event`) for all sessions.
//! `POST /session` → `POST /session/{id}/prompt_async`; a turn ends with
//! `session.idle`. Permission prompts are `permission.asked` events answered by
//! `POST /permission/{id}/reply {"reply": "once"|"always"|"reject"}`; questions are
//! `question.asked` answered by `POST /question/{id}/reply {"answers": [[labels]]}`.

use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use reqwest::Method;
use sandbox_agents::process::AgentProcess;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::error::{DriverError, Result};
use super::transcript::{Dir, Transcript};
use crate::offline::Launch;

/// An HTTP call a reaction asks the driver to make.
#[derive(Clone, Debug)]
pub struct Call {
    /// HTTP method.
    pub method: Method,
    /// Path on the OpenCode server.
    pub path: String,
    /// JSON body.
    pub body: Value,
}

/// The events of one turn, up to and including `session.idle`.
#[derive(Clone, Debug)]
pub struct Turn {
    /// Every SSE event seen during the turn (all sessions).
    pub events: Vec<Value>,
}

/// A running `opencode serve` with one session.
pub struct OpenCode {
    process: AgentProcess,
    base: String,
    http: reqwest::Client,
    events: mpsc::UnboundedReceiver<Value>,
    transcript: Transcript,
    sse: JoinHandle<()>,
    /// The session's id (`ses_…`).
    pub session_id: String,
}

impl OpenCode {
    /// Starts the server, subscribes to `/event` and creates a session.
    pub async fn start(launch: &Launch, transcript: Transcript, limit: Duration) -> Result<Self> {
        let deadline = Instant::now() + limit;
        let (process, mut lines) = AgentProcess::spawn(&launch.spec())?;
        let (url_tx, url_rx) = oneshot::channel();
        tokio::spawn(async move {
            let mut url_tx = Some(url_tx);
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "agent-stdout", "{line}");
                if let Some(url) = line.split("listening on ").nth(1)
                    && let Some(tx) = url_tx.take()
                {
                    let _ = tx.send(url.trim().to_owned());
                }
            }
        });
        let base = match tokio::time::timeout(remaining(deadline), url_rx).await {
            Ok(Ok(url)) => url,
            Ok(Err(_)) => {
                return Err(DriverError::Exited {
                    what: "the server URL".into(),
                    status: "stdout closed".into(),
                    stderr: process.stderr_tail(),
                });
            }
            Err(_) => {
                return Err(DriverError::Timeout {
                    what: "the server URL".into(),
                    after: limit,
                    stderr: process.stderr_tail(),
                });
            }
        };
        let http = reqwest::Client::builder().no_proxy().build()?;
        let response = http
            .get(format!("{base}/event"))
            .send()
            .await?
            .error_for_status()?;
        let (tx, events) = mpsc::unbounded_channel();
        let sink = transcript.clone();
        let sse = tokio::spawn(async move {
            let mut stream = response.bytes_stream().eventsource();
            while let Some(Ok(event)) = stream.next().await {
                let msg = sink.push_raw(Dir::Out, None, &event.data);
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        let mut server = Self {
            process,
            base,
            http,
            events,
            transcript,
            sse,
            session_id: String::new(),
        };
        server.next_event("server.connected", deadline).await?;
        let session = server
            .call(&Call {
                method: Method::POST,
                path: "/session".into(),
                body: json!({}),
            })
            .await?;
        server.session_id = session["id"]
            .as_str()
            .ok_or_else(|| DriverError::Protocol(format!("POST /session returned {session}")))?
            .to_owned();
        Ok(server)
    }

    async fn next_event(&mut self, what: &str, deadline: Instant) -> Result<Value> {
        match tokio::time::timeout(remaining(deadline), self.events.recv()).await {
            Ok(Some(event)) => Ok(event),
            Ok(None) => Err(DriverError::Exited {
                what: what.to_owned(),
                status: self
                    .process
                    .exited()
                    .map_or_else(|| "running".to_owned(), |e| e.describe()),
                stderr: self.process.stderr_tail(),
            }),
            Err(_) => Err(DriverError::Timeout {
                what: what.to_owned(),
                after: remaining(deadline),
                stderr: self.process.stderr_tail(),
            }),
        }
    }

    /// Makes an HTTP call (recorded in the transcript) and returns the JSON body.
    pub async fn call(&self, call: &Call) -> Result<Value> {
        self.transcript.push(
            Dir::In,
            Some("http"),
            json!({"method": call.method.as_str(), "path": call.path, "body": call.body}),
        );
        let response = self
            .http
            .request(call.method.clone(), format!("{}{}", self.base, call.path))
            .json(&call.body)
            .send()
            .await?;
        let status = response.status();
        let text = response.text().await?;
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        let line = json!({"status": status.as_u16(), "path": call.path, "body": body});
        self.transcript.push(Dir::Out, Some("http"), line);
        if status.is_success() {
            Ok(body)
        } else {
            Err(DriverError::Protocol(format!(
                "{} {} answered {status}: {body}",
                call.method, call.path
            )))
        }
    }

    /// Sends a prompt with `prompt_async` and reads events until this session goes idle
    /// after having been busy. `react` sees every event and returns calls to make.
    pub async fn turn(
        &mut self,
        prompt: &str,
        limit: Duration,
        mut react: impl FnMut(&Value) -> Vec<Call>,
    ) -> Result<Turn> {
        let deadline = Instant::now() + limit;
        let path = format!("/session/{}/prompt_async", self.session_id);
        let body = json!({"parts": [{"type": "text", "text": prompt}]});
        self.call(&Call {
            method: Method::POST,
            path,
            body,
        })
        .await?;
        let mut events = Vec::new();
        let mut busy = false;
        loop {
            let event = self.next_event("session.idle", deadline).await?;
            let ours = session_of(&event) == Some(self.session_id.as_str());
            busy |= ours
                && event["type"] == "session.status"
                && event["properties"]["status"]["type"] == "busy";
            for call in react(&event) {
                self.call(&call).await?;
            }
            let done = busy && ours && event["type"] == "session.idle";
            events.push(event);
            if done {
                return Ok(Turn { events });
            }
        }
    }

    /// Stops the server: SIGTERM to its process group, SIGKILL after 5 s.
    pub async fn close(mut self) {
        self.sse.abort();
        self.process.stop(Duration::from_secs(5)).await;
    }
}

impl Drop for OpenCode {
    /// The process group dies with the [`AgentProcess`]; the event reader stops here.
    fn drop(&mut self) {
        self.sse.abort();
    }
}

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// The session an event belongs to (`properties.sessionID`, `.info.sessionID` or
/// `.part.sessionID`).
pub fn session_of(event: &Value) -> Option<&str> {
    let p = &event["properties"];
    p["sessionID"]
        .as_str()
        .or_else(|| p["info"]["sessionID"].as_str())
        .or_else(|| p["part"]["sessionID"].as_str())
}

/// The reply to a `permission.asked` event: `once`, `always` or `reject`.
pub fn permission_reply(event: &Value, reply: &str) -> Call {
    Call {
        method: Method::POST,
        path: format!(
            "/permission/{}/reply",
            event["properties"]["id"].as_str().unwrap_or_default()
        ),
        body: json!({"reply": reply}),
    }
}

/// The reply to a `question.asked` event: one array of chosen labels per question.
pub fn question_reply(event: &Value, mut choose: impl FnMut(&Value) -> Vec<String>) -> Call {
    let answers: Vec<Vec<String>> = event["properties"]["questions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(&mut choose)
        .collect();
    Call {
        method: Method::POST,
        path: format!(
            "/question/{}/reply",
            event["properties"]["id"].as_str().unwrap_or_default()
        ),
        body: json!({"answers": answers}),
    }
}

/// Aborts the session's running turn.
pub fn abort(session_id: &str) -> Call {
    Call {
        method: Method::POST,
        path: format!("/session/{session_id}/abort"),
        body: json!({}),
    }
}
