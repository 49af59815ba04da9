//! What the bridge does with daemon sessions: creates them for `session/new` (and again
//! for another mode or model before their first turn), says their modes and options, and
//! replays their logs for `session/load`.

use agent_client_protocol as acp;
use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as s;
use sandbox_client::EventsQuery;
use sandbox_universal::{CreateSessionRequest, SessionInfo};

use super::bridge::{Bridge, acp_error};
use super::convert;

/// The session's modes and configuration options (model and, when offered, its variants).
pub async fn session_state(
    bridge: &Bridge,
    info: &SessionInfo,
) -> (Option<s::SessionModeState>, Vec<s::SessionConfigOption>) {
    let agent = info.agent.as_str();
    let modes = bridge.daemon.agent_modes(agent).await.ok();
    let models = bridge.daemon.agent_models(agent).await.ok();
    let mode_state = modes.as_ref().filter(|m| !m.modes.is_empty()).map(|m| {
        let current = info
            .agent_mode
            .clone()
            .or_else(|| m.default_mode.clone())
            .unwrap_or_else(|| m.modes[0].id.clone());
        s::SessionModeState::new(
            current,
            m.modes
                .iter()
                .map(|mode| {
                    s::SessionMode::new(mode.id.clone(), mode.name.clone())
                        .description(mode.description.clone())
                })
                .collect(),
        )
    });
    let mut options = Vec::new();
    if let Some(models) = models.filter(|m| !m.models.is_empty()) {
        let current = info
            .model
            .clone()
            .or_else(|| models.default_model.clone())
            .unwrap_or_else(|| models.models[0].id.clone());
        options.push(
            s::SessionConfigOption::select(
                "model",
                "Model",
                current,
                models
                    .models
                    .iter()
                    .map(|m| s::SessionConfigSelectOption::new(m.id.clone(), m.name.clone()))
                    .collect::<Vec<_>>(),
            )
            .category(s::SessionConfigOptionCategory::Model),
        );
    }
    (mode_state, options)
}

/// Creates the daemon session `id` for an ACP `session/new` (or a re-creation with other
/// settings before its first turn).
pub async fn create(
    bridge: &Bridge,
    id: &str,
    cwd: String,
    mcp: &[s::McpServer],
    agent_mode: Option<String>,
    model: Option<String>,
) -> Result<SessionInfo, acp::Error> {
    let servers = convert::mcp_servers(mcp).map_err(|e| acp::Error::invalid_params().data(e))?;
    let defaults = &bridge.defaults;
    let request = CreateSessionRequest {
        agent: defaults.agent.clone(),
        agent_mode: agent_mode.or_else(|| defaults.agent_mode.clone()),
        model: model.clone().or_else(|| defaults.model.clone()),
        variant: if model.is_some() {
            None
        } else {
            defaults.variant.clone()
        },
        permission_mode: defaults.permission_mode,
        cwd: Some(cwd),
        mcp_servers: (!servers.is_empty()).then_some(servers),
        ..CreateSessionRequest::default()
    };
    bridge
        .daemon
        .create_session(id, &request)
        .await
        .map_err(acp_error)?;
    bridge.daemon.get_session(id).await.map_err(acp_error)
}

/// What a replay leaves for a follower: the converter, which knows what each item has sent
/// already, and the last event replayed.
pub struct Replayed {
    /// The converter the replay used.
    pub converter: convert::UpdateConverter,
    /// The sequence of the last event replayed (0 for an empty log).
    pub last: u64,
}

/// Replays `session`'s log as updates (user messages included), up to its last event now.
pub async fn replay(
    bridge: &Bridge,
    cx: &ConnectionTo<Client>,
    session: &str,
) -> Result<Replayed, acp::Error> {
    let id = s::SessionId::from(session.to_string());
    let mut converter = convert::UpdateConverter::new(true);
    let mut offset = 0;
    loop {
        let query = EventsQuery {
            offset: Some(offset),
            limit: Some(1000),
            include_raw: false,
        };
        let page = bridge
            .daemon
            .get_events(session, &query)
            .await
            .map_err(acp_error)?;
        for event in &page.events {
            offset = event.sequence;
            for update in converter.updates(event) {
                cx.send_notification(s::SessionNotification::new(id.clone(), update))?;
            }
        }
        if !page.has_more || page.events.is_empty() {
            return Ok(Replayed {
                converter,
                last: offset,
            });
        }
    }
}

/// Changes a session's agent mode or model. The daemon fixes both when a session is
/// created, so a session that has not run a turn yet is created again with the new setting
/// (the same id, directory and MCP servers); one that has run a turn keeps what it has
/// (`invalid params`).
pub async fn reconfigure(
    bridge: &Bridge,
    session: &str,
    agent_mode: Option<String>,
    model: Option<String>,
) -> Result<SessionInfo, acp::Error> {
    let info = bridge
        .daemon
        .get_session(session)
        .await
        .map_err(acp_error)?;
    let unchanged = agent_mode
        .as_ref()
        .is_none_or(|m| Some(m) == info.agent_mode.as_ref())
        && model
            .as_ref()
            .is_none_or(|m| Some(m) == info.model.as_ref());
    if unchanged {
        return Ok(info);
    }
    let query = EventsQuery {
        offset: Some(0),
        limit: Some(1000),
        include_raw: false,
    };
    let started = bridge
        .daemon
        .get_events(session, &query)
        .await
        .map_err(acp_error)?
        .events
        .iter()
        .any(|e| matches!(e.payload, sandbox_universal::EventPayload::TurnStarted(_)));
    if started {
        return Err(acp::Error::invalid_params().data(
            "the agent mode and model are fixed once a session has run a turn: start a new session",
        ));
    }
    let servers = bridge
        .servers
        .lock()
        .expect("servers")
        .get(session)
        .cloned()
        .unwrap_or_default();
    bridge
        .daemon
        .delete_session(session)
        .await
        .map_err(acp_error)?;
    create(
        bridge,
        session,
        info.cwd.clone(),
        &servers,
        agent_mode.or(info.agent_mode.clone()),
        model.or(info.model.clone()),
    )
    .await
}
