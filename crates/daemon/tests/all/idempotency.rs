//! `Idempotency-Key` on session create and messages, over a real socket: a retry gets the
//! first answer (not a 409) and acts once, also concurrently and after a restart; another
//! request with the key is refused; a bad key is a problem.

use reqwest::Method;
use sandbox_universal::EventType;
use serde_json::{Value, json};

use crate::common::{TestDaemon, assert_problem};

/// A `POST` with a JSON body and maybe a key: status, `Idempotent-Replayed`, body.
async fn post(url: &str, key: Option<&str>, body: &Value) -> (u16, bool, Value) {
    let mut request = reqwest::Client::new()
        .request(Method::POST, url)
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .is_some_and(|v| v == "true");
    let text = response.text().await.unwrap();
    (
        status,
        replayed,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn problem(response: (u16, bool, Value)) -> (u16, String, Value) {
    (response.0, "application/problem+json".into(), response.2)
}

fn turns_started(events: &[sandbox_universal::UniversalEvent]) -> usize {
    events
        .iter()
        .filter(|e| e.payload.event_type() == EventType::TurnStarted)
        .count()
}

#[tokio::test]
async fn a_retried_create_gets_the_first_answer() {
    let daemon = TestDaemon::start().await;
    let url = format!("{}/sessions/s", daemon.url());
    let body = json!({"agent": "mock"});
    let first = post(&url, Some("create-s-1"), &body).await;
    assert_eq!((first.0, first.1), (201, false), "{}", first.2);
    let again = post(&url, Some("create-s-1"), &body).await;
    assert_eq!(
        again,
        (201, true, first.2.clone()),
        "the first answer, replayed"
    );
    // Without the key, the same request is the conflict it always was.
    assert_problem(
        &problem(post(&url, None, &body).await),
        409,
        "session-exists",
    );
    // The key names one request: another body or path is refused.
    let other = post(
        &url,
        Some("create-s-1"),
        &json!({"agent": "mock", "model": "mock-1"}),
    )
    .await;
    assert_problem(&problem(other), 422, "idempotency-key-reused");
    let elsewhere = post(
        &format!("{}/sessions/t", daemon.url()),
        Some("create-s-1"),
        &body,
    )
    .await;
    assert_problem(&problem(elsewhere), 422, "idempotency-key-reused");
    // An answer that was a problem is kept too.
    let bad = json!({"agent": "nope"});
    let refused = post(
        &format!("{}/sessions/u", daemon.url()),
        Some("bad-agent"),
        &bad,
    )
    .await;
    assert_eq!(refused.0, 404, "{}", refused.2);
    let refused_again = post(
        &format!("{}/sessions/u", daemon.url()),
        Some("bad-agent"),
        &bad,
    )
    .await;
    assert_eq!(refused_again, (404, true, refused.2));
}

#[tokio::test]
async fn a_retried_message_starts_one_turn_even_at_once_and_after_a_restart() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let url = format!("{}/sessions/s/messages", daemon.url());
    let body = json!({"message": "slow 20"});
    // Two at once with one key: one turn, one answer.
    let (one, two) = tokio::join!(
        post(&url, Some("msg-1"), &body),
        post(&url, Some("msg-1"), &body)
    );
    assert_eq!(one.0, 202, "{}", one.2);
    assert_eq!(two.0, 202, "{}", two.2);
    assert_eq!(one.2, two.2, "both get the first answer");
    assert!(one.1 ^ two.1, "exactly one of them is the replay");
    let turn_id = one.2["turnId"].as_str().unwrap().to_string();
    daemon.turn_ended("s", &turn_id).await;
    assert_eq!(turns_started(&daemon.events("s").await), 1);
    // After a restart, the key still holds its answer.
    let daemon = daemon.restart().await;
    let url = format!("{}/sessions/s/messages", daemon.url());
    let again = post(&url, Some("msg-1"), &body).await;
    assert_eq!(again, (202, true, one.2.clone()));
    assert_eq!(
        turns_started(&daemon.events("s").await),
        1,
        "no second turn"
    );
    // A new key is a new message.
    let next = post(&url, Some("msg-2"), &json!({"message": "hello"})).await;
    assert_eq!((next.0, next.1), (202, false));
    assert_ne!(next.2["turnId"], json!(turn_id));
}

#[tokio::test]
async fn bad_keys_are_refused() {
    let daemon = TestDaemon::start().await;
    let url = format!("{}/sessions/s", daemon.url());
    for key in ["k".repeat(256), " ".into()] {
        let response = post(&url, Some(&key), &json!({"agent": "mock"})).await;
        assert_problem(&problem(response), 400, "invalid-parameter");
    }
    // Refused before anything was done.
    let created = post(&url, Some("fine"), &json!({"agent": "mock"})).await;
    assert_eq!(created.0, 201, "{}", created.2);
}

#[tokio::test]
async fn the_cli_and_the_rust_client_send_keys() {
    let daemon = TestDaemon::start().await;
    let create = [
        "sessions",
        "create",
        "c",
        "--agent",
        "mock",
        "--idempotency-key",
        "cli-create",
    ];
    let first = crate::cli::json(&crate::cli::run(&daemon, &create).await);
    let again = crate::cli::json(&crate::cli::run(&daemon, &create).await);
    assert_eq!(
        first, again,
        "a retried create is the first answer, not a 409"
    );
    let send = [
        "sessions",
        "send-message",
        "c",
        "-m",
        "hello",
        "--idempotency-key",
        "cli-send",
    ];
    let turn = crate::cli::json(&crate::cli::run(&daemon, &send).await);
    let retried = crate::cli::json(&crate::cli::run(&daemon, &send).await);
    assert_eq!(turn, retried);
    let body = sandbox_universal::SendMessageRequest::text("hello");
    let keyed = |key| daemon.client.send_request_keyed("c", &body, Some(key));
    daemon
        .turn_ended("c", turn["turnId"].as_str().unwrap())
        .await;
    let one = keyed("rust-send").await.unwrap();
    let two = keyed("rust-send").await.unwrap();
    assert_eq!(one.turn_id, two.turn_id);
    daemon.turn_ended("c", &one.turn_id).await;
    assert_eq!(
        turns_started(&daemon.events("c").await),
        2,
        "two keys, two turns"
    );
}
