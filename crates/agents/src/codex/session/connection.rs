//! One `codex app-server` process: spawn, handshake, login, thread start or resume, and
//! the reader task that feeds everything it says through the converter.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandbox_universal::AgentError;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{BufReader, Lines};
use tokio::process::ChildStdout;
use tokio::task::JoinHandle;

use super::rpc::Rpc;
use crate::codex::convert::Converter;
use crate::codex::native::{Incoming, InitializeResult, ThreadResult, method};
use crate::process::{AgentProcess, ProcessSpec};
use crate::transport::{JsonLines, Line, wait_exit};
use crate::{AgentEvent, EventSink};

/// How long the handshake requests may take (a cold start of the 290 MB binary on a slow
/// disk is the slow part).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// What the reader task and the session share: the sink and the converter state.
pub struct Shared {
    sink: EventSink,
    converter: Mutex<Converter>,
    /// Events converted before `sessionStarted` was emitted wait here.
    buffered: Mutex<Option<Vec<AgentEvent>>>,
}

impl Shared {
    /// State for a session. Until [`Shared::started`], events are held back, unless the
    /// session is `restored` (its `sessionStarted` is already in the log).
    pub fn new(sink: EventSink, converter: Converter, restored: bool) -> Self {
        Self {
            sink,
            converter: Mutex::new(converter),
            buffered: Mutex::new((!restored).then(Vec::new)),
        }
    }

    /// The session's sink.
    pub fn sink(&self) -> &EventSink {
        &self.sink
    }

    /// Runs `f` on the converter (never across an await).
    pub fn converter<T>(&self, f: impl FnOnce(&mut Converter) -> T) -> T {
        f(&mut self.converter.lock().expect("converter lock"))
    }

    /// Emits `sessionStarted` (already built) and everything buffered before it.
    pub fn started(&self, session_started: AgentEvent) {
        let mut buffered = self.buffered.lock().expect("buffer lock");
        self.sink.emit(session_started);
        self.sink.emit_all(buffered.take().unwrap_or_default());
    }

    fn emit(&self, events: Vec<AgentEvent>) {
        let mut buffered = self.buffered.lock().expect("buffer lock");
        match buffered.as_mut() {
            Some(buffer) => buffer.extend(events),
            None => self.sink.emit_all(events),
        }
    }

    fn handle_line(&self, rpc: &Rpc, line: Line) {
        let raw = match line {
            Line::Json(raw) => raw,
            not_json => return self.emit(not_json.unparsed(&self.sink)),
        };
        // The converter lock is held while emitting so events keep Codex's order.
        let mut converter = self.converter.lock().expect("converter lock");
        let events = match Incoming::classify(&raw) {
            Ok(Incoming::Response { id, outcome }) => {
                rpc.resolve(&id, outcome);
                Vec::new()
            }
            Ok(Incoming::Notification { method, params }) => {
                converter.notification(&self.sink, &method, &params, &raw)
            }
            Ok(Incoming::Request { id, method, params }) => {
                let outcome = converter.server_request(&self.sink, &id, &method, &params, &raw);
                if let Some(reply) = outcome.reply
                    && let Err(error) = rpc.send(reply)
                {
                    tracing::debug!(target: "codex", %error, "could not answer a server request");
                }
                outcome.events
            }
            Err(error) => crate::items::unparsed_item(&self.sink, &raw, &error),
        };
        self.emit(events);
    }
}

/// Which thread a new app-server works on.
#[derive(Debug, Clone)]
pub enum ThreadChoice {
    /// A new thread with these `thread/start` params.
    Start(Value),
    /// A stored thread, with these `thread/resume` params (they include `threadId`).
    Resume(Value),
    /// No thread (e.g. only to list models).
    None,
}

/// Everything needed to spawn an app-server for a session.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Process to run (`codex app-server`).
    pub spec: ProcessSpec,
    /// The API key to log in with, if any.
    pub api_key: Option<String>,
}

/// A running, initialised app-server with its thread loaded.
pub struct Connection {
    process: AgentProcess,
    rpc: Arc<Rpc>,
    reader: JoinHandle<()>,
    stopping: Arc<AtomicBool>,
    /// The thread id.
    pub thread_id: String,
    /// The model Codex reports for the thread.
    pub model: Option<String>,
    /// Codex's version, from the handshake.
    pub version: Option<String>,
}

impl Connection {
    /// Spawns the app-server, runs the handshake, logs in and starts or resumes a thread.
    /// What the server says goes through `shared`'s converter; without one (e.g. only to
    /// list models) only responses are read and everything else is dropped.
    pub async fn open(
        launch: &Launch,
        shared: Option<Arc<Shared>>,
        thread: ThreadChoice,
    ) -> Result<Self, AgentError> {
        let (mut process, lines) =
            AgentProcess::spawn(&launch.spec).map_err(|e| spawn_error(&launch.spec.program, &e))?;
        let stdin = process
            .take_stdin()
            .ok_or_else(|| AgentError::SpawnFailed {
                message: "codex app-server has no stdin".into(),
            })?;
        let rpc = Arc::new(Rpc::new(stdin));
        let stopping = Arc::new(AtomicBool::new(false));
        let reader = tokio::spawn(read_loop(
            lines,
            rpc.clone(),
            shared,
            process.exit_watch(),
            stopping.clone(),
        ));
        let mut connection = Self {
            process,
            rpc,
            reader,
            stopping,
            thread_id: String::new(),
            model: None,
            version: None,
        };
        match connection.handshake(launch, thread).await {
            Ok(()) => Ok(connection),
            Err(error) => {
                let exit = connection.stop().await;
                Err(with_stderr(error, &exit.stderr_tail))
            }
        }
    }

    async fn handshake(&mut self, launch: &Launch, thread: ThreadChoice) -> Result<(), AgentError> {
        let init = self
            .rpc
            .call(
                method::INITIALIZE,
                json!({
                    "clientInfo": {
                        "name": "sandbox-daemon",
                        "title": "sandbox-daemon",
                        "version": env!("CARGO_PKG_VERSION"),
                    },
                    "capabilities": {"experimentalApi": true},
                }),
                HANDSHAKE_TIMEOUT,
            )
            .await?;
        self.version = InitializeResult::deserialize(&init)
            .ok()
            .and_then(|i| i.version());
        self.rpc.notify(method::INITIALIZED, None)?;
        if let Some(key) = &launch.api_key {
            self.rpc
                .call(
                    method::LOGIN,
                    json!({"type": "apiKey", "apiKey": key}),
                    HANDSHAKE_TIMEOUT,
                )
                .await
                .map_err(|e| AgentError::TokenError {
                    message: format!("codex did not accept the API key: {}", e.message()),
                })?;
        }
        let (method, params) = match thread {
            ThreadChoice::Start(params) => (method::THREAD_START, params),
            ThreadChoice::Resume(params) => (method::THREAD_RESUME, params),
            ThreadChoice::None => return Ok(()),
        };
        let result = self.rpc.call(method, params, HANDSHAKE_TIMEOUT).await?;
        let thread = ThreadResult::deserialize(&result)
            .map_err(|e| AgentError::protocol(format!("unexpected `{method}` result: {e}")))?;
        self.thread_id = thread.thread.id;
        self.model = thread.model;
        Ok(())
    }

    /// The JSON-RPC client.
    pub fn rpc(&self) -> &Rpc {
        &self.rpc
    }

    /// Whether the process is gone (its exit was or is being reported).
    pub fn is_dead(&self) -> bool {
        self.process.exited().is_some() || self.reader.is_finished()
    }

    /// Waits until the reader has reported the exit of a dead process.
    pub async fn finish(self) {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.reader).await;
    }

    /// Stops the process on purpose (nothing is reported).
    pub async fn stop(&mut self) -> crate::process::ExitInfo {
        self.stopping.store(true, Ordering::SeqCst);
        self.rpc.close();
        self.process.stop(Duration::from_secs(3)).await
    }
}

fn spawn_error(program: &std::path::Path, error: &std::io::Error) -> AgentError {
    if error.kind() == std::io::ErrorKind::NotFound {
        AgentError::NotInstalled {
            message: format!("codex was not found at {}", program.display()),
        }
    } else {
        AgentError::SpawnFailed {
            message: format!("could not start {}: {error}", program.display()),
        }
    }
}

/// Adds the process's last stderr lines to a handshake error.
fn with_stderr(error: AgentError, stderr_tail: &str) -> AgentError {
    if stderr_tail.is_empty() {
        return error;
    }
    let message = format!("{}; stderr: {stderr_tail}", error.message());
    match error {
        AgentError::TokenError { .. } => AgentError::TokenError { message },
        AgentError::Timeout { .. } => AgentError::Timeout { message },
        _ => AgentError::SpawnFailed { message },
    }
}

async fn read_loop(
    lines: Lines<BufReader<ChildStdout>>,
    rpc: Arc<Rpc>,
    shared: Option<Arc<Shared>>,
    mut exit: tokio::sync::watch::Receiver<Option<crate::process::ExitInfo>>,
    stopping: Arc<AtomicBool>,
) {
    let mut lines = JsonLines::new(lines);
    while let Some(line) = lines.next().await {
        match &shared {
            Some(shared) => shared.handle_line(&rpc, line),
            None => resolve_only(&rpc, line),
        }
    }
    rpc.close();
    let info = wait_exit(&mut exit).await;
    if let Some(shared) = shared
        && !stopping.load(Ordering::SeqCst)
    {
        let events = shared.converter(|c| c.process_exited(&info));
        shared.emit(events);
    }
}

/// A connection without a session: responses resolve their calls, the rest is dropped.
fn resolve_only(rpc: &Rpc, line: Line) {
    if let Line::Json(raw) = line
        && let Ok(Incoming::Response { id, outcome }) = Incoming::classify(&raw)
    {
        rpc.resolve(&id, outcome);
    }
}
