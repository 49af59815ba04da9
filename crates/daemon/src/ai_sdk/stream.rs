//! A turn's UI message stream: the session's log followed as the event SSE route follows
//! it ([`Follower`]: stored events, then live ones, none lost or repeated, keep-alives
//! while idle), each event converted ([`TurnConverter`]) and written as `data:` frames,
//! then `data: [DONE]` once the turn ended.

use std::convert::Infallible;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use sandbox_universal::{EventPayload, EventType, UniversalEvent};

use super::chunks::DONE_FRAME;
use super::convert::TurnConverter;
use crate::routes::sse::Follower;
use crate::session::{SessionError, SessionManager};

/// Events read per page while looking for a turn's start.
const SEARCH_PAGE: u64 = 1000;

/// The sequence of turn `turn_id`'s `turnStarted` in session `id`'s log, looked for from
/// the log's end (`last_sequence`) backwards, a page at a time: a running turn's start is
/// near the end. `None` when the log has no such turn.
pub async fn turn_start(
    sessions: &SessionManager,
    id: &str,
    turn_id: &str,
    last_sequence: u64,
) -> Result<Option<u64>, SessionError> {
    let mut end = last_sequence;
    while end > 0 {
        let after = end.saturating_sub(SEARCH_PAGE);
        let page = sessions
            .read_events(id, after, (end - after) as usize, false)
            .await?;
        for event in page.events.iter().rev() {
            if event.event_type != EventType::TurnStarted {
                continue;
            }
            let parsed: Result<UniversalEvent, _> = serde_json::from_str(&event.json);
            if let Ok(UniversalEvent {
                payload: EventPayload::TurnStarted(started),
                ..
            }) = parsed
                && started.turn_id == turn_id
            {
                return Ok(Some(event.sequence));
            }
        }
        end = after;
    }
    Ok(None)
}

/// The response body of one turn's UI message stream: `follower` reads the log from just
/// before the turn's `turnStarted`. SSE comments (keep-alives, a store outage) pass
/// through as they are; the body ends after `data: [DONE]`, or without it when the log
/// stops before the turn ended (the daemon shutting down: reconnect to replay it).
pub fn body(
    follower: Follower,
    converter: TurnConverter,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send {
    let frames = Box::pin(follower.into_stream());
    futures::stream::unfold(
        (frames, converter),
        |(mut frames, mut converter)| async move {
            if converter.is_done() {
                return None;
            }
            loop {
                let Ok(chunk) = frames.next().await?;
                let out = translate(&chunk, &mut converter);
                if !out.is_empty() {
                    return Some((Ok(Bytes::from(out)), (frames, converter)));
                }
            }
        },
    )
}

/// The UI frames of one chunk of the event stream's SSE frames (whole frames, as the
/// follower writes them).
fn translate(chunk: &[u8], converter: &mut TurnConverter) -> String {
    let text = String::from_utf8_lossy(chunk);
    let mut out = String::new();
    for frame in text.split_terminator("\n\n") {
        if converter.is_done() {
            break;
        }
        if frame.starts_with(':') {
            out.push_str(frame);
            out.push_str("\n\n");
            continue;
        }
        let data: Vec<&str> = frame
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .collect();
        let event: UniversalEvent = match serde_json::from_str(&data.join("\n")) {
            Ok(event) => event,
            Err(error) => {
                tracing::debug!(%error, "an event this build cannot read is skipped in a UI stream");
                continue;
            }
        };
        for ui in converter.convert(&event) {
            out.push_str(&ui.frame());
        }
        if converter.is_done() {
            out.push_str(DONE_FRAME);
        }
    }
    out
}
