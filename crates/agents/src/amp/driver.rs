//! The Amp driver: capabilities, models and modes, start and restore on the kernel's
//! runner.

use std::sync::Arc;

use async_trait::async_trait;
use sandbox_universal::{
    AgentCapabilities, AgentError, AgentId, AgentModeInfo, EventPayload, ModelsResponse,
    ModesResponse, PermissionMode, SessionStarted,
};

use super::convert::AmpProtocol;
use super::launch::Launch;
use super::launch::{self, AmpDirs};
use super::relay::Channel;
use crate::context::DriverContext;
use crate::kernel::per_turn::{Ask, TurnSession};
use crate::{
    AgentDriver, AgentEvent, AgentSession, BinaryStatus, ConfigError, EventSink, SessionConfig,
};
use tokio::sync::mpsc::Receiver;

/// The Amp driver.
pub struct AmpDriver {
    context: Arc<DriverContext>,
}

impl AmpDriver {
    /// A driver using the daemon's binary locator and provider environment.
    pub fn new(context: Arc<DriverContext>) -> Self {
        Self { context }
    }

    /// Everything a session's turns are started with, and the asks of its permission
    /// channel; fails fast without a key (Amp would start a browser login and wait
    /// forever).
    async fn launch(&self, session: &SessionConfig) -> Result<(Launch, Receiver<Ask>), AgentError> {
        let program = self
            .context
            .session_binary(AgentId::Amp, session.agent_version.as_deref())
            .await?;
        let env = &self.context.provider_env;
        let key = env.credential(session.token.as_deref(), &["AMP_API_KEY"]);
        if key.is_none() && session.login.is_none() {
            return Err(AgentError::TokenError {
                message: "no Amp API key: pass the session's `token`, set AMP_API_KEY for the daemon, or store a login (`sandbox-daemon credentials import --agent amp`)".into(),
            });
        }
        let dirs = AmpDirs::new(&session.state_dir);
        if key.is_none()
            && let Some(login) = &session.login
        {
            login
                .seed_home(&dirs.home)
                .map_err(|e| AgentError::SpawnFailed {
                    message: format!("writing the session's stored login: {e}"),
                })?;
        }
        dirs.write(
            session.permission_mode,
            &self.context.executable,
            &session.policy,
        )
        .map_err(|e| AgentError::SpawnFailed {
            message: format!("writing Amp's settings: {e}"),
        })?;
        let (channel, asks) = Channel::open().map_err(|e| AgentError::SpawnFailed {
            message: format!("opening the permission channel for Amp: {e}"),
        })?;
        let launch = Launch {
            program,
            cwd: session.cwd.clone(),
            dirs,
            key,
            url: env.get("AMP_URL").map(str::to_string),
            mode: session.agent_mode.clone(),
            channel,
            env: session.policy.env.clone(),
        };
        Ok((launch, asks))
    }

    /// A session on `launch` (whose channel's asks are `asks`), continuing `thread`.
    fn session(
        &self,
        (launch, asks): (Launch, Receiver<Ask>),
        config: &SessionConfig,
        sink: EventSink,
        thread: Option<String>,
    ) -> TurnSession<Launch> {
        let protocol = AmpProtocol::new(launch.cwd.display().to_string(), thread.clone());
        TurnSession::new(
            launch,
            protocol,
            sink,
            thread,
            Some(asks),
            config.tap.clone(),
        )
    }
}

#[async_trait]
impl AgentDriver for AmpDriver {
    fn id(&self) -> AgentId {
        AgentId::Amp
    }

    /// Amp's agent loop runs on Amp's servers, so no test here completes a turn with the real
    /// Amp: each `true` flag is proven with a stand-in that replays Amp's documented stream on
    /// its documented flags (`crates/daemon/tests/all/amp_e2e/`) and by converter goldens from
    /// Amp's documented message shapes. No token deltas, no usage in this Amp's `result`, no
    /// questions, and models are Amp's choice per mode.
    fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities {
            text_messages: true,
            streaming_deltas: false,
            reasoning: true,
            tool_calls: true,
            command_execution: true,
            file_changes: true,
            plans: false,
            permissions: true,
            permission_always: true,
            questions: false,
            plan_approval: false,
            cancel: true,
            multi_turn: true,
            resume: true,
            usage: false,
            models: false,
            variants: false,
            agent_modes: true,
            validate_token: false,
            system_prompt: false,
            // Honoured (see `policy()`), but no scenario can prove them offline: the
            // model loop is on Amp's servers and the stand-in does not model
            // `amp.tools.disable` or MCP. `amp_e2e::policy` checks the settings file the
            // real binary starts the session's MCP servers from.
            tool_lists: false,
            max_turns: false,
            mcp_servers: false,
            images: false,
            session_env: true,
            host_tools: false,
        }
    }

    /// Built-in tools, MCP servers and env, in its settings file: see [`super::policy`].
    fn policy(&self) -> sandbox_universal::PolicySupport {
        super::policy::support()
    }

    async fn status(&self) -> BinaryStatus {
        self.context.status(AgentId::Amp).await
    }

    /// Amp offers no model list: it chooses the model by mode, on its servers.
    async fn models(&self) -> Result<ModelsResponse, AgentError> {
        Ok(ModelsResponse {
            models: Vec::new(),
            default_model: None,
        })
    }

    async fn modes(&self) -> Result<ModesResponse, AgentError> {
        Ok(ModesResponse {
            modes: launch::MODES
                .iter()
                .map(|(id, description)| AgentModeInfo {
                    id: (*id).into(),
                    name: (*id).into(),
                    description: (*description).into(),
                })
                .collect(),
            default_mode: Some(launch::DEFAULT_MODE.into()),
            permission_modes: PermissionMode::ALL.to_vec(),
        })
    }

    async fn check_model(
        &self,
        model: Option<&str>,
        variant: Option<&str>,
    ) -> Result<(), ConfigError> {
        match (model, variant) {
            (Some(model), _) => Err(ConfigError::Invalid(format!(
                "Amp chooses its model by mode, on its servers: pass `agentMode` (low, medium, high, ultra) instead of model `{model}`"
            ))),
            (None, Some(variant)) => Err(ConfigError::Invalid(format!(
                "Amp has no variants; got `{variant}`"
            ))),
            (None, None) => Ok(()),
        }
    }

    async fn start(
        &self,
        session: SessionConfig,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let launch = self.launch(&session).await?;
        let version = self.context.locator.version_of(&launch.0.program).await;
        let amp = self.session(launch, &session, sink.clone(), None);
        sink.emit(AgentEvent::native(
            EventPayload::SessionStarted(SessionStarted {
                agent: AgentId::Amp,
                model: None,
                agent_mode: session
                    .agent_mode
                    .or_else(|| Some(launch::DEFAULT_MODE.into())),
                permission_mode: Some(session.permission_mode),
                cwd: Some(session.cwd.display().to_string()),
                agent_version: version,
            }),
            None,
        ));
        Ok(Box::new(amp))
    }

    /// The thread lives on Amp's servers: the next message continues it with
    /// `amp threads continue <id>`.
    async fn restore(
        &self,
        session: SessionConfig,
        native_session_id: Option<String>,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let launch = self.launch(&session).await?;
        Ok(Box::new(self.session(
            launch,
            &session,
            sink,
            native_session_id,
        )))
    }

    /// Amp keeps its threads on its own servers: the thread id is all that travels (the
    /// importing daemon's Amp needs the same account).
    async fn export_native(
        &self,
        config: &SessionConfig,
        native_session_id: Option<&str>,
    ) -> Result<crate::NativeState, AgentError> {
        Ok(crate::NativeState {
            native_session_id: native_session_id.map(str::to_string),
            cwd: config.cwd.display().to_string(),
            files: Vec::new(),
        })
    }

    async fn import_native(
        &self,
        _config: &SessionConfig,
        state: &crate::NativeState,
    ) -> Result<Option<String>, AgentError> {
        Ok(state.native_session_id.clone())
    }

    /// A thread cannot be written from elsewhere: Amp's history lives on its servers.
    async fn native_history(
        &self,
        _config: &SessionConfig,
        _history: &sandbox_universal::history::History,
    ) -> Result<crate::NativeState, AgentError> {
        Err(AgentError::UnsupportedAgent {
            message: "Amp keeps its threads on its own servers, so another agent's conversation cannot become an Amp thread".into(),
        })
    }
}
