//! The live event log of one loaded session: appends go to a small in-memory tail and to
//! the store's writer; readers are served durable events only, from the tail while they
//! are there, else from the store.
//!
//! Invariants:
//! - sequences are contiguous from 1 and assigned by the session's core, one at a time;
//! - readers (paging and SSE) never see an event before it is durable, so no crash can take
//!   back an event someone has seen: a reader resuming with `Last-Event-ID` after a crash
//!   finds no gap and no duplicate;
//! - every event not yet durable is in the tail; events before the tail's first are in the
//!   store;
//! - the tail keeps durable events only while the session has live followers, and at most
//!   [`TAIL_EVENTS`] / [`TAIL_BYTES`] of them: memory does not grow with history.

mod heads;

pub use heads::Heads;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use sandbox_universal::UniversalEvent;
use tokio::sync::watch;

use crate::store::{StateSnapshot, Store, StoreError, StoredEvent, WriteListener};

/// Durable events kept for live followers, at most...
pub const TAIL_EVENTS: usize = 256;
/// ...and in bytes.
pub const TAIL_BYTES: usize = 256 << 10;

/// What a log tells its session about write failures.
pub trait LogHooks: Send + Sync {
    /// The store cannot write this session's events (once per outage).
    fn store_failed(&self, error: &StoreError);
    /// Another daemon owns the session now; its events can no longer be stored here.
    fn ownership_lost(&self);
}

#[derive(Debug, Default)]
struct Tail {
    events: VecDeque<Arc<StoredEvent>>,
    bytes: usize,
    last: u64,
    durable: u64,
    /// When the event at `durable` was logged (µs since the Unix epoch).
    durable_time_us: Option<i64>,
    lost: bool,
}

impl Tail {
    fn first(&self) -> u64 {
        self.events.front().map_or(self.last + 1, |e| e.sequence)
    }

    /// The event `sequence`, while the tail holds it (every event not yet durable).
    fn get(&self, sequence: u64) -> Option<&Arc<StoredEvent>> {
        let index = sequence.checked_sub(self.first())?;
        self.events.get(usize::try_from(index).ok()?)
    }

    /// Drops durable events beyond what live followers need.
    fn trim(&mut self, followers: bool) {
        let (keep_events, keep_bytes) = if followers {
            (TAIL_EVENTS, TAIL_BYTES)
        } else {
            (0, 0)
        };
        while let Some(front) = self.events.front() {
            let durable = front.sequence <= self.durable;
            let over = self.events.len() > keep_events || self.bytes > keep_bytes;
            if !(durable && over) {
                break;
            }
            self.bytes -= front.size();
            self.events.pop_front();
        }
    }
}

/// One loaded session's log.
pub struct SessionLog {
    session_id: String,
    sid: i64,
    store: Arc<Store>,
    tail: Mutex<Tail>,
    head: Arc<watch::Sender<u64>>,
    durable: watch::Sender<u64>,
    hooks: OnceLock<Weak<dyn LogHooks>>,
}

impl std::fmt::Debug for SessionLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionLog")
            .field("session_id", &self.session_id)
            .field("sid", &self.sid)
            .finish()
    }
}

impl SessionLog {
    /// The log of session `sid`, whose store holds events up to `last_sequence`, the last
    /// logged at `last_time_us` (µs since the Unix epoch); `head` is the session's entry in
    /// the [`Heads`] registry (raised as events become durable).
    pub fn new(
        session_id: &str,
        sid: i64,
        (last_sequence, last_time_us): (u64, Option<i64>),
        store: Arc<Store>,
        head: Arc<watch::Sender<u64>>,
    ) -> Arc<Self> {
        head.send_if_modified(|h| {
            let raise = *h < last_sequence;
            *h = (*h).max(last_sequence);
            raise
        });
        Arc::new(Self {
            session_id: session_id.to_string(),
            sid,
            store,
            tail: Mutex::new(Tail {
                last: last_sequence,
                durable: last_sequence,
                durable_time_us: last_time_us,
                ..Tail::default()
            }),
            head,
            durable: watch::Sender::new(last_sequence),
            hooks: OnceLock::new(),
        })
    }

    /// Tells the log whom to warn about write failures.
    pub fn set_hooks(&self, hooks: Weak<dyn LogHooks>) {
        let _ = self.hooks.set(hooks);
    }

    /// The store key of the session.
    pub fn sid(&self) -> i64 {
        self.sid
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tail> {
        self.tail.lock().expect("log tail lock")
    }

    /// Appends an event whose sequence is the next one, and queues it for the store.
    pub fn append(self: &Arc<Self>, event: UniversalEvent) -> Arc<StoredEvent> {
        let stored = Arc::new(StoredEvent::render(event));
        let mut tail = self.lock();
        assert_eq!(
            stored.sequence,
            tail.last + 1,
            "session {}: sequences are contiguous",
            self.session_id
        );
        tail.last = stored.sequence;
        tail.bytes += stored.size();
        tail.events.push_back(stored.clone());
        if !tail.lost {
            let listener: Arc<dyn WriteListener> = self.clone();
            self.store.append(self.sid, &listener, stored.clone());
        }
        stored
    }

    /// Queues a state snapshot, written with the events up to its sequence.
    pub fn save_state(self: &Arc<Self>, snapshot: StateSnapshot) {
        let listener: Arc<dyn WriteListener> = self.clone();
        self.store.save_state(self.sid, &listener, snapshot);
    }

    /// The last sequence appended (0 when empty).
    pub fn last_sequence(&self) -> u64 {
        self.lock().last
    }

    /// The last durable sequence: what readers are served up to.
    pub fn durable_sequence(&self) -> u64 {
        self.lock().durable
    }

    /// The last durable sequence and when its event was logged (µs since the Unix epoch;
    /// `None` before the first event).
    pub fn durable_head(&self) -> (u64, Option<i64>) {
        let tail = self.lock();
        (tail.durable, tail.durable_time_us)
    }

    /// Whether another daemon took the session over (its events are no longer stored).
    pub fn is_lost(&self) -> bool {
        self.lock().lost
    }

    /// Whether every event is durable.
    pub fn is_durable(&self) -> bool {
        let tail = self.lock();
        tail.durable == tail.last
    }

    /// Up to `limit` durable events with `sequence > after`, oldest first: from the tail
    /// when they are there, else from the store.
    pub async fn read(
        &self,
        after: u64,
        limit: usize,
        include_raw: bool,
    ) -> Result<Vec<Arc<StoredEvent>>, StoreError> {
        let mut events = Vec::new();
        let mut after = after;
        while events.len() < limit {
            let want = limit - events.len();
            let first = {
                let tail = self.lock();
                if after >= tail.durable {
                    break;
                }
                let want = want.min((tail.durable - after) as usize);
                let first = tail.first();
                if after + 1 >= first {
                    let skip = (after + 1 - first) as usize;
                    events.extend(tail.events.iter().skip(skip).take(want).cloned());
                    break;
                }
                first
            };
            // Everything before the tail is durable, hence in the store.
            let want = want.min((first - 1 - after) as usize);
            let rows = self
                .store
                .events(self.sid, after, want, include_raw)
                .await?;
            let Some(last) = rows.last().map(|r| r.sequence) else {
                break;
            };
            after = last;
            events.extend(
                rows.into_iter()
                    .map(|row| Arc::new(row.decode(&self.session_id))),
            );
        }
        Ok(events)
    }

    /// Waits until every event up to `sequence` is durable; fails while the store cannot
    /// write, or when the session was taken over.
    pub async fn wait_durable(&self, sequence: u64) -> Result<(), StoreError> {
        let mut durable = self.durable.subscribe();
        let mut health = self.store.watch_health();
        loop {
            if *durable.borrow_and_update() >= sequence {
                return Ok(());
            }
            if self.lock().lost {
                return Err(StoreError::OwnedElsewhere(
                    "another daemon took this session over".into(),
                ));
            }
            self.store.check_writable()?;
            health.borrow_and_update();
            tokio::select! {
                _ = durable.changed() => {}
                _ = health.changed() => {}
            }
        }
    }

    /// Waits until everything appended so far is durable.
    pub async fn flush(&self) -> Result<(), StoreError> {
        let last = self.last_sequence();
        self.wait_durable(last).await
    }

    fn hooks(&self) -> Option<Arc<dyn LogHooks>> {
        self.hooks.get().and_then(Weak::upgrade)
    }
}

impl WriteListener for SessionLog {
    fn session_id(&self) -> &str {
        &self.session_id
    }

    fn durable(&self, sequence: u64) {
        let mut tail = self.lock();
        if sequence > tail.durable {
            tail.durable = sequence;
            if let Some(time_us) = tail.get(sequence).map(|e| e.time_us) {
                tail.durable_time_us = Some(time_us);
            }
        }
        tail.trim(self.head.receiver_count() > 0);
        drop(tail);
        self.durable.send_replace(sequence);
        self.head.send_replace(sequence);
    }

    fn write_failed(&self, error: &StoreError) {
        if let Some(hooks) = self.hooks() {
            hooks.store_failed(error);
        }
    }

    fn ownership_lost(&self) {
        let first = !std::mem::replace(&mut self.lock().lost, true);
        self.durable.send_modify(|_| {});
        if first && let Some(hooks) = self.hooks() {
            hooks.ownership_lost();
        }
    }
}
