//! `GET /sessions/{id}/ui-stream` over a real socket against the mock agent: a turn as the
//! AI SDK's UI message stream, live and replayed.

use crate::common;

use std::time::Duration;

use common::{TestDaemon, assert_problem, raw};
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::Method;
use sandbox_universal::{EventPayload, ItemKind, PermissionReply};
use serde_json::{Value, json};

/// How long a whole stream may take.
const STREAM_TIMEOUT: Duration = Duration::from_secs(30);

/// `GET /sessions/{id}/ui-stream` (with `turnId` when given).
async fn get(daemon: &TestDaemon, id: &str, turn: Option<&str>) -> reqwest::Response {
    let mut url = format!("{}/sessions/{id}/ui-stream", daemon.url());
    if let Some(turn) = turn {
        url.push_str(&format!("?turnId={turn}"));
    }
    reqwest::get(url).await.unwrap()
}

/// Reads a UI message stream: its SSE frames, comments apart.
struct Reader {
    body: BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
    /// Comment frames seen (keep-alives).
    comments: usize,
}

impl Reader {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200);
        Self {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
            comments: 0,
        }
    }

    /// The next `data:` payload (`[DONE]` included); `None` when the body ends.
    async fn next(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                if frame.starts_with(':') {
                    self.comments += 1;
                    continue;
                }
                let data = frame.trim_end().strip_prefix("data: ");
                return Some(data.expect("a data frame").to_string());
            }
            let bytes = self.body.next().await?.unwrap();
            self.buffer.push_str(std::str::from_utf8(&bytes).unwrap());
        }
    }

    /// Every remaining payload, calling `on_chunk` with each chunk as it arrives.
    async fn all(mut self, mut on_chunk: impl AsyncFnMut(&Value)) -> Vec<String> {
        let mut frames = Vec::new();
        tokio::time::timeout(STREAM_TIMEOUT, async {
            while let Some(data) = self.next().await {
                if data != "[DONE]" {
                    on_chunk(&serde_json::from_str(&data).unwrap()).await;
                }
                frames.push(data);
            }
        })
        .await
        .expect("the stream ends");
        frames
    }
}

/// The chunks of some payloads (`[DONE]` left out).
fn chunks(frames: &[String]) -> Vec<Value> {
    frames
        .iter()
        .filter(|f| *f != "[DONE]")
        .map(|f| serde_json::from_str(f).unwrap())
        .collect()
}

/// The chunk types, runs of deltas collapsed to one.
fn skeleton(chunks: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for chunk in chunks {
        let kind = chunk["type"].as_str().unwrap().to_string();
        if kind.ends_with("-delta") && out.last() == Some(&kind) {
            continue;
        }
        out.push(kind);
    }
    out
}

/// Every payload of a turn's stream read again after it ended.
async fn replay(daemon: &TestDaemon, turn: &str) -> Vec<String> {
    Reader::new(get(daemon, "s", Some(turn)).await)
        .all(async |_| {})
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_with_tools_a_permission_and_a_question_replays_byte_for_byte() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let turn = daemon
        .client
        .send_message("s", "use a tool, then permission, then a question")
        .await
        .unwrap()
        .turn_id;
    let response = get(&daemon, "s", Some(&turn)).await;
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(headers["x-vercel-ai-ui-message-stream"], "v1");
    assert_eq!(headers["cache-control"], "no-cache");
    assert_eq!(headers["x-accel-buffering"], "no");

    let client = daemon.client.clone();
    let live = Reader::new(response)
        .all(async |chunk| match chunk["type"].as_str().unwrap() {
            "tool-approval-request" => {
                let id = chunk["approvalId"].as_str().unwrap();
                client
                    .reply_permission("s", id, PermissionReply::Once)
                    .await
                    .unwrap();
            }
            "data-question" if chunk["data"]["status"] == "pending" => {
                let answers = vec![vec!["Red".into()], vec!["Cheese".into(), "Olives".into()]];
                let id = chunk["id"].as_str().unwrap();
                client.reply_question("s", id, answers).await.unwrap();
            }
            _ => {}
        })
        .await;
    assert_eq!(live.last().map(String::as_str), Some("[DONE]"));
    let ui = chunks(&live);
    let tool = ["tool-input-start", "tool-input-available"];
    let mut expected = vec!["start", "start-step"];
    for _ in 0..3 {
        // mock_search and its result, a command, a file change.
        expected.extend(tool);
        expected.push("tool-output-available");
    }
    expected.extend(tool);
    expected.extend([
        "tool-approval-request",
        "tool-approval-response",
        "tool-output-available",
    ]);
    expected.extend(tool);
    expected.extend(["data-question", "data-question", "tool-output-available"]);
    for _ in 0..2 {
        // "You answered: ...", then the echo.
        expected.extend(["text-start", "text-delta", "text-end"]);
    }
    expected.extend(["finish-step", "finish"]);
    assert_eq!(skeleton(&ui), expected);

    // Every chunk is the log's, under its ids.
    let events = daemon.turn_ended("s", &turn).await;
    assert_eq!(ui[0]["messageId"], format!("msg_{turn}"));
    let names: Vec<&str> = ui
        .iter()
        .filter(|c| c["type"] == "tool-input-start")
        .map(|c| c["toolName"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "mock_search",
            "commandExecution",
            "fileChange",
            "commandExecution",
            "ask_user"
        ]
    );
    let asked = common::first(&events, |p| match p {
        EventPayload::PermissionAsked(r) => Some(r.clone()),
        _ => None,
    });
    let approval = ui
        .iter()
        .find(|c| c["type"] == "tool-approval-request")
        .unwrap();
    assert_eq!(approval["approvalId"], asked.permission_id.as_str());
    assert_eq!(
        approval["toolCallId"],
        asked.item_id.clone().unwrap().as_str()
    );
    let response = ui
        .iter()
        .find(|c| c["type"] == "tool-approval-response")
        .unwrap();
    assert_eq!(response["approved"], true);
    let command = common::completed(&events, ItemKind::CommandExecution)
        .into_iter()
        .find(|c| Some(&c.item_id) == asked.item_id.as_ref())
        .unwrap();
    let output = ui
        .iter()
        .find(|c| {
            c["type"] == "tool-output-available" && c["toolCallId"] == command.item_id.as_str()
        })
        .unwrap();
    assert_eq!(
        output["output"],
        json!({"exitCode": 0, "output": "permitted\n"})
    );
    let questions: Vec<&Value> = ui.iter().filter(|c| c["type"] == "data-question").collect();
    assert_eq!(questions[0]["id"], questions[1]["id"]);
    assert_eq!(questions[1]["data"]["status"], "answered");
    assert_eq!(
        questions[1]["data"]["answers"],
        json!([["Red"], ["Cheese", "Olives"]])
    );
    let texts: String = ui
        .iter()
        .filter(|c| c["type"] == "text-delta")
        .map(|c| c["delta"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        "You answered: Color = Red; Toppings = Cheese, Olives\
         echo: use a tool, then permission, then a question"
    );
    let finish = ui.last().unwrap();
    assert_eq!(finish["finishReason"], "stop");
    assert_eq!(finish["messageMetadata"]["turnId"], turn.as_str());
    assert_eq!(finish["messageMetadata"]["stopReason"], "completed");
    assert!(finish["messageMetadata"]["usage"]["outputTokens"].as_u64() > Some(0));

    // Read again: from the loaded log, then from the store after a restart.
    assert_eq!(replay(&daemon, &turn).await, live, "replayed from the log");
    let daemon = daemon.restart().await;
    assert_eq!(
        replay(&daemon, &turn).await,
        live,
        "replayed from the store"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_turn_ends_with_abort() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let turn = daemon
        .client
        .send_message("s", "slow 200")
        .await
        .unwrap()
        .turn_id;
    let client = daemon.client.clone();
    let mut cancelled = false;
    let live = Reader::new(get(&daemon, "s", Some(&turn)).await)
        .all(async |chunk| {
            if chunk["type"] == "text-delta" && !cancelled {
                cancelled = true;
                client.cancel("s").await.unwrap();
            }
        })
        .await;
    let ui = chunks(&live);
    let tail: Vec<&str> = ui[ui.len() - 4..]
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        tail,
        ["text-end", "finish-step", "message-metadata", "abort"]
    );
    assert_eq!(ui.last().unwrap()["reason"], "cancelled");
    assert_eq!(
        ui[ui.len() - 2]["messageMetadata"]["stopReason"],
        "cancelled"
    );
    assert!(!ui.iter().any(|c| c["type"] == "finish"));
    assert_eq!(live.last().map(String::as_str), Some("[DONE]"));
    assert_eq!(replay(&daemon, &turn).await, live);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_turn_id_the_running_turn_is_replayed_from_its_start() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let none = get(&daemon, "s", None).await;
    assert_eq!(none.status(), 204, "no turn yet");
    assert!(none.bytes().await.unwrap().is_empty());

    let turn = daemon
        .client
        .send_message("s", "slow 60")
        .await
        .unwrap()
        .turn_id;
    let seen = std::sync::atomic::AtomicUsize::new(0);
    daemon
        .wait_for("s", |e| {
            matches!(e.payload, EventPayload::ItemDelta(_))
                && seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == 10
        })
        .await;
    let frames = Reader::new(get(&daemon, "s", None).await)
        .all(async |_| {})
        .await;
    let ui = chunks(&frames);
    assert_eq!(ui[0]["type"], "start");
    assert_eq!(ui[0]["messageId"], format!("msg_{turn}"));
    let events = daemon.turn_ended("s", &turn).await;
    let logged: String = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemDelta(d) => Some(d.delta.as_str()),
            _ => None,
        })
        .collect();
    let streamed: String = ui
        .iter()
        .filter(|c| c["type"] == "text-delta")
        .map(|c| c["delta"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, logged, "every delta, from the turn's start");
    assert!(streamed.starts_with("slow 0 slow 1 "));
    assert_eq!(get(&daemon, "s", None).await.status(), 204, "it ended");

    // The CLI prints the same chunks, one per line.
    let output =
        crate::cli::run(&daemon, &["sessions", "ui-stream", "s", "--turn-id", &turn]).await;
    assert!(output.status.success());
    let printed: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(printed, frames[..frames.len() - 1]);
    let idle = crate::cli::run(&daemon, &["sessions", "ui-stream", "s"]).await;
    assert!(idle.status.success() && idle.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_turns_and_sessions_are_404_and_bad_queries_400() {
    let daemon = TestDaemon::start_with(common::Options {
        sse_keep_alive: Duration::from_millis(50),
        ..common::Options::default()
    })
    .await;
    daemon.mock_session("s").await;
    let url = |path: &str| format!("{}{path}", daemon.url());
    let unknown_turn = raw(
        Method::GET,
        &url("/sessions/s/ui-stream?turnId=turn_9"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&unknown_turn, 404, "turn-not-found");
    assert!(
        unknown_turn.2["detail"]
            .as_str()
            .unwrap()
            .contains("turn_9")
    );
    let unknown_session = raw(
        Method::GET,
        &url("/sessions/nope/ui-stream"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&unknown_session, 404, "session-not-found");
    let empty = raw(
        Method::GET,
        &url("/sessions/s/ui-stream?turnId="),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&empty, 400, "invalid-parameter");
    let unknown_param = raw(
        Method::GET,
        &url("/sessions/s/ui-stream?turn=1"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&unknown_param, 400, "invalid-parameter");

    // While the turn waits for a permission, keep-alive comments flow.
    let turn = daemon
        .client
        .send_message("s", "permission")
        .await
        .unwrap()
        .turn_id;
    let mut reader = Reader::new(get(&daemon, "s", Some(&turn)).await);
    loop {
        let data = reader.next().await.unwrap();
        if data.contains("tool-approval-request") {
            break;
        }
    }
    let waited = tokio::time::timeout(Duration::from_millis(300), reader.next()).await;
    assert!(
        waited.is_err(),
        "nothing but comments while the permission waits"
    );
    assert!(reader.comments >= 2, "keep-alives: {}", reader.comments);
    daemon
        .answer_first_permission("s", PermissionReply::Reject)
        .await;
    let rest = reader.all(async |_| {}).await;
    let ui = chunks(&rest);
    assert_eq!(ui[0]["type"], "tool-approval-response");
    assert_eq!(ui[0]["approved"], false);
    assert_eq!(ui[1]["type"], "tool-output-denied");
}
