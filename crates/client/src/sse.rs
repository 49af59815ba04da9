//! The client side of the daemon's SSE responses: a session's events and an install's
//! progress.

use std::pin::Pin;
use std::task::{Context, Poll};

use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use sandbox_universal::{InstallProgress, InstallResponse, ProblemDetails, UniversalEvent};

use crate::ClientError;

/// Items read from a response's SSE frames, one per frame; ends when the daemon closes the
/// stream.
pub struct SseStream<T> {
    inner: Pin<Box<dyn Stream<Item = Result<T, ClientError>> + Send>>,
}

impl<T: 'static> SseStream<T> {
    /// A stream of already decoded items.
    pub(crate) fn new(inner: Pin<Box<dyn Stream<Item = Result<T, ClientError>> + Send>>) -> Self {
        Self { inner }
    }

    fn from_frames(
        response: reqwest::Response,
        parse: impl Fn(eventsource_stream::Event) -> Result<T, ClientError> + Send + 'static,
    ) -> Self {
        let inner = response
            .bytes_stream()
            .eventsource()
            .map(move |frame| parse(frame.map_err(|e| ClientError::Stream(e.to_string()))?))
            .boxed();
        Self { inner }
    }
}

impl<T> Stream for SseStream<T> {
    type Item = Result<T, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// A stream of [`UniversalEvent`]s read from SSE frames. It checks that each frame's `id`
/// matches the event's sequence and ends when the daemon closes the stream (after
/// `sessionEnded`).
pub type EventStream = SseStream<UniversalEvent>;

/// The events of `GET /sessions/{id}/events/sse`.
pub(crate) fn events(response: reqwest::Response) -> EventStream {
    SseStream::from_frames(response, |frame| {
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
}

/// One frame of an install's event stream.
#[derive(Debug, Clone, PartialEq)]
pub enum InstallFrame {
    /// A step of the install (`event: progress`).
    Progress(InstallProgress),
    /// The install succeeded (`event: installed`); the stream ends.
    Installed(InstallResponse),
    /// The install failed (`event: error`, a problem); the stream ends.
    Failed(ProblemDetails),
}

/// The frames of `POST /agents/{agent}/install` asked for as `text/event-stream`.
pub type InstallStream = SseStream<InstallFrame>;

/// The frames of an install.
pub(crate) fn install_frames(response: reqwest::Response) -> InstallStream {
    SseStream::from_frames(response, |frame| {
        let bad = |e: serde_json::Error| ClientError::Stream(format!("{e}: {}", frame.data));
        Ok(match frame.event.as_str() {
            "progress" => InstallFrame::Progress(serde_json::from_str(&frame.data).map_err(bad)?),
            "installed" => InstallFrame::Installed(serde_json::from_str(&frame.data).map_err(bad)?),
            "error" => InstallFrame::Failed(serde_json::from_str(&frame.data).map_err(bad)?),
            other => {
                return Err(ClientError::Stream(format!(
                    "unknown install frame `{other}`"
                )));
            }
        })
    })
}
