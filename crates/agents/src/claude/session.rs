//! A running Claude session: one process kept alive across turns, respawned with
//! `--resume` after it exits, and the reader task that converts its stdout.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use sandbox_universal::{AgentError, PermissionReply};
use serde_json::{Value, json};
use tokio::io::{BufReader, Lines};
use tokio::process::ChildStdout;
use tokio::task::JoinHandle;

use super::convert::{self, Converter, PendingKind};
use super::launch::{Conversation, LaunchPlan};
use super::native::ControlResponseBody;
use crate::process::{AgentProcess, ExitInfo, Signaller};
use crate::transport::{JsonLines, Line, LineWriter, Pending, wait_exit};
use crate::{AgentSession, EventSink, QuestionAnswer};

/// How long a new process may take to answer `initialize`.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long an interrupted turn may take to end before the process is killed.
pub const CANCEL_GRACE: Duration = Duration::from_secs(10);
/// How long `shutdown` waits after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// State shared by the session and its reader task.
struct Shared {
    converter: Mutex<Converter>,
    sink: EventSink,
    waiters: Pending<String, ControlResponseBody>,
}

impl Shared {
    fn converter(&self) -> std::sync::MutexGuard<'_, Converter> {
        self.converter.lock().expect("converter lock")
    }
}

struct Running {
    process: AgentProcess,
    writer: LineWriter,
    signaller: Signaller,
    exit: tokio::sync::watch::Receiver<Option<ExitInfo>>,
    expected_exit: Arc<AtomicBool>,
    reader: JoinHandle<()>,
}

impl Running {
    fn exited(&self) -> bool {
        self.exit.borrow().is_some()
    }
}

/// One Claude session.
pub struct ClaudeSession {
    shared: Arc<Shared>,
    plan: LaunchPlan,
    native_id: String,
    /// A user message reached this conversation, so a new process must `--resume` it.
    resumable: bool,
    running: Option<Running>,
    requests: u64,
}

fn exited_error(info: &ExitInfo, doing: &str) -> AgentError {
    info.error(format!("Claude Code exited ({}) {doing}", info.describe()))
}

fn io_error(error: std::io::Error) -> AgentError {
    crate::transport::not_running(format!("writing to Claude Code failed: {error}"))
}

impl ClaudeSession {
    /// A session that will run `plan` for the conversation `native_id`.
    pub fn new(plan: LaunchPlan, native_id: String, cwd: &str, sink: EventSink) -> Self {
        let mut converter = Converter::new(cwd);
        converter.set_native_session_id(&native_id);
        Self {
            shared: Arc::new(Shared {
                converter: Mutex::new(converter),
                sink,
                waiters: Pending::default(),
            }),
            plan,
            native_id,
            resumable: false,
            running: None,
            requests: 0,
        }
    }

    /// The conversation already exists (a restored session): the next process resumes it.
    pub fn mark_resumable(&mut self) {
        self.resumable = true;
    }

    /// The pid of the current process, if one runs.
    pub fn pid(&self) -> Option<u32> {
        self.running
            .as_ref()
            .filter(|r| !r.exited())
            .map(|r| r.signaller.pid())
    }

    fn next_request_id(&mut self, prefix: &str) -> String {
        self.requests += 1;
        format!("{prefix}_{}", self.requests)
    }

    /// Starts a process (new or resumed conversation) and waits for its answer to
    /// `initialize`, which it returns.
    pub async fn spawn(&mut self) -> Result<Value, AgentError> {
        let conversation = if self.resumable {
            Conversation::Resume(self.native_id.clone())
        } else {
            Conversation::New(self.native_id.clone())
        };
        let reported = self
            .shared
            .converter()
            .permission_mode()
            .map(str::to_string);
        let spec = self.plan.spec(&conversation, reported.as_deref());
        let (mut process, lines) =
            AgentProcess::spawn(&spec).map_err(|e| AgentError::SpawnFailed {
                message: format!("starting {} failed: {e}", spec.program.display()),
            })?;
        let writer =
            LineWriter::spawn(
                process
                    .take_stdin()
                    .ok_or_else(|| AgentError::SpawnFailed {
                        message: "Claude Code has no stdin".into(),
                    })?,
            );
        let signaller = process.signaller();
        let exit = process.exit_watch();
        // Quiet until `initialize` is answered: a failed start is reported by `spawn`.
        let expected_exit = Arc::new(AtomicBool::new(true));
        let reader = tokio::spawn(read_loop(
            lines,
            self.shared.clone(),
            writer.clone(),
            expected_exit.clone(),
            exit.clone(),
        ));
        self.running = Some(Running {
            process,
            writer,
            signaller,
            exit,
            expected_exit,
            reader,
        });
        let request_id = self.next_request_id("init");
        let request = json!({"type": "control_request", "request_id": request_id,
            "request": {"subtype": "initialize", "hooks": null}});
        match self.control(&request_id, &request, START_TIMEOUT).await {
            Ok(response) => {
                if let Some(running) = &self.running {
                    running.expected_exit.store(false, Ordering::SeqCst);
                }
                Ok(response)
            }
            Err(error) => {
                self.stop(Duration::ZERO).await;
                Err(error)
            }
        }
    }

    /// Sends a control request and waits for its answer (or the process's exit).
    async fn control(
        &mut self,
        request_id: &str,
        request: &Value,
        limit: Duration,
    ) -> Result<Value, AgentError> {
        let running = self
            .running
            .as_ref()
            .ok_or_else(|| AgentError::protocol("no process"))?;
        let rx = self
            .shared
            .waiters
            .register(request_id.to_string())
            .ok_or_else(|| AgentError::protocol("no process"))?;
        let written = running.writer.write(request.clone()).await;
        let mut exit = running.exit.clone();
        if let Err(error) = written {
            // Usually the process died before reading: report how it ended.
            let ended =
                tokio::time::timeout(Duration::from_secs(5), exit.wait_for(Option::is_some))
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .and_then(|info| info.clone());
            return Err(match ended {
                Some(info) => exited_error(&info, "while starting"),
                None => io_error(error),
            });
        }
        let answer = tokio::time::timeout(limit, async {
            tokio::select! {
                answer = rx => answer.ok(),
                _ = exit.wait_for(Option::is_some) => None,
            }
        })
        .await;
        let body = match answer {
            Ok(Some(body)) => body,
            Ok(None) => {
                let info = running.process.wait().await;
                return Err(exited_error(&info, "while starting"));
            }
            Err(_) => {
                return Err(AgentError::Timeout {
                    message: format!(
                        "Claude Code did not answer `{request_id}` within {} s",
                        limit.as_secs()
                    ),
                });
            }
        };
        match body.subtype.as_str() {
            "success" => Ok(body.response.unwrap_or(Value::Null)),
            _ => Err(AgentError::AgentReported {
                message: body
                    .error
                    .unwrap_or_else(|| "control request failed".into()),
                code: Some(body.subtype),
            }),
        }
    }

    /// Makes sure a live process runs: waits for a dead one's reader to finish (so its
    /// exit events come first) and respawns, resuming the conversation.
    async fn ensure_running(&mut self) -> Result<(), AgentError> {
        if self.running.as_ref().is_some_and(|r| !r.exited()) {
            return Ok(());
        }
        if let Some(dead) = self.running.take() {
            let _ = dead.reader.await;
        }
        self.spawn().await.map(|_| ())
    }

    async fn write(&self, line: &Value) -> Result<(), AgentError> {
        let running = self
            .running
            .as_ref()
            .ok_or_else(|| AgentError::protocol("no process"))?;
        running.writer.write(line.clone()).await.map_err(io_error)
    }

    async fn stop(&mut self, grace: Duration) {
        if let Some(mut running) = self.running.take() {
            running.expected_exit.store(true, Ordering::SeqCst);
            running.process.stop(grace).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), running.reader).await;
        }
    }
}

impl Drop for ClaudeSession {
    /// A session dropped without `shutdown` still takes its process (and the tools it
    /// started) down: the reader task holds the process handle until stdout closes.
    fn drop(&mut self) {
        if let Some(running) = &self.running
            && !running.exited()
        {
            running.expected_exit.store(true, Ordering::SeqCst);
            running.signaller.kill();
        }
    }
}

fn user_line(message: &str) -> Value {
    json!({"type": "user", "session_id": "", "parent_tool_use_id": null,
        "message": {"role": "user", "content": [{"type": "text", "text": message}]}})
}

#[async_trait]
impl AgentSession for ClaudeSession {
    fn native_session_id(&self) -> Option<String> {
        Some(self.native_id.clone())
    }

    async fn send_message(&mut self, turn_id: &str, message: &str) -> Result<(), AgentError> {
        self.ensure_running().await?;
        self.shared.converter().begin_turn(turn_id);
        let line = user_line(message);
        let mut result = self.write(&line).await;
        if result.is_err() {
            // The process died between the check and the write: resume and retry once.
            self.shared.converter().take_turn();
            self.ensure_running().await?;
            self.shared.converter().begin_turn(turn_id);
            result = self.write(&line).await;
        }
        match result {
            Ok(()) => {
                self.shared.converter().turn_delivered();
                self.resumable = true;
                Ok(())
            }
            Err(error) => {
                self.shared.converter().take_turn();
                Err(error)
            }
        }
    }

    async fn cancel(&mut self) -> Result<(), AgentError> {
        let Some(turn) = self.shared.converter().current_turn().map(str::to_string) else {
            return Ok(());
        };
        let Some(running) = self.running.as_ref().filter(|r| !r.exited()) else {
            return Ok(());
        };
        self.shared.converter().cancel_requested();
        let signaller = running.signaller.clone();
        let request_id = self.next_request_id("interrupt");
        self.write(&json!({"type": "control_request", "request_id": request_id,
            "request": {"subtype": "interrupt"}}))
            .await?;
        // If the CLI does not end the turn in time, kill it: the turn then ends as
        // cancelled and the next message resumes the conversation.
        let shared = self.shared.clone();
        tokio::spawn(async move {
            tokio::time::sleep(CANCEL_GRACE).await;
            if shared.converter().current_turn() == Some(turn.as_str()) {
                tracing::warn!(
                    pid = signaller.pid(),
                    "Claude Code ignored the interrupt; killing it"
                );
                signaller.kill();
            }
        });
        Ok(())
    }

    async fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<(), AgentError> {
        let Some(pending) = self.shared.converter().take_pending(permission_id) else {
            tracing::debug!(permission_id, "Claude no longer waits for this permission");
            return Ok(());
        };
        if pending.kind == PendingKind::Question {
            return Err(AgentError::protocol(format!(
                "`{permission_id}` is a question, not a permission"
            )));
        }
        self.write(&convert::permission_response(&pending, reply))
            .await
    }

    async fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<(), AgentError> {
        let Some(pending) = self.shared.converter().take_pending(question_id) else {
            tracing::debug!(question_id, "Claude no longer waits for this question");
            return Ok(());
        };
        if pending.kind != PendingKind::Question {
            return Err(AgentError::protocol(format!(
                "`{question_id}` is a permission, not a question"
            )));
        }
        self.write(&convert::question_response(&pending, &answer))
            .await
    }

    async fn shutdown(&mut self) {
        self.stop(STOP_GRACE).await;
    }
}

/// Reads stdout until the process ends: answers to our control requests go to their
/// waiters, everything else through the converter into the sink.
async fn read_loop(
    lines: Lines<BufReader<ChildStdout>>,
    shared: Arc<Shared>,
    writer: LineWriter,
    expected_exit: Arc<AtomicBool>,
    mut exit: tokio::sync::watch::Receiver<Option<ExitInfo>>,
) {
    let mut lines = JsonLines::new(lines);
    while let Some(line) = lines.next().await {
        let value = match line {
            Line::Json(value) => value,
            not_json => {
                shared.sink.emit_all(not_json.unparsed(&shared.sink));
                continue;
            }
        };
        if value["type"] == "control_response"
            && let Ok(line) =
                serde_json::from_value::<super::native::ControlResponseLine>(value.clone())
        {
            let request_id = line.response.request_id.clone();
            shared.waiters.resolve(&request_id, line.response);
            continue;
        }
        let replies = {
            let mut converter = shared.converter();
            let converted = converter.convert(&value, &shared.sink);
            shared.sink.emit_all(converted.events);
            converted.replies
        };
        for reply in replies {
            if writer.send(reply).is_err() {
                tracing::warn!("answering a Claude control request failed: stdin is closed");
            }
        }
    }
    let info = wait_exit(&mut exit).await;
    shared.waiters.fail_waiting();
    let mut converter = shared.converter();
    let events = converter.process_exited(&info, expected_exit.load(Ordering::SeqCst));
    shared.sink.emit_all(events);
}
