//! The caller against real loopback endpoints: the test kit's host tool server, and small
//! axum routers for what it does not play (redirects, `Retry-After`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use hmac::{Hmac, KeyInit, Mac};
use sandbox_testkit::host_tools::{HttpToolServer, ToolReply, echo_output, verify_signature};
use sandbox_universal::{
    HostToolCall, MessagePart, SIGNATURE_HEADER, ToolCallResultRequest, ToolOutput,
};
use serde_json::json;
use sha2::Sha256;

use super::*;

const SECRET: &[u8] = b"operator-secret";
const TIMEOUT: Duration = Duration::from_secs(5);

/// Retries in milliseconds, so that tests stay fast.
fn fast(retries: u32) -> RetryPolicy {
    RetryPolicy {
        retries,
        backoff: Duration::from_millis(1),
        max_wait: Duration::from_millis(20),
    }
}

fn caller(retries: u32) -> HttpToolCaller {
    HttpToolCaller::new(Some(SECRET.to_vec())).with_retry(fast(retries))
}

fn call() -> HostToolCall {
    HostToolCall {
        session_id: "s1".into(),
        call_id: "call-7".into(),
        tool: "lookup".into(),
        input: json!({"q": "rust"}),
    }
}

fn no_headers() -> BTreeMap<String, String> {
    BTreeMap::new()
}

async fn start(reply: ToolReply) -> HttpToolServer {
    let server = HttpToolServer::start(SECRET).await.unwrap();
    server.reply_with(reply);
    server
}

/// Serves `router` on a free port of 127.0.0.1; its URL (`/tool`).
async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}/tool")
}

#[tokio::test]
async fn every_attempt_is_signed_and_carries_the_same_body_and_key() {
    let server = start(ToolReply::Echo).await;
    server.fail_first(2);
    let headers = BTreeMap::from([("X-Tenant".to_owned(), "acme".to_owned())]);
    let result = caller(4)
        .call(&server.url(), &headers, TIMEOUT, &call())
        .await;
    let echo = ToolOutput::Text(echo_output(&json!({"q": "rust"})));
    assert_eq!(result.unwrap().output, echo);

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "503 twice, then 200");
    assert_eq!(server.calls(), vec![call(); 3]);
    let body = serde_json::to_vec(&call()).unwrap();
    for request in &requests {
        assert_eq!(request.refused, None);
        assert_eq!(request.body, body);
        assert_eq!(request.headers["idempotency-key"], "call-7");
        assert_eq!(request.headers["content-type"], "application/json");
        assert_eq!(request.headers["x-tenant"], "acme");
        // Recomputed here from the header's t and the raw body.
        let signature = &request.headers[&SIGNATURE_HEADER.to_ascii_lowercase()];
        let (t, v1) = signature
            .strip_prefix("t=")
            .unwrap()
            .split_once(",v1=")
            .unwrap();
        let mut mac = Hmac::<Sha256>::new_from_slice(SECRET).unwrap();
        mac.update(format!("{t}.").as_bytes());
        mac.update(&request.body);
        let expected: String = mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(v1, expected);
        let now = t.parse().unwrap();
        assert_eq!(
            verify_signature(SECRET, signature, &request.body, now),
            Ok(())
        );
    }
}

#[tokio::test]
async fn a_4xx_fails_at_once_with_the_status_and_the_body() {
    let server = start(ToolReply::Raw {
        status: 400,
        body: r#"{"error":"q must not be empty"}"#.into(),
    })
    .await;
    let error = caller(4)
        .call(&server.url(), &no_headers(), TIMEOUT, &call())
        .await
        .unwrap_err();
    assert_eq!(server.requests().len(), 1);
    assert!(
        error.starts_with("The host tool failed: 127.0.0.1 answered 400 Bad Request"),
        "{error}"
    );
    assert!(error.contains("q must not be empty"), "{error}");
}

#[tokio::test]
async fn a_hanging_endpoint_times_out_each_attempt_then_fails() {
    let server = start(ToolReply::Hang).await;
    let timeout = Duration::from_millis(100);
    let started = Instant::now();
    let error = caller(2)
        .call(&server.url(), &no_headers(), timeout, &call())
        .await
        .unwrap_err();
    assert!(started.elapsed() >= timeout * 3);
    assert_eq!(server.requests().len(), 3);
    assert_eq!(
        error,
        "The host tool failed after 3 attempts: 127.0.0.1 did not answer within 0.1 s"
    );
}

#[tokio::test]
async fn a_2xx_that_is_not_a_tool_result_fails() {
    for (body, says) in [
        ("not json", "not a tool result"),
        (r#"{"isError": true}"#, "missing field `output`"),
        (r#"{"output": "x", "extra": 1}"#, "unknown field `extra`"),
        ("", "an empty body"),
    ] {
        let server = start(ToolReply::Raw {
            status: 200,
            body: body.into(),
        })
        .await;
        let error = caller(4)
            .call(&server.url(), &no_headers(), TIMEOUT, &call())
            .await
            .unwrap_err();
        assert!(
            error.contains("answered 200 OK") && error.contains(says),
            "{error}"
        );
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn is_error_and_parts_pass_through() {
    let answer = ToolCallResultRequest {
        output: ToolOutput::Parts(vec![MessagePart::Text {
            text: "no such customer".into(),
        }]),
        is_error: true,
    };
    let server = start(ToolReply::Result(answer.clone())).await;
    let result = caller(4)
        .call(&server.url(), &no_headers(), TIMEOUT, &call())
        .await;
    assert_eq!(result, Ok(answer));
}

#[tokio::test]
async fn connection_refused_is_retried_then_fails() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/tool", listener.local_addr().unwrap());
    drop(listener);
    let error = caller(3)
        .call(&url, &no_headers(), TIMEOUT, &call())
        .await
        .unwrap_err();
    assert!(
        error.starts_with("The host tool failed after 4 attempts: 127.0.0.1 could not be reached (connection failed"),
        "{error}"
    );
}

#[tokio::test]
async fn retry_after_and_429_are_honoured() {
    let tries = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let count = tries.clone();
    let router = Router::new().route(
        "/tool",
        post(move || async move {
            if count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [(header::RETRY_AFTER, "0")],
                    "slow down",
                )
                    .into_response()
            } else {
                axum::Json(json!({"output": "done"})).into_response()
            }
        }),
    );
    let url = serve(router).await;
    let result = caller(1)
        .call(&url, &no_headers(), TIMEOUT, &call())
        .await
        .unwrap();
    assert_eq!(result.output, ToolOutput::Text("done".into()));
    assert_eq!(tries.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[test]
fn waits_double_and_the_endpoint_is_heard_up_to_a_cap() {
    let policy = RetryPolicy::default();
    let ms = |n| Duration::from_millis(n);
    let waits: Vec<_> = (1..=4).map(|retry| policy.wait(retry, None)).collect();
    assert_eq!(waits, [ms(250), ms(500), ms(1000), ms(2000)]);
    assert_eq!(
        policy.wait(1, Some(Duration::from_secs(5))),
        Duration::from_secs(5)
    );
    assert_eq!(
        policy.wait(1, Some(Duration::from_secs(600))),
        policy.max_wait
    );
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let followed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = followed.clone();
    let router = Router::new()
        .route(
            "/tool",
            post(|| async {
                (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(header::LOCATION, "/elsewhere")],
                )
            }),
        )
        .route(
            "/elsewhere",
            post(move || async move {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                axum::Json(json!({"output": "replayed"}))
            }),
        );
    let url = serve(router).await;
    let error = caller(4)
        .call(&url, &no_headers(), TIMEOUT, &call())
        .await
        .unwrap_err();
    assert!(
        error.contains("307 Temporary Redirect") && error.contains("does not follow"),
        "{error}"
    );
    assert!(!followed.load(std::sync::atomic::Ordering::SeqCst));
}

#[tokio::test]
async fn an_answer_over_the_bound_fails() {
    let body = format!(r#"{{"output": "{}"}}"#, "x".repeat(MAX_ANSWER_BYTES));
    let server = start(ToolReply::Raw { status: 200, body }).await;
    let error = caller(4)
        .call(&server.url(), &no_headers(), TIMEOUT, &call())
        .await
        .unwrap_err();
    assert!(error.contains("over 8 MiB"), "{error}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn nothing_is_sent_without_a_secret_or_with_a_bad_url_or_header() {
    let server = start(ToolReply::Echo).await;
    for secret in [None, Some(Vec::new())] {
        let unsigned = HttpToolCaller::new(secret);
        assert!(!unsigned.can_sign());
        let error = unsigned
            .call(&server.url(), &no_headers(), TIMEOUT, &call())
            .await
            .unwrap_err();
        assert!(error.contains("no signing secret"), "{error}");
    }
    assert!(caller(0).can_sign());
    let error = caller(0)
        .call("ftp://127.0.0.1/x", &no_headers(), TIMEOUT, &call())
        .await
        .unwrap_err();
    assert!(error.contains("not an http:// or https:// URL"), "{error}");
    let bad = BTreeMap::from([("X-Token".to_owned(), "secret\nvalue".to_owned())]);
    let error = caller(0)
        .call(&server.url(), &bad, TIMEOUT, &call())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        "The host tool's header `X-Token` is not a valid HTTP header."
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_failed_answer_is_shown_in_at_most_300_characters() {
    assert_eq!(snippet(b"  "), "");
    assert_eq!(snippet(b" nope \n"), ": nope");
    let long = snippet("é".repeat(400).as_bytes());
    assert_eq!(long.chars().count(), 2 + 300 + 1);
    assert!(long.ends_with("é…"));
}
