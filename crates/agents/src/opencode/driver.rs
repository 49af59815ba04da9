//! The OpenCode driver: sessions on the pool's servers, models and modes asked of a server.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use sandbox_universal::{
    AgentCapabilities, AgentError, AgentId, EventPayload, ModelsResponse, ModesResponse,
    PermissionMode, PolicySupport, SessionStarted, SystemPromptMode,
};

use super::catalog::{Catalog, split_model};
use super::launch::{self, Provider};
use super::policy::{self, OwnServer};
use super::pool::{Lease, ServerPool};
use super::{history, portable};
use sandbox_universal::history::History;
use serde_json::{Value, json};

use super::convert::{Converter, NativeCall, PromptSettings};
use crate::cache::BinaryCache;
use crate::context::DriverContext;
use crate::kernel::Tap;
use crate::kernel::server::{ServerLease, ServerSession};
use crate::login::SeededLogin;
use crate::validate::{ProviderApi, validate};
use crate::{
    AgentDriver, AgentEvent, AgentSession, BinaryStatus, ConfigError, Credentials, EventSink,
    NativeState, SessionConfig,
};

/// The OpenCode driver.
pub struct OpenCodeDriver {
    context: Arc<DriverContext>,
    /// One pool per binary (a newly installed binary gets servers of its own).
    pools: Mutex<HashMap<PathBuf, Arc<ServerPool>>>,
    catalog: BinaryCache<Catalog>,
}

impl OpenCodeDriver {
    /// A driver whose servers live under `<data_dir>/opencode/`.
    pub fn new(context: Arc<DriverContext>) -> Self {
        Self {
            context,
            pools: Mutex::new(HashMap::new()),
            catalog: BinaryCache::default(),
        }
    }

    fn binary(&self) -> Result<PathBuf, AgentError> {
        self.context.binary(AgentId::Opencode)
    }

    fn pool(&self, binary: &Path) -> Arc<ServerPool> {
        let mut pools = self.pools.lock().expect("pools lock");
        pools
            .entry(binary.to_path_buf())
            .or_insert_with(|| {
                ServerPool::new(binary.to_path_buf(), self.context.data_dir.join("opencode"))
            })
            .clone()
    }

    /// A hold on `session`'s server: shared by its providers, or its own when its policy
    /// needs one ([`policy::needs_own_server`]).
    fn lease(&self, binary: &Path, session: &SessionConfig) -> Lease {
        let own = OwnServer::of(
            &session.session_id,
            &session.state_dir,
            &session.policy,
            session.agent_mode.as_deref(),
            session.permission_mode,
            session
                .login
                .as_ref()
                .map(|login| super::policy::ServerLogin {
                    login: login.clone(),
                    providers: self.login_providers(login),
                }),
        );
        self.pool(binary).lease_for(self.providers(session), own)
    }

    /// The providers a stored login holds (its `auth.json`'s entries), Anthropic's and
    /// OpenAI's at the base URLs the daemon's environment sets.
    fn login_providers(&self, login: &SeededLogin) -> Vec<(String, Option<String>)> {
        let env = &self.context.provider_env;
        let Some(entries) = login.file().and_then(|f| f.as_object()) else {
            return Vec::new();
        };
        entries
            .keys()
            .map(|id| {
                let url = match id.as_str() {
                    "anthropic" => env
                        .get("ANTHROPIC_BASE_URL")
                        .map(|url| format!("{}/v1", url.trim_end_matches('/'))),
                    "openai" => env.get("OPENAI_BASE_URL").map(str::to_string),
                    _ => None,
                };
                (id.clone(), url)
            })
            .collect()
    }

    /// The providers of a session (its `token` replaces the key of its model's provider).
    fn providers(&self, session: &SessionConfig) -> Vec<Provider> {
        launch::providers(
            &self.context.provider_env,
            session.token.as_deref(),
            session
                .model
                .as_deref()
                .and_then(split_model)
                .map(|(provider, _)| provider),
        )
    }

    /// What the installed OpenCode offers, asked of `lease`'s server once per binary.
    async fn catalog_on(&self, binary: &Path, lease: &Lease) -> Result<Catalog, AgentError> {
        self.catalog
            .get(binary, || async {
                Catalog::fetch(&lease.peer().await?).await
            })
            .await
    }

    /// The catalog, asked of a server of the daemon's own providers (the one sessions
    /// without a `token` share; started for the question when none runs). With no provider
    /// configured at all, OpenCode is asked about Anthropic and OpenAI with placeholder keys
    /// that never reach a model: the models are what sessions with a `token` can use.
    async fn catalog(&self) -> Result<Catalog, AgentError> {
        let binary = self.binary()?;
        let mut providers = launch::providers(&self.context.provider_env, None, None);
        if providers.is_empty() {
            providers = ["anthropic", "openai"]
                .map(|id| Provider {
                    id,
                    key: "no-key-configured".into(),
                    base_url: None,
                })
                .to_vec();
        }
        let lease = self.pool(&binary).lease(providers);
        let catalog = self.catalog_on(&binary, &lease).await;
        lease.release().await;
        catalog
    }

    /// Checks the session's credential against its model's provider.
    async fn validate_token(&self, session: &SessionConfig) -> Result<(), AgentError> {
        let provider = session
            .model
            .as_deref()
            .and_then(split_model)
            .map_or("anthropic", |(provider, _)| provider);
        let (api, key_var, url_var) = match provider {
            "openai" => (ProviderApi::OpenAi, "OPENAI_API_KEY", "OPENAI_BASE_URL"),
            _ => (
                ProviderApi::Anthropic,
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL",
            ),
        };
        let env = &self.context.provider_env;
        let credentials = env
            .credential(session.token.as_deref(), &[key_var])
            .map_or(Credentials::None, Credentials::ApiKey);
        validate(api, &credentials, env.get(url_var)).await
    }
}

/// What every prompt of `session` carries: its model (`model`, else none: OpenCode keeps the
/// conversation's last one), its agent (the one whose prompt it replaced), its variant, its
/// appended system prompt and the tools it takes away.
fn prompt_settings(session: &SessionConfig, model: Option<&str>) -> PromptSettings {
    let policy = &session.policy;
    PromptSettings {
        model: model
            .and_then(split_model)
            .map(|(provider, model)| (provider.to_string(), model.to_string())),
        agent: policy::replaced_agent(policy, session.agent_mode.as_deref())
            .or_else(|| session.agent_mode.clone()),
        variant: session.variant.clone(),
        system: policy
            .system_prompt
            .clone()
            .filter(|_| policy.system_prompt_mode == SystemPromptMode::Append),
        tools: policy::prompt_tools(policy, &session_rules(session)),
    }
}

/// The converter of `session`: its prompts, MCP servers and turn limit.
fn converter(session: &SessionConfig, model: Option<&str>) -> Converter {
    Converter::new(session.cwd.display().to_string())
        .with_prompt(prompt_settings(session, model))
        .with_policy(
            session.policy.mcp_servers.keys().cloned().collect(),
            session.policy.max_turns,
        )
}

#[async_trait]
impl AgentDriver for OpenCodeDriver {
    fn id(&self) -> AgentId {
        AgentId::Opencode
    }

    /// Every `true` flag is observed against the real CLI in
    /// `crates/daemon/tests/all/opencode_e2e/` or its recorded fixtures.
    fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities {
            text_messages: true,
            streaming_deltas: true,
            reasoning: true,
            tool_calls: true,
            command_execution: true,
            file_changes: true,
            // `todowrite` becomes a plan item, but the fake provider never calls it, so no
            // real-CLI test shows it.
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

    fn policy(&self) -> PolicySupport {
        policy::support()
    }

    async fn status(&self) -> BinaryStatus {
        self.context.status(AgentId::Opencode).await
    }

    async fn models(&self) -> Result<ModelsResponse, AgentError> {
        Ok(self.catalog().await?.models)
    }

    async fn modes(&self) -> Result<ModesResponse, AgentError> {
        let catalog = self.catalog().await?;
        Ok(ModesResponse {
            default_mode: catalog.default_mode(),
            modes: catalog.modes,
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
        self.catalog()
            .await?
            .check(model, variant)
            .map_err(ConfigError::Invalid)
    }

    async fn start(
        &self,
        session: SessionConfig,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let binary = self
            .context
            .session_binary(AgentId::Opencode, session.agent_version.as_deref())
            .await?;
        // A stored login is checked by OpenCode itself (it may have to refresh it first).
        if session.validate_token && session.login.is_none() {
            self.validate_token(&session).await?;
        }
        let lease = self.lease(&binary, &session);
        let catalog = match self.catalog_on(&binary, &lease).await {
            Ok(catalog) => catalog,
            Err(error) => {
                lease.release().await;
                return Err(error);
            }
        };
        let model = session
            .model
            .clone()
            .or_else(|| catalog.models.default_model.clone());
        let cwd = session.cwd.display().to_string();
        let opencode = create_session(
            lease,
            Value::Array(session_rules(&session)),
            converter(&session, model.as_deref()),
            sink.clone(),
            session.tap.clone(),
        )
        .await?;
        sink.emit(AgentEvent::native(
            EventPayload::SessionStarted(SessionStarted {
                agent: AgentId::Opencode,
                model,
                agent_mode: session.agent_mode.or_else(|| catalog.default_mode()),
                permission_mode: Some(session.permission_mode),
                cwd: Some(cwd),
                agent_version: catalog.version,
            }),
            None,
        ));
        Ok(Box::new(opencode))
    }

    /// The session's export document, read from its server (see [`super::portable`]).
    async fn export_native(
        &self,
        config: &SessionConfig,
        native_session_id: Option<&str>,
    ) -> Result<NativeState, AgentError> {
        let native_id = native_session_id
            .ok_or_else(|| AgentError::protocol("the log has no OpenCode session id to export"))?;
        let binary = self
            .context
            .session_binary(AgentId::Opencode, config.agent_version.as_deref())
            .await?;
        let lease = self.lease(&binary, config);
        let exported = match lease.peer().await {
            Ok(peer) => portable::export(&peer, native_id, &config.cwd.display().to_string()).await,
            Err(error) => Err(error),
        };
        lease.release().await;
        exported
    }

    /// Imports the document into the database of the server the session runs on, in its
    /// cwd (see [`super::portable`]).
    async fn import_native(
        &self,
        config: &SessionConfig,
        state: &NativeState,
    ) -> Result<Option<String>, AgentError> {
        let binary = self
            .context
            .session_binary(AgentId::Opencode, config.agent_version.as_deref())
            .await?;
        let lease = self.lease(&binary, config);
        let home = lease.dirs().home.clone();
        let prepared = lease.dirs().write(&[]);
        lease.release().await;
        prepared.map_err(|e| AgentError::protocol(format!("preparing opencode's home: {e}")))?;
        let cli = portable::OpenCodeCli {
            program: binary,
            home,
        };
        portable::import(&cli, state, &config.cwd).await.map(Some)
    }

    /// A document of a new session holding `history`, written by the session's model (or
    /// OpenCode's default) and agent (see [`super::history`]).
    async fn native_history(
        &self,
        config: &SessionConfig,
        history: &History,
    ) -> Result<NativeState, AgentError> {
        let catalog = self.catalog().await?;
        let model = config
            .model
            .clone()
            .or_else(|| catalog.models.default_model.clone())
            .ok_or_else(|| {
                AgentError::protocol("OpenCode offers no model to write the history as")
            })?;
        let (provider, model) = split_model(&model)
            .ok_or_else(|| AgentError::protocol(format!("`{model}` is not `provider/model`")))?;
        let author = history::Author {
            provider: provider.to_string(),
            model: model.to_string(),
            agent: config
                .agent_mode
                .clone()
                .or_else(|| catalog.default_mode())
                .unwrap_or_else(|| "build".into()),
        };
        let version = catalog.version.clone().unwrap_or_default();
        let session_id = history::new_id("ses", true);
        let cwd = config.cwd.display().to_string();
        let document = history::document(
            history,
            &session_id,
            &cwd,
            &author,
            &version,
            chrono::Utc::now().timestamp_millis(),
        );
        Ok(NativeState::single(
            Some(session_id),
            cwd,
            portable::EXPORT_FILE,
            serde_json::to_vec_pretty(&document).expect("JSON serializes"),
        ))
    }

    /// The conversation lives on in the server's `opencode.db` (the server's directory is
    /// named by its isolation key, so it is the same after a restart): the next message
    /// starts a server that continues it.
    async fn restore(
        &self,
        session: SessionConfig,
        native_session_id: Option<String>,
        sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let native_id = native_session_id.ok_or_else(|| {
            AgentError::protocol("the log has no OpenCode session id to resume this session with")
        })?;
        let binary = self
            .context
            .session_binary(AgentId::Opencode, session.agent_version.as_deref())
            .await?;
        let lease = self.lease(&binary, &session);
        let converter = converter(&session, session.model.as_deref());
        Ok(Box::new(on_server(
            lease,
            converter,
            sink,
            native_id,
            session.tap.clone(),
        )))
    }
}

/// The rules `session`'s OpenCode session is created with: its permission mode's, then its
/// policy's.
fn session_rules(session: &SessionConfig) -> Vec<Value> {
    let mut rules = match launch::permission_rules(session.permission_mode) {
        Value::Array(rules) => rules,
        _ => Vec::new(),
    };
    rules.extend(policy::session_rules(&session.policy));
    rules
}

/// Creates an OpenCode session with `rules` (its permission mode's and policy's) in the
/// converter's directory on the lease's server, and the universal session on it, whose
/// events go to `sink` (the lease is let go when it cannot be created).
pub async fn create_session(
    lease: Lease,
    rules: Value,
    converter: Converter,
    sink: EventSink,
    tap: Option<Tap>,
) -> Result<ServerSession<Lease>, AgentError> {
    let cwd = converter.cwd().to_string();
    let created = match lease.peer().await {
        Ok(peer) => {
            let path = NativeCall::post("/session".into(), None, &cwd).path_with_directory();
            let body = json!({"permission": rules});
            if let Some(tap) = &tap {
                tap.http_request("POST", &path, Some(&body));
            }
            let created = peer.post_json(&path, &body).await;
            if let (Some(tap), Ok(created)) = (&tap, &created) {
                tap.http_answer(created);
            }
            created.map_err(|e| e.into_agent_error("creating the OpenCode session"))
        }
        Err(error) => Err(error),
    };
    let native_id = match created.map(|c| c["id"].as_str().map(str::to_string).ok_or(c)) {
        Ok(Ok(id)) => id,
        Ok(Err(created)) => {
            lease.release().await;
            return Err(AgentError::protocol(format!(
                "a session without an id: {created}"
            )));
        }
        Err(error) => {
            lease.release().await;
            return Err(error);
        }
    };
    sink.set_native_session_id(&native_id);
    Ok(on_server(lease, converter, sink, native_id, tap))
}

/// The universal session on OpenCode session `native_id` of the lease's server.
fn on_server(
    lease: Lease,
    mut converter: Converter,
    sink: EventSink,
    native_id: String,
    tap: Option<Tap>,
) -> ServerSession<Lease> {
    converter.set_native_session_id(&native_id);
    ServerSession::new(lease, converter, sink, native_id, tap)
}
