//! The driver trait every agent implements, and what a session start needs.

use std::path::PathBuf;

use async_trait::async_trait;
use sandbox_universal::{
    AgentCapabilities, AgentError, AgentId, ModelsResponse, ModesResponse, PermissionMode,
    PermissionReply,
};

use crate::EventSink;

/// Provider credentials and endpoints taken from the daemon's own environment
/// (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `CLAUDE_CODE_OAUTH_TOKEN`, `OPENAI_API_KEY`,
/// `OPENAI_BASE_URL`). A session's `token` overrides the key for that session.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ProviderEnv {
    /// `ANTHROPIC_API_KEY`.
    pub anthropic_api_key: Option<String>,
    /// `ANTHROPIC_BASE_URL`.
    pub anthropic_base_url: Option<String>,
    /// `CLAUDE_CODE_OAUTH_TOKEN`.
    pub claude_code_oauth_token: Option<String>,
    /// `OPENAI_API_KEY`.
    pub openai_api_key: Option<String>,
    /// `OPENAI_BASE_URL`.
    pub openai_base_url: Option<String>,
}

impl ProviderEnv {
    /// Reads the standard variables from the process environment (empty values count as unset).
    pub fn from_process_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Self {
            anthropic_api_key: var("ANTHROPIC_API_KEY"),
            anthropic_base_url: var("ANTHROPIC_BASE_URL"),
            claude_code_oauth_token: var("CLAUDE_CODE_OAUTH_TOKEN"),
            openai_api_key: var("OPENAI_API_KEY"),
            openai_base_url: var("OPENAI_BASE_URL"),
        }
    }
}

impl std::fmt::Debug for ProviderEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = |v: &Option<String>| if v.is_some() { "<set>" } else { "<unset>" };
        f.debug_struct("ProviderEnv")
            .field("anthropic_api_key", &set(&self.anthropic_api_key))
            .field("anthropic_base_url", &self.anthropic_base_url)
            .field(
                "claude_code_oauth_token",
                &set(&self.claude_code_oauth_token),
            )
            .field("openai_api_key", &set(&self.openai_api_key))
            .field("openai_base_url", &self.openai_base_url)
            .finish()
    }
}

/// The credential a session uses, after applying the session's `token` override.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A provider API key.
    ApiKey(String),
    /// An OAuth token (Claude subscriptions).
    OAuthToken(String),
    /// Nothing configured.
    None,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ApiKey(_) => f.write_str("ApiKey(<redacted>)"),
            Self::OAuthToken(_) => f.write_str("OAuthToken(<redacted>)"),
            Self::None => f.write_str("None"),
        }
    }
}

/// Everything a driver needs to start one session.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The daemon session id.
    pub session_id: String,
    /// Agent mode (validated against the driver's modes).
    pub agent_mode: Option<String>,
    /// Permission mode.
    pub permission_mode: PermissionMode,
    /// Model id.
    pub model: Option<String>,
    /// Model variant.
    pub variant: Option<String>,
    /// The session's credential override.
    pub token: Option<String>,
    /// Check the credential before reporting healthy.
    pub validate_token: bool,
    /// Let the agent act without asking.
    pub dangerously_skip_permissions: bool,
    /// Requested agent version.
    pub agent_version: Option<String>,
    /// The agent's working directory (exists, absolute).
    pub cwd: PathBuf,
    /// A private directory for this session (agent HOME / config), created by the daemon.
    pub state_dir: PathBuf,
}

/// Whether and where an agent binary was found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BinaryStatus {
    /// A usable binary exists.
    pub installed: bool,
    /// Its version, when it could be read.
    pub version: Option<String>,
    /// Its path.
    pub path: Option<PathBuf>,
}

/// A client's answer to a question request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuestionAnswer {
    /// One array of selected labels per question.
    Answered(Vec<Vec<String>>),
    /// The user declined.
    Rejected,
}

/// One kind of agent. Implementations are cheap to share (`Arc`) across sessions.
#[async_trait]
pub trait AgentDriver: Send + Sync + 'static {
    /// Which agent this drives.
    fn id(&self) -> AgentId;

    /// Display name.
    fn name(&self) -> &'static str;

    /// Whether this build can run sessions of the agent.
    fn supported(&self) -> bool {
        true
    }

    /// What the agent supports (truthful: backed by tests).
    fn capabilities(&self) -> AgentCapabilities;

    /// Whether the agent binary is installed, and where.
    async fn status(&self) -> BinaryStatus;

    /// The models the agent offers.
    async fn models(&self) -> Result<ModelsResponse, AgentError>;

    /// The agent's modes and permission modes.
    fn modes(&self) -> ModesResponse;

    /// Starts the agent for one session. Events flow through `sink` from now on; the
    /// returned session takes the client's commands.
    async fn start(
        &self,
        config: SessionConfig,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError>;

    /// Reattaches to a session the daemon held before it restarted. The agent's private
    /// state (`config.state_dir`) is as the agent left it, and `native_session_id` is the
    /// agent's own session id from the log, if it had one. Must not emit `sessionStarted`;
    /// the next message continues the conversation. Drivers that cannot resume keep this
    /// default, and the daemon ends the session with the error.
    async fn restore(
        &self,
        config: SessionConfig,
        native_session_id: Option<String>,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let _ = (config, native_session_id, sink);
        Err(AgentError::UnsupportedAgent {
            message: format!(
                "{} sessions cannot be resumed after a daemon restart",
                self.name()
            ),
        })
    }
}

/// A running session of one agent, owned by the daemon's session actor.
///
/// The daemon emits `turnStarted` and the user's message item itself before calling
/// [`AgentSession::send_message`]; the driver must eventually emit `turnEnded` with the same
/// turn id (the daemon synthesises one if the session ends first).
#[async_trait]
pub trait AgentSession: Send {
    /// The agent's own session id, once known.
    fn native_session_id(&self) -> Option<String>;

    /// Starts a turn with the user's message. Returns once the agent has the message; the
    /// turn runs on in the background.
    async fn send_message(&mut self, turn_id: &str, message: &str) -> Result<(), AgentError>;

    /// Interrupts the running turn; the driver ends it with stop reason `cancelled`.
    async fn cancel(&mut self) -> Result<(), AgentError>;

    /// Answers a pending permission request (by its universal id).
    async fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<(), AgentError>;

    /// Answers or rejects a pending question request (by its universal id).
    async fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<(), AgentError>;

    /// Stops the agent. The daemon emits `sessionEnded` afterwards.
    async fn shutdown(&mut self);
}

impl ProviderEnv {
    /// The Anthropic credential for a session: its `token` (an OAuth token when it starts
    /// with `sk-ant-oat`), else `ANTHROPIC_API_KEY`, else `CLAUDE_CODE_OAUTH_TOKEN`.
    pub fn anthropic_credentials(&self, token: Option<&str>) -> Credentials {
        match token.filter(|t| !t.is_empty()) {
            Some(t) if t.starts_with("sk-ant-oat") => Credentials::OAuthToken(t.to_string()),
            Some(t) => Credentials::ApiKey(t.to_string()),
            None => match (&self.anthropic_api_key, &self.claude_code_oauth_token) {
                (Some(key), _) => Credentials::ApiKey(key.clone()),
                (None, Some(oauth)) => Credentials::OAuthToken(oauth.clone()),
                (None, None) => Credentials::None,
            },
        }
    }

    /// The OpenAI credential for a session: its `token`, else `OPENAI_API_KEY`.
    pub fn openai_credentials(&self, token: Option<&str>) -> Credentials {
        match token.filter(|t| !t.is_empty()) {
            Some(t) => Credentials::ApiKey(t.to_string()),
            None => self
                .openai_api_key
                .clone()
                .map_or(Credentials::None, Credentials::ApiKey),
        }
    }
}
