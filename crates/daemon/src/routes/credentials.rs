//! `/credentials`: the logins the daemon keeps for agents (write-only: a stored secret is
//! never answered, only what it holds).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use sandbox_agents::login::Login;
use sandbox_universal::{
    AgentId, CredentialsResponse, ProblemDetails, PutCredentialRequest, StoredLoginInfo,
};

use super::AppState;
use crate::credentials::CredentialError;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use crate::session::SessionError;

use super::agents::agent_id as agent;

impl From<CredentialError> for ApiError {
    fn from(error: CredentialError) -> Self {
        match error {
            CredentialError::Invalid { .. } => Self::InvalidCredential(error.to_string()),
            CredentialError::Io { ref error, .. }
                if error.kind() == std::io::ErrorKind::StorageFull =>
            {
                Self::Session(SessionError::StoreFull(error.to_string()))
            }
            CredentialError::Io { .. } => Self::Internal(error.to_string()),
        }
    }
}

/// Runs a credential store operation off the async runtime (it takes a file lock).
async fn blocking<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce(&crate::credentials::CredentialStore) -> Result<T, CredentialError>
    + Send
    + 'static,
) -> Result<T, ApiError> {
    let store = state.sessions.credentials().store().clone();
    tokio::task::spawn_blocking(move || work(&store))
        .await
        .map_err(|e| ApiError::Internal(format!("the credential store task failed: {e}")))?
        .map_err(ApiError::from)
}

/// Every stored login: its agent, the file a session's home gets, its entries' names,
/// kinds and expiry, where it came from, when it was stored and last refreshed. Never a
/// secret.
#[utoipa::path(
    get,
    path = "/credentials",
    operation_id = "listCredentials",
    tag = "credentials",
    security(("bearer" = [])),
    responses(
        (status = 200, body = CredentialsResponse)
    )
)]
pub async fn list_credentials(
    State(state): State<AppState>,
) -> Result<Json<CredentialsResponse>, ApiError> {
    let credentials = blocking(&state, |store| Ok(store.list())).await?;
    Ok(Json(CredentialsResponse { credentials }))
}

/// The login stored for an agent (never its secret).
#[utoipa::path(
    get,
    path = "/credentials/{agent}",
    operation_id = "getCredential",
    tag = "credentials",
    security(("bearer" = [])),
    params(("agent" = String, Path, description = "Agent id")),
    responses(
        (status = 200, body = StoredLoginInfo),
        (status = 404, description = "Unknown agent, or no login stored for it (`credential-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 500, description = "The stored login cannot be read", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn get_credential(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<StoredLoginInfo>, ApiError> {
    let agent = agent(&name)?;
    blocking(&state, move |store| store.info(agent))
        .await?
        .map(Json)
        .ok_or_else(|| not_stored(agent))
}

/// Stores a login for an agent, replacing the one stored: its login file as the agent
/// wrote it (`login`: Claude's `.credentials.json`, Codex's `auth.json`, OpenCode's
/// `auth.json`, Amp's `secrets.json`, Pi's `auth.json`) or, for Claude, a long-lived
/// `token`. Sessions with no `token` of their own, of a daemon whose environment has no
/// credential for the agent, get it in their private home; what the agent refreshes there
/// is written back. Kept in the daemon's data dir, mode 0600.
#[utoipa::path(
    put,
    path = "/credentials/{agent}",
    operation_id = "putCredential",
    tag = "credentials",
    security(("bearer" = [])),
    params(("agent" = String, Path, description = "Agent id")),
    request_body = PutCredentialRequest,
    responses(
        (status = 200, description = "Stored, replacing the login stored before", body = StoredLoginInfo),
        (status = 201, description = "Stored", body = StoredLoginInfo),
        (status = 400, description = "Malformed JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown agent", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The body breaks its schema, or has neither or both of `login` and `token` (`invalid-body`); or it is not a login of that agent (`invalid-credential`: the detail says why)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 500, description = "The store could not be written", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "No space left in the data dir", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn put_credential(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
    ApiJson(request): ApiJson<PutCredentialRequest>,
) -> Result<(StatusCode, Json<StoredLoginInfo>), ApiError> {
    let agent = agent(&name)?;
    let login = match (request.login, request.token) {
        (Some(file), None) => Login::File(file),
        (None, Some(token)) => Login::Token(token),
        _ => {
            return Err(ApiError::InvalidBody(
                "give exactly one of `login` (the agent's login file) and `token`".into(),
            ));
        }
    };
    let source = request.source;
    let (info, replaced) = blocking(&state, move |store| store.put(agent, login, source)).await?;
    tracing::info!(agent = agent.as_str(), replaced, "stored a login");
    let status = if replaced {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((status, Json(info)))
}

/// Removes the login stored for an agent. Sessions running on it keep their copy until
/// their agent stops.
#[utoipa::path(
    delete,
    path = "/credentials/{agent}",
    operation_id = "deleteCredential",
    tag = "credentials",
    security(("bearer" = [])),
    params(("agent" = String, Path, description = "Agent id")),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "Unknown agent, or no login stored for it (`credential-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 500, description = "The store could not be written", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn delete_credential(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    let agent = agent(&name)?;
    if blocking(&state, move |store| store.remove(agent)).await? {
        tracing::info!(agent = agent.as_str(), "removed a stored login");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_stored(agent))
    }
}

fn not_stored(agent: AgentId) -> ApiError {
    ApiError::CredentialNotFound(format!(
        "no login is stored for {} (store one with PUT /credentials/{} or `sandbox-daemon credentials import`)",
        agent.as_str(),
        agent.as_str()
    ))
}
