//! The HTTP edge: what a `--no-token` daemon refuses from a browser (Host, Origin, content
//! type), the connection timeouts (stalled bodies, idle connections; SSE streams kept
//! alive), and a session's cwd checked again after a restart. What is refused before any
//! handler (malformed, oversized and stalled heads) is `refusals.rs`.

use crate::common;

use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use common::{Options, TestDaemon, assert_problem};
use sandbox_daemon::serve::ConnectionTimeouts;

/// Sends `request` as raw bytes and answers the status line and body (empty on a close).
async fn exchange(daemon: &TestDaemon, request: &[u8]) -> (String, String) {
    let address = daemon.url().trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer))
        .await
        .expect("the daemon answers or closes")
        .unwrap();
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text.lines().next().unwrap_or_default().to_string();
    let body = text
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    (status, body)
}

/// A raw HTTP/1.1 request with these headers (`Connection: close`).
fn request(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut text = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    text.into_bytes()
}

#[tokio::test]
async fn without_a_token_browser_requests_are_refused() {
    let daemon = TestDaemon::start_with(Options {
        cors_origins: vec!["http://app.local".into()],
        allowed_hosts: vec!["sandbox.internal".into()],
        ..Options::default()
    })
    .await;
    daemon.mock_session("s").await;
    daemon.client.send_message("s", "slow").await.unwrap();
    let json = ("Content-Type", "application/json");

    // DNS rebinding: a page on evil.example resolved to this address.
    let (status, body) = exchange(
        &daemon,
        &request("GET", "/sessions", &[("Host", "evil.example:2468")], ""),
    )
    .await;
    assert!(status.contains(" 403 "), "{status}");
    assert!(body.contains("forbidden-host"), "{body}");
    for host in ["localhost:1", "127.0.0.1", "[::1]:9", "Sandbox.Internal"] {
        let (status, _) =
            exchange(&daemon, &request("GET", "/sessions", &[("Host", host)], "")).await;
        assert!(status.contains(" 200 "), "{host}: {status}");
    }

    // A cross-site form or text/plain POST (no preflight) cannot cancel the turn...
    for headers in [
        vec![("Host", "localhost")],
        vec![("Host", "localhost"), ("Content-Type", "text/plain")],
        vec![
            ("Host", "localhost"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
    ] {
        let (status, body) = exchange(
            &daemon,
            &request("POST", "/sessions/s/cancel", &headers, ""),
        )
        .await;
        assert!(status.contains(" 415 "), "{headers:?}: {status}");
        assert!(body.contains("unsupported-media-type"), "{body}");
    }
    // ...nor may a page of another origin, even with JSON.
    let (status, body) = exchange(
        &daemon,
        &request(
            "POST",
            "/sessions/s/cancel",
            &[
                ("Host", "localhost"),
                ("Origin", "http://evil.example"),
                json,
            ],
            "",
        ),
    )
    .await;
    assert!(status.contains(" 403 "), "{status}");
    assert!(body.contains("forbidden-origin"), "{body}");
    // The allowed origin, with JSON, may.
    let (status, _) = exchange(
        &daemon,
        &request(
            "POST",
            "/sessions/s/cancel",
            &[("Host", "localhost"), ("Origin", "http://app.local"), json],
            "",
        ),
    )
    .await;
    assert!(status.contains(" 202 "), "{status}");
    // An unknown method is still a 405 (the JSON rule applies to routes that exist).
    let (status, _) = exchange(
        &daemon,
        &request("POST", "/health", &[("Host", "localhost")], ""),
    )
    .await;
    assert!(status.contains(" 405 "), "{status}");
}

#[tokio::test]
async fn with_a_token_the_browser_rules_do_not_apply() {
    let daemon = TestDaemon::start_with(Options {
        token: Some("t".into()),
        ..Options::default()
    })
    .await;
    let (status, _) = exchange(
        &daemon,
        &request(
            "GET",
            "/sessions",
            &[("Host", "sandbox.example"), ("Authorization", "Bearer t")],
            "",
        ),
    )
    .await;
    assert!(status.contains(" 200 "), "{status}");
}

fn short_timeouts() -> Options {
    Options {
        timeouts: ConnectionTimeouts {
            header_read: Duration::from_millis(500),
            idle: Duration::from_millis(800),
        },
        body_timeout: Duration::from_millis(500),
        sse_keep_alive: Duration::from_millis(200),
        ..Options::default()
    }
}

#[tokio::test]
async fn a_stalled_body_gets_408() {
    let daemon = TestDaemon::start_with(short_timeouts()).await;
    daemon.mock_session("s").await;
    let address = daemon.url().trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream
        .write_all(
            b"POST /sessions/s/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"message\":",
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("answered within 10 s")
        .unwrap();
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408 "), "{text}");
    assert!(text.contains("request-timeout"), "{text}");
    assert!(text.contains("\r\nconnection: close\r\n"), "{text}");
}

#[tokio::test]
async fn an_idle_connection_is_closed_but_a_quiet_sse_stream_is_not() {
    let daemon = TestDaemon::start_with(short_timeouts()).await;
    daemon.mock_session("s").await;
    // A keep-alive connection that asks nothing more is closed.
    let address = daemon.url().trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&address).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let closed =
        tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    assert!(closed.is_ok(), "an idle keep-alive connection stays open");
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200 "));

    // An SSE stream with nothing to say for several idle timeouts stays open (keep-alive
    // comments are activity) and delivers what comes later.
    let mut stream = TcpStream::connect(&address).await.unwrap();
    stream
        .write_all(b"GET /sessions/s/events/sse HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    daemon.client.send_message("s", "hello").await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(&seen).contains("event: turnEnded") {
        let n = tokio::time::timeout_at(deadline, stream.read(&mut buf))
            .await
            .expect("the turn's events arrive")
            .unwrap();
        assert!(
            n > 0,
            "the stream closed: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    assert!(
        String::from_utf8_lossy(&seen).contains("\n:"),
        "keep-alives were sent"
    );
}

#[tokio::test]
async fn a_restored_session_s_cwd_is_checked_again() {
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let project = workspace.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let daemon = TestDaemon::start_with(Options {
        workspace_root: Some(workspace.path().to_path_buf()),
        ..Options::default()
    })
    .await;
    let created = common::raw(
        Method::POST,
        &format!("{}/sessions/s", daemon.url()),
        None,
        Some("application/json"),
        Some(
            json!({"agent": "mock", "cwd": project.display().to_string()})
                .to_string()
                .into_bytes(),
        ),
    )
    .await;
    assert_eq!(created.0, 201, "{:?}", created.2);
    let stopped = daemon.stop().await;
    // While the daemon is down, the project becomes a link out of the workspace.
    std::fs::remove_dir(&project).unwrap();
    std::os::unix::fs::symlink(outside.path(), &project).unwrap();
    let daemon = stopped.start().await;
    let refused = common::raw(
        Method::POST,
        &format!("{}/sessions/s/messages", daemon.url()),
        None,
        Some("application/json"),
        Some(br#"{"message":"hi"}"#.to_vec()),
    )
    .await;
    assert_problem(&refused, 409, "session-unusable");
    let detail = refused.2["detail"].as_str().unwrap();
    assert!(
        detail.contains("workspace") || detail.contains("link"),
        "{detail}"
    );
    // Its events stay readable.
    assert!(!daemon.events("s").await.is_empty());
}
