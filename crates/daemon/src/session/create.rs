//! Creating a session: validating the request, storing the session, starting its agent.
//! An agent that fails to start leaves nothing behind (the id stays free).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use sandbox_agents::EventSink;
use sandbox_universal::{AgentId, CreateSessionRequest, CreateSessionResponse, PolicySecrets};

use super::handle::SessionHandle;
use super::manager::SessionManager;
use super::policy::check_policy;
use super::record::SessionRecord;
use super::state::CoreState;
use super::validate::{resolve_cwd, resolve_permission_mode, validate_choices};
use super::{SessionCore, SessionError, files, validate_session_id};
use crate::log::SessionLog;

impl SessionManager {
    /// Creates a session and starts its agent. A request error is an `Err`; an agent that
    /// fails to start is `Ok` with `healthy: false` (the id stays free).
    pub async fn create(
        &self,
        id: &str,
        request: CreateSessionRequest,
    ) -> Result<CreateSessionResponse, SessionError> {
        validate_session_id(id)?;
        let agent: AgentId = request.agent.parse()?;
        let permission_mode = resolve_permission_mode(&request)?;
        // The agent is installed (or being installed) before its modes and models can be
        // asked of it.
        let agent_version = self
            .installs
            .ensure(agent, request.agent_version.as_deref())
            .await?;
        let driver = self.registry.get(agent);
        validate_choices(driver.as_ref(), &request, permission_mode).await?;
        let policy = check_policy(driver.as_ref(), &request, permission_mode)?;
        super::policy::check_signing(&policy, &self.settings.host_tools)?;
        let (public_policy, secrets) = policy.split_secrets();
        let cwd = resolve_cwd(&self.settings, request.cwd.as_deref())?;
        self.store.check_writable()?;
        self.imports.wait(id).await?;
        let _reservation = self.reserve(id)?;
        if self.store.session(id).await?.is_some() {
            return Err(SessionError::AlreadyExists(id.to_string()));
        }
        // Loads of this id wait on the slot until the session exists (or failed to).
        let slot = self.slot(id);
        let record = SessionRecord {
            session_id: id.to_string(),
            agent,
            agent_mode: request.agent_mode.clone(),
            permission_mode,
            model: request.model.clone(),
            variant: request.variant.clone(),
            dangerously_skip_permissions: request.dangerously_skip_permissions.unwrap_or(false),
            agent_version,
            cwd,
            created_at: Utc::now(),
            policy: public_policy,
        };
        let mut outcome = None;
        let created = slot
            .get_or_try_init(|| self.start_session(record, &request, secrets, &mut outcome))
            .await
            .cloned();
        if created.is_err() {
            self.forget_empty(id, &slot);
        }
        match (created, outcome) {
            (Ok(handle), Some(Started { native_session_id })) => {
                if let Err(error) = handle.core.log().flush().await {
                    tracing::warn!(session = id, %error, "the new session is not durable yet");
                }
                Ok(CreateSessionResponse {
                    healthy: true,
                    native_session_id,
                })
            }
            (Ok(_), None) => Err(SessionError::AlreadyExists(id.to_string())),
            (Err(error), _) => Err(error),
        }
    }

    /// Stores a new session and starts its agent. An agent that fails to start leaves
    /// nothing behind.
    async fn start_session(
        &self,
        record: SessionRecord,
        request: &CreateSessionRequest,
        secrets: PolicySecrets,
        outcome: &mut Option<Started>,
    ) -> Result<Arc<SessionHandle>, SessionError> {
        let id = record.session_id.clone();
        // Fails fast, before anything is made, when the agent has no credential at all.
        let login = self
            .credentials
            .for_session(record.agent, request.token.as_deref())
            .map_err(SessionError::Agent)?;
        let dir = self.sessions_dir().join(&id);
        let io = |e: std::io::Error| {
            let detail = format!("preparing {}: {e}", dir.display());
            if e.kind() == std::io::ErrorKind::StorageFull {
                SessionError::StoreFull(detail)
            } else {
                SessionError::Internal(detail)
            }
        };
        files::create_dir(&dir, self.settings.agent_user.as_ref()).map_err(io)?;
        if let Some(token) = request.token.as_deref().filter(|t| !t.is_empty()) {
            files::save_token(&dir, token).map_err(io)?;
        }
        if secrets != PolicySecrets::default() {
            files::save_policy_secrets(&dir, &secrets).map_err(io)?;
        }
        let sid = match self.store.create_session(record.to_new_session()).await {
            Ok(sid) => sid,
            Err(error) => {
                let _ = files::remove_dir(&dir);
                return Err(error.into());
            }
        };
        // The session's own webhook is stored before its first event, which it may want.
        if let Some(webhook) = &request.webhook {
            let webhooks = crate::webhooks::Webhooks::new(self.store.clone());
            if let Err(error) = webhooks.create_for_session(sid, webhook).await {
                let _ = self.store.purge(sid).await;
                let _ = files::remove_dir(&dir);
                return Err(error.into());
            }
        }
        let log = SessionLog::new(
            &id,
            sid,
            (0, None),
            self.store.clone(),
            self.heads.sender(sid),
        );
        let core = SessionCore::new(&id, log, CoreState::default());
        if let Some(telemetry) = &self.settings.telemetry {
            core.observe_with(telemetry.observer(&id, record.agent, record.model.as_deref()));
        }
        let driver = self.registry.get(record.agent);
        let mut config = sandbox_agents::SessionConfig {
            validate_token: request.validate_token.unwrap_or(false),
            login: login.clone(),
            ..record.config(&dir, request.token.clone(), secrets)
        };
        let grant = match super::host::attach(&self.settings, &core, &driver.policy(), &mut config)
        {
            Ok(grant) => grant,
            Err(error) => {
                let _ = self.store.purge(sid).await;
                let _ = files::remove_dir(&dir);
                return Err(error);
            }
        };
        let agent_session = match driver.start(config, EventSink::new(core.clone())).await {
            Ok(session) => session,
            Err(error) => {
                if let Some(login) = &login {
                    login.remove();
                }
                if let Err(purge) = self.store.purge(sid).await {
                    tracing::warn!(session = %id, error = %purge, "could not remove a session whose agent failed to start");
                }
                let _ = files::remove_dir(&dir);
                return Err(SessionError::Agent(error));
            }
        };
        *outcome = Some(Started {
            native_session_id: agent_session
                .native_session_id()
                .or_else(|| core.snapshot().native_session_id),
        });
        let handle = Arc::new(SessionHandle::new(
            record,
            sid,
            core,
            driver,
            self.agent_services(),
            dir,
            self.settings.clone(),
        ));
        handle.set_host_grant(grant);
        *handle.actor.lock().await = Some(handle.spawn_actor(agent_session, login));
        Ok(handle)
    }

    pub(super) fn reserve(&self, id: &str) -> Result<Reservation<'_>, SessionError> {
        let mut creating = self.creating.lock().expect("creating lock");
        if creating.contains(id) || self.loaded_handle(id).is_some() {
            return Err(SessionError::AlreadyExists(id.to_string()));
        }
        creating.insert(id.to_string());
        Ok(Reservation {
            creating: &self.creating,
            id: id.to_string(),
        })
    }
}

/// A session whose agent started.
struct Started {
    native_session_id: Option<String>,
}

/// Holds a session id while its agent starts, so a concurrent create with the same id
/// gets 409.
pub(super) struct Reservation<'a> {
    creating: &'a Mutex<HashSet<String>>,
    id: String,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.creating
            .lock()
            .expect("creating lock")
            .remove(&self.id);
    }
}
