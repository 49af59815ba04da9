//! A loaded session: its core (state and log) and, while the agent runs, its actor. The
//! agent is started lazily: a session loaded after a restart, or whose agent stopped for
//! idleness, gets it back through the driver's `restore` on the next command.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_agents::{AgentDriver, EventSink, QuestionAnswer};
use sandbox_universal::{
    PermissionReply, SendMessageRequest, SessionEndReason, SessionEnded, SessionInfo,
};
use tokio::sync::{mpsc, oneshot};

use super::SessionError;
use super::SessionSettings;
use super::actor::{ActorSlot, Command, Respond, run_actor};
use super::core::{EventMeta, SessionCore};
use super::files;
use super::record::SessionRecord;
use super::travel::NativeSaver;
use crate::credentials::Credentials;
use crate::installs::AgentInstalls;
use crate::store::StoreError;

/// What a session's agent gets from the daemon besides its driver: installs, credentials.
pub(super) struct AgentServices {
    /// Installs the agent where it is missing.
    pub installs: Arc<AgentInstalls>,
    /// The credential it uses.
    pub credentials: Arc<Credentials>,
}

/// A session loaded in memory.
pub struct SessionHandle {
    /// How it was created.
    pub record: SessionRecord,
    /// Its store key.
    pub sid: i64,
    /// Log and state.
    pub core: Arc<SessionCore>,
    pub(super) actor: Arc<ActorSlot>,
    driver: Arc<dyn AgentDriver>,
    installs: Arc<AgentInstalls>,
    credentials: Arc<Credentials>,
    dir: PathBuf,
    settings: Arc<SessionSettings>,
    last_used: Mutex<Instant>,
    /// The agent's host tool token while it runs (revoked when replaced or dropped).
    host_grant: Mutex<Option<crate::host_tools::Grant>>,
    /// Handed over to another agent: see [`Self::retire`].
    retired: std::sync::atomic::AtomicBool,
}

impl SessionHandle {
    pub(super) fn new(
        record: SessionRecord,
        sid: i64,
        core: Arc<SessionCore>,
        driver: Arc<dyn AgentDriver>,
        services: AgentServices,
        dir: PathBuf,
        settings: Arc<SessionSettings>,
    ) -> Self {
        let AgentServices {
            installs,
            credentials,
        } = services;
        core.refuse_tools(super::policy::refused_tools(
            &record.policy,
            &driver.policy(),
        ));
        Self {
            installs,
            credentials,
            record,
            sid,
            core,
            actor: Arc::new(tokio::sync::Mutex::new(None)),
            driver,
            dir,
            settings,
            last_used: Mutex::new(Instant::now()),
            host_grant: Mutex::new(None),
            retired: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Keeps the host tool token of the agent just started (revoking the earlier one).
    pub(super) fn set_host_grant(&self, grant: Option<crate::host_tools::Grant>) {
        *self.host_grant.lock().expect("host grant lock") = grant;
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.record.session_id
    }

    /// The session's private directory.
    pub fn dir(&self) -> &PathBuf {
        &self.dir
    }

    pub(super) fn touch(&self) {
        *self.last_used.lock().expect("last used lock") = Instant::now();
    }

    pub(super) fn unused_for(&self) -> Duration {
        self.last_used.lock().expect("last used lock").elapsed()
    }

    /// Starts the actor for an agent session the driver just started or restored.
    pub(super) fn spawn_actor(
        &self,
        agent: Box<dyn sandbox_agents::AgentSession>,
        login: Option<Arc<sandbox_agents::login::SeededLogin>>,
    ) -> mpsc::UnboundedSender<Command> {
        let (commands, command_rx) = mpsc::unbounded_channel();
        let (signals, signal_rx) = mpsc::unbounded_channel();
        self.core.connect_actor(signals);
        let store = self.core.log().store();
        let saver = match store.backend() {
            sandbox_universal::StoreBackend::Postgres => match self.config() {
                Ok(config) => {
                    NativeSaver::new(self.driver.clone(), config, store.clone(), self.sid)
                }
                Err(error) => {
                    tracing::warn!(session = %self.id(), %error, "the agent's native state will not be shared");
                    None
                }
            },
            sandbox_universal::StoreBackend::Sqlite => None,
        };
        let login = login.map(|login| super::actor::LoginKeeper {
            login,
            credentials: self.credentials.clone(),
        });
        let changes = self.settings.turn_changes.map(|limits| {
            let workspace = crate::workspace::Workspace::new(
                self.record.cwd.clone(),
                self.settings.agent_user.clone(),
            );
            Arc::new(crate::changes::ChangeTracker::new(
                &self.dir,
                &self.settings.data_dir,
                workspace,
                limits,
            ))
        });
        self.core.defer_turn_ends(changes.is_some());
        tokio::spawn(run_actor(
            self.core.clone(),
            agent,
            command_rx,
            signal_rx,
            self.actor.clone(),
            self.settings.idle_timeout,
            super::actor::AfterTurn {
                saver,
                login,
                changes,
            },
        ));
        commands
    }

    /// Brings the agent back through the driver's `restore`. When it cannot come back the
    /// session ends with the error.
    async fn restore_agent(&self) -> Result<mpsc::UnboundedSender<Command>, SessionError> {
        // Checked again exactly as at creation: the daemon may have been down while its
        // files or the cwd changed.
        let unusable = |detail: String| SessionError::Unusable {
            session: self.id().to_string(),
            detail,
        };
        let fresh = !self.dir.exists();
        if fresh {
            // A session taken over from another daemon sharing the store (or whose files
            // were removed): its agent starts from a fresh private dir here.
            files::create_dir(&self.dir, self.settings.agent_user.as_ref())
                .map_err(|e| unusable(e.to_string()))?;
        } else {
            files::check_dir(&self.dir).map_err(|e| unusable(e.to_string()))?;
        }
        super::validate::recheck_cwd(&self.settings, &self.record.cwd).map_err(unusable)?;
        // The agent (at the session's version) may be missing here: another daemon sharing
        // the store created the session, or the install dir was wiped. It is installed as at
        // creation; a failed install is the request's error, not the session's end (it may
        // be a passing network failure).
        self.installs
            .ensure(self.record.agent, self.record.agent_version.as_deref())
            .await?;
        let mut config = self.config()?;
        config.login = self
            .credentials
            .for_session(self.record.agent, config.token.as_deref())
            .map_err(SessionError::Agent)?;
        if fresh {
            self.file_shared_state(&config).await?;
        }
        let grant = super::host::attach(
            &self.settings,
            &self.core,
            &self.driver.policy(),
            &mut config,
        )?;
        let native_id = self.core.snapshot().native_session_id;
        let sink = EventSink::new(self.core.clone());
        let login = config.login.clone();
        match self.driver.restore(config, native_id, sink).await {
            Ok(agent) => {
                self.set_host_grant(grant);
                Ok(self.spawn_actor(agent, login))
            }
            Err(error) => {
                if let Some(login) = &login {
                    login.remove();
                }
                self.core.record_error(error.clone());
                self.core.end(
                    SessionEnded {
                        reason: SessionEndReason::Error,
                        exit_code: None,
                        stderr_tail: None,
                    },
                    EventMeta::daemon(true),
                );
                Err(SessionError::Agent(error))
            }
        }
    }

    /// Files the native state another daemon saved in the shared store (if it did) in
    /// the session's fresh private dir, so the agent resumes with its memory.
    async fn file_shared_state(
        &self,
        config: &sandbox_agents::SessionConfig,
    ) -> Result<(), SessionError> {
        let store = self.core.log().store();
        let Some(state) = super::travel::fetch(store, self.sid, self.record.agent).await? else {
            return Ok(());
        };
        self.driver
            .import_native(config, &state)
            .await
            .map_err(SessionError::Agent)?;
        if let Some(user) = &self.settings.agent_user {
            user.own_tree(&config.state_dir)
                .map_err(|e| SessionError::Internal(format!("handing the files over: {e}")))?;
        }
        Ok(())
    }

    /// The driver configuration of the session: its record, with its credential and
    /// policy secrets read from its directory.
    pub(super) fn config(&self) -> Result<sandbox_agents::SessionConfig, SessionError> {
        self.config_for(&self.record)
    }

    /// The driver configuration of `record` (the session's, or what it becomes in a
    /// handover) in the session's directory, with its credential and policy secrets.
    pub(super) fn config_for(
        &self,
        record: &SessionRecord,
    ) -> Result<sandbox_agents::SessionConfig, SessionError> {
        let token = files::load_token(&self.dir).map_err(|e| {
            SessionError::Internal(format!("reading the credential of `{}`: {e}", self.id()))
        })?;
        let secrets = files::load_policy_secrets(&self.dir).map_err(|e| {
            SessionError::Internal(format!("reading the policy of `{}`: {e}", self.id()))
        })?;
        Ok(record.config(&self.dir, token, secrets))
    }

    /// Marks the session handed over to another agent: this handle takes no command any
    /// more (the manager loads the session again with its new record).
    pub(super) fn retire(&self) {
        self.retired
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The session's agent driver.
    pub(super) fn driver(&self) -> &Arc<dyn AgentDriver> {
        &self.driver
    }

    /// Sends a command to the actor, starting the agent first if it is not running.
    async fn request<T>(
        &self,
        make: impl FnOnce(Respond<T>) -> Command,
    ) -> Result<T, SessionError> {
        self.touch();
        let answer = {
            let mut slot = self.actor.lock().await;
            if self.retired.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(SessionError::HandedOver(self.id().to_string()));
            }
            self.core.ensure_open()?;
            if self.core.log().is_lost() {
                return Err(SessionError::TakenOver(self.id().to_string()));
            }
            let commands = match slot.as_ref().filter(|c| !c.is_closed()) {
                Some(commands) => commands.clone(),
                None => {
                    let commands = self.restore_agent().await?;
                    *slot = Some(commands.clone());
                    commands
                }
            };
            let (respond, answer) = oneshot::channel();
            commands
                .send(make(respond))
                .map_err(|_| SessionError::Ended(self.id().to_string()))?;
            answer
        };
        answer
            .await
            .map_err(|_| SessionError::Ended(self.id().to_string()))?
    }

    /// Whether the agent is running (an actor is alive).
    pub async fn agent_running(&self) -> bool {
        self.actor
            .lock()
            .await
            .as_ref()
            .is_some_and(|c| !c.is_closed())
    }

    /// Waits until what the command logged is durable. A store outage does not fail the
    /// command (the writer retries; the session's `error` event reports it); a session
    /// another daemon took over does: what it logged will never be stored.
    async fn settle(&self) -> Result<(), SessionError> {
        match self.core.log().flush().await {
            Err(StoreError::OwnedElsewhere(_)) => {
                Err(SessionError::TakenOver(self.id().to_string()))
            }
            Err(error) => {
                tracing::debug!(session = %self.id(), %error, "answering before the events are durable");
                Ok(())
            }
            Ok(()) => Ok(()),
        }
    }

    /// Starts a turn; answers its id once the message is durable (the actor hands it to
    /// the agent only then).
    pub async fn send_message(&self, request: SendMessageRequest) -> Result<String, SessionError> {
        self.send_message_traced(request, None).await
    }

    /// [`Self::send_message`], the turn's span continuing the caller's trace `parent`.
    pub async fn send_message_traced(
        &self,
        request: SendMessageRequest,
        parent: Option<crate::telemetry::TraceParent>,
    ) -> Result<String, SessionError> {
        self.core.ensure_open()?;
        let mut message = super::message::prepare(
            request,
            &self.driver.policy(),
            self.driver.name(),
            &self.record.cwd,
        )?;
        message.trace = parent;
        self.core.log().store().check_writable()?;
        self.request(|respond| Command::SendMessage { message, respond })
            .await
    }

    /// Cancels the running turn; answers its id.
    pub async fn cancel(&self) -> Result<String, SessionError> {
        self.core.running_turn()?;
        self.request(|respond| Command::Cancel { respond }).await
    }

    /// Answers a permission request (507/503 while the store cannot write: the answer
    /// must be durable before the agent acts on it).
    pub async fn reply_permission(
        &self,
        id: String,
        reply: PermissionReply,
    ) -> Result<(), SessionError> {
        self.core.ensure_open()?;
        self.core.log().store().check_writable()?;
        self.request(|respond| Command::ReplyPermission { id, reply, respond })
            .await
    }

    /// Answers or rejects a question request (507/503 while the store cannot write).
    pub async fn reply_question(
        &self,
        id: String,
        answer: QuestionAnswer,
    ) -> Result<(), SessionError> {
        self.core.ensure_open()?;
        self.core.log().store().check_writable()?;
        self.request(|respond| Command::ReplyQuestion {
            id,
            answer,
            respond,
        })
        .await
    }

    /// Resolves a client host tool call with the client's result or rejection; the waiting
    /// MCP call gets it once it is durable (507/503 while the store cannot write).
    pub async fn resolve_tool_call(
        &self,
        id: &str,
        answer: super::host_calls::DaemonAnswer,
    ) -> Result<(), SessionError> {
        use super::host_calls::DaemonAnswer;
        self.core.ensure_open()?;
        self.touch();
        let answer = match answer {
            DaemonAnswer::ToolResult(mut result) => {
                result.output = super::message::tool_output(result.output, &self.record.cwd)?;
                DaemonAnswer::ToolResult(result)
            }
            other => other,
        };
        self.core.log().store().check_writable()?;
        let answered = matches!(answer, DaemonAnswer::ToolResult(_));
        let logged = self.core.resolve_tool_call(id, answered)?;
        match self.core.log().wait_durable(logged).await {
            Err(StoreError::OwnedElsewhere(_)) => {
                return Err(SessionError::TakenOver(self.id().to_string()));
            }
            Err(error) => {
                tracing::debug!(session = %self.id(), %error, "handing over a tool result not yet durable");
            }
            Ok(()) => {}
        }
        self.core.deliver(id, answer);
        Ok(())
    }

    /// Stops the agent but keeps the session, to be restored by the next command or daemon
    /// start (daemon shutdown). Nothing to do when the agent is not running.
    pub async fn suspend(&self) -> Result<(), SessionError> {
        let commands = self.actor.lock().await.clone();
        let Some(commands) = commands.filter(|c| !c.is_closed()) else {
            return Ok(());
        };
        let (respond, answer) = oneshot::channel();
        if commands.send(Command::Suspend { respond }).is_err() {
            return Ok(());
        }
        let _ = answer.await;
        Ok(())
    }

    /// Stops the agent (if it runs) and ends the session.
    pub async fn end(&self) -> Result<(), SessionError> {
        self.core.ensure_open()?;
        self.touch();
        let running = {
            let slot = self.actor.lock().await;
            slot.as_ref().filter(|c| !c.is_closed()).cloned()
        };
        if let Some(commands) = running {
            let (respond, answer) = oneshot::channel();
            if commands.send(Command::Shutdown { respond }).is_ok() {
                let _ = answer.await;
            }
        }
        // No agent (stopped, or it died meanwhile): the core ends the session itself.
        self.set_host_grant(None);
        self.core.end(
            SessionEnded {
                reason: SessionEndReason::Terminated,
                exit_code: None,
                stderr_tail: None,
            },
            EventMeta::daemon(false),
        );
        self.settle().await?;
        Ok(())
    }

    /// The session as the API shows it (`eventCount` and `updatedAt`: the durable
    /// events, the ones a reader can get).
    pub fn info(&self) -> SessionInfo {
        let mut snapshot = self.core.snapshot();
        let (durable, time_us) = self.core.log().durable_head();
        snapshot.event_count = durable;
        self.record.info(&snapshot, time_us)
    }
}
