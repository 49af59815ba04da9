//! The driver trait every agent implements, and what a session start needs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use async_trait::async_trait;
use sandbox_universal::{
    AgentCapabilities, AgentError, AgentId, ModelsResponse, ModesResponse, PermissionMode,
    PermissionReply,
};

use crate::EventSink;
use crate::portable::NativeState;
use sandbox_universal::history::History;

/// Provider credentials and endpoints taken from the daemon's own environment: every
/// variable the agents' manifest names (`credential_vars`, `endpoint_vars`), by name. A
/// session's `token` overrides the key for that session.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ProviderEnv {
    vars: BTreeMap<String, String>,
}

impl ProviderEnv {
    /// Reads every variable the manifest names from the process environment (empty values
    /// count as unset).
    pub fn from_process_env() -> Self {
        let mut env = Self::default();
        for spec in &crate::manifest::MANIFEST {
            for name in spec.credential_vars.iter().chain(spec.endpoint_vars) {
                if let Some(value) = std::env::var(name).ok().filter(|v| !v.is_empty()) {
                    env.vars.insert(name.to_string(), value);
                }
            }
        }
        env
    }

    /// This environment with `name` set to `value` (for embedding and tests).
    pub fn with(mut self, name: &str, value: impl Into<String>) -> Self {
        self.vars.insert(name.to_string(), value.into());
        self
    }

    /// This environment without its credentials (its endpoints stay).
    pub fn without_credentials(mut self) -> Self {
        self.vars.retain(|name, _| {
            !crate::manifest::MANIFEST
                .iter()
                .any(|s| s.credential_vars.contains(&name.as_str()))
        });
        self
    }

    /// The value of `name`, when set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// The session's `token` if it has one, else the first of `vars` that is set.
    pub fn credential(&self, token: Option<&str>, vars: &[&str]) -> Option<String> {
        token
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .or_else(|| vars.iter().find_map(|v| self.get(v)).map(str::to_string))
    }
}

impl std::fmt::Debug for ProviderEnv {
    /// Names every variable; credentials' values are hidden.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secret = |name: &str| {
            crate::manifest::MANIFEST
                .iter()
                .any(|s| s.credential_vars.contains(&name))
        };
        let mut map = f.debug_map();
        for (name, value) in &self.vars {
            if secret(name) {
                map.entry(name, &"<set>");
            } else {
                map.entry(name, value);
            }
        }
        map.finish()
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
    /// Sees every native message exchanged with the agent (the test kit's recorder).
    pub tap: Option<crate::kernel::Tap>,
    /// What the session's creator asked of the agent (instructions, tools, turn limit,
    /// MCP servers, environment), checked against [`AgentDriver::policy`] first.
    pub policy: sandbox_universal::SessionPolicy,
    /// The stored login the session uses (it has no `token` and the daemon's environment
    /// no credential): the driver writes it where the agent reads it in its private home
    /// ([`crate::login::SeededLogin::seed`]) and configures the agent to use it.
    pub login: Option<std::sync::Arc<crate::login::SeededLogin>>,
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
    /// Where it was found.
    pub origin: Option<crate::locate::BinaryOrigin>,
}

/// A client's answer to a question request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuestionAnswer {
    /// One array of selected labels per question.
    Answered(Vec<Vec<String>>),
    /// The user declined.
    Rejected,
}

/// Why a session's configuration cannot be used.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigError {
    /// The request names something the agent does not offer (a 400 for the client).
    Invalid(String),
    /// The agent could not be asked.
    Agent(AgentError),
}

impl From<AgentError> for ConfigError {
    fn from(error: AgentError) -> Self {
        Self::Agent(error)
    }
}

/// One kind of agent. Implementations are cheap to share (`Arc`) across sessions.
#[async_trait]
pub trait AgentDriver: Send + Sync + 'static {
    /// Which agent this drives.
    fn id(&self) -> AgentId;

    /// Display name (the manifest's).
    fn name(&self) -> &'static str {
        crate::context::display_name(self.id())
    }

    /// What the agent supports (truthful: backed by tests).
    fn capabilities(&self) -> AgentCapabilities;

    /// What of a session policy the agent honours, and how. The daemon refuses a
    /// session asking for more (422 naming the field) and enforces what this says the
    /// daemon does (`refused` tools, a `daemon` turn limit).
    fn policy(&self) -> sandbox_universal::PolicySupport {
        sandbox_universal::PolicySupport::default()
    }

    /// Whether the agent binary is installed, and where.
    async fn status(&self) -> BinaryStatus;

    /// The models the agent offers.
    async fn models(&self) -> Result<ModelsResponse, AgentError>;

    /// The agent's modes and permission modes (asked of the agent when it lists them live).
    async fn modes(&self) -> Result<ModesResponse, AgentError>;

    /// Checks a session's model and variant against what the agent offers, before the
    /// session exists. By default a variant must be one the model (or the default model)
    /// lists; a model the listing does not name is accepted (agents such as Claude Code
    /// and Codex take full model ids their listing leaves out) and its variant unchecked.
    async fn check_model(
        &self,
        model: Option<&str>,
        variant: Option<&str>,
    ) -> Result<(), ConfigError> {
        let Some(variant) = variant else {
            return Ok(());
        };
        let models = self.models().await?;
        let Some(id) = model.or(models.default_model.as_deref()) else {
            return Ok(());
        };
        match models.models.iter().find(|m| m.id == id) {
            Some(info) if !info.variants.iter().any(|v| v == variant) => {
                Err(ConfigError::Invalid(format!(
                    "{}'s model `{id}` has no variant `{variant}`; variants: {}",
                    self.name(),
                    if info.variants.is_empty() {
                        "none".to_string()
                    } else {
                        info.variants.join(", ")
                    }
                )))
            }
            _ => Ok(()),
        }
    }

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

    /// What the agent keeps of the session `native_session_id` (run with `config`, not
    /// running a turn) to resume it on another machine: the files [`Self::import_native`]
    /// files again. `native_session_id` is `None` when the agent never reported one.
    async fn export_native(
        &self,
        config: &SessionConfig,
        native_session_id: Option<&str>,
    ) -> Result<NativeState, AgentError> {
        let _ = (config, native_session_id);
        Err(self.not_portable())
    }

    /// Files `state` (this agent's, written for the directory `state.cwd`) where the agent
    /// looks for the session `config` describes (a fresh `state_dir`, perhaps another
    /// `cwd`), rewriting what the agent keys on the working directory, so that
    /// [`Self::restore`] with the answered native session id continues the conversation.
    async fn import_native(
        &self,
        config: &SessionConfig,
        state: &NativeState,
    ) -> Result<Option<String>, AgentError> {
        let _ = (config, state);
        Err(self.not_portable())
    }

    /// The universal → native converter: `history` (another agent's conversation, or this
    /// one's) as this agent's native state for the session `config`, the earlier turns as
    /// its own history (tool calls and results kept where the agent has a form for them,
    /// as text where it has not). [`Self::import_native`] files it.
    async fn native_history(
        &self,
        config: &SessionConfig,
        history: &History,
    ) -> Result<NativeState, AgentError> {
        let _ = (config, history);
        Err(self.not_portable())
    }

    /// The error of a portable-session call the agent does not support.
    fn not_portable(&self) -> AgentError {
        AgentError::UnsupportedAgent {
            message: format!(
                "{} sessions cannot move between daemons or agents",
                self.name()
            ),
        }
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
    async fn send_message(
        &mut self,
        turn_id: &str,
        message: &crate::UserMessage,
    ) -> Result<(), AgentError>;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_env_is_keyed_and_hides_credentials() {
        let env = ProviderEnv::default()
            .with("OPENAI_API_KEY", "sk-secret")
            .with("OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
        assert_eq!(env.get("OPENAI_BASE_URL"), Some("http://127.0.0.1:9/v1"));
        assert_eq!(env.get("ANTHROPIC_API_KEY"), None);
        assert_eq!(
            env.credential(None, &["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]),
            Some("sk-secret".into())
        );
        assert_eq!(
            env.credential(Some("tok"), &["OPENAI_API_KEY"]),
            Some("tok".into())
        );
        let shown = format!("{env:?}");
        assert!(
            !shown.contains("sk-secret") && shown.contains("127.0.0.1"),
            "{shown}"
        );
    }
}
