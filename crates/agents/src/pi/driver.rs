//! The Pi driver: a `pi --mode rpc` process per session, models asked of Pi itself.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use sandbox_universal::history::History;
use sandbox_universal::{
    AgentCapabilities, AgentError, AgentId, EventPayload, IMAGE_TYPES, McpTransport, ModelInfo,
    ModelsResponse, ModesResponse, PermissionMode, PolicySupport, SessionStarted, SystemPromptMode,
    ToolRestriction, TurnLimiter,
};
use serde_json::{Value, json};

use super::convert::Converter;
use super::launch::PiDirs;
use super::launch::{Launch, REQUEST_LIMIT};
use super::portable;
use crate::cache::BinaryCache;
use crate::context::DriverContext;
use crate::kernel::ChildSession;
use crate::portable::NativeState;
use crate::{
    AgentDriver, AgentEvent, AgentSession, BinaryStatus, ConfigError, EventSink, SessionConfig,
};

/// Pi's thinking levels (the session's `variant`), for models that reason.
pub const THINKING_LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high", "xhigh"];

/// The Pi driver.
pub struct PiDriver {
    context: Arc<DriverContext>,
    models: BinaryCache<ModelsResponse>,
}

impl PiDriver {
    /// A driver using the daemon's binary locator and provider environment.
    pub fn new(context: Arc<DriverContext>) -> Self {
        Self {
            context,
            models: BinaryCache::default(),
        }
    }

    fn binary(&self) -> Result<PathBuf, AgentError> {
        self.context.binary(AgentId::Pi)
    }

    async fn launch(&self, session: &SessionConfig) -> Result<Launch, AgentError> {
        let program = self
            .context
            .session_binary(AgentId::Pi, session.agent_version.as_deref())
            .await?;
        let dirs = PiDirs::new(&session.state_dir);
        dirs.write(&self.context.provider_env, session.permission_mode)
            .and_then(|()| dirs.write_policy(&session.policy))
            .map_err(|e| AgentError::SpawnFailed {
                message: format!("writing pi's agent dir: {e}"),
            })?;
        // A stored login is Pi's `auth.json` in its agent dir, which it reads (and
        // refreshes) before the keys `models.json` names.
        if let Some(login) = &session.login {
            login
                .seed(&dirs.agent.join("auth.json"))
                .map_err(|e| AgentError::SpawnFailed {
                    message: format!("writing the session's stored login: {e}"),
                })?;
        }
        Ok(Launch {
            program,
            cwd: session.cwd.clone(),
            dirs,
            env: self.context.provider_env.clone(),
            token: session.token.clone(),
            mode: session.permission_mode,
            model: session.model.clone(),
            thinking: session.variant.clone(),
            session: None,
            policy: session.policy.clone(),
        })
    }

    /// Asks a throw-away Pi (the daemon's providers, no session) for its models.
    async fn list_models(&self, binary: PathBuf) -> Result<ModelsResponse, AgentError> {
        let state = tempfile::tempdir().map_err(|e| AgentError::SpawnFailed {
            message: format!("a directory for pi: {e}"),
        })?;
        let dirs = PiDirs::new(state.path());
        dirs.write(&self.context.provider_env, PermissionMode::Bypass)
            .map_err(|e| AgentError::SpawnFailed {
                message: format!("writing pi's agent dir: {e}"),
            })?;
        let launch = Launch {
            program: binary,
            cwd: state.path().to_path_buf(),
            dirs,
            env: self.context.provider_env.clone(),
            token: None,
            mode: PermissionMode::Bypass,
            model: None,
            thinking: None,
            session: None,
            policy: Default::default(),
        };
        let cwd = launch.cwd.display().to_string();
        let (mut pi, state) = ChildSession::start(launch, Converter::new(cwd), None, None).await?;
        let answer = pi
            .request("get_available_models", json!({}), REQUEST_LIMIT)
            .await;
        pi.shutdown().await;
        Ok(models_of(
            &answer?["data"]["models"],
            &state["data"]["model"],
        ))
    }
}

/// Pi's models as `provider/id`, with thinking levels for the ones that reason.
fn models_of(models: &Value, default: &Value) -> ModelsResponse {
    let id = |m: &Value| Some(format!("{}/{}", m["provider"].as_str()?, m["id"].as_str()?));
    ModelsResponse {
        models: models
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| {
                Some(ModelInfo {
                    id: id(m)?,
                    name: m["name"].as_str().unwrap_or_default().to_string(),
                    variants: if m["reasoning"] == true {
                        THINKING_LEVELS.iter().map(|l| l.to_string()).collect()
                    } else {
                        Vec::new()
                    },
                    default_variant: None,
                })
            })
            .collect(),
        default_model: id(default),
    }
}

#[async_trait]
impl AgentDriver for PiDriver {
    fn id(&self) -> AgentId {
        AgentId::Pi
    }

    /// Every `true` flag is observed against the real CLI in
    /// `crates/daemon/tests/all/pi_e2e/`.
    fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities {
            text_messages: true,
            streaming_deltas: true,
            reasoning: true,
            tool_calls: true,
            command_execution: true,
            file_changes: true,
            plans: false,
            permissions: true,
            permission_always: true,
            // Extension dialogs (`select`/`input`) convert to questions, but Pi's own tools
            // ask none and the daemon ships no question tool.
            questions: true,
            plan_approval: false,
            cancel: true,
            multi_turn: true,
            resume: true,
            usage: true,
            models: true,
            variants: true,
            agent_modes: false,
            validate_token: false,
            system_prompt: true,
            tool_lists: true,
            max_turns: true,
            mcp_servers: true,
            images: true,
            session_env: true,
            host_tools: true,
        }
    }

    /// Pi takes a system prompt either way, an allow-list of its built-in tools, images
    /// in its `prompt` command and an environment; it has no turn limit (the daemon counts
    /// its model calls). It has no MCP of its own (its README: "No MCP."): HTTP MCP servers
    /// reach it through the daemon's bridge extension ([`super::mcp`]), which leaves out
    /// the MCP tools the session takes away, and so do host tools; stdio servers are
    /// refused.
    fn policy(&self) -> PolicySupport {
        let removed = ["read", "write", "edit", "shell", "glob", "grep", "mcp"]
            .map(|tool| (tool.to_string(), ToolRestriction::Removed));
        let absent =
            ["webFetch", "webSearch"].map(|tool| (tool.to_string(), ToolRestriction::Absent));
        PolicySupport {
            system_prompt_modes: vec![SystemPromptMode::Append, SystemPromptMode::Replace],
            tools: removed.into_iter().chain(absent).collect(),
            max_turns: Some(TurnLimiter::Daemon),
            mcp_transports: vec![McpTransport::Http],
            image_types: IMAGE_TYPES.map(str::to_string).to_vec(),
            env: true,
            host_tools: true,
            ask_user: true,
        }
    }

    async fn status(&self) -> BinaryStatus {
        self.context.status(AgentId::Pi).await
    }

    async fn models(&self) -> Result<ModelsResponse, AgentError> {
        let binary = self.binary()?;
        self.models
            .get(&binary, || self.list_models(binary.clone()))
            .await
    }

    async fn modes(&self) -> Result<ModesResponse, AgentError> {
        Ok(ModesResponse {
            modes: Vec::new(),
            default_mode: None,
            permission_modes: PermissionMode::ALL.to_vec(),
        })
    }

    async fn check_model(
        &self,
        model: Option<&str>,
        variant: Option<&str>,
    ) -> Result<(), ConfigError> {
        if model.is_none() && variant.is_none() {
            return Ok(());
        }
        let models = self.models().await?;
        let id = model.or(models.default_model.as_deref());
        let info = id.and_then(|id| models.models.iter().find(|m| m.id == id));
        match (model, info, variant) {
            (Some(model), None, _) => Err(ConfigError::Invalid(format!(
                "Pi offers no model `{model}` with the providers this daemon has credentials for; see GET /agents/pi/models"
            ))),
            (_, Some(info), Some(variant)) if !info.variants.iter().any(|v| v == variant) => {
                Err(ConfigError::Invalid(format!(
                    "Pi's model `{}` has no thinking level `{variant}`; levels: {}",
                    info.id,
                    if info.variants.is_empty() {
                        "none (it does not reason)".to_string()
                    } else {
                        info.variants.join(", ")
                    }
                )))
            }
            _ => Ok(()),
        }
    }

    async fn start(
        &self,
        session: SessionConfig,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let launch = self.launch(&session).await?;
        let version = self.context.locator.version_of(&launch.program).await;
        let cwd = launch.cwd.display().to_string();
        let (pi, _) = ChildSession::start(
            launch,
            Converter::new(cwd)
                .with_max_turns(session.policy.max_turns)
                .with_mcp_servers(session.policy.mcp_servers.keys().cloned().collect()),
            Some(sink.clone()),
            session.tap.clone(),
        )
        .await?;
        if let Some(id) = pi.native_session_id() {
            sink.set_native_session_id(&id);
        }
        pi.started(AgentEvent::native(
            EventPayload::SessionStarted(SessionStarted {
                agent: AgentId::Pi,
                model: session.model,
                agent_mode: None,
                permission_mode: Some(session.permission_mode),
                cwd: Some(session.cwd.display().to_string()),
                agent_version: version,
            }),
            None,
        ));
        Ok(Box::new(pi))
    }

    /// Pi's session file (see [`super::portable`]).
    async fn export_native(
        &self,
        config: &SessionConfig,
        native_session_id: Option<&str>,
    ) -> Result<NativeState, AgentError> {
        portable::export(
            &config.state_dir,
            &config.cwd.display().to_string(),
            native_session_id,
        )
    }

    /// Files the session file in the session's `--session-dir`, its header moved to the
    /// session's cwd.
    async fn import_native(
        &self,
        config: &SessionConfig,
        state: &NativeState,
    ) -> Result<Option<String>, AgentError> {
        portable::import(&config.state_dir, &config.cwd.display().to_string(), state).map(Some)
    }

    /// A new session file of `history`, its assistant messages naming the session's model
    /// (without one, Pi resumes on its default model as a new session would).
    async fn native_history(
        &self,
        config: &SessionConfig,
        history: &History,
    ) -> Result<NativeState, AgentError> {
        Ok(portable::native_history(
            history,
            &config.cwd.display().to_string(),
            config.model.as_deref(),
        ))
    }

    /// Pi's session file lives on in the session's state dir: the next message starts a
    /// process that resumes it (`--session <id>`).
    async fn restore(
        &self,
        session: SessionConfig,
        native_session_id: Option<String>,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let mut launch = self.launch(&session).await?;
        launch.session = native_session_id;
        let cwd = launch.cwd.display().to_string();
        Ok(Box::new(ChildSession::restored(
            launch,
            Converter::new(cwd)
                .with_max_turns(session.policy.max_turns)
                .with_mcp_servers(session.policy.mcp_servers.keys().cloned().collect()),
            sink,
            session.tap.clone(),
        )))
    }
}
