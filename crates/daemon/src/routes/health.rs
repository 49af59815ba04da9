//! `GET /health`.

use axum::Json;
use sandbox_universal::HealthResponse;

/// Liveness check; needs no token.
#[utoipa::path(
    get,
    path = "/health",
    operation_id = "health",
    tag = "daemon",
    responses((status = 200, description = "The daemon is up", body = HealthResponse))
)]
pub async fn health() -> Json<HealthResponse> {
    Json(HealthResponse {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    })
}
