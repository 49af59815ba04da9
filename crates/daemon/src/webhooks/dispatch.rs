//! The dispatcher: leases due deliveries from the outbox, `POST`s each (signed), and
//! records the outcome — delivered on a 2xx, else due again after a back-off that doubles
//! (a receiver's `Retry-After` is honoured within the cap), until the event is older than
//! the give-up age. It wakes when this daemon's commits queue deliveries, when the next
//! retry is due, and every few seconds (deliveries other daemons sharing the store queued).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use sandbox_universal::{DELIVERY_ID_HEADER, SIGNATURE_HEADER};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::watch;

use super::{KEEP_FINISHED, delivery_key};
use crate::signing::{sign, unix_now};
use crate::store::side::{AttemptOutcome, DueDelivery};
use crate::store::{Store, now_ms};

/// Deliveries attempted at once.
const BATCH: usize = 16;
/// How often the outbox is looked at when nothing wakes the dispatcher.
const POLL: Duration = Duration::from_secs(5);
/// How often finished deliveries past [`KEEP_FINISHED`] are deleted.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);
/// How much of a failed answer's body is kept as its error.
const SNIPPET_CHARS: usize = 200;

/// When deliveries are retried and given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryPolicy {
    /// The wait before the first retry; it doubles for each one after.
    pub first_retry: Duration,
    /// The longest wait between attempts (a `Retry-After` included).
    pub max_backoff: Duration,
    /// No attempt is made once an event's delivery is this old; it is then `failed`.
    pub give_up_after: Duration,
    /// How long one attempt may take.
    pub attempt_timeout: Duration,
}

impl Default for DeliveryPolicy {
    /// Retries after 1 s, 2 s, 4 s, ... up to an hour apart, for 24 hours; 10 s an attempt.
    fn default() -> Self {
        Self {
            first_retry: Duration::from_secs(1),
            max_backoff: Duration::from_secs(3600),
            give_up_after: Duration::from_secs(24 * 3600),
            attempt_timeout: Duration::from_secs(10),
        }
    }
}

impl DeliveryPolicy {
    /// The wait after attempt number `attempt` (1 for the first) failed.
    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let doubled = self
            .first_retry
            .saturating_mul(1 << attempt.saturating_sub(1).min(20));
        retry_after.unwrap_or(doubled).min(self.max_backoff)
    }
}

/// What a receiver gets (`sandbox_universal::WebhookPayload`), with the stored event's
/// JSON as it is.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Payload<'a> {
    delivery_id: &'a str,
    webhook_id: &'a str,
    #[serde(rename = "type")]
    event_type: &'a str,
    event: &'a RawValue,
}

/// Starts the dispatcher; it stops when `closing` turns true.
pub fn spawn_dispatcher(
    store: Arc<Store>,
    policy: DeliveryPolicy,
    closing: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(run(store, policy, closing))
}

async fn run(store: Arc<Store>, policy: DeliveryPolicy, mut closing: watch::Receiver<bool>) {
    let clients = sandbox_install::clients::LazyClients::new(|| {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("sandbox-daemon/", env!("CARGO_PKG_VERSION")))
    });
    let outbox = store.outbox().clone();
    let me = store.daemon_id().to_string();
    // Attempts this daemon had in flight when it last stopped are due again at once.
    let mine = me.clone();
    if let Err(error) = store.side(move |s| s.release_leases(&mine)).await {
        tracing::warn!(%error, "releasing this daemon's webhook leases failed; they lapse");
    }
    let mut last_prune = tokio::time::Instant::now() - PRUNE_EVERY;
    let mut warned_at: Option<tokio::time::Instant> = None;
    while !*closing.borrow() {
        if last_prune.elapsed() >= PRUNE_EVERY {
            last_prune = tokio::time::Instant::now();
            let before = now_ms() - KEEP_FINISHED.as_millis() as i64;
            if let Err(error) = store.side(move |s| s.prune_deliveries(before)).await {
                tracing::warn!(%error, "deleting old webhook deliveries failed; will retry");
            }
        }
        let now = now_ms();
        let lease_until =
            now + (policy.attempt_timeout + Duration::from_secs(30)).as_millis() as i64;
        let by = me.clone();
        let due = match store
            .side(move |s| s.lease_due(now, lease_until, BATCH, &by))
            .await
        {
            Ok(due) => due,
            Err(error) => {
                // Rate-limited: a store outage is reported by the store's own health.
                if warned_at.is_none_or(|at| at.elapsed() > Duration::from_secs(60)) {
                    warned_at = Some(tokio::time::Instant::now());
                    tracing::warn!(%error, "webhook deliveries cannot be read; retrying");
                }
                wait(&outbox, &mut closing, POLL).await;
                continue;
            }
        };
        if due.is_empty() {
            let next = store.side(|s| s.next_due()).await.ok().flatten();
            let until_next = next.map_or(POLL, |at| {
                Duration::from_millis((at - now_ms()).max(0) as u64).min(POLL)
            });
            wait(&outbox, &mut closing, until_next).await;
            continue;
        }
        let attempts = due
            .iter()
            .map(|delivery| attempt(&clients, delivery, &policy));
        let outcomes = futures::future::join_all(attempts).await;
        for (delivery, outcome) in due.iter().zip(outcomes) {
            log_outcome(delivery, &outcome);
            let id = delivery.delivery_id;
            let recorded = store
                .side(move |s| s.record_attempt(id, &outcome, now_ms()))
                .await;
            if let Err(error) = recorded {
                // The lease lapses and the attempt is made again: at least once.
                tracing::warn!(%error, delivery = id, "recording a webhook attempt failed");
            }
        }
    }
}

/// Waits for new deliveries, `timeout`, or the daemon closing.
async fn wait(
    outbox: &tokio::sync::Notify,
    closing: &mut watch::Receiver<bool>,
    timeout: Duration,
) {
    tokio::select! {
        _ = outbox.notified() => {}
        _ = tokio::time::sleep(timeout) => {}
        _ = closing.changed() => {}
    }
}

fn log_outcome(delivery: &DueDelivery, outcome: &AttemptOutcome) {
    let key = delivery_key(&delivery.session_id, delivery.sequence);
    match outcome {
        AttemptOutcome::Delivered { status } => {
            tracing::debug!(webhook = %delivery.webhook_id, delivery = %key, status, "webhook delivered");
        }
        AttemptOutcome::Failed {
            error,
            retry_at_ms: Some(_),
            ..
        } => {
            tracing::info!(webhook = %delivery.webhook_id, delivery = %key, %error, "webhook attempt failed; will retry");
        }
        AttemptOutcome::Failed {
            error,
            retry_at_ms: None,
            ..
        } => {
            tracing::warn!(webhook = %delivery.webhook_id, delivery = %key, %error, "webhook delivery given up");
        }
    }
}

/// One attempt of one delivery.
async fn attempt(
    clients: &sandbox_install::clients::LazyClients,
    delivery: &DueDelivery,
    policy: &DeliveryPolicy,
) -> AttemptOutcome {
    let key = delivery_key(&delivery.session_id, delivery.sequence);
    let attempt = delivery.attempts + 1;
    let result = post(clients, delivery, &key, policy.attempt_timeout).await;
    let (status, error, retry_after) = match result {
        Ok(status) => return AttemptOutcome::Delivered { status },
        Err(failure) => failure,
    };
    let created = created_ms(delivery);
    let retry_at = now_ms() + policy.backoff(attempt, retry_after).as_millis() as i64;
    let give_up_at = created + policy.give_up_after.as_millis() as i64;
    AttemptOutcome::Failed {
        status,
        error,
        retry_at_ms: (retry_at <= give_up_at).then_some(retry_at),
    }
}

/// When the delivery's event was logged (its `time`), in ms; now when it cannot be read.
fn created_ms(delivery: &DueDelivery) -> i64 {
    #[derive(serde::Deserialize)]
    struct Time {
        time: chrono::DateTime<chrono::Utc>,
    }
    serde_json::from_str::<Time>(&delivery.event)
        .map_or_else(|_| now_ms(), |t| t.time.timestamp_millis())
}

type Failure = (Option<u16>, String, Option<Duration>);

async fn post(
    clients: &sandbox_install::clients::LazyClients,
    delivery: &DueDelivery,
    key: &str,
    timeout: Duration,
) -> Result<u16, Failure> {
    let fail = |error: String| (None, error, None);
    let url = reqwest::Url::parse(&delivery.url)
        .map_err(|e| fail(format!("the URL is not valid: {e}")))?;
    let event = RawValue::from_string(delivery.event.clone())
        .map_err(|e| fail(format!("the stored event is not JSON: {e}")))?;
    let event_type = serde_json::from_str::<serde_json::Value>(event.get())
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_default();
    let body = serde_json::to_vec(&Payload {
        delivery_id: key,
        webhook_id: &delivery.webhook_id,
        event_type: &event_type,
        event: &event,
    })
    .map_err(|e| fail(format!("the payload is not JSON: {e}")))?;
    let body = Bytes::from(body);
    let signature = sign(delivery.secret.as_bytes(), unix_now(), &body);
    let client = clients.get(crate::host_tools::http::is_loopback(&url));
    let response = client
        .post(url)
        .timeout(timeout)
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .header(SIGNATURE_HEADER, signature)
        .header(DELIVERY_ID_HEADER, key)
        .header("Idempotency-Key", key)
        .header(
            "Sandbox-Daemon-Attempt",
            (delivery.attempts + 1).to_string(),
        )
        .body(body)
        .send()
        .await
        .map_err(|e| fail(describe(&e)))?;
    let status = response.status();
    if status.is_success() {
        return Ok(status.as_u16());
    }
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let text = response.text().await.unwrap_or_default();
    let snippet: String = text.chars().take(SNIPPET_CHARS).collect();
    let error = if snippet.trim().is_empty() {
        format!("the receiver answered {status}")
    } else {
        format!("the receiver answered {status}: {}", snippet.trim())
    };
    Err((Some(status.as_u16()), error, retry_after))
}

/// A transport error in words, with its causes.
fn describe(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() {
        "the receiver did not answer in time".to_string()
    } else if error.is_connect() {
        "the receiver could not be reached".to_string()
    } else {
        "the request failed".to_string()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_its_cap() {
        let policy = DeliveryPolicy {
            first_retry: Duration::from_secs(1),
            max_backoff: Duration::from_secs(10),
            ..DeliveryPolicy::default()
        };
        let waits: Vec<u64> = (1..=6).map(|n| policy.backoff(n, None).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 10, 10]);
        assert_eq!(policy.backoff(1, Some(Duration::from_secs(7))).as_secs(), 7);
        assert_eq!(
            policy.backoff(1, Some(Duration::from_secs(70))).as_secs(),
            10
        );
        assert_eq!(policy.backoff(u32::MAX, None).as_secs(), 10);
    }
}
