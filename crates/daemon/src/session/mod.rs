//! Sessions: the manager that creates and finds them, and each session's core and actor.

pub mod actor;
pub mod core;
mod state;
pub mod store;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use chrono::{DateTime, Utc};
use sandbox_agents::{AgentRegistry, AgentSession, EventSink, QuestionAnswer, SessionConfig};
use sandbox_universal::{
    AgentId, CreateSessionRequest, CreateSessionResponse, PermissionMode, PermissionReply,
    SessionEndReason, SessionEnded, SessionInfo, SessionStatus,
};
use tokio::sync::{mpsc, oneshot};

use self::actor::{Command, Respond, run_actor};
use self::core::{EventMeta, SessionCore};
use self::store::SessionRecord;
use crate::error::ApiError;
use crate::log::{EventLog, FileLog};

/// Where sessions live on disk and which working directories they may use.
#[derive(Debug, Clone)]
pub struct SessionSettings {
    /// Root of the daemon's own state; each session gets a private directory below it.
    pub data_dir: PathBuf,
    /// Working directory of sessions that do not name one.
    pub default_cwd: PathBuf,
    /// When set, session working directories must be inside it.
    pub workspace_root: Option<PathBuf>,
}

/// A session the daemon holds (running or ended).
pub struct SessionHandle {
    /// The request that created it (minus the token).
    pub config: SessionConfig,
    /// The agent.
    pub agent: AgentId,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Log and state.
    pub core: Arc<SessionCore>,
    commands: mpsc::UnboundedSender<Command>,
}

impl SessionHandle {
    async fn request<T>(&self, make: impl FnOnce(Respond<T>) -> Command) -> Result<T, ApiError> {
        let ended = || ApiError::SessionEnded(self.config.session_id.clone());
        let (respond, result) = oneshot::channel();
        self.commands.send(make(respond)).map_err(|_| ended())?;
        result.await.map_err(|_| ended())?
    }

    /// Starts a turn; answers its id.
    pub async fn send_message(&self, message: String) -> Result<String, ApiError> {
        self.core.ensure_open()?;
        self.request(|respond| Command::SendMessage { message, respond })
            .await
    }

    /// Cancels the running turn; answers its id.
    pub async fn cancel(&self) -> Result<String, ApiError> {
        self.core.running_turn()?;
        self.request(|respond| Command::Cancel { respond }).await
    }

    /// Answers a permission request.
    pub async fn reply_permission(
        &self,
        id: String,
        reply: PermissionReply,
    ) -> Result<(), ApiError> {
        self.core.ensure_open()?;
        self.request(|respond| Command::ReplyPermission { id, reply, respond })
            .await
    }

    /// Answers or rejects a question request.
    pub async fn reply_question(&self, id: String, answer: QuestionAnswer) -> Result<(), ApiError> {
        self.core.ensure_open()?;
        self.request(|respond| Command::ReplyQuestion {
            id,
            answer,
            respond,
        })
        .await
    }

    /// Stops the agent but keeps the session to be restored at the next daemon start.
    pub async fn suspend(&self) -> Result<(), ApiError> {
        self.core.ensure_open()?;
        self.request(|respond| Command::Suspend { respond }).await
    }

    /// Stops the agent and ends the session.
    pub async fn end(&self) -> Result<(), ApiError> {
        self.core.ensure_open()?;
        self.request(|respond| Command::Shutdown { respond }).await
    }

    /// The session as the API shows it.
    pub fn info(&self) -> SessionInfo {
        let snapshot = self.core.snapshot();
        SessionInfo {
            session_id: self.config.session_id.clone(),
            agent: self.agent,
            status: snapshot.status,
            agent_mode: self.config.agent_mode.clone(),
            permission_mode: self.config.permission_mode,
            model: self.config.model.clone(),
            variant: self.config.variant.clone(),
            native_session_id: snapshot.native_session_id,
            cwd: self.config.cwd.display().to_string(),
            created_at: self.created_at,
            event_count: snapshot.event_count,
            current_turn_id: snapshot.current_turn,
            pending_permissions: snapshot.pending_permissions,
            pending_questions: snapshot.pending_questions,
            end_reason: snapshot.end_reason,
        }
    }
}

/// Creates, finds and ends sessions. Sessions never share a lock: the manager's map is
/// only locked to insert or look up a handle.
pub struct SessionManager {
    registry: AgentRegistry,
    settings: SessionSettings,
    sessions: RwLock<HashMap<String, Arc<SessionHandle>>>,
    starting: Mutex<HashSet<String>>,
}

/// Longest accepted session id.
pub const MAX_SESSION_ID_LEN: usize = 128;

/// Checks a client-chosen session id: 1–128 characters of `A-Z a-z 0-9 . _ -`, not starting
/// with a dot.
pub fn validate_session_id(id: &str) -> Result<(), ApiError> {
    let valid = !id.is_empty()
        && id.len() <= MAX_SESSION_ID_LEN
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if valid {
        Ok(())
    } else {
        Err(ApiError::InvalidParameter(format!(
            "invalid session id `{id}`: use 1-{MAX_SESSION_ID_LEN} characters of A-Z a-z 0-9 . _ - (not starting with a dot)"
        )))
    }
}

impl SessionManager {
    /// A manager with no sessions.
    pub fn new(registry: AgentRegistry, settings: SessionSettings) -> Self {
        Self {
            registry,
            settings,
            sessions: RwLock::default(),
            starting: Mutex::default(),
        }
    }

    /// The agent registry.
    pub fn registry(&self) -> &AgentRegistry {
        &self.registry
    }

    /// Finds a session.
    pub fn get(&self, id: &str) -> Result<Arc<SessionHandle>, ApiError> {
        self.sessions
            .read()
            .expect("sessions lock")
            .get(id)
            .cloned()
            .ok_or_else(|| ApiError::SessionNotFound(id.to_string()))
    }

    /// Every session, oldest first.
    pub fn list(&self) -> Vec<Arc<SessionHandle>> {
        let mut all: Vec<_> = self
            .sessions
            .read()
            .expect("sessions lock")
            .values()
            .cloned()
            .collect();
        all.sort_by(|a, b| {
            (a.created_at, &a.config.session_id).cmp(&(b.created_at, &b.config.session_id))
        });
        all
    }

    /// Creates a session and starts its agent. A request error is an `Err`; an agent that
    /// fails to start is `Ok` with `healthy: false` (the id stays free).
    pub async fn create(
        &self,
        id: &str,
        request: CreateSessionRequest,
    ) -> Result<CreateSessionResponse, ApiError> {
        validate_session_id(id)?;
        let agent: AgentId =
            request
                .agent
                .parse()
                .map_err(|e: sandbox_universal::UnknownAgentName| {
                    ApiError::UnknownAgent(e.to_string())
                })?;
        let driver = self.registry.get(agent);
        let permission_mode = resolve_permission_mode(&request)?;
        if let Some(mode) = &request.agent_mode {
            let modes = driver.modes();
            if driver.supported() && !modes.modes.iter().any(|m| &m.id == mode) {
                let known: Vec<&str> = modes.modes.iter().map(|m| m.id.as_str()).collect();
                return Err(ApiError::InvalidSessionConfig(format!(
                    "{agent} has no agent mode `{mode}`; modes: {}",
                    known.join(", ")
                )));
            }
        }
        if driver.supported() && !driver.modes().permission_modes.contains(&permission_mode) {
            return Err(ApiError::InvalidSessionConfig(format!(
                "{agent} does not support permission mode `{}`",
                serde_json::to_value(permission_mode).expect("serializes")
            )));
        }
        let cwd = self.resolve_cwd(request.cwd.as_deref())?;

        let _reservation = self.reserve(id)?;
        let dir = self.sessions_dir().join(id);
        let io =
            |e: std::io::Error| ApiError::Internal(format!("preparing {}: {e}", dir.display()));
        store::create_dir(&dir).map_err(io)?;
        let record = SessionRecord {
            session_id: id.to_string(),
            agent,
            agent_mode: request.agent_mode,
            permission_mode,
            model: request.model,
            variant: request.variant,
            token: request.token,
            dangerously_skip_permissions: request.dangerously_skip_permissions.unwrap_or(false),
            agent_version: request.agent_version,
            cwd,
            created_at: Utc::now(),
        };
        let config = SessionConfig {
            validate_token: request.validate_token.unwrap_or(false),
            ..record.config(&dir)
        };
        let started = async {
            store::save(&dir, &record).map_err(io)?;
            let log = FileLog::open(&dir.join(store::EVENTS_FILE)).map_err(io)?;
            let core = Arc::new(SessionCore::new(id, Arc::new(log) as Arc<dyn EventLog>));
            let sink = EventSink::new(core.clone());
            Ok::<_, ApiError>((core.clone(), driver.start(config.clone(), sink).await))
        }
        .await;
        let (core, agent_session) = match started {
            Ok((core, Ok(session))) => (core, session),
            Ok((_, Err(error))) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Ok(CreateSessionResponse {
                    healthy: false,
                    error: Some(error),
                    native_session_id: None,
                });
            }
            Err(error) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(error);
            }
        };
        let native_session_id = agent_session
            .native_session_id()
            .or_else(|| core.snapshot().native_session_id);
        self.insert(
            record.config(&dir),
            agent,
            record.created_at,
            core,
            Some(agent_session),
        );
        Ok(CreateSessionResponse {
            healthy: true,
            error: None,
            native_session_id,
        })
    }

    /// Stops every agent but keeps the sessions on disk for the next start (daemon
    /// shutdown).
    pub async fn suspend_all(&self) {
        let sessions = self.list();
        let suspends = sessions.iter().map(|s| s.suspend());
        for result in futures::future::join_all(suspends).await {
            if let Err(error) = result
                && !matches!(error, ApiError::SessionEnded(_))
            {
                tracing::warn!(%error, "stopping a session at shutdown failed");
            }
        }
    }

    /// Brings back every session found in the data directory (after a daemon restart):
    /// ended sessions stay readable; others get their agent back through the driver's
    /// `restore`, and a turn that was running is closed with an error.
    pub async fn restore_all(&self) {
        for dir in store::session_dirs(&self.sessions_dir()) {
            if let Err(error) = self.restore(&dir).await {
                tracing::warn!(dir = %dir.display(), %error, "could not restore a session");
            }
        }
    }

    async fn restore(&self, dir: &Path) -> std::io::Result<()> {
        let record = store::load(dir)?;
        let log = FileLog::open(&dir.join(store::EVENTS_FILE))?;
        let core = Arc::new(SessionCore::restore(
            record.session_id.as_str(),
            Arc::new(log) as Arc<dyn EventLog>,
        ));
        let config = record.config(dir);
        let snapshot = core.snapshot();
        let agent_session = if snapshot.status == SessionStatus::Ended {
            None
        } else {
            if core.running_turn().is_ok() {
                core.record_error(sandbox_universal::AgentError::ProcessExited {
                    message: "the daemon restarted while this turn was running".into(),
                    exit_code: None,
                    signal: None,
                    stderr_tail: None,
                });
                core.fail_running_turn();
            }
            let driver = self.registry.get(record.agent);
            let sink = EventSink::new(core.clone());
            match driver
                .restore(config.clone(), snapshot.native_session_id, sink)
                .await
            {
                Ok(session) => Some(session),
                Err(error) => {
                    core.record_error(error);
                    core.end(
                        SessionEnded {
                            reason: SessionEndReason::Error,
                            exit_code: None,
                            stderr_tail: None,
                        },
                        EventMeta::daemon(true),
                    );
                    None
                }
            }
        };
        self.insert(config, record.agent, record.created_at, core, agent_session);
        Ok(())
    }

    /// Registers a session; with an agent session, its actor starts.
    fn insert(
        &self,
        config: SessionConfig,
        agent: AgentId,
        created_at: DateTime<Utc>,
        core: Arc<SessionCore>,
        agent_session: Option<Box<dyn AgentSession>>,
    ) {
        let (commands, command_rx) = mpsc::unbounded_channel();
        if let Some(agent_session) = agent_session {
            let (signals, signal_rx) = mpsc::unbounded_channel();
            core.connect_actor(signals);
            tokio::spawn(run_actor(
                core.clone(),
                agent_session,
                command_rx,
                signal_rx,
            ));
        }
        let handle = Arc::new(SessionHandle {
            config: SessionConfig {
                token: None,
                ..config
            },
            agent,
            created_at,
            core,
            commands,
        });
        self.sessions
            .write()
            .expect("sessions lock")
            .insert(handle.config.session_id.clone(), handle);
    }

    fn sessions_dir(&self) -> PathBuf {
        self.settings.data_dir.join("sessions")
    }

    fn reserve(&self, id: &str) -> Result<Reservation<'_>, ApiError> {
        let mut starting = self.starting.lock().expect("starting lock");
        if starting.contains(id)
            || self
                .sessions
                .read()
                .expect("sessions lock")
                .contains_key(id)
        {
            return Err(ApiError::SessionExists(id.to_string()));
        }
        starting.insert(id.to_string());
        Ok(Reservation {
            starting: &self.starting,
            id: id.to_string(),
        })
    }

    fn resolve_cwd(&self, cwd: Option<&str>) -> Result<PathBuf, ApiError> {
        let requested = match cwd {
            None => self.settings.default_cwd.clone(),
            Some(path) if Path::new(path).is_absolute() => PathBuf::from(path),
            Some(path) => {
                return Err(ApiError::InvalidSessionConfig(format!(
                    "cwd `{path}` must be an absolute path"
                )));
            }
        };
        let canonical = requested.canonicalize().map_err(|e| {
            ApiError::InvalidSessionConfig(format!(
                "cwd `{}` is not usable: {e}",
                requested.display()
            ))
        })?;
        if !canonical.is_dir() {
            return Err(ApiError::InvalidSessionConfig(format!(
                "cwd `{}` is not a directory",
                requested.display()
            )));
        }
        if let Some(root) = &self.settings.workspace_root {
            let root = root.canonicalize().unwrap_or_else(|_| root.clone());
            if !canonical.starts_with(&root) {
                return Err(ApiError::InvalidSessionConfig(format!(
                    "cwd `{}` is outside the workspace root `{}`",
                    requested.display(),
                    root.display()
                )));
            }
        }
        Ok(canonical)
    }
}

/// Holds a session id while its agent starts, so a concurrent create with the same id
/// gets 409.
struct Reservation<'a> {
    starting: &'a Mutex<HashSet<String>>,
    id: String,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.starting
            .lock()
            .expect("starting lock")
            .remove(&self.id);
    }
}

fn resolve_permission_mode(request: &CreateSessionRequest) -> Result<PermissionMode, ApiError> {
    let skip = request.dangerously_skip_permissions.unwrap_or(false);
    match (request.permission_mode, skip) {
        (Some(PermissionMode::Bypass), false) => Err(ApiError::InvalidSessionConfig(
            "permissionMode `bypass` needs `dangerouslySkipPermissions: true`".into(),
        )),
        (None, true) => Ok(PermissionMode::Bypass),
        (Some(mode), true) if mode != PermissionMode::Bypass => {
            Err(ApiError::InvalidSessionConfig(format!(
                "`dangerouslySkipPermissions: true` conflicts with permissionMode `{}`",
                serde_json::to_value(mode).expect("serializes")
            )))
        }
        (mode, _) => Ok(mode.unwrap_or_default()),
    }
}
