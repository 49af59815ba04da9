//! OpenCode `serve`, driven as the daemon drives it (`sandbox_agents::opencode::server` and
//! `::session`): the URL read from `opencode server listening on …`, HTTP basic auth as
//! user `opencode` with the server's password, `GET /global/health` until it answers, one
//! SSE stream `GET /global/event` whose data is an envelope `{"directory", "payload":
//! {"type", "properties"}}` (recorded whole), and every request routed by
//! `?directory=<cwd>`. `POST /session {"permission": rules}` →
//! `POST /session/{id}/prompt_async` ([`PromptSettings::body`]); a turn ends with the
//! session's `session.idle`. Permission prompts are `permission.asked` answered by
//! `POST /permission/{id}/reply {"reply": "once"|"reject"}`; questions are `question.asked`
//! answered by `POST /question/{id}/reply {"answers": [[labels]]}`; a cancel is
//! `POST /session/{id}/abort` (no body). These replies are built exactly as the daemon's
//! converter builds them ([`NativeCall`]).

use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use reqwest::Method;
use reqwest::header::ACCEPT;
use sandbox_agents::opencode::convert::NativeCall;
use sandbox_agents::opencode::convert::PromptSettings;
use sandbox_agents::opencode::launch::USER;
use sandbox_agents::opencode::server::{EVENTS, HEALTH};
use sandbox_agents::process::AgentProcess;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::error::{DriverError, Result};
use super::transcript::{Dir, Transcript};
use crate::offline::opencode::Serve;

/// What the server prints once it listens, followed by its URL.
const LISTENING: &str = "opencode server listening on ";

/// An HTTP call to the server: the daemon's [`NativeCall`] (method, route, optional JSON
/// body, the session's directory).
pub type Call = NativeCall;

/// The events of one turn, up to and including `session.idle`.
#[derive(Clone, Debug)]
pub struct Turn {
    /// The payload of every event seen during the turn (all sessions).
    pub events: Vec<Value>,
}

/// A running `opencode serve` with one session.
pub struct OpenCode {
    process: AgentProcess,
    client: Client,
    events: mpsc::UnboundedReceiver<Value>,
    transcript: Transcript,
    sse: JoinHandle<()>,
    /// The session's id (`ses_…`).
    pub session_id: String,
    /// The session's directory (its cwd), sent with every request.
    pub directory: String,
}

impl OpenCode {
    /// Starts the server, waits until it is healthy, subscribes to `/global/event` and
    /// creates a session in `directory` with `rules` (`launch::permission_rules`).
    pub async fn start(
        serve: &Serve,
        directory: &str,
        rules: Value,
        transcript: Transcript,
        limit: Duration,
    ) -> Result<Self> {
        let deadline = Instant::now() + limit;
        let (process, mut lines) = AgentProcess::spawn(&serve.launch.spec())?;
        let (url_tx, url_rx) = oneshot::channel();
        tokio::spawn(async move {
            let mut url_tx = Some(url_tx);
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "agent-stdout", "{line}");
                if let Some(url) = line.trim().strip_prefix(LISTENING)
                    && let Some(tx) = url_tx.take()
                {
                    let _ = tx.send(url.trim_end_matches('/').to_owned());
                }
            }
        });
        let base = match tokio::time::timeout(remaining(deadline), url_rx).await {
            Ok(Ok(url)) if url.starts_with("http://127.0.0.1:") => url,
            Ok(Ok(url)) => {
                return Err(DriverError::Protocol(format!(
                    "opencode listens on {url}, not on loopback"
                )));
            }
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
        let client = Client {
            http: reqwest::Client::builder().no_proxy().build()?,
            base,
            password: serve.password.clone(),
        };
        client.wait_healthy(&process, deadline, limit).await?;
        let response = client
            .request(Method::GET, EVENTS)
            .header(ACCEPT, "text/event-stream")
            .send()
            .await?
            .error_for_status()?;
        let (tx, events) = mpsc::unbounded_channel();
        let sink = transcript.clone();
        let sse = tokio::spawn(async move {
            let mut stream = response.bytes_stream().eventsource();
            while let Some(Ok(event)) = stream.next().await {
                if event.data.trim().is_empty() {
                    continue;
                }
                let envelope = sink.push_raw(Dir::Out, None, &event.data);
                if tx.send(envelope).is_err() {
                    break;
                }
            }
        });
        let mut server = Self {
            process,
            client,
            events,
            transcript,
            sse,
            session_id: String::new(),
            directory: directory.to_owned(),
        };
        let session = server
            .call(&post(
                directory,
                "/session".into(),
                Some(json!({"permission": rules})),
            ))
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

    /// Makes an HTTP call as the daemon makes it (`path?directory=`, the JSON body when
    /// there is one), recorded in the transcript, and returns the JSON answer.
    pub async fn call(&self, call: &Call) -> Result<Value> {
        let path = call.path_with_directory();
        let mut sent = json!({"method": call.method.as_str(), "path": path});
        if let Some(body) = &call.body {
            sent["body"] = body.clone();
        }
        self.transcript.push(Dir::In, Some("http"), sent);
        let mut request = self.client.request(call.method.clone(), &path);
        if let Some(body) = &call.body {
            request = request.json(body);
        }
        let response = request.send().await?;
        let status = response.status();
        let text = response.text().await?;
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        let line = json!({"status": status.as_u16(), "path": path, "body": body});
        self.transcript.push(Dir::Out, Some("http"), line);
        if status.is_success() {
            Ok(body)
        } else {
            Err(DriverError::Protocol(format!(
                "{} {path} answered {status}: {body}",
                call.method
            )))
        }
    }

    /// Sends a prompt with `prompt_async` (the daemon's body for a session without a
    /// model, agent or variant: OpenCode picks its default model) and reads events until
    /// this session goes idle after having been busy. `react` sees every event's payload
    /// and returns calls to make.
    pub async fn turn(
        &mut self,
        prompt: &str,
        limit: Duration,
        mut react: impl FnMut(&Value) -> Vec<Call>,
    ) -> Result<Turn> {
        let deadline = Instant::now() + limit;
        let route = format!("/session/{}/prompt_async", self.session_id);
        let body = PromptSettings::default().body(prompt);
        self.call(&post(&self.directory, route, Some(body))).await?;
        let mut events = Vec::new();
        let mut busy = false;
        loop {
            let envelope = self.next_event("session.idle", deadline).await?;
            let event = payload(&envelope).clone();
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

/// The server's URL and credentials.
struct Client {
    http: reqwest::Client,
    base: String,
    password: String,
}

impl Client {
    /// Polls `GET /global/health` until it answers 2xx.
    async fn wait_healthy(
        &self,
        process: &AgentProcess,
        deadline: Instant,
        limit: Duration,
    ) -> Result<()> {
        let mut pause = Duration::from_millis(25);
        loop {
            let answer = self
                .request(Method::GET, HEALTH)
                .timeout(remaining(deadline).max(Duration::from_millis(10)))
                .send()
                .await;
            if answer.is_ok_and(|r| r.status().is_success()) {
                return Ok(());
            }
            if let Some(exit) = process.exited() {
                return Err(DriverError::Exited {
                    what: "a healthy server".into(),
                    status: exit.describe(),
                    stderr: process.stderr_tail(),
                });
            }
            if remaining(deadline).is_zero() {
                return Err(DriverError::Timeout {
                    what: "a healthy server".into(),
                    after: limit,
                    stderr: process.stderr_tail(),
                });
            }
            tokio::time::sleep(pause.min(remaining(deadline))).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    /// A request to the server, authenticated as the daemon authenticates.
    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .basic_auth(USER, Some(&self.password))
    }
}

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// The event inside a `/global/event` envelope (`{"directory", "payload"}`).
pub fn payload(envelope: &Value) -> &Value {
    &envelope["payload"]
}

/// The session an event payload belongs to (`properties.sessionID`, `.info.sessionID` or
/// `.part.sessionID`).
pub fn session_of(event: &Value) -> Option<&str> {
    let p = &event["properties"];
    p["sessionID"]
        .as_str()
        .or_else(|| p["info"]["sessionID"].as_str())
        .or_else(|| p["part"]["sessionID"].as_str())
}

/// A `POST` of `route` in `directory`.
pub fn post(directory: &str, route: String, body: Option<Value>) -> Call {
    Call {
        method: Method::POST,
        path: route,
        body,
        directory: directory.to_owned(),
    }
}

/// The reply to a `permission.asked` event of a session in `directory`: `once`, `always`
/// or `reject` (the daemon sends `once` for `always` and keeps the scope itself).
pub fn permission_reply(directory: &str, event: &Value, reply: &str) -> Call {
    let id = event["properties"]["id"].as_str().unwrap_or_default();
    post(
        directory,
        format!("/permission/{id}/reply"),
        Some(json!({"reply": reply})),
    )
}

/// The reply to a `question.asked` event of a session in `directory`: one array of
/// chosen labels per question.
pub fn question_reply(
    directory: &str,
    event: &Value,
    mut choose: impl FnMut(&Value) -> Vec<String>,
) -> Call {
    let answers: Vec<Vec<String>> = event["properties"]["questions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(&mut choose)
        .collect();
    let id = event["properties"]["id"].as_str().unwrap_or_default();
    post(
        directory,
        format!("/question/{id}/reply"),
        Some(json!({"answers": answers})),
    )
}

/// Aborts the running turn of the session `session_id` in `directory` (no body, as the
/// daemon sends it).
pub fn abort(directory: &str, session_id: &str) -> Call {
    post(directory, format!("/session/{session_id}/abort"), None)
}
