//! Handing a session's agent the daemon's MCP server for its host tools (and `ask_user`):
//! a token minted at each start of the agent, the server added to the agent's MCP
//! configuration under [`sandbox_universal::HOST_MCP_SERVER`].

use std::sync::Arc;

use sandbox_agents::SessionConfig;
use sandbox_universal::{HOST_MCP_SERVER, PolicySupport};

use super::{SessionCore, SessionError, SessionSettings};
use crate::host_tools::{Grant, Scope};

/// Mints the session's host tool token when its agent gets host tools or `ask_user`, and
/// puts the server into `config`; `None` when it gets neither.
pub(super) fn attach(
    settings: &SessionSettings,
    core: &Arc<SessionCore>,
    support: &PolicySupport,
    config: &mut SessionConfig,
) -> Result<Option<Grant>, SessionError> {
    let ask_user = support.host_tools && support.ask_user;
    if config.policy.host_tools.is_empty() && !ask_user {
        return Ok(None);
    }
    let scope = Scope::new(
        core,
        config.policy.host_tools.clone(),
        ask_user,
        config.cwd.clone(),
    );
    let grant = settings
        .host_tools
        .mint(scope)
        .map_err(|detail| SessionError::Internal(format!("serving host tools: {detail}")))?;
    config
        .policy
        .mcp_servers
        .insert(HOST_MCP_SERVER.to_string(), grant.server.clone());
    Ok(Some(grant))
}
