//! Native state that travels through a shared store: with PostgreSQL, a session may go on
//! on another daemon that has none of this one's disk (this one died; the lease passed).
//! After each turn the agent's native state is saved in the store ([`NativeSaver`]), and
//! a daemon that takes the session over files it in its fresh private dir before the
//! agent is restored ([`fetch`]).

use std::sync::Arc;

use sandbox_agents::{AgentDriver, NativeState, SessionConfig};
use sandbox_universal::{AgentId, NativeBundle, StoreBackend};

use super::SessionError;
use super::core::SessionCore;
use crate::store::{NativeRow, Store, now_ms};

/// Saves a session's native state to the store after each turn (shared stores only).
pub struct NativeSaver {
    driver: Arc<dyn AgentDriver>,
    config: SessionConfig,
    store: Arc<Store>,
    sid: i64,
    agent: AgentId,
}

impl NativeSaver {
    /// A saver for the session `config` describes, when its store is shared.
    pub fn new(
        driver: Arc<dyn AgentDriver>,
        config: SessionConfig,
        store: Arc<Store>,
        sid: i64,
    ) -> Option<Self> {
        (store.backend() == StoreBackend::Postgres).then(|| Self {
            agent: driver.id(),
            driver,
            config,
            store,
            sid,
        })
    }

    /// Saves what the agent keeps now (a failure is logged: the session goes on, and a
    /// daemon taking it over resumes from the last state saved).
    pub async fn save(&self, core: &SessionCore) {
        let native_id = core.snapshot().native_session_id;
        let state = match self
            .driver
            .export_native(&self.config, native_id.as_deref())
            .await
        {
            Ok(state) => state,
            Err(error) => {
                tracing::warn!(session = %core.session_id(), %error, "could not read the agent's native state to share it");
                return;
            }
        };
        if let Err(error) = save(&self.store, self.sid, self.agent, &state).await {
            tracing::warn!(session = %core.session_id(), %error, "could not save the agent's native state in the store");
        }
    }
}

/// Keeps `state` (agent `agent`'s) for session `sid` in the store.
pub async fn save(
    store: &Store,
    sid: i64,
    agent: AgentId,
    state: &NativeState,
) -> Result<(), crate::store::StoreError> {
    let body = serde_json::to_string(&state.to_bundle(agent)).expect("bundles serialise");
    store
        .save_native(
            sid,
            NativeRow {
                agent: agent.into(),
                body,
                saved_ms: now_ms(),
            },
        )
        .await
}

/// The native state the store keeps for session `sid` of agent `agent`, if any (a state
/// of another agent, from before a handover, is not this agent's to resume).
pub async fn fetch(
    store: &Store,
    sid: i64,
    agent: AgentId,
) -> Result<Option<NativeState>, SessionError> {
    let Some(row) = store.native(sid).await? else {
        return Ok(None);
    };
    if row.agent.known() != Some(agent) {
        return Ok(None);
    }
    let bundle: NativeBundle = serde_json::from_str(&row.body).map_err(|e| {
        SessionError::Internal(format!("the stored native state is unreadable: {e}"))
    })?;
    NativeState::from_bundle(&bundle)
        .map(Some)
        .map_err(|e| SessionError::Internal(format!("the stored native state is damaged: {e}")))
}
