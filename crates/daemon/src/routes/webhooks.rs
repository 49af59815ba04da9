//! `/webhooks`: where the daemon `POST`s chosen events, signed, at least once, and what
//! became of each delivery (see `crate::webhooks`).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use sandbox_universal::{
    CreateWebhookRequest, CreatedWebhook, ProblemDetails, Webhook, WebhookDeliveryList, WebhookList,
};
use serde::Deserialize;
use utoipa::IntoParams;

use super::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::webhooks::{MAX_PAGE, Webhooks};

fn webhooks(state: &AppState) -> Webhooks {
    Webhooks::new(state.sessions.store().clone())
}

/// Registers a webhook for every session's events of the listed types. Each is `POST`ed
/// to `url` as a `WebhookPayload`, at least once: signed in `Sandbox-Daemon-Signature`
/// (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with the secret), keyed in
/// `Webhook-Id` and `Idempotency-Key` (`<sessionId>:<sequence>`, the same on every
/// attempt), and retried with back-off from the store's outbox until the receiver answers
/// 2xx (surviving restarts) or 24 hours have passed. A secret the request does not give
/// is made and answered once.
#[utoipa::path(
    post,
    path = "/webhooks",
    operation_id = "createWebhook",
    tag = "webhooks",
    security(("bearer" = [])),
    request_body = CreateWebhookRequest,
    responses(
        (status = 201, description = "Registered", body = CreatedWebhook),
        (status = 422, description = "The body breaks its schema (`invalid-body`): a URL that is not http(s), an event type that is unknown, repeated or `itemDelta`, a secret of the wrong length", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn create_webhook(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<CreateWebhookRequest>,
) -> Result<(StatusCode, Json<CreatedWebhook>), ApiError> {
    let created = webhooks(&state).create(request).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// Every webhook, the daemon-wide ones and the sessions' own, oldest first (never their
/// secrets).
#[utoipa::path(
    get,
    path = "/webhooks",
    operation_id = "listWebhooks",
    tag = "webhooks",
    security(("bearer" = [])),
    responses(
        (status = 200, body = WebhookList),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn list_webhooks(State(state): State<AppState>) -> Result<Json<WebhookList>, ApiError> {
    Ok(Json(webhooks(&state).list().await?))
}

/// One webhook (never its secret).
#[utoipa::path(
    get,
    path = "/webhooks/{webhookId}",
    operation_id = "getWebhook",
    tag = "webhooks",
    security(("bearer" = [])),
    params(("webhookId" = String, Path, description = "Webhook id")),
    responses(
        (status = 200, body = Webhook),
        (status = 404, description = "No such webhook (`webhook-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn get_webhook(
    State(state): State<AppState>,
    ApiPath(webhook_id): ApiPath<String>,
) -> Result<Json<Webhook>, ApiError> {
    Ok(Json(webhooks(&state).get(&webhook_id).await?))
}

/// Deletes a webhook with its deliveries: what is still pending is not attempted again.
#[utoipa::path(
    delete,
    path = "/webhooks/{webhookId}",
    operation_id = "deleteWebhook",
    tag = "webhooks",
    security(("bearer" = [])),
    params(("webhookId" = String, Path, description = "Webhook id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such webhook (`webhook-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn delete_webhook(
    State(state): State<AppState>,
    ApiPath(webhook_id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    webhooks(&state).delete(&webhook_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A page of deliveries.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// Page size (1–500, default 100).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<usize>,
}

/// A webhook's deliveries, oldest first, one page at a time: each event's status
/// (`pending`, `delivered`, `failed`), attempts, last answer or error, and next attempt.
/// Finished deliveries are kept for 7 days.
#[utoipa::path(
    get,
    path = "/webhooks/{webhookId}/deliveries",
    operation_id = "listWebhookDeliveries",
    tag = "webhooks",
    security(("bearer" = [])),
    params(("webhookId" = String, Path, description = "Webhook id"), DeliveriesQuery),
    responses(
        (status = 200, body = WebhookDeliveryList),
        (status = 400, description = "Bad cursor or limit", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such webhook (`webhook-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn list_webhook_deliveries(
    State(state): State<AppState>,
    ApiPath(webhook_id): ApiPath<String>,
    ApiQuery(query): ApiQuery<DeliveriesQuery>,
) -> Result<Json<WebhookDeliveryList>, ApiError> {
    let limit = match query.limit {
        None => 100,
        Some(limit @ 1..=MAX_PAGE) => limit,
        Some(_) => {
            return Err(ApiError::InvalidParameter(format!(
                "`limit` must be 1 to {MAX_PAGE}"
            )));
        }
    };
    Ok(Json(
        webhooks(&state)
            .deliveries(&webhook_id, query.cursor.as_deref(), limit)
            .await?,
    ))
}
