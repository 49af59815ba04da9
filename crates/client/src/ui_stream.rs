//! A turn as the Vercel AI SDK's UI message stream: `GET /sessions/{id}/ui-stream`.

use eventsource_stream::Eventsource;
use futures::StreamExt;
use reqwest::{Method, StatusCode};

use crate::{Client, ClientError, SseStream, checked};

/// The chunks of a turn's UI message stream (each chunk's JSON object), ending after the
/// turn's `finish` or `abort` (the `[DONE]` frame is not an item).
pub type UiChunks = SseStream<serde_json::Value>;

impl Client {
    /// `GET /sessions/{id}/ui-stream`: turn `turn_id` (default: the running turn) as the
    /// AI SDK's UI message stream, replayed from its start then followed; `None` when no
    /// turn runs (204).
    pub async fn ui_message_stream(
        &self,
        id: &str,
        turn_id: Option<&str>,
    ) -> Result<Option<UiChunks>, ClientError> {
        let mut request = self.raw_request(Method::GET, &["sessions", id, "ui-stream"]);
        if let Some(turn_id) = turn_id {
            request = request.query(&[("turnId", turn_id)]);
        }
        let response = checked(request.send().await?).await?;
        if response.status() == StatusCode::NO_CONTENT {
            return Ok(None);
        }
        let chunks = response
            .bytes_stream()
            .eventsource()
            .take_while(|frame| {
                let done = frame.as_ref().is_ok_and(|f| f.data == "[DONE]");
                std::future::ready(!done)
            })
            .map(|frame| {
                let frame = frame.map_err(|e| ClientError::Stream(e.to_string()))?;
                serde_json::from_str(&frame.data)
                    .map_err(|e| ClientError::Stream(format!("{e}: {}", frame.data)))
            });
        Ok(Some(SseStream::new(chunks.boxed())))
    }
}
