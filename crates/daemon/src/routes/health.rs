//! `GET /health`.

use axum::Json;
use axum::extract::State;
use sandbox_universal::{HealthResponse, StoreHealth};

use super::AppState;

/// Liveness check; needs no token. Answers as soon as the daemon listens, whatever its
/// store holds; `store.status` says whether the store can write.
#[utoipa::path(
    get,
    path = "/health",
    operation_id = "health",
    tag = "daemon",
    responses((status = 200, description = "The daemon is up", body = HealthResponse))
)]
pub async fn health(State(state): State<AppState>) -> Json<HealthResponse> {
    let store = state.sessions.store();
    Json(HealthResponse {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        store: StoreHealth {
            backend: store.backend(),
            status: store.health().status,
        },
    })
}
