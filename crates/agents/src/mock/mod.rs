//! The built-in deterministic mock agent: no process, no API keys.
//!
//! Each turn plays a script chosen by keywords in the message (see [`script::TurnScript`]):
//! `tool`, `permission`, `write`, `question`, `slow [N]`, `flood N`, `crash`, `unparsed`,
//! `recall` (what it remembers of earlier turns: [`memory`]); the
//! reply `echo: <message>` always closes the turn. With `validateToken`, a token starting
//! with `bad` is rejected with a `tokenError`.
//!
//! Permission modes mean what they mean for every agent: `default` asks before the write
//! and the command, `acceptEdits` only before the command, `bypass` never, and `plan`
//! refuses the write without asking (the command still asks).

pub mod host_tool;
pub mod memory;
pub mod script;
mod turn;
mod worker;

use std::sync::Arc;

use async_trait::async_trait;
use sandbox_universal::{
    AgentCapabilities, AgentError, AgentId, AgentModeInfo, EventPayload, ModelInfo, ModelsResponse,
    ModesResponse, PermissionMode, PermissionReply, SessionEndReason, SessionEnded, SessionStarted,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use worker::{PERMISSION_SCOPE, WRITE_SCOPE, mock_questions};
use worker::{PendingReplies, TurnJob, WorkerConfig, WorkerExit, run_worker};

use sandbox_universal::history::History;

use crate::{
    AgentDriver, AgentEvent, AgentSession, BinaryStatus, ConfigError, EventSink, NativeState,
    QuestionAnswer, SessionConfig,
};

/// The mock agent's driver.
#[derive(Debug, Default, Clone, Copy)]
pub struct MockDriver;

/// The model id the mock reports.
pub const MOCK_MODEL: &str = "mock-1";
/// The file a `write` turn writes in the session's working directory.
pub const WRITTEN_FILE: &str = "mock_written.txt";
/// What a `write` turn writes.
pub const WRITTEN_CONTENT: &str = "written by the mock\n";

#[async_trait]
impl AgentDriver for MockDriver {
    fn id(&self) -> AgentId {
        AgentId::Mock
    }

    fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities {
            text_messages: true,
            streaming_deltas: true,
            reasoning: false,
            tool_calls: true,
            command_execution: true,
            file_changes: true,
            plans: false,
            permissions: true,
            permission_always: true,
            questions: true,
            plan_approval: false,
            cancel: true,
            multi_turn: true,
            resume: false,
            usage: true,
            models: true,
            variants: true,
            agent_modes: true,
            validate_token: true,
            system_prompt: false,
            tool_lists: false,
            max_turns: false,
            mcp_servers: false,
            images: false,
            session_env: false,
            host_tools: true,
        }
    }

    fn policy(&self) -> sandbox_universal::PolicySupport {
        sandbox_universal::PolicySupport {
            host_tools: true,
            ..Default::default()
        }
    }

    async fn status(&self) -> BinaryStatus {
        BinaryStatus {
            installed: true,
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
            path: None,
            origin: None,
        }
    }

    async fn models(&self) -> Result<ModelsResponse, AgentError> {
        Ok(ModelsResponse {
            models: vec![ModelInfo {
                id: MOCK_MODEL.into(),
                name: "Mock model".into(),
                variants: vec!["low".into(), "medium".into(), "high".into()],
                default_variant: Some("medium".into()),
            }],
            default_model: Some(MOCK_MODEL.into()),
        })
    }

    async fn check_model(
        &self,
        model: Option<&str>,
        variant: Option<&str>,
    ) -> Result<(), ConfigError> {
        let models = self.models().await?;
        let id = model.unwrap_or(MOCK_MODEL);
        let Some(info) = models.models.iter().find(|m| m.id == id) else {
            return Err(ConfigError::Invalid(format!(
                "the mock has no model `{id}`; models: {MOCK_MODEL}"
            )));
        };
        match variant {
            Some(variant) if !info.variants.iter().any(|v| v == variant) => {
                Err(ConfigError::Invalid(format!(
                    "the mock's model `{id}` has no variant `{variant}`; variants: {}",
                    info.variants.join(", ")
                )))
            }
            _ => Ok(()),
        }
    }

    async fn modes(&self) -> Result<ModesResponse, AgentError> {
        Ok(ModesResponse {
            modes: vec![
                AgentModeInfo {
                    id: "build".into(),
                    name: "Build".into(),
                    description: "Makes changes".into(),
                },
                AgentModeInfo {
                    id: "plan".into(),
                    name: "Plan".into(),
                    description: "Only proposes changes".into(),
                },
            ],
            default_mode: Some("build".into()),
            permission_modes: PermissionMode::ALL.to_vec(),
        })
    }

    async fn start(
        &self,
        config: SessionConfig,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        if config.validate_token
            && config
                .token
                .as_deref()
                .is_some_and(|token| token.starts_with("bad"))
        {
            return Err(AgentError::TokenError {
                message: "the mock rejects tokens starting with `bad`".into(),
            });
        }
        sink.emit(AgentEvent::native(
            EventPayload::SessionStarted(SessionStarted {
                agent: AgentId::Mock,
                model: Some(config.model.clone().unwrap_or_else(|| MOCK_MODEL.into())),
                agent_mode: config.agent_mode.clone(),
                permission_mode: Some(config.permission_mode),
                cwd: Some(config.cwd.display().to_string()),
                agent_version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            None,
        ));
        Ok(spawn_session(&config, sink))
    }

    /// The mock keeps no conversation, so a restored session is simply a fresh worker.
    async fn restore(
        &self,
        config: SessionConfig,
        _native_session_id: Option<String>,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        Ok(spawn_session(&config, sink))
    }

    /// The mock's memory file (see [`memory`]).
    async fn export_native(
        &self,
        config: &SessionConfig,
        _native_session_id: Option<&str>,
    ) -> Result<NativeState, AgentError> {
        memory::export(
            &memory::path(&config.state_dir),
            &config.cwd.display().to_string(),
        )
        .map_err(|e| AgentError::protocol(format!("reading the mock's memory: {e}")))
    }

    async fn import_native(
        &self,
        config: &SessionConfig,
        state: &NativeState,
    ) -> Result<Option<String>, AgentError> {
        memory::import(
            &memory::path(&config.state_dir),
            state.require(memory::MEMORY_FILE)?,
        )
        .map_err(|e| AgentError::protocol(format!("writing the mock's memory: {e}")))?;
        Ok(None)
    }

    async fn native_history(
        &self,
        config: &SessionConfig,
        history: &History,
    ) -> Result<NativeState, AgentError> {
        Ok(NativeState::single(
            None,
            config.cwd.display().to_string(),
            memory::MEMORY_FILE,
            memory::of_history(history),
        ))
    }
}

/// Starts a worker (and its crash monitor) for a session.
fn spawn_session(config: &SessionConfig, sink: EventSink) -> Box<dyn AgentSession> {
    let pending = Arc::new(PendingReplies::default());
    let (jobs, queue) = mpsc::unbounded_channel();
    let worker_config = WorkerConfig {
        cwd: config.cwd.display().to_string(),
        permission_mode: config.permission_mode,
        host_server: config
            .policy
            .mcp_servers
            .get(sandbox_universal::HOST_MCP_SERVER)
            .cloned(),
        memory: memory::path(&config.state_dir),
    };
    let worker = tokio::spawn(run_worker(
        sink.clone(),
        worker_config,
        pending.clone(),
        queue,
    ));
    let monitor = tokio::spawn(watch_worker(worker, sink));
    Box::new(MockSession {
        jobs: Some(jobs),
        pending,
        cancel: None,
        monitor,
    })
}

/// Reports a crashed worker the way a real driver reports a dead agent process.
async fn watch_worker(worker: JoinHandle<WorkerExit>, sink: EventSink) {
    let exit = worker.await;
    if matches!(exit, Ok(WorkerExit::Closed)) {
        return;
    }
    let message = match exit {
        Err(e) if e.is_panic() => "the mock agent's worker panicked".to_string(),
        _ => "the mock agent's worker died (the message asked it to crash)".to_string(),
    };
    sink.emit(AgentEvent::native(
        EventPayload::Error(AgentError::ProcessExited {
            message,
            exit_code: Some(1),
            signal: None,
            stderr_tail: Some("mock: crash requested".into()),
        }),
        None,
    ));
    sink.emit(AgentEvent::native(
        EventPayload::SessionEnded(SessionEnded {
            reason: SessionEndReason::Error,
            exit_code: Some(1),
            stderr_tail: Some("mock: crash requested".into()),
        }),
        None,
    ));
}

/// One running mock session.
struct MockSession {
    jobs: Option<mpsc::UnboundedSender<TurnJob>>,
    pending: Arc<PendingReplies>,
    cancel: Option<CancellationToken>,
    monitor: JoinHandle<()>,
}

fn worker_gone() -> AgentError {
    AgentError::ProcessExited {
        message: "the mock agent's worker is no longer running".into(),
        exit_code: None,
        signal: None,
        stderr_tail: None,
    }
}

#[async_trait]
impl AgentSession for MockSession {
    fn native_session_id(&self) -> Option<String> {
        None
    }

    async fn send_message(
        &mut self,
        turn_id: &str,
        message: &crate::UserMessage,
    ) -> Result<(), AgentError> {
        let cancel = CancellationToken::new();
        let job = TurnJob {
            turn_id: turn_id.to_string(),
            message: message.plain_text(),
            cancel: cancel.clone(),
        };
        self.jobs
            .as_ref()
            .ok_or_else(worker_gone)?
            .send(job)
            .map_err(|_| worker_gone())?;
        self.cancel = Some(cancel);
        Ok(())
    }

    async fn cancel(&mut self) -> Result<(), AgentError> {
        if let Some(cancel) = &self.cancel {
            cancel.cancel();
        }
        Ok(())
    }

    async fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<(), AgentError> {
        let sender = self
            .pending
            .permissions
            .lock()
            .expect("lock")
            .remove(permission_id);
        match sender {
            Some(tx) => tx.send(reply).map_err(|_| worker_gone()),
            None => Err(AgentError::protocol(format!(
                "the mock is not waiting for permission `{permission_id}`"
            ))),
        }
    }

    async fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<(), AgentError> {
        let sender = self
            .pending
            .questions
            .lock()
            .expect("lock")
            .remove(question_id);
        match sender {
            Some(tx) => tx.send(answer).map_err(|_| worker_gone()),
            None => Err(AgentError::protocol(format!(
                "the mock is not waiting for question `{question_id}`"
            ))),
        }
    }

    async fn shutdown(&mut self) {
        if let Some(cancel) = &self.cancel {
            cancel.cancel();
        }
        self.jobs = None;
        let _ = (&mut self.monitor).await;
    }
}
