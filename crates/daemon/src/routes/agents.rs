//! `/agents`: what agents exist, their models and modes, and installing them.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use sandbox_agents::AgentDriver;
use sandbox_agents::locate::override_var;
use sandbox_universal::{
    AgentId, AgentInfo, AgentsResponse, InstallResponse, ModelsResponse, ModesResponse,
    ProblemDetails,
};

use super::AppState;
use crate::error::ApiError;
use crate::extract::{ApiEmpty, ApiPath};

fn driver(state: &AppState, name: &str) -> Result<Arc<dyn AgentDriver>, ApiError> {
    let agent: AgentId = name
        .parse()
        .map_err(|e: sandbox_universal::UnknownAgentName| ApiError::UnknownAgent(e.to_string()))?;
    Ok(state.sessions.registry().get(agent))
}

fn supported(driver: Arc<dyn AgentDriver>) -> Result<Arc<dyn AgentDriver>, ApiError> {
    if driver.supported() {
        Ok(driver)
    } else {
        Err(ApiError::AgentUnsupported(format!(
            "this daemon build cannot drive {} yet",
            driver.name()
        )))
    }
}

/// Every known agent with install status and capabilities.
#[utoipa::path(
    get,
    path = "/agents",
    operation_id = "listAgents",
    tag = "agents",
    security(("bearer" = [])),
    responses(
        (status = 200, body = AgentsResponse)
    )
)]
pub async fn list_agents(State(state): State<AppState>) -> Json<AgentsResponse> {
    let drivers: Vec<_> = state.sessions.registry().all().cloned().collect();
    let infos = drivers.iter().map(|driver| async move {
        let status = driver.status().await;
        AgentInfo {
            id: driver.id(),
            name: driver.name().into(),
            installed: status.installed,
            version: status.version,
            path: status.path.map(|p| p.display().to_string()),
            supported: driver.supported(),
            capabilities: driver.capabilities(),
        }
    });
    Json(AgentsResponse {
        agents: futures::future::join_all(infos).await,
    })
}

/// The models an agent offers.
#[utoipa::path(
    get,
    path = "/agents/{agent}/models",
    operation_id = "agentModels",
    tag = "agents",
    security(("bearer" = [])),
    params(("agent" = String, Path, description = "Agent id")),
    responses(
        (status = 200, body = ModelsResponse),
        (status = 404, description = "Unknown agent", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The agent is not installed, or not supported by this build", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent failed to list its models", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn agent_models(
    State(state): State<AppState>,
    ApiPath(agent): ApiPath<String>,
) -> Result<Json<ModelsResponse>, ApiError> {
    let driver = supported(driver(&state, &agent)?)?;
    Ok(Json(driver.models().await?))
}

/// The agent modes and permission modes an agent supports.
#[utoipa::path(
    get,
    path = "/agents/{agent}/modes",
    operation_id = "agentModes",
    tag = "agents",
    security(("bearer" = [])),
    params(("agent" = String, Path, description = "Agent id")),
    responses(
        (status = 200, body = ModesResponse),
        (status = 404, description = "Unknown agent", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The agent is not supported by this build, or (for an agent that lists its modes live) not installed", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent failed to list its modes", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn agent_modes(
    State(state): State<AppState>,
    ApiPath(agent): ApiPath<String>,
) -> Result<Json<ModesResponse>, ApiError> {
    let driver = supported(driver(&state, &agent)?)?;
    Ok(Json(driver.modes().await?))
}

/// Installs an agent. An agent whose binary is already present answers at once; downloading
/// agents is not available in this build yet (409 problem naming how to provide the binary).
#[utoipa::path(
    post,
    path = "/agents/{agent}/install",
    operation_id = "installAgent",
    tag = "agents",
    security(("bearer" = [])),
    params(("agent" = String, Path, description = "Agent id")),
    responses(
        (status = 200, body = InstallResponse),
        (status = 404, description = "Unknown agent", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "Installing is not available", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn install_agent(
    State(state): State<AppState>,
    ApiPath(agent): ApiPath<String>,
    _body: ApiEmpty,
) -> Result<Json<InstallResponse>, ApiError> {
    let driver = driver(&state, &agent)?;
    let status = driver.status().await;
    if !status.installed {
        return Err(ApiError::InstallUnavailable(format!(
            "installing {} is not available in this build yet; install it yourself and set {} to the binary (or put it on PATH)",
            driver.name(),
            override_var(driver.id())
        )));
    }
    Ok(Json(InstallResponse {
        agent: driver.id(),
        already_installed: true,
        version: status.version,
        path: status.path.map(|p| p.display().to_string()),
    }))
}
