//! Webhooks against a loopback receiver that verifies every signature: what is delivered
//! (types, bodies, keys), a session's own webhook, retries that survive a restart, giving
//! up, and bad input.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use sandbox_universal::{
    CreateSessionRequest, CreateWebhookRequest, DeliveryStatus, EventType, PermissionReply,
    SIGNATURE_HEADER, SessionWebhook, UniversalEvent, WebhookDelivery,
};
use serde_json::{Value, json};

use crate::common::{Options, TestDaemon, assert_problem, raw};

const SECRET: &str = "whsec_test_0123456789abcdef";

/// One request the receiver got.
#[derive(Clone, Debug)]
struct Received {
    delivery_id: String,
    attempt: String,
    body: Vec<u8>,
    payload: Value,
    /// The status it was answered with.
    status: u16,
}

#[derive(Default)]
struct Shared {
    received: Mutex<Vec<Received>>,
    /// Requests still to fail with 500.
    failures_left: Mutex<usize>,
    /// Fail every request.
    always_fail: Mutex<bool>,
    secret: String,
}

/// A host's webhook endpoint on 127.0.0.1: refuses a request whose signature does not
/// verify (401) — the test then fails —, fails on demand (500), records everything.
struct Receiver {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    async fn start(secret: &str) -> Self {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            secret: secret.to_string(),
            ..Shared::default()
        });
        let app = Router::new().fallback(receive).with_state(shared.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { addr, shared, task }
    }

    fn url(&self) -> String {
        format!("http://{}/hooks/sandbox", self.addr)
    }

    fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    fn delivered(&self) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.status == 200)
            .collect()
    }

    async fn wait(&self, what: &str, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let received = self.received();
            if done(&received) {
                return received;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}; received: {received:#?}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn receive(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    if let Err(why) = sandbox_testkit::host_tools::verify_signature(
        shared.secret.as_bytes(),
        &header(SIGNATURE_HEADER),
        &body,
        now,
    ) {
        panic!("a delivery's signature does not verify: {why}");
    }
    let status = {
        let mut left = shared.failures_left.lock().unwrap();
        if *shared.always_fail.lock().unwrap() || *left > 0 {
            *left = left.saturating_sub(1);
            StatusCode::INTERNAL_SERVER_ERROR
        } else {
            StatusCode::OK
        }
    };
    assert_eq!(header("content-type"), "application/json");
    assert_eq!(header("idempotency-key"), header("webhook-id"));
    shared.received.lock().unwrap().push(Received {
        delivery_id: header("webhook-id"),
        attempt: header("sandbox-daemon-attempt"),
        payload: serde_json::from_slice(&body).unwrap(),
        body: body.to_vec(),
        status: status.as_u16(),
    });
    status
}

fn types(received: &[Received]) -> Vec<String> {
    received
        .iter()
        .map(|r| r.payload["type"].as_str().unwrap().to_string())
        .collect()
}

async fn register(daemon: &TestDaemon, url: &str, events: &[&str]) -> String {
    let created = daemon
        .client
        .create_webhook(&CreateWebhookRequest {
            url: url.to_string(),
            events: events.iter().map(|e| e.to_string()).collect(),
            secret: Some(SECRET.into()),
        })
        .await
        .unwrap();
    assert_eq!(created.secret, None, "a given secret is never answered");
    created.webhook.id
}

async fn deliveries(daemon: &TestDaemon, webhook: &str) -> Vec<WebhookDelivery> {
    daemon
        .client
        .webhook_deliveries(webhook, None, None)
        .await
        .unwrap()
        .deliveries
}

#[tokio::test]
async fn chosen_events_are_delivered_signed_keyed_and_listed() {
    let receiver = Receiver::start(SECRET).await;
    let daemon = TestDaemon::start().await;
    let webhook = register(&daemon, &receiver.url(), &["permissionAsked", "turnEnded"]).await;
    daemon.mock_session("s").await;
    daemon
        .permission_turn("s", "needs permission", 1, PermissionReply::Once)
        .await;
    let received = receiver.wait("both deliveries", |r| r.len() >= 2).await;
    assert_eq!(types(&received), ["permissionAsked", "turnEnded"]);
    let log = daemon.events("s").await;
    for delivery in &received {
        let event: UniversalEvent =
            serde_json::from_value(delivery.payload["event"].clone()).unwrap();
        let logged = &log[event.sequence as usize - 1];
        assert_eq!(&event, logged, "the delivered event is the logged one");
        assert_eq!(delivery.delivery_id, format!("s:{}", event.sequence));
        assert_eq!(delivery.payload["deliveryId"], json!(delivery.delivery_id));
        assert_eq!(delivery.payload["webhookId"], json!(webhook));
        assert_eq!(delivery.attempt, "1");
    }
    // Inspectable: both delivered on their first attempt, with the receiver's status.
    let listed = deliveries(&daemon, &webhook).await;
    assert_eq!(listed.len(), 2, "{listed:#?}");
    for (delivery, got) in listed.iter().zip(&received) {
        assert_eq!(delivery.id, got.delivery_id);
        assert_eq!(delivery.status, DeliveryStatus::Delivered);
        assert_eq!(delivery.attempts, 1);
        assert_eq!(delivery.last_status_code, Some(200));
        assert!(delivery.finished_at.is_some() && delivery.next_attempt_at.is_none());
    }
    assert_eq!(listed[0].event_type, EventType::PermissionAsked);
    // Paged: one at a time, by cursor.
    let first = daemon
        .client
        .webhook_deliveries(&webhook, None, Some(1))
        .await
        .unwrap();
    let second = daemon
        .client
        .webhook_deliveries(&webhook, first.next_cursor.as_deref(), Some(1))
        .await
        .unwrap();
    assert_eq!(first.deliveries[0].id, listed[0].id);
    assert_eq!(second.deliveries[0].id, listed[1].id);
    // The listing never shows the secret; a deleted webhook delivers no more.
    let listing = raw(
        reqwest::Method::GET,
        &format!("{}/webhooks", daemon.url()),
        None,
        None,
        None,
    )
    .await;
    assert_eq!(listing.0, 200);
    assert!(!listing.2.to_string().contains(SECRET), "{}", listing.2);
    assert_eq!(
        listing.2["webhooks"][0]["events"],
        json!(["permissionAsked", "turnEnded"])
    );
    daemon.client.delete_webhook(&webhook).await.unwrap();
    let gone = raw(
        reqwest::Method::GET,
        &format!("{}/webhooks/{webhook}", daemon.url()),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&gone, 404, "webhook-not-found");
    daemon.turn("s", "hello again").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        receiver.received().len(),
        2,
        "nothing is delivered after the delete"
    );
}

#[tokio::test]
async fn a_session_webhook_gets_its_own_events_from_the_first() {
    let receiver = Receiver::start(SECRET).await;
    let daemon = TestDaemon::start().await;
    for (id, webhook) in [
        (
            "with",
            Some(SessionWebhook {
                url: receiver.url(),
                events: vec!["*".into()],
                secret: SECRET.into(),
            }),
        ),
        ("without", None),
    ] {
        daemon
            .client
            .create_session(
                id,
                &CreateSessionRequest {
                    agent: "mock".into(),
                    webhook,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        daemon.turn(id, "hello").await;
    }
    let log = daemon.events("with").await;
    let received = receiver
        .wait("every event but deltas", |r| {
            r.len()
                == log
                    .iter()
                    .filter(|e| e.payload.event_type() != EventType::ItemDelta)
                    .count()
        })
        .await;
    assert_eq!(
        received[0].payload["type"], "sessionStarted",
        "stored before its first event"
    );
    assert!(received.iter().all(|r| r.delivery_id.starts_with("with:")));
    assert!(!types(&received).contains(&"itemDelta".to_string()));
    let listed = daemon.client.list_webhooks().await.unwrap().webhooks;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].session_id.as_deref(), Some("with"));
    // It goes with its session.
    daemon.client.delete_session("with").await.unwrap();
    assert!(
        daemon
            .client
            .list_webhooks()
            .await
            .unwrap()
            .webhooks
            .is_empty()
    );
}

#[tokio::test]
async fn retries_continue_across_a_restart_with_the_same_body() {
    let receiver = Receiver::start(SECRET).await;
    *receiver.shared.failures_left.lock().unwrap() = 2;
    let daemon = TestDaemon::start().await;
    let webhook = register(&daemon, &receiver.url(), &["turnEnded"]).await;
    daemon.mock_session("s").await;
    daemon.turn("s", "hello").await;
    receiver
        .wait("the first failed attempt", |r| !r.is_empty())
        .await;
    let pending = deliveries(&daemon, &webhook).await;
    assert_eq!(pending[0].status, DeliveryStatus::Pending);
    assert_eq!(pending[0].last_status_code, Some(500));
    assert!(pending[0].next_attempt_at.is_some());
    // The daemon restarts between attempts: the outbox is in the store.
    let daemon = daemon.restart().await;
    let received = receiver
        .wait("the delivery after two failures", |r| {
            r.iter().any(|r| r.status == 200)
        })
        .await;
    assert_eq!(received.len(), 3, "{received:#?}");
    assert_eq!(
        received
            .iter()
            .map(|r| r.attempt.as_str())
            .collect::<Vec<_>>(),
        ["1", "2", "3"]
    );
    assert!(
        received.iter().all(|r| r.body == received[0].body),
        "every attempt sends the same body"
    );
    assert!(
        received
            .iter()
            .all(|r| r.delivery_id == received[0].delivery_id)
    );
    let delivered = deliveries(&daemon, &webhook).await;
    assert_eq!(delivered[0].status, DeliveryStatus::Delivered);
    assert_eq!(delivered[0].attempts, 3);
    assert_eq!(receiver.delivered().len(), 1);
}

#[tokio::test]
async fn a_delivery_is_given_up_past_its_age() {
    let receiver = Receiver::start(SECRET).await;
    *receiver.shared.always_fail.lock().unwrap() = true;
    let daemon = TestDaemon::start_with(Options {
        webhook_policy: sandbox_daemon::webhooks::DeliveryPolicy {
            first_retry: Duration::from_millis(100),
            give_up_after: Duration::from_millis(700),
            ..Default::default()
        },
        ..Options::default()
    })
    .await;
    let webhook = register(&daemon, &receiver.url(), &["turnEnded"]).await;
    daemon.mock_session("s").await;
    daemon.turn("s", "hello").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let failed = loop {
        let listed = deliveries(&daemon, &webhook).await;
        if listed
            .first()
            .is_some_and(|d| d.status == DeliveryStatus::Failed)
        {
            break listed[0].clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never given up: {listed:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(failed.attempts >= 2, "{failed:#?}");
    assert_eq!(failed.attempts as usize, receiver.received().len());
    assert!(
        failed.last_error.as_deref().unwrap().contains("500"),
        "{failed:#?}"
    );
    assert!(failed.next_attempt_at.is_none() && failed.finished_at.is_some());
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        failed.attempts as usize,
        receiver.received().len(),
        "no attempt after giving up"
    );
}

#[tokio::test]
async fn bad_webhooks_are_refused_with_problems() {
    let daemon = TestDaemon::start().await;
    let url = format!("{}/webhooks", daemon.url());
    let post = |body: Value| {
        let url = url.clone();
        async move {
            raw(
                reqwest::Method::POST,
                &url,
                None,
                Some("application/json"),
                Some(body.to_string().into_bytes()),
            )
            .await
        }
    };
    for body in [
        json!({"url": "ftp://127.0.0.1/x", "events": ["turnEnded"]}),
        json!({"url": "http://127.0.0.1/x", "events": []}),
        json!({"url": "http://127.0.0.1/x", "events": ["itemDelta"]}),
        json!({"url": "http://127.0.0.1/x", "events": ["turnEnded", "turnEnded"]}),
        json!({"url": "http://127.0.0.1/x", "events": ["turnEnded"], "secret": "short"}),
        json!({"url": "http://127.0.0.1/x", "events": ["turnEnded"], "extra": 1}),
    ] {
        assert_problem(&post(body).await, 422, "invalid-body");
    }
    let made = post(json!({"url": "http://127.0.0.1:9/x", "events": ["*"]})).await;
    assert_eq!(made.0, 201);
    let secret = made.2["secret"].as_str().unwrap();
    assert!(
        secret.starts_with("whsec_") && secret.len() > 32,
        "a made secret is answered once"
    );
    let id = made.2["id"].as_str().unwrap();
    let get = raw(
        reqwest::Method::GET,
        &format!("{url}/{id}"),
        None,
        None,
        None,
    )
    .await;
    assert_eq!(get.0, 200);
    assert!(get.2.get("secret").is_none());
    for query in ["?cursor=x", "?limit=0", "?limit=501"] {
        let page = raw(
            reqwest::Method::GET,
            &format!("{url}/{id}/deliveries{query}"),
            None,
            None,
            None,
        )
        .await;
        assert_problem(&page, 400, "invalid-parameter");
    }
    let unknown = raw(
        reqwest::Method::DELETE,
        &format!("{url}/wh_nope"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&unknown, 404, "webhook-not-found");
    let session = raw(
        reqwest::Method::POST,
        &format!("{}/sessions/x", daemon.url()),
        None,
        Some("application/json"),
        Some(
            json!({"agent": "mock", "webhook": {"url": "http://127.0.0.1/x", "events": ["turnEnded"], "secret": "short"}})
                .to_string()
                .into_bytes(),
        ),
    )
    .await;
    assert_problem(&session, 422, "invalid-body");
    assert!(
        session.2["detail"]
            .as_str()
            .unwrap()
            .contains("`webhook.secret`")
    );
}
