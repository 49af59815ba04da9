//! The SSE stream: frame format, resume with Last-Event-ID, keep-alive, slow readers,
//! closing after sessionEnded.

use crate::common;

use std::time::Duration;

use common::{Options, TestDaemon, assert_contiguous};
use futures::StreamExt;
use sandbox_universal::{EventPayload, UniversalEvent};

/// Reads raw SSE frames (`id`, `event`, `data`) and comments from a response body.
struct RawSse {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

#[derive(Debug, Default, PartialEq)]
struct Frame {
    id: Option<String>,
    event: Option<String>,
    data: Option<String>,
    comment: bool,
}

impl RawSse {
    async fn open(url: &str, last_event_id: Option<u64>) -> Self {
        let mut request = reqwest::Client::new().get(url);
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Self {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// The next frame, or None when the server closed the stream.
    async fn next(&mut self) -> Option<Frame> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut frame = Frame::default();
                for line in block.lines() {
                    if line.starts_with(':') {
                        frame.comment = true;
                    } else if let Some((field, value)) = line.split_once(": ") {
                        let value = Some(value.to_string());
                        match field {
                            "id" => frame.id = value,
                            "event" => frame.event = value,
                            "data" => frame.data = value,
                            other => panic!("unexpected field {other}"),
                        }
                    }
                }
                return Some(frame);
            }
            match self.body.next().await {
                Some(chunk) => self
                    .buffer
                    .push_str(std::str::from_utf8(&chunk.unwrap()).unwrap()),
                None => return None,
            }
        }
    }

    async fn next_event(&mut self) -> Option<UniversalEvent> {
        loop {
            let frame = self.next().await?;
            if frame.comment {
                continue;
            }
            let event: UniversalEvent =
                serde_json::from_str(frame.data.as_deref().unwrap()).unwrap();
            assert_eq!(frame.id, Some(event.sequence.to_string()));
            assert_eq!(
                frame.event.as_deref(),
                Some(event.payload.event_type().as_str())
            );
            return Some(event);
        }
    }
}

#[tokio::test]
async fn frames_carry_id_event_and_data_and_close_after_session_ended() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let url = format!("{}/sessions/s/events/sse", daemon.url());
    let mut sse = RawSse::open(&url, None).await;
    daemon.client.send_message("s", "hi").await.unwrap();
    let mut events = Vec::new();
    while let Some(event) = sse.next_event().await {
        if matches!(event.payload, EventPayload::TurnEnded(_)) {
            daemon.client.end_session("s").await.unwrap();
        }
        events.push(event);
    }
    assert_contiguous(&events, "s");
    assert!(matches!(
        events.last().unwrap().payload,
        EventPayload::SessionEnded(_)
    ));
    assert_eq!(events, daemon.events("s").await);
}

#[tokio::test]
async fn resume_mid_stream_with_last_event_id_loses_nothing() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let url = format!("{}/sessions/s/events/sse", daemon.url());
    daemon.client.send_message("s", "flood 300").await.unwrap();
    let mut first = RawSse::open(&url, None).await;
    let mut received = Vec::new();
    for _ in 0..40 {
        received.push(first.next_event().await.unwrap());
    }
    drop(first);
    // Reconnect as a browser would: Last-Event-ID wins over ?offset.
    let mut second = RawSse::open(&format!("{url}?offset=3"), Some(40)).await;
    loop {
        let event = second.next_event().await.unwrap();
        let done = matches!(event.payload, EventPayload::TurnEnded(_));
        received.push(event);
        if done {
            break;
        }
    }
    assert_contiguous(&received, "s");
    // ?offset alone also resumes.
    let mut third = RawSse::open(&format!("{url}?offset=250"), None).await;
    assert_eq!(third.next_event().await.unwrap().sequence, 251);
}

#[tokio::test]
async fn keep_alive_comments_flow_while_idle() {
    let daemon = TestDaemon::start_with(Options {
        sse_keep_alive: Duration::from_millis(50),
        ..Options::default()
    })
    .await;
    daemon.mock_session("s").await;
    let url = format!("{}/sessions/s/events/sse", daemon.url());
    let mut sse = RawSse::open(&url, None).await;
    assert!(!sse.next().await.unwrap().comment, "sessionStarted first");
    let frame = tokio::time::timeout(Duration::from_secs(5), sse.next())
        .await
        .unwrap()
        .unwrap();
    assert!(frame.comment, "{frame:?}");
    assert_eq!(frame.id, None);
}

#[tokio::test]
async fn a_slow_reader_gets_every_event_of_a_flood_in_order() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let url = format!("{}/sessions/s/events/sse", daemon.url());
    let mut sse = RawSse::open(&url, None).await;
    daemon
        .client
        .send_message("s", "flood 10000")
        .await
        .unwrap();
    let mut received = Vec::new();
    let mut deltas = 0usize;
    loop {
        let event = sse.next_event().await.unwrap();
        if received.len() % 10 == 0 {
            // A slow consumer: the log keeps growing while it sleeps.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if let EventPayload::ItemDelta(delta) = &event.payload
            && delta.delta != format!("{deltas} ")
            && deltas < 10_000
        {
            panic!("delta {deltas} out of order: {:?}", delta.delta);
        }
        if matches!(event.payload, EventPayload::ItemDelta(_)) {
            deltas += 1;
        }
        let done = matches!(event.payload, EventPayload::TurnEnded(_));
        received.push(event);
        if done {
            break;
        }
    }
    assert!(deltas >= 10_000, "{deltas}");
    assert_contiguous(&received, "s");
}

#[tokio::test]
async fn the_typed_client_stream_matches_the_log() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon.client.send_message("s", "tool").await.unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    let mut stream = daemon
        .client
        .stream_events("s", Some(2), false)
        .await
        .unwrap();
    let third = stream.next().await.unwrap().unwrap();
    assert_eq!(third, events[2]);
}
