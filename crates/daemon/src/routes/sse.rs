//! Following a session's log over SSE: reads batches from wherever the events are (the
//! loaded log's tail, or the store) and waits on the session's head between them. Frames
//! are written straight into the response body, many per chunk. While the store cannot
//! write, events wait (readers only see durable ones) and a comment says why.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use futures::Stream;
use sandbox_universal::{EventType, StoreBackend, StoreStatus};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::session::{SessionError, SessionManager};
use crate::store::{Health, StoredEvent};

/// Events read per batch (one response chunk).
const BATCH: usize = 512;
/// With a shared store, how often to look for events another daemon committed when no
/// notification came.
const REMOTE_POLL: Duration = Duration::from_secs(2);
/// How long to wait before reading again after a failed read.
const RETRY: Duration = Duration::from_secs(1);

/// One SSE reader of one session.
pub struct Follower {
    sessions: Arc<SessionManager>,
    session_id: String,
    cursor: u64,
    include_raw: bool,
    keep_alive: Duration,
    poll: Option<Duration>,
    last_sent: Instant,
    _head: Arc<watch::Sender<u64>>,
    head: watch::Receiver<u64>,
    health: watch::Receiver<Health>,
    closing: watch::Receiver<bool>,
    announced: bool,
    done: bool,
}

impl Follower {
    /// A reader of session `session_id` (store key `sid`) from after `cursor`.
    pub fn new(
        sessions: Arc<SessionManager>,
        session_id: String,
        sid: i64,
        cursor: u64,
        include_raw: bool,
        keep_alive: Duration,
    ) -> Self {
        let head_sender = sessions.heads().sender(sid);
        let head = head_sender.subscribe();
        let poll = (sessions.store().backend() == StoreBackend::Postgres).then_some(REMOTE_POLL);
        let health = sessions.store().watch_health();
        let closing = sessions.closing();
        Self {
            sessions,
            session_id,
            cursor,
            include_raw,
            keep_alive,
            poll,
            last_sent: Instant::now(),
            _head: head_sender,
            head,
            health,
            closing,
            announced: false,
            done: false,
        }
    }

    /// The response body.
    pub fn into_stream(self) -> impl Stream<Item = Result<Bytes, Infallible>> + Send {
        futures::stream::unfold(self, |mut follower| async move {
            let chunk = follower.next_chunk().await?;
            Some((Ok(chunk), follower))
        })
    }

    /// The next chunk of frames (or a keep-alive comment); `None` once the stream is over.
    async fn next_chunk(&mut self) -> Option<Bytes> {
        loop {
            if self.done || *self.closing.borrow() {
                return None;
            }
            self.head.borrow_and_update();
            let retry = match self
                .sessions
                .read_events(&self.session_id, self.cursor, BATCH, self.include_raw)
                .await
            {
                Ok(page) if !page.events.is_empty() => {
                    self.last_sent = Instant::now();
                    return Some(self.frames(&page.events));
                }
                Ok(page) if page.ended && self.cursor >= page.last_sequence => return None,
                Ok(_) => self.poll,
                Err(SessionError::NotFound(_)) => return None,
                Err(error) => {
                    tracing::debug!(session = %self.session_id, %error, "an SSE read failed; retrying");
                    Some(RETRY)
                }
            };
            if let Some(comment) = self.outage_comment() {
                return Some(comment);
            }
            let keep_alive_at = self.last_sent + self.keep_alive;
            let wake_at = retry.map_or(keep_alive_at, |r| keep_alive_at.min(Instant::now() + r));
            tokio::select! {
                changed = self.head.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                changed = self.health.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                _ = self.closing.changed() => return None,
                () = tokio::time::sleep_until(wake_at) => {
                    if Instant::now() >= keep_alive_at {
                        self.last_sent = Instant::now();
                        return Some(Bytes::from_static(b":\n\n"));
                    }
                }
            }
        }
    }

    /// Once per outage: a comment saying events wait for the store (ids untouched).
    fn outage_comment(&mut self) -> Option<Bytes> {
        let health = self.health.borrow_and_update().clone();
        if health.status == StoreStatus::Ok {
            self.announced = false;
            return None;
        }
        if std::mem::replace(&mut self.announced, true) {
            return None;
        }
        self.last_sent = Instant::now();
        let detail = health.detail.unwrap_or_default().replace(['\n', '\r'], " ");
        let status = serde_json::to_value(health.status).unwrap_or_default();
        Some(Bytes::from(format!(
            ": the session store is {}: {detail}; events resume once it can write\n\n",
            status.as_str().unwrap_or("failing")
        )))
    }

    fn frames(&mut self, events: &[Arc<StoredEvent>]) -> Bytes {
        let mut out = BytesMut::with_capacity(events.iter().map(|e| e.json.len() + 48).sum());
        for event in events {
            self.cursor = event.sequence;
            out.put_slice(b"id: ");
            out.put_slice(event.sequence.to_string().as_bytes());
            out.put_slice(b"\nevent: ");
            out.put_slice(event.event_type.as_str().as_bytes());
            out.put_u8(b'\n');
            for line in event.to_json(self.include_raw).split('\n') {
                out.put_slice(b"data: ");
                out.put_slice(line.trim_end_matches('\r').as_bytes());
                out.put_u8(b'\n');
            }
            out.put_u8(b'\n');
            if event.event_type == EventType::SessionEnded {
                self.done = true;
                break;
            }
        }
        out.freeze()
    }
}
