//! Server-sent-event framing and pacing shared by the three wire dialects.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;

/// One SSE frame: an optional `event:` line and one `data:` line.
#[derive(Clone, Debug)]
pub struct Frame {
    pub(crate) event: Option<String>,
    pub(crate) data: String,
}

impl Frame {
    /// A frame with an `event:` name and JSON data (Anthropic, Responses).
    pub fn named(event: &str, data: &Value) -> Self {
        Self {
            event: Some(event.to_owned()),
            data: data.to_string(),
        }
    }

    /// A frame with JSON data only (Chat Completions).
    pub fn data(data: &Value) -> Self {
        Self {
            event: None,
            data: data.to_string(),
        }
    }

    /// A frame with raw data only (`[DONE]`).
    pub fn raw(data: &str) -> Self {
        Self {
            event: None,
            data: data.to_owned(),
        }
    }

    fn encode(&self) -> Bytes {
        let mut out = String::new();
        if let Some(event) = &self.event {
            out.push_str("event: ");
            out.push_str(event);
            out.push('\n');
        }
        out.push_str("data: ");
        out.push_str(&self.data);
        out.push_str("\n\n");
        Bytes::from(out)
    }
}

/// Streams `frames` as `text/event-stream`, pausing `delay` before each frame but the
/// first. A client that disconnects simply stops the stream.
pub fn sse_response(frames: Vec<Frame>, delay: Duration) -> Response {
    let stream = futures::stream::unfold(
        (frames.into_iter(), true),
        move |(mut it, first)| async move {
            let frame = it.next()?;
            if !first && !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            Some((
                Ok::<_, std::convert::Infallible>(frame.encode()),
                (it, false),
            ))
        },
    );
    let mut response = Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A JSON response with a status code.
pub fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Splits text into word deltas (`"hello "`, `"from "`, ...), as real models stream.
pub fn text_deltas(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_owned).collect()
}

/// Splits tool arguments into pieces of at most 20 characters.
pub fn argument_deltas(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(20).map(|c| c.iter().collect()).collect()
}

/// The pause between frames: `pace` spread over all frames, else `default`.
pub fn frame_delay(pace: Option<Duration>, default: Duration, frames: usize) -> Duration {
    match pace {
        Some(total) => total / u32::try_from(frames.max(1)).unwrap_or(u32::MAX),
        None => default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_rejoin_to_the_original() {
        let text = "hello from fake model";
        assert_eq!(text_deltas(text), ["hello ", "from ", "fake ", "model"]);
        let args = r#"{"command":"echo fake-tool-ran > fake_tool_output.txt"}"#;
        assert_eq!(argument_deltas(args).concat(), args);
        assert_eq!(argument_deltas("").len(), 1);
    }

    #[test]
    fn frames_encode_as_sse() {
        let f = Frame::named("ping", &serde_json::json!({"type": "ping"}));
        assert_eq!(f.encode(), "event: ping\ndata: {\"type\":\"ping\"}\n\n");
        assert_eq!(Frame::raw("[DONE]").encode(), "data: [DONE]\n\n");
    }

    #[test]
    fn pace_is_spread_over_frames() {
        let d = frame_delay(Some(Duration::from_secs(3)), Duration::ZERO, 10);
        assert_eq!(d, Duration::from_millis(300));
        assert_eq!(
            frame_delay(None, Duration::from_millis(5), 10),
            Duration::from_millis(5)
        );
    }
}
