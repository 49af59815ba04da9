//! What the store keeps beside the sessions: webhooks with their outbox of deliveries, and
//! idempotency keys. Each operation is one transaction on the writer's connection, run by
//! the writer in queue order ([`Store::side`]); only the outbox's filling happens in the
//! event commits themselves (both backends' `commit`), so an event that is stored has its
//! deliveries queued in the same transaction: none is lost to a crash.
//!
//! Contract (what is on disk, migration 3): `webhooks.events` is `*` or the types between
//! commas (`,turnEnded,permissionAsked,`); a delivery's `status` is `pending`,
//! `delivered` or `failed`; an idempotency key's `status` is NULL while its first request
//! runs.

use sandbox_universal::{ALL_EVENTS, DeliveryStatus};

use tokio::sync::oneshot;

use super::writer::WriteBackend;
use super::{Store, StoreError};

/// A webhook as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRow {
    /// Its id.
    pub webhook_id: String,
    /// The session it belongs to (its store key), for a session's own webhook.
    pub sid: Option<i64>,
    /// That session's id (read with the row).
    pub session_id: Option<String>,
    /// Where deliveries go.
    pub url: String,
    /// The event types, as stored (see [`encode_events`]).
    pub events: String,
    /// The signing secret.
    pub secret: String,
    /// Creation time, ms since the Unix epoch.
    pub created_ms: i64,
}

/// `*`, or the types between commas, so one `instr`/`position` finds a type.
pub fn encode_events(events: &[String]) -> String {
    if events.iter().any(|e| e == ALL_EVENTS) {
        return ALL_EVENTS.to_string();
    }
    format!(",{},", events.join(","))
}

/// The event types of a stored `events` column.
pub fn decode_events(stored: &str) -> Vec<String> {
    stored
        .split(',')
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .collect()
}

/// A delivery as stored (without its event, which only an attempt reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRow {
    /// Its key in the outbox (the listing's cursor).
    pub delivery_id: i64,
    /// The webhook.
    pub webhook_id: String,
    /// The event's session.
    pub session_id: String,
    /// The event's sequence.
    pub sequence: u64,
    /// The event's type name.
    pub event_type: String,
    /// Pending, delivered or failed.
    pub status: DeliveryStatus,
    /// Attempts made.
    pub attempts: u32,
    /// When the next attempt is due (ms).
    pub next_attempt_ms: i64,
    /// The last attempt's HTTP status.
    pub last_status: Option<u16>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When it was queued (ms).
    pub created_ms: i64,
    /// When it was delivered or given up (ms).
    pub finished_ms: Option<i64>,
}

/// A delivery due for an attempt, leased to this daemon, with what the attempt needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDelivery {
    /// Its key in the outbox.
    pub delivery_id: i64,
    /// The webhook.
    pub webhook_id: String,
    /// Where to `POST`.
    pub url: String,
    /// The signing secret.
    pub secret: String,
    /// The event's session.
    pub session_id: String,
    /// The event's sequence.
    pub sequence: u64,
    /// The event as stored (JSON).
    pub event: String,
    /// Attempts made before this one.
    pub attempts: u32,
}

/// What became of an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The receiver answered 2xx.
    Delivered {
        /// Its status.
        status: u16,
    },
    /// It failed; try again at `retry_at_ms`, or never (`None`: given up).
    Failed {
        /// The receiver's status, when it answered.
        status: Option<u16>,
        /// What went wrong.
        error: String,
        /// When to try again.
        retry_at_ms: Option<i64>,
    },
}

/// What an attempt sets on its delivery's row.
pub(crate) struct AttemptColumns<'a> {
    /// The new status name.
    pub status: &'static str,
    /// The receiver's HTTP status.
    pub code: Option<u16>,
    /// Why it failed.
    pub error: Option<&'a str>,
    /// When the next attempt is due.
    pub next_attempt_ms: i64,
    /// When the delivery finished (delivered or given up).
    pub finished_ms: Option<i64>,
}

impl AttemptOutcome {
    /// The columns this outcome sets, at `now_ms`.
    pub(crate) fn columns(&self, now_ms: i64) -> AttemptColumns<'_> {
        match self {
            Self::Delivered { status } => AttemptColumns {
                status: "delivered",
                code: Some(*status),
                error: None,
                next_attempt_ms: now_ms,
                finished_ms: Some(now_ms),
            },
            Self::Failed {
                status,
                error,
                retry_at_ms,
            } => AttemptColumns {
                status: if retry_at_ms.is_some() {
                    "pending"
                } else {
                    "failed"
                },
                code: *status,
                error: Some(error),
                next_attempt_ms: retry_at_ms.unwrap_or(now_ms),
                finished_ms: retry_at_ms.is_none().then_some(now_ms),
            },
        }
    }
}

/// An idempotency key's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotentRow {
    /// The request's fingerprint (method, path and body digest).
    pub fingerprint: String,
    /// The first answer's status, once it is known (`None`: the first request runs).
    pub status: Option<u16>,
    /// The first answer's body.
    pub body: Option<String>,
    /// When the key was first used (ms).
    pub created_ms: i64,
}

/// The store's side tables, one transaction per call, on the writer's connection.
pub trait SideWrites {
    /// Stores a webhook.
    fn create_webhook(&mut self, webhook: &WebhookRow) -> Result<(), StoreError>;
    /// Deletes a webhook and its deliveries; answers whether it existed.
    fn delete_webhook(&mut self, webhook_id: &str) -> Result<bool, StoreError>;
    /// Every webhook, oldest first.
    fn webhooks(&mut self) -> Result<Vec<WebhookRow>, StoreError>;
    /// One webhook.
    fn webhook(&mut self, webhook_id: &str) -> Result<Option<WebhookRow>, StoreError>;
    /// A page of a webhook's deliveries after `after` (a delivery key), oldest first.
    fn deliveries(
        &mut self,
        webhook_id: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<DeliveryRow>, StoreError>;
    /// Leases up to `limit` pending deliveries due at `now_ms` and not leased to anyone,
    /// to daemon `by` until `lease_until_ms`.
    fn lease_due(
        &mut self,
        now_ms: i64,
        lease_until_ms: i64,
        limit: usize,
        by: &str,
    ) -> Result<Vec<DueDelivery>, StoreError>;
    /// Ends the leases daemon `by` holds (it starts again: its attempts in flight died).
    fn release_leases(&mut self, by: &str) -> Result<usize, StoreError>;
    /// Records an attempt of delivery `delivery_id`.
    fn record_attempt(
        &mut self,
        delivery_id: i64,
        outcome: &AttemptOutcome,
        now_ms: i64,
    ) -> Result<(), StoreError>;
    /// When the next pending delivery is due (ms), if any.
    fn next_due(&mut self) -> Result<Option<i64>, StoreError>;
    /// Deletes deliveries finished before `before_ms`; answers how many.
    fn prune_deliveries(&mut self, before_ms: i64) -> Result<usize, StoreError>;
    /// Takes idempotency key `key` in `scope` for a request with `fingerprint` when it is
    /// free (answers `None`) or held by a first request that started before
    /// `stale_before_ms` and never finished (a crash; it is taken over); else answers
    /// what it holds.
    fn take_key(
        &mut self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        now_ms: i64,
        stale_before_ms: i64,
    ) -> Result<Option<IdempotentRow>, StoreError>;
    /// What idempotency key `key` holds.
    fn key(&mut self, scope: &str, key: &str) -> Result<Option<IdempotentRow>, StoreError>;
    /// Keeps the first answer of the request holding `key`.
    fn finish_key(
        &mut self,
        scope: &str,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError>;
    /// Frees `key` (its first request failed in a way a retry may not).
    fn release_key(&mut self, scope: &str, key: &str) -> Result<(), StoreError>;
    /// Deletes idempotency keys first used before `before_ms`; answers how many.
    fn prune_keys(&mut self, before_ms: i64) -> Result<usize, StoreError>;
}

/// The delivery status of a stored name (an unknown one, from a newer build, reads as
/// failed: it is not retried by this build).
pub(crate) fn parse_status(name: &str) -> DeliveryStatus {
    match name {
        "pending" => DeliveryStatus::Pending,
        "delivered" => DeliveryStatus::Delivered,
        _ => DeliveryStatus::Failed,
    }
}

/// A job on the side tables that answers through its own channel.
pub(crate) trait SideRun: Send {
    /// Runs it; answers the outage it met, if any.
    fn run(self: Box<Self>, backend: &mut dyn WriteBackend) -> Option<StoreError>;
    /// Answers `error` without running it.
    fn fail(self: Box<Self>, error: StoreError);
}

/// A side job: `work`, answered on `reply`.
pub(crate) struct SideJob<T, F> {
    work: F,
    reply: oneshot::Sender<Result<T, StoreError>>,
}

impl<T, F> SideJob<T, F> {
    pub(crate) fn new(work: F, reply: oneshot::Sender<Result<T, StoreError>>) -> Self {
        Self { work, reply }
    }
}

impl<T, F> SideRun for SideJob<T, F>
where
    T: Send,
    F: FnOnce(&mut dyn SideWrites) -> Result<T, StoreError> + Send,
{
    fn run(self: Box<Self>, backend: &mut dyn WriteBackend) -> Option<StoreError> {
        let result = backend.side().and_then(self.work);
        let outage = result.as_ref().err().filter(|e| e.is_outage()).cloned();
        let _ = self.reply.send(result);
        outage
    }

    fn fail(self: Box<Self>, error: StoreError) {
        let _ = self.reply.send(Err(error));
    }
}

impl Store {
    /// Runs `work` on the side tables, in the writer's order, as one transaction.
    pub async fn side<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut dyn SideWrites) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.control(|reply| super::writer::Control::Side(Box::new(SideJob::new(work, reply))))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_through_their_column() {
        let events = vec!["turnEnded".to_string(), "permissionAsked".to_string()];
        assert_eq!(encode_events(&events), ",turnEnded,permissionAsked,");
        assert_eq!(decode_events(&encode_events(&events)), events);
        assert_eq!(encode_events(&["*".to_string()]), "*");
        assert_eq!(decode_events("*"), vec!["*".to_string()]);
    }
}
