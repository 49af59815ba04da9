//! What is refused before any handler runs, over raw sockets: every malformed, oversized or
//! stalled request gets problem details (`application/problem+json`, the stable `type`),
//! with `Connection: close` and a closed connection where the request cannot be framed,
//! whether the application or hyper refuses it.

use crate::common;

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use common::{Options, TestDaemon};
use sandbox_daemon::serve::ConnectionTimeouts;
use sandbox_universal::ProblemDetails;

/// One response as it came off the wire.
#[derive(Debug)]
struct Wire {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Wire {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Asserts this is a `slug` problem with `status` that closes the connection.
    fn assert_refusal(&self, status: u16, slug: &str) -> ProblemDetails {
        let problem = self.assert_problem(status, slug);
        assert_eq!(self.header("connection"), Some("close"), "{self:?}");
        problem
    }

    /// Asserts this is a `slug` problem with `status`.
    fn assert_problem(&self, status: u16, slug: &str) -> ProblemDetails {
        let body = String::from_utf8_lossy(&self.body);
        assert_eq!(self.status, status, "{body}");
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "{self:?}"
        );
        let problem: ProblemDetails = serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not problem details ({e}): {body}"));
        assert_eq!(
            problem.type_uri,
            format!("urn:sandbox-daemon:problem:{slug}"),
            "{body}"
        );
        assert_eq!(problem.status, status);
        assert!(!problem.title.is_empty() && !problem.detail.is_empty());
        assert!(self.header("date").is_some(), "{self:?}");
        problem
    }
}

/// The responses in `bytes`, which must be whole (each body as long as its
/// `Content-Length`, nothing after the last).
fn responses(mut bytes: &[u8]) -> Vec<Wire> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        let head = match response.parse(bytes) {
            Ok(httparse::Status::Complete(len)) => len,
            other => panic!(
                "not a response head ({other:?}): {}",
                String::from_utf8_lossy(bytes)
            ),
        };
        let headers: Vec<(String, String)> = response
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_string(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect();
        let status = response.code.unwrap();
        let length: usize = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.parse().unwrap())
            .expect("every answer here has a Content-Length");
        assert!(
            bytes.len() >= head + length,
            "a body shorter than its length"
        );
        out.push(Wire {
            status,
            headers,
            body: bytes[head..head + length].to_vec(),
        });
        bytes = &bytes[head + length..];
    }
    out
}

/// Sends `request` (while reading, so a huge one cannot block), then reads until the
/// daemon closes the connection, which it must do within 20 s.
async fn exchange(daemon: &TestDaemon, request: Vec<u8>) -> Vec<Wire> {
    exchange_then(daemon, request, false).await
}

/// [`exchange`], closing the sending side after the request when `half_close`.
async fn exchange_then(daemon: &TestDaemon, request: Vec<u8>, half_close: bool) -> Vec<Wire> {
    let address = daemon.url().trim_start_matches("http://").to_string();
    let stream = TcpStream::connect(address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let sending = tokio::spawn(async move {
        // The daemon may answer and close before a huge request is all sent.
        let _ = writer.write_all(&request).await;
        if half_close {
            let _ = writer.shutdown().await;
        }
        writer
    });
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), reader.read_to_end(&mut answer))
        .await
        .expect("the daemon answers and closes the connection")
        .expect("read without a reset");
    drop(sending.await.unwrap());
    responses(&answer)
}

/// The one response to `request`.
async fn answer(daemon: &TestDaemon, request: &[u8]) -> Wire {
    let mut responses = exchange(daemon, request.to_vec()).await;
    assert_eq!(responses.len(), 1, "{responses:?}");
    responses.remove(0)
}

fn get(target: &str, extra_headers: &str) -> Vec<u8> {
    format!("GET {target} HTTP/1.1\r\nHost: localhost\r\n{extra_headers}\r\n").into_bytes()
}

#[tokio::test]
async fn malformed_heads_are_problem_details() {
    let daemon = TestDaemon::start().await;
    for (request, slug) in [
        (&b"GARBAGE\r\n\r\n"[..], "malformed-request"),
        (
            b"G@T / HTTP/1.1\r\nHost: localhost\r\n\r\n",
            "malformed-request",
        ),
        (
            b"GET /\x7f HTTP/1.1\r\nHost: localhost\r\n\r\n",
            "malformed-request",
        ),
        (
            b"GET /a b HTTP/1.1\r\nHost: localhost\r\n\r\n",
            "malformed-request",
        ),
        (b"GET /\r\n\r\n", "malformed-request"),
        (
            b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n",
            "malformed-request",
        ),
        (b"GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n", "malformed-request"),
    ] {
        answer(&daemon, request).await.assert_refusal(400, slug);
    }
    for version in ["HTTP/2.0", "HTTP/3.0", "HTTP/0.9"] {
        let request = format!("GET /health {version}\r\nHost: localhost\r\n\r\n");
        answer(&daemon, request.as_bytes())
            .await
            .assert_refusal(505, "http-version-not-supported");
    }
}

#[tokio::test]
async fn bad_framing_is_problem_details() {
    let daemon = TestDaemon::start().await;
    let post = |headers: &str| {
        format!(
            "POST /sessions/s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n{headers}\r\n{{\"agent\":\"mock\"}}"
        )
    };
    for (request, what) in [
        (post("Content-Length: abc\r\n"), "`Content-Length`"),
        (
            post("Content-Length: 16\r\nContent-Length: 17\r\n"),
            "`Content-Length`",
        ),
        (post("Content-Length: -1\r\n"), "`Content-Length`"),
        (post("Transfer-Encoding: gzip\r\n"), "`chunked`"),
        (
            post("Transfer-Encoding: chunked\r\n").replace("HTTP/1.1", "HTTP/1.0"),
            "HTTP/1.0",
        ),
    ] {
        let problem = answer(&daemon, request.as_bytes())
            .await
            .assert_refusal(400, "invalid-framing");
        assert!(problem.detail.contains(what), "{}", problem.detail);
    }
    // A malformed chunk is found by the handler reading the body.
    let chunked = post("Transfer-Encoding: chunked\r\n")
        .replace("{\"agent\":\"mock\"}", "zz\r\n{}\r\n0\r\n\r\n");
    let problem = answer(&daemon, chunked.as_bytes())
        .await
        .assert_refusal(400, "invalid-framing");
    assert!(problem.detail.contains("chunk"), "{}", problem.detail);
    assert_eq!(problem.instance.as_deref(), Some("/sessions/s"));
    // So is a body cut short by the client.
    let short = post("Content-Length: 100\r\n");
    let answers = exchange_then(&daemon, short.into_bytes(), true).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    answers[0].assert_refusal(400, "invalid-framing");
    // Both a length and chunked: the chunks frame the body (RFC 9112 §6.3), and the
    // connection is closed after the answer, so nothing can be smuggled behind it.
    let both = post("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n").replace(
        "{\"agent\":\"mock\"}",
        "10\r\n{\"agent\":\"mock\"}\r\n0\r\n\r\nGET /health HTTP/1.1\r\n\r\n",
    );
    let answers = exchange(&daemon, both.into_bytes()).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0].status, 201);
    assert_eq!(answers[0].header("connection"), Some("close"));
    assert!(daemon.client.get_session("s").await.is_ok());
}

#[tokio::test]
async fn oversized_heads_are_problem_details() {
    let daemon = TestDaemon::start().await;
    // Over the daemon's 8 KiB, refused by the application: the connection may go on.
    let long = format!("/sessions?cursor={}", "1".repeat(9000));
    let wire = answer(&daemon, &get(&long, "Connection: close\r\n")).await;
    wire.assert_problem(414, "uri-too-long");
    // 1 MB, over hyper's own limit, and 3 MB, over its whole head buffer.
    for size in [1 << 20, 3 << 20] {
        let url = format!("/sessions?cursor={}", "1".repeat(size));
        let problem = answer(&daemon, &get(&url, ""))
            .await
            .assert_refusal(414, "uri-too-long");
        assert!(problem.detail.contains("8192"), "{}", problem.detail);
    }
    // Headers: over 64 KiB (the application), over 100 fields (hyper), over the 2 MiB
    // head buffer (hyper).
    let big = "x".repeat(40_000);
    let two = format!("X-A: {big}\r\nX-B: {big}\r\nConnection: close\r\n");
    answer(&daemon, &get("/health", &two))
        .await
        .assert_problem(431, "headers-too-large");
    let many: String = (0..101).map(|i| format!("X-{i}: y\r\n")).collect();
    let problem = answer(&daemon, &get("/health", &many))
        .await
        .assert_refusal(431, "headers-too-large");
    assert!(
        problem.detail.contains("100 header fields"),
        "{}",
        problem.detail
    );
    let huge: String = (0..50)
        .map(|i| format!("X-{i}: {}\r\n", "y".repeat(60_000)))
        .collect();
    answer(&daemon, &get("/health", &huge))
        .await
        .assert_refusal(431, "headers-too-large");
    // 99 small headers are fine.
    let fine: String = (0..97).map(|i| format!("X-{i}: y\r\n")).collect();
    let wire = answer(
        &daemon,
        &get("/health", &format!("{fine}Connection: close\r\n")),
    )
    .await;
    assert_eq!(wire.status, 200);
}

#[tokio::test]
async fn a_refused_request_behind_a_good_one_gets_its_own_problem() {
    let daemon = TestDaemon::start().await;
    let mut pipelined = get("/health", "");
    pipelined.extend_from_slice(b"GARBAGE\r\n\r\n");
    let answers = exchange(&daemon, pipelined).await;
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0].status, 200);
    answers[1].assert_refusal(400, "malformed-request");
}

fn short_timeouts() -> Options {
    Options {
        timeouts: ConnectionTimeouts {
            header_read: Duration::from_millis(500),
            idle: Duration::from_secs(2),
        },
        ..Options::default()
    }
}

#[tokio::test]
async fn a_stalled_head_gets_408_and_an_idle_connection_is_just_closed() {
    let daemon = TestDaemon::start_with(short_timeouts()).await;
    let started = std::time::Instant::now();
    let problem = answer(&daemon, b"GET /health HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .assert_refusal(408, "request-timeout");
    assert!(problem.detail.contains("head"), "{}", problem.detail);
    assert!(started.elapsed() < Duration::from_secs(4));
    // A keep-alive connection that asks nothing more is closed after its answer, without
    // another word; so is one that never says anything.
    let answers = exchange(&daemon, get("/health", "")).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0].status, 200);
    assert!(exchange(&daemon, Vec::new()).await.is_empty());
}
