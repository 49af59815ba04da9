//! Group commit: one writer thread owns the store's write connection and commits whatever
//! was appended since its last commit in one transaction.
//!
//! Durability contract: an event is durable once the writer's commit containing it ends (it
//! then survives any crash of the daemon; see `sqlite.rs` for `--fsync`). The writer never
//! waits on purpose: it commits whatever was appended since its last commit, so an event is
//! durable within one commit of its append (the store benchmark prints the figures).
//! Readers are only served durable events (`log/mod.rs`). What waits to be written, and the
//! back-pressure on producers that outrun the store, is `queue.rs`.
//! When a commit fails, the batch stays queued and is retried (with back-off) together
//! with everything appended since, in order, until it succeeds.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_universal::{SessionStatus, StoreStatus};
use tokio::sync::oneshot;

use super::queue::{SessionWrites, WriteQueue};
use super::{EventRow, NativeRow, NewSession, StoreError, now_ms};

/// Longest pause between retries of a failed commit.
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// Events of purged sessions deleted per transaction.
const REAP_CHUNK: usize = 5_000;

/// A session's state as of one sequence, saved with its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateSnapshot {
    /// The last sequence the state reflects.
    pub sequence: u64,
    /// Idle, running or ended.
    pub status: SessionStatus,
    /// When the session ended.
    pub ended_ms: Option<i64>,
    /// Schema version of `json`.
    pub version: u32,
    /// The state (JSON).
    pub json: String,
}

/// Hears what became of a session's queued writes. Called on the writer thread with no
/// store lock held.
pub trait WriteListener: Send + Sync {
    /// The session's id (what a shutdown names when it could not write its events).
    fn session_id(&self) -> &str;
    /// Every event up to `sequence` is durable.
    fn durable(&self, sequence: u64);
    /// Writes fail (once per outage); they are retried until the store recovers.
    fn write_failed(&self, error: &StoreError);
    /// Another daemon took the session over: its queued writes were not stored.
    fn ownership_lost(&self);
}

/// Requests answered by the writer after everything queued before them is committed.
pub(crate) enum Control {
    Create {
        session: NewSession,
        reply: oneshot::Sender<Result<i64, StoreError>>,
    },
    Claim {
        sid: i64,
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
    Purge {
        sid: i64,
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
    Barrier {
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
    Heartbeat {
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
    Import {
        session: NewSession,
        events: Box<dyn Iterator<Item = EventRow> + Send>,
        state: Option<StateSnapshot>,
        reply: oneshot::Sender<Result<i64, StoreError>>,
    },
    Rewrite {
        sid: i64,
        session: NewSession,
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
    SaveNative {
        sid: i64,
        native: NativeRow,
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
}

impl Control {
    pub(super) fn fail(self, error: StoreError) {
        match self {
            Self::Create { reply, .. } | Self::Import { reply, .. } => {
                let _ = reply.send(Err(error));
            }
            Self::Claim { reply, .. }
            | Self::Purge { reply, .. }
            | Self::Rewrite { reply, .. }
            | Self::SaveNative { reply, .. }
            | Self::Barrier { reply }
            | Self::Heartbeat { reply } => {
                let _ = reply.send(Err(error));
            }
        }
    }
}

/// The write side of a backend, owned by the writer thread. Each call is one transaction.
pub(crate) trait WriteBackend: Send {
    /// Stores the batch's events and state snapshots of the sessions `owner` owns; answers
    /// the sessions it does not own (their writes are skipped).
    fn commit(&mut self, batch: &[SessionWrites], owner: &str) -> Result<Vec<i64>, StoreError>;
    /// Creates a session owned by `owner`.
    fn create(&mut self, session: &NewSession, owner: &str) -> Result<i64, StoreError>;
    /// Makes `owner` own session `sid` unless a daemon alive after `alive_after_ms` does.
    fn claim(&mut self, sid: i64, owner: &str, alive_after_ms: i64) -> Result<(), StoreError>;
    /// Deletes the session row; its events are reaped later.
    fn purge(&mut self, sid: i64) -> Result<(), StoreError>;
    /// Deletes up to `limit` events of purged sessions; answers how many.
    fn reap(&mut self, limit: usize) -> Result<usize, StoreError>;
    /// Records that daemon `daemon_id` is alive.
    fn heartbeat(&mut self, daemon_id: &str, now_ms: i64) -> Result<(), StoreError>;
    /// Replaces the record (and agent) of session `sid`, if `owner` owns it.
    fn rewrite(&mut self, sid: i64, session: &NewSession, owner: &str) -> Result<(), StoreError>;
    /// Keeps the agent's native state of session `sid` (replacing the last), if `owner`
    /// owns it.
    fn save_native(&mut self, sid: i64, native: &NativeRow, owner: &str) -> Result<(), StoreError>;
    /// Stores a session with all its events.
    fn import(
        &mut self,
        session: &NewSession,
        owner: &str,
        events: &mut dyn Iterator<Item = EventRow>,
        state: Option<&StateSnapshot>,
    ) -> Result<i64, StoreError>;
}

/// What the writer is committing: sessions in the order they first appended.
#[derive(Default)]
pub(super) struct Batch {
    sessions: Vec<SessionWrites>,
    index: HashMap<i64, usize>,
}

impl Batch {
    pub(super) fn merge(&mut self, writes: SessionWrites) {
        match self.index.get(&writes.sid) {
            Some(&i) => {
                let into = &mut self.sessions[i];
                into.events.extend(writes.events);
                into.bytes += writes.bytes;
                if writes.state.is_some() {
                    into.state = writes.state;
                }
            }
            None => {
                self.index.insert(writes.sid, self.sessions.len());
                self.sessions.push(writes);
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    fn take(&mut self) -> Vec<SessionWrites> {
        self.index.clear();
        std::mem::take(&mut self.sessions)
    }
}

/// What a stopping writer could not write: events per session, in the order they were
/// appended. Empty when everything was committed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Unwritten {
    /// `(session id, events)` for each session with events the store never took.
    pub sessions: Vec<(String, usize)>,
}

impl Unwritten {
    fn of(batch: &Batch) -> Self {
        Self {
            sessions: batch
                .sessions
                .iter()
                .filter(|w| !w.events.is_empty())
                .map(|w| (w.listener.session_id().to_string(), w.events.len()))
                .collect(),
        }
    }

    /// Whether every event was written.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// How many events were not written.
    pub fn events(&self) -> usize {
        self.sessions.iter().map(|(_, n)| n).sum()
    }
}

impl std::fmt::Display for Unwritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (session, events)) in self.sessions.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{events} of session `{session}`")?;
        }
        Ok(())
    }
}

/// Who the writer writes as.
pub(crate) struct WriterSettings {
    pub daemon_id: String,
    pub lease: Duration,
}

/// Starts the writer thread.
pub(crate) fn spawn(
    backend: Box<dyn WriteBackend>,
    queue: Arc<WriteQueue>,
    settings: WriterSettings,
) -> std::io::Result<std::thread::JoinHandle<Unwritten>> {
    std::thread::Builder::new()
        .name("store-writer".into())
        .spawn(move || Writer::new(backend, queue, settings).run())
}

struct Writer {
    backend: Box<dyn WriteBackend>,
    queue: Arc<WriteQueue>,
    settings: WriterSettings,
    /// The outage in progress, if any.
    failing: Option<StoreError>,
    backoff: Duration,
    /// Sessions told about the current outage.
    notified: HashSet<i64>,
    last_heartbeat: Instant,
    reaping: bool,
}

impl Writer {
    fn new(
        backend: Box<dyn WriteBackend>,
        queue: Arc<WriteQueue>,
        settings: WriterSettings,
    ) -> Self {
        Self {
            backend,
            queue,
            settings,
            failing: None,
            backoff: Duration::from_millis(50),
            notified: HashSet::new(),
            last_heartbeat: Instant::now(),
            reaping: true,
        }
    }

    fn heartbeat_every(&self) -> Duration {
        self.settings.lease / 3
    }

    fn run(mut self) -> Unwritten {
        let mut batch = Batch::default();
        let mut controls = Vec::new();
        loop {
            if self.failing.is_some() {
                // While the store cannot write, requests are answered at once (with the
                // outage) and the batch is retried at the back-off pace.
                let retry_at = Instant::now() + self.backoff;
                loop {
                    let closed = self.queue.take_controls(&mut controls, retry_at);
                    for control in controls.drain(..) {
                        self.control(control);
                    }
                    if Instant::now() >= retry_at {
                        break;
                    }
                    if closed {
                        // Stopping: nothing more will arrive; wait out the back-off.
                        std::thread::sleep(retry_at.saturating_duration_since(Instant::now()));
                        break;
                    }
                }
            }
            let wait = if self.failing.is_some() || self.reaping {
                Duration::ZERO
            } else {
                self.heartbeat_every()
                    .saturating_sub(self.last_heartbeat.elapsed())
            };
            let closed = self.queue.take(&mut batch, &mut controls, Some(wait));
            if batch.is_empty() {
                // With nothing to commit, a heartbeat tells when an outage is over.
                if self.failing.is_some() || self.last_heartbeat.elapsed() >= self.heartbeat_every()
                {
                    self.probe();
                }
            } else {
                self.commit(&mut batch);
                if self.failing.is_none() && self.last_heartbeat.elapsed() >= self.heartbeat_every()
                {
                    self.probe();
                }
            }
            for control in controls.drain(..) {
                self.control(control);
            }
            if self.failing.is_none() && self.reaping && batch.is_empty() {
                self.reap();
            }
            if closed {
                if batch.is_empty() {
                    return Unwritten::default();
                }
                let give_up_at = self.queue.give_up_at().unwrap_or_else(Instant::now);
                if Instant::now() >= give_up_at {
                    return Unwritten::of(&batch);
                }
                // Retry no later than the deadline.
                self.backoff = self
                    .backoff
                    .min(give_up_at.saturating_duration_since(Instant::now()));
            }
        }
    }

    fn commit(&mut self, batch: &mut Batch) {
        match self
            .backend
            .commit(&batch.sessions, &self.settings.daemon_id)
        {
            Ok(lost) => {
                let mut bytes = 0;
                for writes in batch.take() {
                    bytes += writes.bytes;
                    if lost.contains(&writes.sid) {
                        tracing::error!(
                            sid = writes.sid,
                            events = writes.events.len(),
                            "another daemon owns this session now; its queued events were not stored"
                        );
                        writes.listener.ownership_lost();
                    } else if let Some(last) = writes.events.last() {
                        writes.listener.durable(last.sequence);
                    }
                }
                self.queue.release(bytes);
                self.recovered();
            }
            Err(error) => {
                self.failed(&error);
                for writes in &batch.sessions {
                    if self.notified.insert(writes.sid) {
                        writes.listener.write_failed(&error);
                    }
                }
            }
        }
    }

    fn control(&mut self, control: Control) {
        if let Some(error) = &self.failing
            && !matches!(control, Control::Heartbeat { .. })
        {
            control.fail(error.clone());
            return;
        }
        let owner = self.settings.daemon_id.clone();
        let result = match control {
            Control::Create { session, reply } => {
                let result = self.backend.create(&session, &owner);
                let outage = result.as_ref().err().filter(|e| e.is_outage()).cloned();
                let _ = reply.send(result);
                outage
            }
            Control::Claim { sid, reply } => {
                let alive_after = now_ms() - self.settings.lease.as_millis() as i64;
                let result = self.backend.claim(sid, &owner, alive_after);
                let outage = result.as_ref().err().filter(|e| e.is_outage()).cloned();
                let _ = reply.send(result);
                outage
            }
            Control::Purge { sid, reply } => {
                let result = self.backend.purge(sid);
                self.reaping = true;
                let outage = result.as_ref().err().filter(|e| e.is_outage()).cloned();
                let _ = reply.send(result);
                outage
            }
            Control::Barrier { reply } => {
                let _ = reply.send(Ok(()));
                None
            }
            Control::Heartbeat { reply } => {
                let result = self.backend.heartbeat(&owner, now_ms());
                self.last_heartbeat = Instant::now();
                let outage = result.as_ref().err().cloned();
                let _ = reply.send(result);
                outage
            }
            Control::Import {
                session,
                mut events,
                state,
                reply,
            } => {
                let result = self
                    .backend
                    .import(&session, &owner, &mut events, state.as_ref());
                let outage = result.as_ref().err().filter(|e| e.is_outage()).cloned();
                let _ = reply.send(result);
                outage
            }
            Control::Rewrite {
                sid,
                session,
                reply,
            } => {
                let result = self.backend.rewrite(sid, &session, &owner);
                let outage = result.as_ref().err().filter(|e| e.is_outage()).cloned();
                let _ = reply.send(result);
                outage
            }
            Control::SaveNative { sid, native, reply } => {
                let result = self.backend.save_native(sid, &native, &owner);
                let outage = result.as_ref().err().filter(|e| e.is_outage()).cloned();
                let _ = reply.send(result);
                outage
            }
        };
        match result {
            Some(error) => self.failed(&error),
            None => self.recovered(),
        }
    }

    /// A heartbeat: keeps this daemon's sessions owned, and tells when an outage is over.
    fn probe(&mut self) {
        self.last_heartbeat = Instant::now();
        match self.backend.heartbeat(&self.settings.daemon_id, now_ms()) {
            Ok(()) => self.recovered(),
            Err(error) => self.failed(&error),
        }
    }

    fn reap(&mut self) {
        match self.backend.reap(REAP_CHUNK) {
            Ok(0) => self.reaping = false,
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(%error, "deleting the events of purged sessions failed; will retry");
                self.reaping = false;
            }
        }
    }

    fn failed(&mut self, error: &StoreError) {
        if self.failing.is_none() {
            tracing::error!(%error, "the session store cannot write; retrying until it can");
            self.backoff = Duration::from_millis(50);
        } else {
            self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        }
        self.failing = Some(error.clone());
        self.queue
            .set_health(error.status(), Some(error.to_string()));
    }

    fn recovered(&mut self) {
        if self.failing.take().is_some() {
            tracing::warn!("the session store can write again");
            self.notified.clear();
            self.queue.set_health(StoreStatus::Ok, None);
        }
    }
}
