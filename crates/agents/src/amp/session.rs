//! One universal session on Amp: a process per turn (the first starts a thread, the next
//! ones continue it), its stream converted as it comes, the permission questions of its
//! delegate program turned into `permissionAsked`, cancel by killing the turn's process
//! group.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use sandbox_universal::{
    AgentError, EventPayload, PermissionKind, PermissionReply, PermissionRequest,
};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::sync::oneshot;

use super::launch::{self, AmpDirs, TurnLaunch};
use super::relay::{Channel, Decision, Question};
use crate::claude::convert::Converter;
use crate::claude::convert::patch;
use crate::kernel::{Gone, Protocol};
use crate::process::{AgentProcess, Signaller};
use crate::transport::{JsonLines, Line};
use crate::{AgentEvent, AgentSession, EventSink, QuestionAnswer};

/// What every turn of a session is started with.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Amp's executable.
    pub program: PathBuf,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The session's private files.
    pub dirs: AmpDirs,
    /// `AMP_API_KEY` (kept in memory only).
    pub key: String,
    /// `AMP_URL`, when set.
    pub url: Option<String>,
    /// Amp's mode (`--mode`).
    pub mode: Option<String>,
}

/// What the turn's reader task and the question task share with the session.
struct Shared {
    sink: EventSink,
    cwd: String,
    converter: Mutex<Converter>,
    /// The thread id, once Amp said it.
    thread: Mutex<Option<String>>,
    /// Permission id → where the decision goes.
    pending: Mutex<HashMap<String, oneshot::Sender<Decision>>>,
}

impl Shared {
    fn converter(&self) -> std::sync::MutexGuard<'_, Converter> {
        self.converter.lock().expect("converter lock")
    }

    /// One stdout line of the turn's process.
    fn line(&self, line: Line) {
        let value = match line {
            Line::Json(value) => value,
            not_json @ Line::NotJson { .. } => {
                self.sink.emit_all(not_json.unparsed(&self.sink));
                return;
            }
        };
        if let Some(thread) = value["session_id"].as_str() {
            let mut known = self.thread.lock().expect("thread lock");
            if known.is_none() {
                *known = Some(thread.to_string());
                self.sink.set_native_session_id(thread);
            }
        }
        let mut converter = self.converter();
        let converted = Protocol::convert(&mut *converter, &value, &self.sink);
        self.sink.emit_all(converted.events);
    }

    /// A tool call Amp's delegate program asks about.
    fn question(&self, question: Question) {
        let converter = self.converter();
        let request = permission_request(
            self.sink.next_id("perm"),
            &question,
            converter.call_item(&question.tool, &question.input),
            &self.cwd,
        );
        let raw =
            json!({"tool": question.tool, "thread": question.thread, "input": question.input});
        self.pending
            .lock()
            .expect("pending lock")
            .insert(request.permission_id.clone(), question.answer);
        self.sink.emit(AgentEvent::native(
            EventPayload::PermissionAsked(request),
            Some(raw),
        ));
        drop(converter);
    }
}

/// The universal request for a tool call of Amp's.
fn permission_request(
    id: String,
    question: &Question,
    item_id: Option<String>,
    cwd: &str,
) -> PermissionRequest {
    let input = &question.input;
    let tool = question.tool.as_str();
    let command = input["command"]
        .as_str()
        .or_else(|| input["cmd"].as_str())
        .map(str::to_string);
    let paths: Vec<String> = match input["patchText"].as_str() {
        Some(text) => patch::file_changes(text, cwd)
            .into_iter()
            .filter_map(|part| match part {
                sandbox_universal::ContentPart::FileChange { path, .. } => Some(path),
                _ => None,
            })
            .collect(),
        None => input["path"]
            .as_str()
            .map(str::to_string)
            .into_iter()
            .collect(),
    };
    let (kind, title) = match (&command, paths.is_empty()) {
        (Some(command), _) => (PermissionKind::Command, format!("Run `{command}`")),
        (None, false) => (
            PermissionKind::FileChange,
            format!("Change {}", paths.join(", ")),
        ),
        (None, true) => (PermissionKind::Tool, format!("Use {tool}")),
    };
    let scope = match &command {
        Some(command) => format!("amp:{tool}:{command}"),
        None => format!("amp:{tool}"),
    };
    PermissionRequest {
        permission_id: id,
        kind,
        title,
        item_id,
        tool: Some(tool.to_string()),
        command,
        paths,
        plan: None,
        input: Some(input.clone()),
        always_scope: Some(scope),
    }
}

/// One session of Amp.
pub struct AmpSession {
    shared: Arc<Shared>,
    launch: Launch,
    channel: Channel,
    questions: tokio::task::JoinHandle<()>,
    running: Option<Running>,
}

/// The process of the last turn and the task that reads it.
struct Running {
    process: Signaller,
    reader: tokio::task::JoinHandle<()>,
}

/// How long a finished turn's process may take to exit before the next turn kills it.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

impl AmpSession {
    /// A session whose first turn starts a thread, or continues `thread` (after a restart).
    pub fn new(
        launch: Launch,
        sink: EventSink,
        thread: Option<String>,
    ) -> Result<Self, AgentError> {
        let (channel, mut questions) = Channel::open().map_err(|e| AgentError::SpawnFailed {
            message: format!("opening the permission channel for Amp: {e}"),
        })?;
        let mut converter = super::convert::converter(launch.cwd.display().to_string());
        if let Some(thread) = &thread {
            converter.set_native_session_id(thread);
        }
        let shared = Arc::new(Shared {
            sink,
            cwd: launch.cwd.display().to_string(),
            converter: Mutex::new(converter),
            thread: Mutex::new(thread),
            pending: Mutex::new(HashMap::new()),
        });
        let for_questions = shared.clone();
        let questions = tokio::spawn(async move {
            while let Some(question) = questions.recv().await {
                for_questions.question(question);
            }
        });
        Ok(Self {
            shared,
            launch,
            channel,
            questions,
            running: None,
        })
    }

    fn spawn_turn(
        &self,
    ) -> Result<
        (
            AgentProcess,
            tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
        ),
        AgentError,
    > {
        let thread = self.shared.thread.lock().expect("thread lock").clone();
        let args = launch::args(
            thread.as_deref(),
            self.launch.mode.as_deref(),
            &self.launch.dirs,
        );
        let turn = TurnLaunch {
            program: &self.launch.program,
            cwd: &self.launch.cwd,
            dirs: &self.launch.dirs,
            key: &self.launch.key,
            url: self.launch.url.as_deref(),
            permission_channel: self.channel.env_value(),
        };
        AgentProcess::spawn(&turn.spec(args)).map_err(|e| AgentError::SpawnFailed {
            message: format!("starting {}: {e}", self.launch.program.display()),
        })
    }
}

#[async_trait]
impl AgentSession for AmpSession {
    fn native_session_id(&self) -> Option<String> {
        self.shared.thread.lock().expect("thread lock").clone()
    }

    async fn send_message(&mut self, turn_id: &str, message: &str) -> Result<(), AgentError> {
        // One process at a time: the last turn's has printed its result and is exiting.
        if let Some(mut last) = self.running.take()
            && tokio::time::timeout(EXIT_GRACE, &mut last.reader)
                .await
                .is_err()
        {
            last.process.kill();
            let _ = last.reader.await;
        }
        drop(self.shared.converter().begin_turn(turn_id, message));
        let (mut process, lines) = match self.spawn_turn() {
            Ok(spawned) => spawned,
            Err(error) => {
                self.shared.converter().turn_undelivered();
                return Err(error);
            }
        };
        if let Some(mut stdin) = process.take_stdin() {
            // A failed write shows as the process's exit, with its stderr.
            let _ = stdin.write_all(message.as_bytes()).await;
            drop(stdin);
        }
        self.shared.converter().turn_delivered(None);
        let signaller = process.signaller();
        let shared = self.shared.clone();
        let turn = turn_id.to_string();
        let reader = tokio::spawn(async move {
            let mut lines = JsonLines::new(lines);
            while let Some(line) = lines.next().await {
                shared.line(line);
            }
            let exit = process.wait().await;
            let mut converter = shared.converter();
            // A process that exits without its `result` ends its own turn (never a later one).
            if converter.current_turn() == Some(turn.as_str()) {
                let events = converter.gone(&Gone {
                    why: exit.describe(),
                    exit,
                });
                shared.sink.emit_all(events);
            }
            drop(converter);
            // Questions of a finished turn are rejected (dropping their answers).
            shared.pending.lock().expect("pending lock").clear();
        });
        self.running = Some(Running {
            process: signaller,
            reader,
        });
        Ok(())
    }

    async fn cancel(&mut self) -> Result<(), AgentError> {
        drop(self.shared.converter().cancel());
        if let Some(running) = &self.running {
            running.process.kill();
        }
        Ok(())
    }

    async fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<(), AgentError> {
        let answer = self
            .shared
            .pending
            .lock()
            .expect("pending lock")
            .remove(permission_id)
            .ok_or_else(|| AgentError::RequestGone {
                message: format!("Amp no longer waits for `{permission_id}` (its turn ended)"),
            })?;
        let decision = match reply {
            PermissionReply::Once | PermissionReply::Always => Decision::Allow,
            PermissionReply::Reject => Decision::Reject("The user rejected this tool call.".into()),
        };
        answer.send(decision).map_err(|_| AgentError::RequestGone {
            message: format!("Amp stopped waiting for `{permission_id}`"),
        })
    }

    async fn reply_question(
        &mut self,
        question_id: &str,
        _answer: QuestionAnswer,
    ) -> Result<(), AgentError> {
        Err(AgentError::RequestGone {
            message: format!("Amp asks no questions; `{question_id}` is not Amp's"),
        })
    }

    async fn shutdown(&mut self) {
        if let Some(running) = self.running.take() {
            if self.shared.converter().current_turn().is_some() {
                drop(self.shared.converter().cancel());
            }
            running.process.kill();
        }
        self.questions.abort();
        self.shared.pending.lock().expect("pending lock").clear();
    }
}

impl Drop for AmpSession {
    fn drop(&mut self) {
        self.questions.abort();
        if let Some(running) = &self.running {
            running.process.kill();
        }
    }
}
