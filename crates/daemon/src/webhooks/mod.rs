//! Webhooks: the host registers URLs (`POST /webhooks`, or a session's own `webhook`) and
//! the daemon `POST`s the events they name, signed, at least once.
//!
//! **Invariant (at least once):** an event's deliveries are queued in the store in the
//! same transaction that stores the event (`store/side.rs`), and a delivery leaves the
//! outbox only when the receiver answered 2xx or its retries ran out; an attempt is leased,
//! so a daemon that dies mid-attempt leaves it to be tried again once the lease lapses.
//! Every attempt of one event carries the same body and `Webhook-Id`
//! (`<sessionId>:<sequence>`), so the receiver can drop repeats. `dispatch.rs` runs the
//! attempts; this file is what the routes and session creation call.

mod dispatch;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use sandbox_universal::{
    CreateWebhookRequest, CreatedWebhook, EventType, SessionWebhook, Webhook, WebhookDelivery,
    WebhookDeliveryList, WebhookList,
};

pub use dispatch::{DeliveryPolicy, spawn_dispatcher};

use crate::error::ApiError;
use crate::store::side::{DeliveryRow, WebhookRow, decode_events, encode_events};
use crate::store::{Store, now_ms};

/// The most deliveries one page lists.
pub const MAX_PAGE: usize = 500;

/// Registering, listing and deleting webhooks; reading their deliveries.
#[derive(Debug, Clone)]
pub struct Webhooks {
    store: Arc<Store>,
}

impl Webhooks {
    /// Webhooks kept in `store`.
    pub fn new(store: Arc<Store>) -> Self {
        Self { store }
    }

    /// Registers a webhook for every session (its request already checked).
    pub async fn create(&self, request: CreateWebhookRequest) -> Result<CreatedWebhook, ApiError> {
        let made = request.secret.is_none().then(new_secret);
        let secret = request.secret.clone().or_else(|| made.clone());
        let row = new_row(
            None,
            &request.url,
            &request.events,
            secret.expect("given or made"),
        );
        let webhook = to_webhook(&row);
        self.store
            .side(move |side| side.create_webhook(&row))
            .await
            .map_err(store_error)?;
        Ok(CreatedWebhook {
            webhook,
            secret: made,
        })
    }

    /// Registers session `sid`'s own webhook (its request already checked).
    pub async fn create_for_session(
        &self,
        sid: i64,
        webhook: &SessionWebhook,
    ) -> Result<(), crate::store::StoreError> {
        let row = new_row(
            Some(sid),
            &webhook.url,
            &webhook.events,
            webhook.secret.clone(),
        );
        self.store.side(move |side| side.create_webhook(&row)).await
    }

    /// Every webhook, oldest first.
    pub async fn list(&self) -> Result<WebhookList, ApiError> {
        let rows = self
            .store
            .side(|side| side.webhooks())
            .await
            .map_err(store_error)?;
        Ok(WebhookList {
            webhooks: rows.iter().map(to_webhook).collect(),
        })
    }

    /// One webhook.
    pub async fn get(&self, id: &str) -> Result<Webhook, ApiError> {
        let owned = id.to_string();
        let row = self
            .store
            .side(move |side| side.webhook(&owned))
            .await
            .map_err(store_error)?;
        row.as_ref().map(to_webhook).ok_or_else(|| not_found(id))
    }

    /// Deletes a webhook and its deliveries (pending ones are not attempted again).
    pub async fn delete(&self, id: &str) -> Result<(), ApiError> {
        let owned = id.to_string();
        let deleted = self
            .store
            .side(move |side| side.delete_webhook(&owned))
            .await
            .map_err(store_error)?;
        if deleted { Ok(()) } else { Err(not_found(id)) }
    }

    /// A page of a webhook's deliveries, oldest first, after `cursor`.
    pub async fn deliveries(
        &self,
        id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<WebhookDeliveryList, ApiError> {
        self.get(id).await?;
        let after = match cursor {
            None => 0,
            Some(cursor) => sandbox_universal::constraints::SEQUENCE
                .matches(cursor)
                .then(|| cursor.parse::<i64>().ok())
                .flatten()
                .ok_or_else(|| {
                    ApiError::InvalidParameter(
                        "`cursor` must be a `nextCursor` of an earlier page".into(),
                    )
                })?,
        };
        let owned = id.to_string();
        let rows = self
            .store
            .side(move |side| side.deliveries(&owned, after, limit + 1))
            .await
            .map_err(store_error)?;
        let more = rows.len() > limit;
        let page: Vec<_> = rows.into_iter().take(limit).collect();
        Ok(WebhookDeliveryList {
            next_cursor: more
                .then(|| page.last().map(|row| row.delivery_id.to_string()))
                .flatten(),
            deliveries: page.iter().map(to_delivery).collect(),
        })
    }
}

fn new_row(sid: Option<i64>, url: &str, events: &[String], secret: String) -> WebhookRow {
    WebhookRow {
        webhook_id: format!("wh_{}", uuid::Uuid::new_v4().simple()),
        sid,
        session_id: None,
        url: url.to_string(),
        events: encode_events(events),
        secret,
        created_ms: now_ms(),
    }
}

/// A secret of 256 random bits, `whsec_` and hex.
fn new_secret() -> String {
    format!(
        "whsec_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

fn time(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

fn to_webhook(row: &WebhookRow) -> Webhook {
    Webhook {
        id: row.webhook_id.clone(),
        url: row.url.clone(),
        events: decode_events(&row.events),
        session_id: row.session_id.clone(),
        created_at: time(row.created_ms),
    }
}

fn to_delivery(row: &DeliveryRow) -> WebhookDelivery {
    let pending = row.status == sandbox_universal::DeliveryStatus::Pending;
    WebhookDelivery {
        id: delivery_key(&row.session_id, row.sequence),
        webhook_id: row.webhook_id.clone(),
        session_id: row.session_id.clone(),
        sequence: row.sequence,
        event_type: EventType::from_name(&row.event_type).unwrap_or(EventType::Unknown),
        status: row.status,
        attempts: row.attempts,
        last_status_code: row.last_status,
        last_error: row.last_error.clone(),
        next_attempt_at: pending.then(|| time(row.next_attempt_ms)),
        created_at: time(row.created_ms),
        finished_at: row.finished_ms.map(time),
    }
}

/// A delivery's key: `<sessionId>:<sequence>`.
pub fn delivery_key(session_id: &str, sequence: u64) -> String {
    format!("{session_id}:{sequence}")
}

fn not_found(id: &str) -> ApiError {
    ApiError::WebhookNotFound(format!("no webhook `{id}`"))
}

fn store_error(error: crate::store::StoreError) -> ApiError {
    crate::session::SessionError::from(error).into()
}

/// How long finished deliveries are kept for inspection.
pub const KEEP_FINISHED: Duration = Duration::from_secs(7 * 24 * 3600);
