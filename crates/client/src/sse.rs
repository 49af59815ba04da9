//! The client side of `GET /sessions/{id}/events/sse`.

use std::pin::Pin;
use std::task::{Context, Poll};

use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use sandbox_universal::UniversalEvent;

use crate::ClientError;

type Inner = Pin<Box<dyn Stream<Item = Result<UniversalEvent, ClientError>> + Send>>;

/// A stream of [`UniversalEvent`]s read from SSE frames. It checks that each frame's `id`
/// matches the event's sequence and ends when the daemon closes the stream (after
/// `sessionEnded`).
pub struct EventStream {
    inner: Inner,
}

impl EventStream {
    pub(crate) fn new(response: reqwest::Response) -> Self {
        let inner = response
            .bytes_stream()
            .eventsource()
            .map(|frame| {
                let frame = frame.map_err(|e| ClientError::Stream(e.to_string()))?;
                let event: UniversalEvent = serde_json::from_str(&frame.data)
                    .map_err(|e| ClientError::Stream(format!("{e}: {}", frame.data)))?;
                if frame.id != event.sequence.to_string() {
                    return Err(ClientError::Stream(format!(
                        "frame id `{}` does not match sequence {}",
                        frame.id, event.sequence
                    )));
                }
                if frame.event != event.payload.event_type().as_str() {
                    return Err(ClientError::Stream(format!(
                        "frame event `{}` does not match type `{}`",
                        frame.event,
                        event.payload.event_type().as_str()
                    )));
                }
                Ok(event)
            })
            .boxed();
        Self { inner }
    }
}

impl Stream for EventStream {
    type Item = Result<UniversalEvent, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}
