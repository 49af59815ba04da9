//! The queue between a store's producers (session logs appending events and state
//! snapshots, requests for the writer) and its writer thread, with the back-pressure that
//! bounds what waits in memory: a producer that outruns the store waits once more than
//! [`HIGH_WATER_BYTES`] are unwritten, until the backlog is under [`LOW_WATER_BYTES`]; a
//! producer exempt from waiting (its turn is being cancelled, its agent stopped) still waits
//! past [`HARD_LIMIT_BYTES`].

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sandbox_universal::StoreStatus;
use tokio::sync::watch;

use super::writer::{Batch, Control, StateSnapshot, WriteListener};
use super::{Health, StoreError, StoredEvent};

/// Producers wait once this many bytes of events wait to be written...
pub const HIGH_WATER_BYTES: usize = 4 << 20;
/// ...until the backlog is down to this.
pub const LOW_WATER_BYTES: usize = 2 << 20;
/// Producers exempt from waiting (a turn being cancelled, an agent being stopped) still
/// wait past this, so an agent that ignores its cancellation cannot exhaust memory.
pub const HARD_LIMIT_BYTES: usize = 16 << 20;

/// One session's writes in a batch.
pub(crate) struct SessionWrites {
    pub sid: i64,
    pub listener: Arc<dyn WriteListener>,
    pub events: Vec<Arc<StoredEvent>>,
    pub state: Option<StateSnapshot>,
    pub(super) bytes: usize,
}

#[derive(Default)]
struct Pending {
    sessions: Vec<SessionWrites>,
    index: HashMap<i64, usize>,
    controls: VecDeque<Control>,
    /// Bytes of events queued or being written, not yet durable.
    unwritten: usize,
    closed: bool,
    /// The writer thread was asked to look, even with nothing queued (an inline commit
    /// handed it a batch to retry).
    kick: bool,
    /// When a closed queue's writer stops retrying a store that cannot write.
    give_up_at: Option<Instant>,
}

impl Pending {
    fn entry(&mut self, sid: i64, listener: &Arc<dyn WriteListener>) -> &mut SessionWrites {
        let index = *self.index.entry(sid).or_insert_with(|| {
            self.sessions.push(SessionWrites {
                sid,
                listener: listener.clone(),
                events: Vec::new(),
                state: None,
                bytes: 0,
            });
            self.sessions.len() - 1
        });
        &mut self.sessions[index]
    }

    fn is_idle(&self) -> bool {
        self.sessions.is_empty() && self.controls.is_empty()
    }
}

/// The queue between producers and the writer thread.
pub(crate) struct WriteQueue {
    pending: Mutex<Pending>,
    work: Condvar,
    room: Condvar,
    health: watch::Sender<Health>,
}

impl WriteQueue {
    pub(crate) fn new() -> Self {
        Self {
            pending: Mutex::new(Pending::default()),
            work: Condvar::new(),
            room: Condvar::new(),
            health: watch::Sender::new(Health {
                status: StoreStatus::Ok,
                detail: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().expect("write queue lock")
    }

    pub(crate) fn health(&self) -> &watch::Sender<Health> {
        &self.health
    }

    /// Queues an event; answers whether the queue was idle, so the caller has a commit
    /// scheduled (inline, or by [`Self::notify_work`]).
    #[must_use]
    pub(crate) fn push_event(
        &self,
        sid: i64,
        listener: &Arc<dyn WriteListener>,
        event: Arc<StoredEvent>,
    ) -> bool {
        let size = event.size();
        let mut pending = self.lock();
        let was_idle = pending.is_idle();
        let writes = pending.entry(sid, listener);
        writes.events.push(event);
        writes.bytes += size;
        pending.unwritten += size;
        was_idle
    }

    /// Queues a state snapshot; answers whether the queue was idle (as [`Self::push_event`]).
    #[must_use]
    pub(crate) fn push_state(
        &self,
        sid: i64,
        listener: &Arc<dyn WriteListener>,
        snapshot: StateSnapshot,
    ) -> bool {
        let mut pending = self.lock();
        let was_idle = pending.is_idle();
        pending.entry(sid, listener).state = Some(snapshot);
        was_idle
    }

    /// Wakes the writer thread to commit what is queued (or retry what it holds).
    pub(crate) fn notify_work(&self) {
        self.lock().kick = true;
        self.work.notify_one();
    }

    pub(crate) fn push_control(&self, control: Control) {
        let mut pending = self.lock();
        if pending.closed {
            drop(pending);
            control.fail(StoreError::Unavailable(
                "the daemon is shutting down".into(),
            ));
            return;
        }
        pending.controls.push_back(control);
        drop(pending);
        self.work.notify_one();
    }

    /// Blocks while more than [`HIGH_WATER_BYTES`] are unwritten, until the backlog is under
    /// [`LOW_WATER_BYTES`], the queue closes, or `exempt` turns true (a producer whose turn
    /// is being cancelled or whose agent is being stopped must reach its end even while the
    /// store cannot write). An exempt producer still waits past [`HARD_LIMIT_BYTES`], so
    /// memory stays bounded whatever an agent does. Call it holding no lock: a producer may
    /// wait here for as long as the store cannot write. On a multi-threaded runtime the
    /// worker thread is handed over first so other tasks keep running.
    pub(crate) fn wait_for_room(&self, exempt: &dyn Fn() -> bool) {
        let unwritten = self.lock().unwritten;
        if unwritten <= HIGH_WATER_BYTES || (unwritten <= HARD_LIMIT_BYTES && exempt()) {
            return;
        }
        // The commit scheduled on this producer's thread cannot run while it waits here.
        self.notify_work();
        let wait = || {
            let mut pending = self.lock();
            while pending.unwritten > LOW_WATER_BYTES
                && !pending.closed
                && !(pending.unwritten <= HARD_LIMIT_BYTES && exempt())
            {
                pending = self.room.wait(pending).expect("write queue lock");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        }
    }

    /// Wakes the producers waiting for room so they look again at whether they are
    /// exempt. Taking the queue's lock orders this after the caller's change of what
    /// `exempt` answers, so no waiter misses it.
    pub(crate) fn wake_producers(&self) {
        let _pending = self.lock();
        self.room.notify_all();
    }

    /// Closes the queue: the writer commits what is queued, retrying a failing store
    /// until `give_up_at` at the latest.
    pub(crate) fn close(&self, give_up_at: Instant) {
        let mut pending = self.lock();
        pending.closed = true;
        pending.give_up_at = Some(give_up_at);
        drop(pending);
        self.work.notify_all();
        self.room.notify_all();
    }

    /// Moves the queued controls into `controls`, waiting until one arrives, the queue
    /// closes, or `until`. Answers whether the queue is closed.
    pub(super) fn take_controls(&self, controls: &mut Vec<Control>, until: Instant) -> bool {
        let mut pending = self.lock();
        while pending.controls.is_empty() && !pending.closed {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            pending = self
                .work
                .wait_timeout(pending, left)
                .expect("write queue lock")
                .0;
        }
        controls.extend(pending.controls.drain(..));
        pending.closed
    }

    /// Whether the writer thread was asked to look and has not yet (tests).
    #[cfg(test)]
    pub(crate) fn is_kicked(&self) -> bool {
        self.lock().kick
    }

    /// Whether events or snapshots wait to be committed.
    pub(super) fn has_writes(&self) -> bool {
        !self.lock().sessions.is_empty()
    }

    /// Whether the queue is closed (the writer is stopping).
    pub(super) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    pub(super) fn give_up_at(&self) -> Option<Instant> {
        self.lock().give_up_at
    }

    /// Waits up to `wait` until something is queued, the queue closes, or the writer
    /// thread is asked to look ([`Self::notify_work`]).
    pub(super) fn wait_for_work(&self, wait: Duration) {
        let mut pending = self.lock();
        if pending.is_idle() && !pending.closed && !pending.kick {
            pending = self
                .work
                .wait_timeout(pending, wait)
                .expect("write queue lock")
                .0;
        }
        pending.kick = false;
    }

    /// Moves everything queued into `batch` (after what it already holds) and `controls`.
    /// Answers whether the queue is closed.
    pub(super) fn take(&self, batch: &mut Batch, controls: &mut Vec<Control>) -> bool {
        let mut pending = self.lock();
        Self::move_writes(&mut pending, batch);
        controls.extend(pending.controls.drain(..));
        pending.closed
    }

    /// Moves the queued events and snapshots (not the requests) into `batch`.
    pub(super) fn take_writes(&self, batch: &mut Batch) {
        Self::move_writes(&mut self.lock(), batch);
    }

    fn move_writes(pending: &mut Pending, batch: &mut Batch) {
        for writes in std::mem::take(&mut pending.sessions) {
            batch.merge(writes);
        }
        pending.index.clear();
    }

    pub(super) fn release(&self, bytes: usize) {
        let mut pending = self.lock();
        pending.unwritten = pending.unwritten.saturating_sub(bytes);
        let roomy = pending.unwritten <= LOW_WATER_BYTES;
        drop(pending);
        if roomy {
            self.room.notify_all();
        }
    }

    pub(super) fn set_health(&self, status: StoreStatus, detail: Option<String>) {
        self.health.send_if_modified(|health| {
            let changed = health.status != status || health.detail != detail;
            *health = Health { status, detail };
            changed
        });
    }
}
