//! One universal session on Pi: one `pi --mode rpc` process kept across turns, its stdout
//! converted as it comes (split on `\n` only), its extension's permission confirms answered
//! from the client's replies, and a new process resuming Pi's own session file
//! (`--session <id>`) after a crash or a daemon restart.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use sandbox_universal::{AgentError, PermissionMode, PermissionReply};
use serde_json::{Value, json};

use super::convert::Converter;
use super::launch::{self, PiDirs};
use crate::process::{AgentProcess, Signaller};
use crate::transport::{JsonLines, Line, LineWriter, Pending, not_running};
use crate::{AgentSession, EventSink, ProviderEnv, QuestionAnswer};

/// How long a command of the daemon's own (`get_state`, `get_available_models`) may take.
const REQUEST_LIMIT: Duration = Duration::from_secs(60);

/// What the session's process is started with.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Pi's executable.
    pub program: PathBuf,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The session's private files.
    pub dirs: PiDirs,
    /// The daemon's provider environment.
    pub env: ProviderEnv,
    /// The session's credential override.
    pub token: Option<String>,
    /// The permission mode (the extension's rules).
    pub mode: PermissionMode,
    /// `provider/model`, when the session names one.
    pub model: Option<String>,
    /// Pi's thinking level (the session's `variant`).
    pub thinking: Option<String>,
}

impl Launch {
    fn args(&self, session: Option<&str>) -> Vec<OsString> {
        launch::args(
            &self.dirs,
            self.mode,
            self.model.as_deref(),
            self.thinking.as_deref(),
            session,
        )
    }
}

/// What the reader task shares with the session.
struct Shared {
    sink: Option<EventSink>,
    converter: Mutex<Converter>,
    /// Answers to the daemon's own commands, by id.
    responses: Pending<String, Value>,
    /// The session is shutting down: the exit is expected.
    stopping: AtomicBool,
}

impl Shared {
    fn converter(&self) -> std::sync::MutexGuard<'_, Converter> {
        self.converter.lock().expect("converter lock")
    }

    fn line(&self, line: Line) {
        let value = match line {
            Line::Json(value) => value,
            not_json @ Line::NotJson { .. } => {
                if let Some(sink) = &self.sink {
                    sink.emit_all(not_json.unparsed(sink));
                }
                return;
            }
        };
        if value["type"] == "response"
            && let Some(id) = value["id"].as_str()
            && id.starts_with(OWN_ID)
        {
            self.responses.resolve(&id.to_string(), value);
            return;
        }
        if let Some(sink) = &self.sink {
            let mut converter = self.converter();
            let events = converter.event(&value, sink);
            sink.emit_all(events);
        }
    }
}

/// The prefix of the ids of the daemon's own commands.
const OWN_ID: &str = "sandbox-daemon-";

/// The running process.
struct Running {
    writer: LineWriter,
    process: Signaller,
    reader: tokio::task::JoinHandle<()>,
}

/// One session of Pi (or, without a sink, a process that only answers commands: the
/// models listing).
pub struct PiSession {
    shared: Arc<Shared>,
    launch: Launch,
    running: Option<Running>,
    session_id: Option<String>,
    next_id: AtomicU64,
}

impl PiSession {
    /// Starts Pi for a session (resuming Pi's session `session` when given) and learns its
    /// session id.
    pub async fn start(
        launch: Launch,
        sink: Option<EventSink>,
        session: Option<String>,
    ) -> Result<Self, AgentError> {
        let converter = Converter::new(launch.cwd.display().to_string());
        let mut pi = Self {
            shared: Arc::new(Shared {
                sink,
                converter: Mutex::new(converter),
                responses: Pending::default(),
                stopping: AtomicBool::new(false),
            }),
            launch,
            running: None,
            session_id: session,
            next_id: AtomicU64::new(1),
        };
        pi.spawn()?;
        if pi.session_id.is_none() {
            let state = pi.request(json!({"type": "get_state"})).await?;
            pi.session_id = state["data"]["sessionId"].as_str().map(str::to_string);
        }
        Ok(pi)
    }

    /// A session restored after a daemon restart: nothing runs until the next message.
    pub fn restored(launch: Launch, sink: EventSink, session: Option<String>) -> Self {
        let converter = Converter::new(launch.cwd.display().to_string());
        Self {
            shared: Arc::new(Shared {
                sink: Some(sink),
                converter: Mutex::new(converter),
                responses: Pending::default(),
                stopping: AtomicBool::new(false),
            }),
            launch,
            running: None,
            session_id: session,
            next_id: AtomicU64::new(1),
        }
    }

    fn spawn(&mut self) -> Result<(), AgentError> {
        let spec = launch::spec(
            self.launch.program.clone(),
            &self.launch.cwd,
            &self.launch.dirs,
            &self.launch.env,
            self.launch.token.as_deref(),
            self.launch.args(self.session_id.as_deref()),
        );
        let (mut process, lines) =
            AgentProcess::spawn(&spec).map_err(|e| AgentError::SpawnFailed {
                message: format!("starting {}: {e}", spec.program.display()),
            })?;
        let stdin = process
            .take_stdin()
            .ok_or_else(|| not_running("pi has no stdin"))?;
        let writer = LineWriter::spawn(stdin);
        let signaller = process.signaller();
        let shared = self.shared.clone();
        let reader = tokio::spawn(async move {
            let mut lines = JsonLines::new(lines);
            while let Some(line) = lines.next().await {
                shared.line(line);
            }
            let exit = process.wait().await;
            shared.responses.fail_waiting();
            if shared.stopping.load(Ordering::SeqCst) {
                return;
            }
            if let Some(sink) = &shared.sink {
                let events = shared.converter().process_exited(&exit);
                sink.emit_all(events);
            }
        });
        self.running = Some(Running {
            writer,
            process: signaller,
            reader,
        });
        Ok(())
    }

    /// The running process's writer, starting a new process (resuming the session) when
    /// the last one died.
    fn writer(&mut self) -> Result<&LineWriter, AgentError> {
        if self.running.as_ref().is_none_or(|r| r.reader.is_finished()) {
            self.spawn()?;
        }
        Ok(&self.running.as_ref().expect("running").writer)
    }

    /// Sends one of the daemon's own commands and waits for its response.
    pub async fn request(&mut self, mut command: Value) -> Result<Value, AgentError> {
        let id = format!("{OWN_ID}{}", self.next_id.fetch_add(1, Ordering::SeqCst));
        command["id"] = json!(id);
        let name = command["type"].as_str().unwrap_or_default().to_string();
        let answer = self
            .shared
            .responses
            .register(id.clone())
            .ok_or_else(|| not_running("pi is gone"))?;
        self.writer()?
            .send(command)
            .map_err(|_| not_running("pi's stdin is closed"))?;
        let response = match tokio::time::timeout(REQUEST_LIMIT, answer).await {
            Ok(Ok(response)) => response,
            Ok(Err(_)) => {
                return Err(not_running(format!("pi exited before answering `{name}`")));
            }
            Err(_) => {
                self.shared.responses.forget(&id);
                return Err(AgentError::Timeout {
                    message: format!("pi did not answer `{name}` within {REQUEST_LIMIT:?}"),
                });
            }
        };
        if response["success"] == false {
            return Err(AgentError::protocol(format!(
                "pi refused `{name}`: {}",
                response["error"].as_str().unwrap_or("no reason given")
            )));
        }
        Ok(response)
    }

    fn send(&mut self, line: Value) -> Result<(), AgentError> {
        self.writer()?
            .send(line)
            .map_err(|_| not_running("pi's stdin is closed"))
    }

    /// Stops the process.
    pub async fn stop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        if let Some(running) = self.running.take() {
            running.process.kill();
            let _ = running.reader.await;
        }
    }
}

#[async_trait]
impl AgentSession for PiSession {
    fn native_session_id(&self) -> Option<String> {
        self.session_id.clone()
    }

    async fn send_message(&mut self, turn_id: &str, message: &str) -> Result<(), AgentError> {
        self.shared.converter().begin_turn(turn_id);
        let sent = self.send(json!({"type": "prompt", "message": message}));
        if sent.is_err() {
            self.shared.converter().take_turn();
        }
        sent
    }

    async fn cancel(&mut self) -> Result<(), AgentError> {
        let lines = self.shared.converter().cancel_requested();
        for line in lines {
            self.send(line)?;
        }
        Ok(())
    }

    async fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<(), AgentError> {
        let line = self
            .shared
            .converter()
            .permission_reply(permission_id, reply)
            .map_err(|e| AgentError::RequestGone {
                message: e.message().to_string(),
            })?;
        self.send(line)
    }

    async fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<(), AgentError> {
        let line = self
            .shared
            .converter()
            .question_reply(question_id, answer)
            .map_err(|e| AgentError::RequestGone {
                message: e.message().to_string(),
            })?;
        self.send(line)
    }

    async fn shutdown(&mut self) {
        self.stop().await;
    }
}

impl Drop for PiSession {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        if let Some(running) = &self.running {
            running.process.kill();
        }
    }
}
