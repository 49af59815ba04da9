//! Group commit: one writer owns the store's write connection and commits whatever was
//! appended since its last commit in one transaction. It is shared (behind a lock) by the
//! writer thread and the inline commits (`inline.rs`): whoever holds it commits, so commits
//! stay one at a time and in queue order.
//!
//! Durability contract: an event is durable once the commit containing it ends (it then
//! survives any crash of the daemon; see `sqlite/mod.rs` for `--fsync`). Nobody waits on
//! purpose: a commit takes whatever was appended since the last one, so an event is
//! durable within one commit of its append (the store benchmark prints the figures).
//! Readers are only served durable events (`log/mod.rs`). What waits to be written, and the
//! back-pressure on producers that outrun the store, is `queue.rs`.
//! When a commit fails, the batch stays queued and is retried (with back-off) together
//! with everything appended since, in order, until it succeeds.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_universal::{SessionStatus, StoreStatus};
use tokio::sync::oneshot;

use super::queue::{SessionWrites, WriteQueue};
use super::side::{SideRun, SideWrites};
use super::stopped::Closed;
pub use super::stopped::Unwritten;
use super::{EventRow, NativeRow, NewSession, StoreError, now_ms};

/// Longest pause between retries of a failed commit.
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// Commits one inline commit makes in a row (of what producers queue meanwhile) before it
/// hands the rest to the writer thread, so it never holds a runtime worker for long.
const INLINE_ROUNDS: usize = 8;
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
    /// Work on the side tables (webhooks, deliveries, idempotency keys).
    Side(Box<dyn SideRun>),
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
            Self::Side(job) => job.fail(error),
        }
    }
}

/// The write side of a backend, owned by the writer thread. Each call is one transaction.
pub(crate) trait WriteBackend: Send {
    /// Whether a commit takes tens of microseconds (no sync to the disk, no round trip to a
    /// server), so a producer may commit on its own thread instead of waking the writer's.
    fn commits_quickly(&self) -> bool {
        false
    }
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
    /// How many webhook deliveries the commits queued since the last call.
    fn take_queued_deliveries(&mut self) -> usize {
        0
    }
    /// The side tables (webhooks, deliveries, idempotency keys).
    fn side(&mut self) -> Result<&mut dyn SideWrites, StoreError>;
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
    pub(super) sessions: Vec<SessionWrites>,
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

/// Who the writer writes as.
pub(crate) struct WriterSettings {
    pub daemon_id: String,
    pub lease: Duration,
    /// Told when commits queue webhook deliveries.
    pub outbox: Arc<tokio::sync::Notify>,
}

/// Starts the writer thread; answers it and the writer it shares with inline commits.
pub(crate) fn spawn(
    backend: Box<dyn WriteBackend>,
    queue: Arc<WriteQueue>,
    settings: WriterSettings,
) -> std::io::Result<(std::thread::JoinHandle<Unwritten>, Arc<SharedWriter>)> {
    let shared = Arc::new(SharedWriter {
        writer: Mutex::new(Writer::new(backend, queue.clone(), settings)),
        queue,
    });
    let thread = shared.clone();
    let handle = std::thread::Builder::new()
        .name("store-writer".into())
        .spawn(move || run(&thread))?;
    Ok((handle, shared))
}

/// The writer's state, shared by its thread and by the inline commits of a backend whose
/// commits are quick (`inline.rs`). Whoever holds it commits; commits stay one at a time and
/// in the order things were queued.
pub(crate) struct SharedWriter {
    writer: Mutex<Writer>,
    queue: Arc<WriteQueue>,
}

impl SharedWriter {
    fn lock(&self) -> std::sync::MutexGuard<'_, Writer> {
        self.writer.lock().expect("store writer lock")
    }

    /// Commits the events and snapshots queued now, on the calling thread, and again what
    /// was queued meanwhile (up to [`INLINE_ROUNDS`] commits; then the writer thread takes
    /// over). When the writer is busy, its holder commits what is queued once it lets go:
    /// an inline commit looks again after it unlocks, the writer thread before it waits. When
    /// the store fails (or the queue closes), the writer thread is woken to retry at its
    /// back-off pace, until its deadline.
    pub(crate) fn commit_queued(&self) {
        for _ in 0..INLINE_ROUNDS {
            let mut writer = match self.writer.try_lock() {
                Ok(writer) => writer,
                Err(std::sync::TryLockError::WouldBlock) => return,
                Err(std::sync::TryLockError::Poisoned(_)) => break,
            };
            if writer.failing.is_some() || self.queue.is_closed() {
                break;
            }
            self.queue.take_writes(&mut writer.batch);
            if !writer.batch.is_empty() {
                writer.commit();
            }
            let failed = writer.failing.is_some();
            drop(writer);
            if failed {
                break;
            }
            if !self.queue.has_writes() {
                return;
            }
        }
        self.queue.notify_work();
    }

    /// Holds the writer, as a commit in progress does (tests).
    #[cfg(test)]
    pub(crate) fn hold(&self) -> std::sync::MutexGuard<'_, Writer> {
        self.lock()
    }

    /// Wakes the writer thread to commit what is queued.
    pub(crate) fn wake_thread(&self) {
        self.queue.notify_work();
    }

    /// Whether the backend's commits are quick enough to run on the producer's thread.
    pub(crate) fn commits_quickly(&self) -> bool {
        self.lock().backend.commits_quickly()
    }
}

/// The writer thread: commits what the inline commits did not, answers requests, keeps
/// the heartbeat, reaps purged sessions and retries a failing store. It holds the writer
/// only while it works, never while it waits. When it stops, the backend (its connections,
/// a PostgreSQL client's own runtime) is closed on this thread, not wherever the last
/// handle on the shared writer happens to go.
fn run(shared: &SharedWriter) -> Unwritten {
    let unwritten = run_until_closed(shared);
    let backend = std::mem::replace(&mut shared.lock().backend, Box::new(Closed));
    drop(backend);
    unwritten
}

fn run_until_closed(shared: &SharedWriter) -> Unwritten {
    let queue = &shared.queue;
    let mut controls = Vec::new();
    loop {
        let backoff = {
            let writer = shared.lock();
            writer.failing.as_ref().map(|_| writer.backoff)
        };
        if let Some(backoff) = backoff {
            // While the store cannot write, requests are answered at once (with the
            // outage) and the batch is retried at the back-off pace.
            let retry_at = Instant::now() + backoff;
            loop {
                let closed = queue.take_controls(&mut controls, retry_at);
                if !controls.is_empty() {
                    let mut writer = shared.lock();
                    for control in controls.drain(..) {
                        writer.control(control);
                    }
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
        let wait = shared.lock().wait();
        queue.wait_for_work(wait);
        let mut writer = shared.lock();
        let writer = &mut *writer;
        let closed = queue.take(&mut writer.batch, &mut controls);
        if let Some(unwritten) = writer.work(&mut controls, closed) {
            return unwritten;
        }
    }
}

pub(crate) struct Writer {
    backend: Box<dyn WriteBackend>,
    queue: Arc<WriteQueue>,
    settings: WriterSettings,
    /// What is being committed (and retried while the store fails).
    batch: Batch,
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
            batch: Batch::default(),
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

    /// How long the writer thread may wait for work: not at all while it retries or
    /// reaps, else until the next heartbeat is due.
    fn wait(&self) -> Duration {
        if self.failing.is_some() || self.reaping {
            Duration::ZERO
        } else {
            self.heartbeat_every()
                .saturating_sub(self.last_heartbeat.elapsed())
        }
    }

    /// One round of the writer thread over what it took: the batch, the heartbeat, the
    /// requests, reaping. Answers what could not be written once the queue is closed and
    /// the writer must stop.
    fn work(&mut self, controls: &mut Vec<Control>, closed: bool) -> Option<Unwritten> {
        if self.batch.is_empty() {
            // With nothing to commit, a heartbeat tells when an outage is over.
            if self.failing.is_some() || self.last_heartbeat.elapsed() >= self.heartbeat_every() {
                self.probe();
            }
        } else {
            self.commit();
            if self.failing.is_none() && self.last_heartbeat.elapsed() >= self.heartbeat_every() {
                self.probe();
            }
        }
        for control in controls.drain(..) {
            self.control(control);
        }
        if self.failing.is_none() && self.reaping && self.batch.is_empty() {
            self.reap();
        }
        if closed {
            if self.batch.is_empty() {
                return Some(Unwritten::default());
            }
            let give_up_at = self.queue.give_up_at().unwrap_or_else(Instant::now);
            if Instant::now() >= give_up_at {
                return Some(Unwritten::of(&self.batch));
            }
            // Retry no later than the deadline.
            self.backoff = self
                .backoff
                .min(give_up_at.saturating_duration_since(Instant::now()));
        }
        None
    }

    fn commit(&mut self) {
        match self
            .backend
            .commit(&self.batch.sessions, &self.settings.daemon_id)
        {
            Ok(lost) => {
                let mut bytes = 0;
                for writes in self.batch.take() {
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
                if self.backend.take_queued_deliveries() > 0 {
                    self.settings.outbox.notify_one();
                }
                self.recovered();
            }
            Err(error) => {
                self.failed(&error);
                for writes in &self.batch.sessions {
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
            Control::Side(job) => job.run(self.backend.as_mut()),
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
