//! `POST /sessions/{id}/handover`: the session goes on with another agent. The log is read
//! into a [`History`], the new agent's driver writes it as its own native history and files
//! it in the session's private state, the log records `sessionHandedOver` (with the new
//! agent's session id), and the stored record names the new agent. The next message starts
//! the new agent through its `restore`, so its first model request carries the earlier
//! turns. Events keep one numbering.

use std::sync::Arc;

use sandbox_universal::history::History;
use sandbox_universal::{
    AgentId, CreateSessionRequest, EventPayload, HandoverRequest, SessionHandedOver, SessionInfo,
    SessionStatus,
};

use super::actor::Command;
use super::core::{EventMeta, SessionCore};
use super::handle::SessionHandle;
use super::manager::SessionManager;
use super::policy::check_policy;
use super::record::SessionRecord;
use super::validate::validate_choices;
use super::{SessionError, files};

/// Events read per page while the log becomes a history.
const HISTORY_PAGE: usize = 1000;

impl SessionManager {
    /// Hands session `id` over to the agent `request` names; answers the session as it
    /// stands after.
    pub async fn handover(
        &self,
        id: &str,
        request: HandoverRequest,
    ) -> Result<SessionInfo, SessionError> {
        // The session is the resource: an agent the body names wrongly is a bad body.
        let target: AgentId =
            request
                .agent
                .parse()
                .map_err(|e: sandbox_universal::UnknownAgentName| {
                    SessionError::InvalidContent(format!("`agent`: {e}"))
                })?;
        let handle = self.open(id).await?;
        let agent_version = self.installs.ensure(target, None).await?;
        let driver = self.registry.get(target);
        let as_request = request_for(&handle.record, &request);
        validate_choices(driver.as_ref(), &as_request, handle.record.permission_mode).await?;
        check_policy(driver.as_ref(), &as_request, handle.record.permission_mode)?;
        self.store.check_writable()?;
        // No command reaches the session until the handover is done (they then find it
        // handed over, and are asked to come again to the reloaded session).
        let mut commands = handle.actor.lock().await;
        handle.core.ensure_open()?;
        if let Some(turn) = handle.core.snapshot().current_turn {
            return Err(SessionError::TurnRunning {
                session: id.to_string(),
                turn,
            });
        }
        if let Some(running) = commands.take().filter(|c| !c.is_closed()) {
            let (respond, stopped) = tokio::sync::oneshot::channel();
            if running.send(Command::Suspend { respond }).is_ok() {
                let _ = stopped.await;
            }
        }
        let history = self.history(&handle).await?;
        let record = SessionRecord {
            agent: target,
            agent_mode: request.agent_mode.clone(),
            model: request.model.clone(),
            variant: None,
            agent_version,
            ..handle.record.clone()
        };
        let config = handle.config_for(&record)?;
        // The new agent must have a credential before anything changes.
        self.credentials
            .for_session(target, config.token.as_deref())
            .map_err(SessionError::Agent)?;
        let state = driver
            .native_history(&config, &history)
            .await
            .map_err(SessionError::Agent)?;
        let native_id = driver
            .import_native(&config, &state)
            .await
            .map_err(SessionError::Agent)?;
        if self.store.backend() == sandbox_universal::StoreBackend::Postgres {
            super::travel::save(&self.store, handle.sid, target, &state).await?;
        }
        if let Some(user) = &self.settings.agent_user {
            user.own_tree(&handle.dir().join(files::AGENT_DIR))
                .map_err(|e| SessionError::Internal(format!("handing the files over: {e}")))?;
        }
        handle.core.hand_over(
            SessionHandedOver {
                from_agent: handle.record.agent,
                to_agent: target,
                model: record.model.clone(),
                agent_mode: record.agent_mode.clone(),
                turns: history.turns.len() as u64,
            },
            native_id,
        )?;
        handle.core.log().flush().await?;
        self.store
            .rewrite(handle.sid, record.to_new_session())
            .await?;
        handle.retire();
        self.loaded.lock().expect("sessions lock").remove(id);
        drop(commands);
        self.info(id).await
    }

    /// The conversation of a session's log, read page by page.
    async fn history(&self, handle: &Arc<SessionHandle>) -> Result<History, SessionError> {
        let log = handle.core.log();
        log.flush().await?;
        let mut history = History::default();
        let mut after = 0;
        loop {
            let page = log.read(after, HISTORY_PAGE, false).await?;
            let Some(last) = page.last() else { break };
            after = last.sequence;
            for event in &page {
                history.push(&event.parse());
            }
        }
        history.finish();
        Ok(history)
    }
}

/// The create request a session handed over to `handover.agent` would have been made
/// with: its settings are checked against the new agent exactly as at creation.
fn request_for(record: &SessionRecord, handover: &HandoverRequest) -> CreateSessionRequest {
    let policy = &record.policy;
    CreateSessionRequest {
        agent: handover.agent.clone(),
        agent_mode: handover.agent_mode.clone(),
        permission_mode: Some(record.permission_mode),
        model: handover.model.clone(),
        dangerously_skip_permissions: Some(record.dangerously_skip_permissions),
        cwd: Some(record.cwd.display().to_string()),
        system_prompt: policy.system_prompt.clone(),
        system_prompt_mode: policy
            .system_prompt
            .is_some()
            .then_some(policy.system_prompt_mode),
        tools: Some(policy.tools.clone()),
        max_turns: policy.max_turns,
        mcp_servers: (!policy.mcp_servers.is_empty()).then(|| policy.mcp_servers.clone()),
        env: (!policy.env.is_empty()).then(|| policy.env.clone()),
        host_tools: (!policy.host_tools.is_empty()).then(|| policy.host_tools.clone()),
        ..CreateSessionRequest::default()
    }
}

impl SessionCore {
    /// Logs a handover to another agent, whose session id `native_session_id` the log
    /// carries from now on; refused while a turn runs or once the session has ended.
    pub fn hand_over(
        &self,
        handed: SessionHandedOver,
        native_session_id: Option<String>,
    ) -> Result<(), SessionError> {
        let mut live = self.lock();
        match (live.state.status(), &live.state.current_turn) {
            (SessionStatus::Ended, _) => {
                return Err(SessionError::Ended(self.session_id.clone()));
            }
            (_, Some(turn)) => {
                return Err(SessionError::TurnRunning {
                    session: self.session_id.clone(),
                    turn: turn.clone(),
                });
            }
            _ => {}
        }
        live.state.native_session_id = native_session_id;
        self.append(
            &mut live,
            EventPayload::SessionHandedOver(handed),
            EventMeta::daemon(false),
        );
        Ok(())
    }
}
