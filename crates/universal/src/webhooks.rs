//! Webhooks: the daemon `POST`s chosen events of every session (or of one session) to a
//! URL, signed, at least once, from a durable outbox in the store. What a receiver gets is
//! [`WebhookDelivery`]'s body, [`WebhookPayload`].

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{EventType, UniversalEvent};

/// Every event type matches: `events: ["*"]`.
pub const ALL_EVENTS: &str = "*";

/// The header carrying a delivery's key, `<sessionId>:<sequence>`: the same on every
/// attempt of one event, so a receiver can drop a repeat.
pub const DELIVERY_ID_HEADER: &str = "Webhook-Id";

/// The event types a webhook may subscribe to: every type but `itemDelta` (a stream of
/// text fragments, for SSE, not for webhooks) and `unknown` (what a read of a stored
/// record this build cannot parse yields; never logged anew).
pub fn subscribable(event_type: EventType) -> bool {
    !matches!(event_type, EventType::ItemDelta | EventType::Unknown)
}

/// `POST /webhooks`: where and what to deliver.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWebhookRequest {
    /// Where to `POST` deliveries: an `http` or `https` URL.
    pub url: String,
    /// The event types to deliver (`permissionAsked`, `questionAsked`, `toolCallRequested`,
    /// `turnEnded`, `sessionEnded`, ... — any type but `itemDelta` and `unknown`), or `*`
    /// for all.
    pub events: Vec<String>,
    /// The key of each delivery's HMAC-SHA256 signature (16 to 512 characters). Absent:
    /// the daemon makes one and answers it once, in the creation's response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// A webhook of one session, given with the session (`CreateSessionRequest.webhook`): it
/// delivers that session's events only and goes when the session is deleted.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionWebhook {
    /// Where to `POST` deliveries: an `http` or `https` URL.
    pub url: String,
    /// The event types to deliver (any but `itemDelta` and `unknown`), or `*` for all.
    pub events: Vec<String>,
    /// The key of each delivery's HMAC-SHA256 signature (16 to 512 characters; required
    /// here, as the session's answer does not carry it).
    pub secret: String,
}

/// A webhook (its secret is never shown after its creation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    /// Its id (`wh_...`).
    pub id: String,
    /// Where deliveries go.
    pub url: String,
    /// The event types delivered (`["*"]`: all).
    pub events: Vec<String>,
    /// The session it belongs to, for a session's own webhook; absent: every session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// `POST /webhooks`'s answer: the webhook, and its secret when the daemon made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedWebhook {
    /// The webhook.
    #[serde(flatten)]
    pub webhook: Webhook,
    /// The signing secret the daemon made (only when the request gave none; shown once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// `GET /webhooks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookList {
    /// Every webhook, the daemon-wide ones and the sessions' own, oldest first.
    pub webhooks: Vec<Webhook>,
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DeliveryStatus {
    /// Not yet accepted by the receiver: waiting for its first or next attempt.
    Pending,
    /// The receiver answered 2xx.
    Delivered,
    /// Every attempt failed; no more are made.
    Failed,
}

/// One event's delivery to one webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    /// Its id: `<sessionId>:<sequence>`, the `Webhook-Id` header of every attempt.
    pub id: String,
    /// The webhook.
    pub webhook_id: String,
    /// The event's session.
    pub session_id: String,
    /// The event's sequence in its session's log.
    pub sequence: u64,
    /// The event's type.
    pub event_type: EventType,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Attempts made so far.
    pub attempts: u32,
    /// The HTTP status of the last attempt, when the receiver answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status_code: Option<u16>,
    /// Why the last attempt failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// When the next attempt is due (pending deliveries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// When the event was queued for delivery.
    pub created_at: DateTime<Utc>,
    /// When it was delivered, or given up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
}

/// `GET /webhooks/{webhookId}/deliveries`: a page, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeliveryList {
    /// The deliveries of this page.
    pub deliveries: Vec<WebhookDelivery>,
    /// Pass as `cursor` for the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The body of each delivery's `POST`: the event, with where it comes from. It is signed
/// in `Sandbox-Daemon-Signature` (`t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of
/// "<t>.<body>">`, keyed by the webhook's secret) and keyed in `Webhook-Id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookPayload {
    /// The delivery's id, `<sessionId>:<sequence>` (also `Webhook-Id`).
    pub delivery_id: String,
    /// The webhook delivering it.
    pub webhook_id: String,
    /// The event's type.
    #[serde(rename = "type")]
    pub event_type: EventType,
    /// The event, as the session's log holds it.
    pub event: UniversalEvent,
}
