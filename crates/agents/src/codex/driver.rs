//! The Codex driver: capabilities, models and modes, start and restore on the kernel's
//! runner.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use sandbox_universal::{
    AgentCapabilities, AgentError, AgentId, EventPayload, ModelsResponse, ModesResponse,
    PermissionMode, SessionStarted,
};

use super::convert::Converter;
use super::launch::{self, CodexLaunch, TurnSettings};
use super::models::ModelCache;
use super::portable;
use crate::context::DriverContext;
use crate::kernel::ChildSession;
use crate::validate::{ProviderApi, validate};
use crate::{
    AgentDriver, AgentEvent, AgentSession, BinaryStatus, Credentials, EventSink, NativeState,
    SessionConfig,
};
use sandbox_universal::history::History;

/// The Codex driver.
#[derive(Debug)]
pub struct CodexDriver {
    context: Arc<DriverContext>,
    models: ModelCache,
}

impl CodexDriver {
    /// A driver using the daemon's binary locator and provider environment.
    pub fn new(context: Arc<DriverContext>) -> Self {
        Self {
            context,
            models: ModelCache::default(),
        }
    }

    fn binary(&self) -> Result<PathBuf, AgentError> {
        self.context.binary(AgentId::Codex)
    }

    fn base_url(&self) -> String {
        self.context
            .provider_env
            .get("OPENAI_BASE_URL")
            .unwrap_or(launch::DEFAULT_OPENAI_BASE_URL)
            .to_string()
    }

    /// The session's `token`, else the manifest's credential variables (`OPENAI_API_KEY`).
    fn credentials(&self, token: Option<&str>) -> Credentials {
        self.context
            .provider_env
            .credential(token, crate::manifest::spec(AgentId::Codex).credential_vars)
            .map_or(Credentials::None, Credentials::ApiKey)
    }
}

#[async_trait]
impl AgentDriver for CodexDriver {
    fn id(&self) -> AgentId {
        AgentId::Codex
    }

    /// Every `true` flag is observed against the real CLI in `crates/daemon/tests/all/codex_e2e/`.
    fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities {
            text_messages: true,
            streaming_deltas: true,
            reasoning: true,
            // `request_user_input` calls are tool call items (real-CLI tested); MCP, web
            // search and image-view items are converted too, but no real-CLI test
            // produces one (the daemon configures no MCP server).
            tool_calls: true,
            command_execution: true,
            file_changes: true,
            // `turn/plan/updated` is converted, but the pinned Codex offers no plan tool.
            plans: false,
            permissions: true,
            permission_always: true,
            questions: true,
            plan_approval: false,
            cancel: true,
            multi_turn: true,
            resume: true,
            usage: true,
            models: true,
            variants: true,
            agent_modes: false,
            validate_token: true,
            // The session policy: the table's policy rows and `codex_e2e::policy`.
            system_prompt: true,
            tool_lists: true,
            max_turns: true,
            // Configured per thread (`codex_e2e::policy`: the secrets reach only the
            // servers); the table's `mcp-stdio` / `mcp-http` rows call their tools on the
            // default model (code mode) and answer their approvals.
            mcp_servers: true,
            images: true,
            session_env: true,
            host_tools: true,
        }
    }

    fn policy(&self) -> sandbox_universal::PolicySupport {
        super::policy::support()
    }

    async fn status(&self) -> BinaryStatus {
        self.context.status(AgentId::Codex).await
    }

    async fn models(&self) -> Result<ModelsResponse, AgentError> {
        self.models.get(&self.binary()?, &self.base_url()).await
    }

    async fn modes(&self) -> Result<ModesResponse, AgentError> {
        Ok(ModesResponse {
            modes: Vec::new(),
            default_mode: None,
            permission_modes: PermissionMode::ALL.to_vec(),
        })
    }

    async fn start(
        &self,
        session: SessionConfig,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        // A stored login is checked by Codex itself (it may have to refresh it first).
        if session.validate_token && session.login.is_none() {
            let credentials = self.credentials(session.token.as_deref());
            validate(ProviderApi::OpenAi, &credentials, Some(&self.base_url())).await?;
        }
        let binary = self
            .context
            .session_binary(AgentId::Codex, session.agent_version.as_deref())
            .await?;
        let (launch, converter) = self.prepare(&session, binary, None)?;
        let (child, _) =
            ChildSession::start(launch, converter, Some(sink.clone()), session.tap.clone()).await?;
        let launch = child.launch();
        let thread_id = launch
            .thread_id()
            .ok_or_else(|| AgentError::protocol("codex started no thread"))?
            .to_string();
        child.with_protocol(|converter| converter.set_thread(&thread_id));
        sink.set_native_session_id(&thread_id);
        child.started(AgentEvent::native(
            EventPayload::SessionStarted(SessionStarted {
                agent: AgentId::Codex,
                model: launch.model().map(str::to_string).or(session.model),
                agent_mode: session.agent_mode,
                permission_mode: Some(session.permission_mode),
                cwd: Some(session.cwd.display().to_string()),
                agent_version: launch.version().map(str::to_string),
            }),
            None,
        ));
        Ok(Box::new(child))
    }

    /// The thread's rollout (see [`super::portable`]).
    async fn export_native(
        &self,
        config: &SessionConfig,
        native_session_id: Option<&str>,
    ) -> Result<NativeState, AgentError> {
        portable::export(
            &launch::codex_home(&config.state_dir),
            native_session_id,
            &config.cwd.display().to_string(),
        )
    }

    /// Files the rollout in the session's `CODEX_HOME` for its cwd; the thread keeps its id.
    async fn import_native(
        &self,
        config: &SessionConfig,
        state: &NativeState,
    ) -> Result<Option<String>, AgentError> {
        portable::import(
            &launch::codex_home(&config.state_dir),
            state,
            &config.cwd.display().to_string(),
        )
        .map(Some)
    }

    /// A rollout of a new thread holding `history` (see [`super::history`]).
    async fn native_history(
        &self,
        config: &SessionConfig,
        history: &History,
    ) -> Result<NativeState, AgentError> {
        let thread_id = uuid::Uuid::new_v4().to_string();
        let cwd = config.cwd.display().to_string();
        let rollout = super::history::rollout(history, &thread_id, &cwd, chrono::Utc::now());
        Ok(NativeState::single(
            Some(thread_id),
            cwd,
            portable::ROLLOUT_FILE,
            rollout.into_bytes(),
        ))
    }

    /// The thread lives on in the session's `CODEX_HOME`: the next message starts an
    /// app-server that resumes it.
    async fn restore(
        &self,
        session: SessionConfig,
        native_session_id: Option<String>,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let thread_id = native_session_id.ok_or_else(|| {
            AgentError::protocol("the log has no Codex thread id to resume this session with")
        })?;
        let binary = self
            .context
            .session_binary(AgentId::Codex, session.agent_version.as_deref())
            .await?;
        let (launch, converter) = self.prepare(&session, binary, Some(thread_id))?;
        Ok(Box::new(ChildSession::restored(
            launch,
            converter,
            sink,
            session.tap.clone(),
        )))
    }
}

impl CodexDriver {
    /// Writes `CODEX_HOME` (again, so a restored session follows the daemon's current
    /// provider settings) and builds the launch and the protocol of a session on the
    /// thread `thread_id` (a restored one), else on the thread its first process starts.
    fn prepare(
        &self,
        session: &SessionConfig,
        binary: PathBuf,
        thread_id: Option<String>,
    ) -> Result<(CodexLaunch, Converter), AgentError> {
        let api_key = match self.credentials(session.token.as_deref()) {
            Credentials::ApiKey(key) | Credentials::OAuthToken(key) => Some(key),
            Credentials::None => None,
        };
        // A stored login (only when there is no key) is seeded as `auth.json`, read there;
        // a ChatGPT login talks to the backend Codex uses for it.
        let (auth, base_url) = match (&api_key, &session.login) {
            (None, Some(login)) => {
                let chatgpt = login.file().is_some_and(|f| !f["tokens"].is_null());
                let base_url = match self.context.provider_env.get("OPENAI_BASE_URL") {
                    Some(url) => Some(url.to_string()),
                    None if chatgpt => None,
                    None => Some(self.base_url()),
                };
                (launch::AuthStore::File, base_url)
            }
            _ => (launch::AuthStore::Ephemeral, Some(self.base_url())),
        };
        let home = launch::write_codex_home(&session.state_dir, base_url.as_deref(), auth)
            .map_err(|e| AgentError::SpawnFailed {
                message: format!("writing CODEX_HOME: {e}"),
            })?;
        if let (launch::AuthStore::File, Some(login)) = (auth, &session.login) {
            login
                .seed(&home.join("auth.json"))
                .map_err(|e| AgentError::SpawnFailed {
                    message: format!("writing the session's stored login: {e}"),
                })?;
        }
        let settings = TurnSettings::new(session);
        let mut converter = Converter::new(settings.clone())
            .with_max_turns(session.policy.max_turns)
            .with_mcp_servers(session.policy.mcp_servers.keys().cloned());
        if let Some(thread_id) = &thread_id {
            converter.set_thread(thread_id);
        }
        let mut spec = launch::app_server(binary, session);
        if let Some(url) = self
            .context
            .provider_env
            .get(launch::REFRESH_URL_VAR)
            .filter(|_| auth == launch::AuthStore::File)
        {
            spec.env.insert(launch::REFRESH_URL_VAR.into(), url.into());
        }
        let launch = CodexLaunch::session(spec, api_key, settings, thread_id);
        Ok((launch, converter))
    }
}
