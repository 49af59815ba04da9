//! `/agents`: what agents exist, their models and modes, and installing them.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::StreamExt;
use sandbox_agents::AgentDriver;
use sandbox_universal::{
    AgentId, AgentInfo, AgentsResponse, InstallProgress, InstallRequest, InstallResponse,
    ModelsResponse, ModesResponse, ProblemDetails,
};

use super::AppState;
use crate::error::ApiError;
use crate::extract::{ApiOptionalJson, ApiPath};

/// The agent a path names, or a 404 `unknown-agent`.
pub(super) fn agent_id(name: &str) -> Result<AgentId, ApiError> {
    name.parse()
        .map_err(|e: sandbox_universal::UnknownAgentName| ApiError::UnknownAgent(e.to_string()))
}

fn driver(state: &AppState, name: &str) -> Result<Arc<dyn AgentDriver>, ApiError> {
    Ok(state.sessions.registry().get(agent_id(name)?))
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
    let installs = state.sessions.installs();
    let credentials = state.sessions.credentials();
    let infos = drivers.iter().map(|driver| async move {
        let status = driver.status().await;
        AgentInfo {
            id: driver.id(),
            name: driver.name().into(),
            installed: status.installed,
            source: installs.source(driver.id(), status.origin, status.version.as_deref()),
            installed_versions: installs.installed_versions(driver.id()),
            version: status.version,
            path: status.path.map(|p| p.display().to_string()),
            // Every agent of this build has a driver (the registry's match is exhaustive).
            supported: true,
            capabilities: driver.capabilities(),
            credentials: credentials.available(driver.id()),
            policy: driver.policy(),
            capability_proofs: sandbox_agents::proofs::capability_proofs(driver.id()),
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
        (status = 409, description = "The agent is not installed (its models are asked of its binary)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent failed to list its models", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn agent_models(
    State(state): State<AppState>,
    ApiPath(agent): ApiPath<String>,
) -> Result<Json<ModelsResponse>, ApiError> {
    let driver = driver(&state, &agent)?;
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
        (status = 409, description = "The agent lists its modes live and is not installed", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent failed to list its modes", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn agent_modes(
    State(state): State<AppState>,
    ApiPath(agent): ApiPath<String>,
) -> Result<Json<ModesResponse>, ApiError> {
    let driver = driver(&state, &agent)?;
    Ok(Json(driver.modes().await?))
}

/// Installs an agent: downloads the binary for this machine (the version asked for, else
/// the daemon's default, pinned unless configured otherwise), verifies it and makes it the
/// one new sessions use. A binary already here answers at once (unless `reinstall`); an
/// install of the same agent already running is waited for, not repeated. Asked for
/// `text/event-stream`, it streams `progress` frames, then one `installed` or `error` frame.
#[utoipa::path(
    post,
    path = "/agents/{agent}/install",
    operation_id = "installAgent",
    tag = "agents",
    security(("bearer" = [])),
    params(("agent" = String, Path, description = "Agent id")),
    request_body(content = InstallRequest, description = "What to install (optional: no body installs the default version unless the agent is already here)", content_type = "application/json"),
    responses(
        (status = 200, description = "Installed (or already there). With `Accept: text/event-stream`: frames `event: progress` (`data`: an InstallProgress), then `event: installed` (`data`: an InstallResponse) or `event: error` (`data`: problem details, e.g. `installFailed`); the HTTP status is then 200 whatever the outcome.", content(
            (InstallResponse = "application/json"),
            (String = "text/event-stream")
        )),
        (status = 404, description = "Unknown agent", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "Installing is off in this daemon, or `SANDBOX_DAEMON_<AGENT>_PATH` names the binary to use (and it is not the version asked for)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The install failed (`agentError.type` is `installFailed`): a download answered an error status or broke off after retries, a checksum did not match, the platform has no build, the binary did not report the version, the disk is full, or a tool (Node.js, npm) is missing. Nothing partial is left behind.", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn install_agent(
    State(state): State<AppState>,
    ApiPath(agent): ApiPath<String>,
    headers: HeaderMap,
    ApiOptionalJson(request): ApiOptionalJson<InstallRequest>,
) -> Result<Response, ApiError> {
    let agent = driver(&state, &agent)?.id();
    let installs = state.sessions.installs().clone();
    let streamed = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/event-stream"));
    // The install runs on its own task: a client that goes away does not cut it short (a
    // request asking again waits for it).
    let (frames, body) = tokio::sync::mpsc::unbounded_channel::<InstallProgress>();
    let task = tokio::spawn(async move {
        let progress = move |step: InstallProgress| {
            let _ = frames.send(step);
        };
        installs.install(agent, &request, &progress).await
    });
    if !streamed {
        let done = task
            .await
            .map_err(|e| ApiError::Internal(format!("the install task: {e}")))??;
        return Ok(Json(done).into_response());
    }
    let instance = format!("/agents/{}/install", agent.as_str());
    let stream = install_frames(body, task, instance, state.sse_keep_alive);
    let mut response = Response::new(Body::from_stream(
        stream.map(Ok::<_, std::convert::Infallible>),
    ));
    let response_headers = response.headers_mut();
    response_headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response_headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

/// The install's SSE frames: its progress as it comes, a keep-alive comment whenever
/// nothing was sent for `keep_alive`, then its outcome (after which the stream ends).
fn install_frames(
    progress: tokio::sync::mpsc::UnboundedReceiver<InstallProgress>,
    task: tokio::task::JoinHandle<Result<InstallResponse, ApiError>>,
    instance: String,
    keep_alive: std::time::Duration,
) -> impl futures::Stream<Item = Bytes> {
    futures::stream::unfold(Some((progress, task)), move |state| {
        let instance = instance.clone();
        async move {
            let (mut progress, task) = state?;
            match tokio::time::timeout(keep_alive, progress.recv()).await {
                Ok(Some(step)) => return Some((frame("progress", &step), Some((progress, task)))),
                Err(_) => {
                    return Some((
                        Bytes::from_static(b": installing\n\n"),
                        Some((progress, task)),
                    ));
                }
                // Every progress sender is gone: the install is over.
                Ok(None) => {}
            }
            let last = match task.await {
                Ok(Ok(done)) => frame("installed", &done),
                Ok(Err(error)) => {
                    let mut problem = error.problem();
                    problem.instance = Some(instance);
                    frame("error", &problem)
                }
                Err(e) => frame(
                    "error",
                    &ApiError::Internal(format!("the install task: {e}")).problem(),
                ),
            };
            Some((last, None))
        }
    })
}

/// One SSE frame.
fn frame(event: &str, data: &impl serde::Serialize) -> Bytes {
    let json = serde_json::to_string(data).expect("install frames serialize");
    Bytes::from(format!("event: {event}\ndata: {json}\n\n"))
}
