//! The Claude Code driver: capabilities, models and modes, start and restore on the kernel's
//! runner.

use crate::cache::BinaryCache;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use sandbox_universal::{
    AgentCapabilities, AgentError, AgentId, AgentModeInfo, EventPayload, ModelsResponse,
    ModesResponse, PermissionMode, SessionStarted,
};

use super::convert::Converter;
use super::launch::{self, ClaudeLaunch, LaunchPlan};
use super::policy;
use super::portable;
use super::probe;
use crate::context::DriverContext;
use crate::kernel::ChildSession;
use crate::portable::NativeState;
use crate::validate::{ProviderApi, validate};
use crate::{AgentDriver, AgentEvent, AgentSession, BinaryStatus, EventSink, SessionConfig};
use sandbox_universal::history::History;

/// The built-in agents of the pinned CLI (`--agent <name>`), offered as agent modes. A
/// test compares them with what the installed CLI reports.
pub const AGENT_MODES: &[(&str, &str)] = &[
    (
        "claude",
        "Catch-all for any task that doesn't fit a more specific agent.",
    ),
    ("Explore", "Fast read-only search agent for locating code."),
    (
        "general-purpose",
        "Researches complex questions, searches for code and executes multi-step tasks.",
    ),
    (
        "Plan",
        "Software architect agent for designing implementation plans (read-only tools).",
    ),
    (
        "statusline-setup",
        "Configures the user's Claude Code status line setting.",
    ),
];

/// The Claude Code driver.
pub struct ClaudeDriver {
    context: Arc<DriverContext>,
    models: BinaryCache<ModelsResponse>,
}

impl ClaudeDriver {
    /// A driver using the daemon's binary locator and provider environment.
    pub fn new(context: Arc<DriverContext>) -> Self {
        Self {
            context,
            models: BinaryCache::default(),
        }
    }

    fn binary(&self) -> Result<PathBuf, AgentError> {
        Self::usable(self.context.binary(AgentId::Claude)?)
    }

    /// The binary a session runs: its requested version, else the located one.
    async fn session_binary(&self, config: &SessionConfig) -> Result<PathBuf, AgentError> {
        Self::usable(
            self.context
                .session_binary(AgentId::Claude, config.agent_version.as_deref())
                .await?,
        )
    }

    fn usable(path: PathBuf) -> Result<PathBuf, AgentError> {
        if !path.is_file() {
            return Err(AgentError::NotInstalled {
                message: format!("Claude Code is not at {}", path.display()),
            });
        }
        Ok(path)
    }

    /// The launch plan of a session: binary, credential (the session's `token`, else the
    /// daemon's environment), base URL, and the private HOME it creates.
    fn plan(&self, config: &SessionConfig, program: PathBuf) -> Result<LaunchPlan, AgentError> {
        let provider = &self.context.provider_env;
        let credentials = launch::session_credentials(provider, config);
        let home = launch::home_dir(&config.state_dir);
        std::fs::create_dir_all(&home).map_err(|e| AgentError::SpawnFailed {
            message: format!("creating the session's private HOME: {e}"),
        })?;
        launch::seed_login(config, &home).map_err(|e| AgentError::SpawnFailed {
            message: format!("writing the session's stored login: {e}"),
        })?;
        let plan = LaunchPlan::new(
            program,
            config,
            &credentials,
            launch::base_url(provider),
            launch::running_as_root(),
        );
        plan.write_files().map_err(|e| AgentError::SpawnFailed {
            message: format!("writing the session's Claude files: {e}"),
        })?;
        Ok(plan)
    }
}

#[async_trait]
impl AgentDriver for ClaudeDriver {
    fn id(&self) -> AgentId {
        AgentId::Claude
    }

    fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities {
            text_messages: true,
            streaming_deltas: true,
            reasoning: true,
            tool_calls: true,
            command_execution: true,
            file_changes: true,
            // The pinned CLI has no TodoWrite tool.
            plans: false,
            permissions: true,
            permission_always: true,
            questions: true,
            // ExitPlanMode (deferred behind ToolSearch in the pinned CLI) asks the host;
            // the end-to-end suite accepts and rejects plans.
            plan_approval: true,
            cancel: true,
            multi_turn: true,
            resume: true,
            usage: true,
            models: true,
            variants: true,
            agent_modes: true,
            validate_token: true,
            system_prompt: true,
            tool_lists: true,
            max_turns: true,
            mcp_servers: true,
            images: true,
            session_env: true,
            host_tools: true,
        }
    }

    /// Everything, by Claude's own means: see [`policy::support`].
    fn policy(&self) -> sandbox_universal::PolicySupport {
        policy::support()
    }

    async fn status(&self) -> BinaryStatus {
        self.context.status(AgentId::Claude).await
    }

    async fn models(&self) -> Result<ModelsResponse, AgentError> {
        let path = self.binary()?;
        self.models
            .get(&path, || async {
                let init = probe::initialize(&path).await?;
                Ok(probe::models(&init))
            })
            .await
    }

    async fn modes(&self) -> Result<ModesResponse, AgentError> {
        Ok(ModesResponse {
            modes: AGENT_MODES
                .iter()
                .map(|(id, description)| AgentModeInfo {
                    id: (*id).into(),
                    name: (*id).into(),
                    description: (*description).into(),
                })
                .collect(),
            default_mode: None,
            permission_modes: PermissionMode::ALL.to_vec(),
        })
    }

    async fn start(
        &self,
        config: SessionConfig,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let program = self.session_binary(&config).await?;
        // A stored login file is checked by the agent itself: its tokens may need a
        // refresh only the agent knows how to make.
        if config.validate_token && !config.login.as_ref().is_some_and(|l| l.is_file()) {
            let provider = &self.context.provider_env;
            let credentials = launch::session_credentials(provider, &config);
            validate(
                ProviderApi::Anthropic,
                &credentials,
                launch::base_url(provider),
            )
            .await?;
        }
        let native_id = uuid::Uuid::new_v4().to_string();
        let cwd = config.cwd.display().to_string();
        let mut converter = Converter::new(&cwd);
        converter.set_native_session_id(&native_id);
        converter.set_policy(&config.policy);
        let launch = ClaudeLaunch::new(self.plan(&config, program)?, native_id.clone());
        let (session, init) =
            ChildSession::start(launch, converter, Some(sink.clone()), config.tap.clone()).await?;
        sink.set_native_session_id(&native_id);
        let model = config
            .model
            .clone()
            .or_else(|| probe::resolved_model(&init, "default"));
        session.started(AgentEvent::native(
            EventPayload::SessionStarted(SessionStarted {
                agent: AgentId::Claude,
                model,
                agent_mode: config.agent_mode.clone(),
                permission_mode: Some(config.permission_mode),
                cwd: Some(cwd),
                agent_version: init["claude_code_version"].as_str().map(str::to_string),
            }),
            None,
        ));
        Ok(Box::new(session))
    }

    /// The session's transcript (see [`super::portable`]).
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

    /// Files the transcript under the key of the session's cwd, its lines moved there.
    async fn import_native(
        &self,
        config: &SessionConfig,
        state: &NativeState,
    ) -> Result<Option<String>, AgentError> {
        portable::import(&config.state_dir, &config.cwd.display().to_string(), state).map(Some)
    }

    /// A new transcript of `history` (see [`portable::native_history`]).
    async fn native_history(
        &self,
        config: &SessionConfig,
        history: &History,
    ) -> Result<NativeState, AgentError> {
        Ok(portable::native_history(
            history,
            &config.cwd.display().to_string(),
        ))
    }

    /// After a daemon restart: no process is started now; the next message spawns one
    /// with `--resume <native id>` (the conversation is in the session's private
    /// `CLAUDE_CONFIG_DIR`).
    async fn restore(
        &self,
        config: SessionConfig,
        native_session_id: Option<String>,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let native_id = native_session_id.ok_or_else(|| {
            AgentError::protocol("no Claude session id was recorded, so there is nothing to resume")
        })?;
        let cwd = config.cwd.display().to_string();
        let program = self.session_binary(&config).await?;
        let mut converter = Converter::new(&cwd);
        converter.set_native_session_id(&native_id);
        converter.set_policy(&config.policy);
        let launch = ClaudeLaunch::new(self.plan(&config, program)?, native_id);
        Ok(Box::new(ChildSession::restored(
            launch,
            converter,
            sink,
            config.tap.clone(),
        )))
    }
}
