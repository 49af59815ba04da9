//! The session store: every session's record, state snapshot and events, in SQLite (the
//! embedded default, in the data dir) or PostgreSQL (shared by a fleet of daemons).
//!
//! Writes go through one writer thread that group-commits (see [`writer`]); reads go to
//! the backend directly, from any daemon. Contracts that must stay stable: the tables
//! ([`migrations`]), the event rows ([`record`]) and the session rows ([`SessionRow`], with
//! the one mapping of their status and agent names in `rows.rs`).
//!
//! Invariants:
//! - a stored event is never dropped, truncated or renumbered; sequences are contiguous per
//!   session and the log's next sequence comes from the store, never from parsing;
//! - every event row, session record and state snapshot carries its schema version;
//! - a failure to write is loud: the store's health turns `full` / `unavailable`, every
//!   session with unwritten events gets an `error` event, and the writer retries until it
//!   can write, with no gap;
//! - a session is written only by the daemon that owns it (`sessions.owner`; a daemon owns
//!   a session while its heartbeat in `daemons` is fresh).

mod inline;
pub mod migrations;
mod postgres;
mod queue;
pub mod record;
mod rows;
pub mod side;
mod sqlite;
mod stopped;
mod writer;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use sandbox_universal::{StoreBackend, StoreStatus};
use tokio::sync::{oneshot, watch};

pub use record::{EVENT_VERSION, EventRow, StoredEvent, UNCHECKED_VERSION};
pub use rows::{
    ListQuery, NativeRow, NewSession, SessionRow, Stored, StoredAgent, StoredName, StoredStatus,
};
pub use writer::{StateSnapshot, Unwritten, WriteListener};

use queue::WriteQueue;
use writer::Control;

/// How long a daemon's ownership of its sessions outlives its last heartbeat.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// How the store writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreOptions {
    /// SQLite: sync every commit to the disk (survives a power loss, not just a crash;
    /// each commit waits for the disk). PostgreSQL syncs as its server is configured.
    pub fsync: bool,
    /// How long a daemon's ownership of its sessions outlives its last heartbeat.
    pub lease: Duration,
}

impl StoreOptions {
    /// The defaults: commits survive a crash of the daemon; 30 s leases.
    pub fn new() -> Self {
        Self {
            fsync: false,
            lease: DEFAULT_LEASE,
        }
    }
}

/// Where the store lives.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// A SQLite database file (created if missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://user:pass@host/db`).
    Postgres(String),
}

impl StoreConfig {
    /// Parses `--store`: a `postgres://` / `postgresql://` URL, or `sqlite:<path>`.
    pub fn parse(value: &str) -> Result<Self, String> {
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            Ok(Self::Postgres(value.to_string()))
        } else if let Some(path) = value.strip_prefix("sqlite:") {
            if path.is_empty() {
                return Err("`sqlite:` needs a path, e.g. sqlite:/var/lib/sandbox/store.db".into());
            }
            Ok(Self::Sqlite(PathBuf::from(path)))
        } else {
            Err(format!(
                "unknown store `{}`: use postgres://user:password@host/database or sqlite:<path>",
                redact(value)
            ))
        }
    }

    /// Which backend this is.
    pub fn backend(&self) -> StoreBackend {
        match self {
            Self::Sqlite(_) => StoreBackend::Sqlite,
            Self::Postgres(_) => StoreBackend::Postgres,
        }
    }
}

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sqlite(path) => write!(f, "Sqlite({})", path.display()),
            Self::Postgres(url) => write!(f, "Postgres({})", redact(url)),
        }
    }
}

/// A URL with its password hidden.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((credentials, host)) => {
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}")
        }
        None => url.to_string(),
    }
}

/// What can go wrong with the store.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// No space left (disk full, database quota).
    #[error("the session store is full: {0}")]
    Full(String),
    /// The store cannot be reached or written.
    #[error("the session store is unavailable: {0}")]
    Unavailable(String),
    /// A session with this id is already stored.
    #[error("a session with id `{0}` already exists")]
    Exists(String),
    /// Another live daemon owns the session.
    #[error("session is owned by another sandbox-daemon (`{0}`)")]
    OwnedElsewhere(String),
    /// No such session (it was purged meanwhile).
    #[error("{0}")]
    NotFound(String),
}

impl StoreError {
    /// Whether the error means the store cannot write right now (and the writer retries).
    pub fn is_outage(&self) -> bool {
        matches!(self, Self::Full(_) | Self::Unavailable(_))
    }

    /// The health this error puts the store in.
    pub fn status(&self) -> StoreStatus {
        match self {
            Self::Full(_) => StoreStatus::Full,
            _ => StoreStatus::Unavailable,
        }
    }
}

/// Reading the store: any daemon, any session.
#[async_trait]
pub(crate) trait ReadBackend: Send + Sync {
    /// One session by its client id.
    async fn session(
        &self,
        id: &str,
        alive_after_ms: i64,
    ) -> Result<Option<SessionRow>, StoreError>;
    /// A page of sessions, by creation.
    async fn sessions(
        &self,
        query: &ListQuery,
        alive_after_ms: i64,
    ) -> Result<Vec<SessionRow>, StoreError>;
    /// Up to `limit` events with `sequence > after`, oldest first.
    async fn events(
        &self,
        sid: i64,
        after: u64,
        limit: usize,
        with_raw: bool,
    ) -> Result<Vec<EventRow>, StoreError>;
    /// Like `events`, without `itemDelta`s and `raw` (what the state reducer needs).
    async fn state_events(
        &self,
        sid: i64,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EventRow>, StoreError>;
    /// The last stored event's sequence and time (µs since the Unix epoch), if any.
    async fn last_event(&self, sid: i64) -> Result<Option<(u64, i64)>, StoreError>;
    /// The agent's native state last saved for session `sid`.
    async fn native(&self, sid: i64) -> Result<Option<NativeRow>, StoreError>;
    /// Sessions that ended before `ended_before_ms`, owned by `owner` or by no live daemon.
    async fn ended_before(
        &self,
        ended_before_ms: i64,
        owner: &str,
        alive_after_ms: i64,
    ) -> Result<Vec<String>, StoreError>;
    /// Sessions stored as running, owned by `owner` or by no live daemon: their turn was
    /// interrupted by a crash.
    async fn interrupted(
        &self,
        owner: &str,
        alive_after_ms: i64,
    ) -> Result<Vec<String>, StoreError>;
    /// Commits of every daemon sharing the store, as `(sid, last sequence)`, when the
    /// backend can tell.
    fn notifications(&self) -> Option<tokio::sync::broadcast::Receiver<(i64, u64)>> {
        None
    }
}

/// Whether the store can write right now, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// `ok`, `full` or `unavailable`.
    pub status: StoreStatus,
    /// The last write error, while writes fail.
    pub detail: Option<String>,
}

/// The session store: reads from the backend, writes through the group-commit writer.
pub struct Store {
    backend: StoreBackend,
    reads: Arc<dyn ReadBackend>,
    queue: Arc<WriteQueue>,
    committer: inline::Committer,
    writer: Mutex<Option<std::thread::JoinHandle<Unwritten>>>,
    daemon_id: String,
    lease: Duration,
    outbox: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend)
            .field("daemon_id", &self.daemon_id)
            .finish()
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Store {
    /// Opens (creating and migrating) the store, as daemon `daemon_id`.
    pub async fn open(
        config: &StoreConfig,
        daemon_id: &str,
        options: StoreOptions,
    ) -> Result<Arc<Self>, StoreError> {
        let lease = options.lease;
        let (reads, backend): (Arc<dyn ReadBackend>, Box<dyn writer::WriteBackend>) = match config {
            StoreConfig::Sqlite(path) => {
                let path = path.clone();
                let opened =
                    tokio::task::spawn_blocking(move || sqlite::open(&path, options.fsync))
                        .await
                        .map_err(|e| StoreError::Unavailable(e.to_string()))?;
                let (reads, write) = opened?;
                (Arc::new(reads), Box::new(write))
            }
            StoreConfig::Postgres(url) => {
                let (reads, write) = postgres::open(url).await?;
                (Arc::new(reads), Box::new(write))
            }
        };
        let queue = Arc::new(WriteQueue::new());
        let outbox = Arc::new(tokio::sync::Notify::new());
        let (writer, shared) = writer::spawn(
            backend,
            queue.clone(),
            writer::WriterSettings {
                daemon_id: daemon_id.to_string(),
                lease,
                outbox: outbox.clone(),
            },
        )
        .map_err(|e| StoreError::Unavailable(format!("starting the store writer: {e}")))?;
        let store = Arc::new(Self {
            backend: config.backend(),
            reads,
            committer: inline::Committer::new(shared, queue.clone()),
            queue,
            writer: Mutex::new(Some(writer)),
            daemon_id: daemon_id.to_string(),
            lease,
            outbox,
        });
        // Announce this daemon before it claims anything: the writer answers requests in
        // the order they were queued, so every claim is written after this heartbeat. It
        // is not awaited (its commit, the first after a start, syncs a new WAL: off the
        // path to the first answer). A store that cannot write (a full disk) still opens:
        // what is stored is served, and writes are refused until the writer's retries
        // succeed; a heartbeat fails only that way.
        let (reply, answer) = oneshot::channel();
        store.queue.push_control(Control::Heartbeat { reply });
        tokio::spawn(async move {
            if let Ok(Err(error)) = answer.await {
                tracing::error!(%error, "the session store cannot write; serving what is stored until it can");
            }
        });
        Ok(store)
    }

    /// Told when this daemon's commits queue webhook deliveries (the dispatcher waits on
    /// it; other daemons' deliveries are found by its polls).
    pub fn outbox(&self) -> &Arc<tokio::sync::Notify> {
        &self.outbox
    }

    /// SQLite or PostgreSQL.
    pub fn backend(&self) -> StoreBackend {
        self.backend
    }

    /// This daemon's id (the owner it writes sessions as).
    pub fn daemon_id(&self) -> &str {
        &self.daemon_id
    }

    /// Whether writes succeed right now.
    pub fn health(&self) -> Health {
        self.queue.health().borrow().clone()
    }

    /// Changes of [`Store::health`].
    pub fn watch_health(&self) -> watch::Receiver<Health> {
        self.queue.health().subscribe()
    }

    /// `Ok` when the store can write, else the error that stops it.
    pub fn check_writable(&self) -> Result<(), StoreError> {
        let health = self.health();
        let detail = health.detail.unwrap_or_default();
        match health.status {
            StoreStatus::Ok => Ok(()),
            StoreStatus::Full => Err(StoreError::Full(detail)),
            StoreStatus::Unavailable => Err(StoreError::Unavailable(detail)),
        }
    }

    /// Queues an event of session `sid` for the next commit; `listener` hears when it is
    /// durable (or why not).
    pub fn append(&self, sid: i64, listener: &Arc<dyn WriteListener>, event: Arc<StoredEvent>) {
        if self.queue.push_event(sid, listener, event) {
            self.committer.schedule();
        }
    }

    /// Queues a state snapshot of session `sid` for the next commit.
    pub fn save_state(&self, sid: i64, listener: &Arc<dyn WriteListener>, snapshot: StateSnapshot) {
        if self.queue.push_state(sid, listener, snapshot) {
            self.committer.schedule();
        }
    }

    /// Waits while too many bytes wait to be written (back-pressure on a producer that
    /// outruns the store), unless `exempt` answers true: a producer whose turn is being cancelled or
    /// whose agent is being stopped, up to a hard limit that keeps memory bounded.
    /// Call it holding no lock.
    pub fn wait_for_room(&self, exempt: &dyn Fn() -> bool) {
        self.queue.wait_for_room(exempt);
    }

    /// Wakes producers waiting for room, to look again at whether they are exempt.
    pub fn wake_producers(&self) {
        self.queue.wake_producers();
    }

    async fn control<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<Result<T, StoreError>>) -> Control,
    ) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.queue.push_control(make(reply));
        answer
            .await
            .map_err(|_| StoreError::Unavailable("the store writer has stopped".into()))?
    }

    /// Stores a new session owned by this daemon; answers its key.
    pub async fn create_session(&self, session: NewSession) -> Result<i64, StoreError> {
        self.control(|reply| Control::Create { session, reply })
            .await
    }

    /// Makes this daemon the owner of session `sid` unless another live daemon owns it.
    pub async fn claim(&self, sid: i64) -> Result<(), StoreError> {
        self.control(|reply| Control::Claim { sid, reply }).await
    }

    /// Deletes session `sid` and (in the background) its events.
    pub async fn purge(&self, sid: i64) -> Result<(), StoreError> {
        self.control(|reply| Control::Purge { sid, reply }).await
    }

    /// Waits until everything queued so far is committed.
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.control(|reply| Control::Barrier { reply }).await
    }

    /// Imports a session with its events in one transaction (the JSON-lines migration).
    pub async fn import(
        &self,
        session: NewSession,
        events: Box<dyn Iterator<Item = EventRow> + Send>,
        state: Option<StateSnapshot>,
    ) -> Result<i64, StoreError> {
        self.control(|reply| Control::Import {
            session,
            events,
            state,
            reply,
        })
        .await
    }

    /// Replaces the record (and agent) of session `sid`, which this daemon owns (a
    /// handover).
    pub async fn rewrite(&self, sid: i64, session: NewSession) -> Result<(), StoreError> {
        self.control(|reply| Control::Rewrite {
            sid,
            session,
            reply,
        })
        .await
    }

    /// Keeps the agent's native state of session `sid`, which this daemon owns, for a
    /// daemon that continues it without this one's disk.
    pub async fn save_native(&self, sid: i64, native: NativeRow) -> Result<(), StoreError> {
        self.control(|reply| Control::SaveNative { sid, native, reply })
            .await
    }

    /// The agent's native state last saved for session `sid`.
    pub async fn native(&self, sid: i64) -> Result<Option<NativeRow>, StoreError> {
        self.reads.native(sid).await
    }

    fn alive_after(&self) -> i64 {
        now_ms() - self.lease.as_millis() as i64
    }

    /// One session by id.
    pub async fn session(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        self.reads.session(id, self.alive_after()).await
    }

    /// A page of sessions.
    pub async fn sessions(&self, query: &ListQuery) -> Result<Vec<SessionRow>, StoreError> {
        self.reads.sessions(query, self.alive_after()).await
    }

    /// Up to `limit` stored events of session `sid` after `after`.
    pub async fn events(
        &self,
        sid: i64,
        after: u64,
        limit: usize,
        with_raw: bool,
    ) -> Result<Vec<EventRow>, StoreError> {
        self.reads.events(sid, after, limit, with_raw).await
    }

    /// Up to `limit` stored events after `after`, without deltas (for the state reducer).
    pub async fn state_events(
        &self,
        sid: i64,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EventRow>, StoreError> {
        self.reads.state_events(sid, after, limit).await
    }

    /// The last stored event of session `sid`: its sequence and time (µs since the Unix
    /// epoch); `None` when it has none.
    pub async fn last_event(&self, sid: i64) -> Result<Option<(u64, i64)>, StoreError> {
        self.reads.last_event(sid).await
    }

    /// Ended sessions this daemon may purge, ended before `before_ms`.
    pub async fn ended_before(&self, before_ms: i64) -> Result<Vec<String>, StoreError> {
        self.reads
            .ended_before(before_ms, &self.daemon_id, self.alive_after())
            .await
    }

    /// Sessions whose running turn a crash interrupted, that this daemon may recover.
    pub async fn interrupted(&self) -> Result<Vec<String>, StoreError> {
        self.reads
            .interrupted(&self.daemon_id, self.alive_after())
            .await
    }

    /// Commits of every daemon sharing the store (PostgreSQL), as `(sid, last sequence)`.
    pub fn notifications(&self) -> Option<tokio::sync::broadcast::Receiver<(i64, u64)>> {
        self.reads.notifications()
    }

    /// Writes everything queued and stops the writer (daemon shutdown), retrying a store
    /// that cannot write until `give_up_at` at the latest; answers what it could not write.
    /// Blocks.
    pub fn close(&self, give_up_at: std::time::Instant) -> Unwritten {
        self.queue.close(give_up_at);
        match self.writer.lock().expect("writer lock").take() {
            Some(writer) => writer.join().unwrap_or_else(|_| {
                tracing::error!("the store writer panicked");
                Unwritten::default()
            }),
            None => Unwritten::default(),
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let unwritten = self.close(std::time::Instant::now() + DROP_GIVE_UP);
        if !unwritten.is_empty() {
            tracing::error!(%unwritten, "events could not be written before the store closed");
        }
    }
}

/// How long a store dropped without [`Store::close`] keeps retrying a failing write.
const DROP_GIVE_UP: Duration = Duration::from_secs(10);

/// A sample event for the store's tests.
#[cfg(test)]
pub(crate) fn sample_event(sequence: u64, delta: &str) -> sandbox_universal::UniversalEvent {
    use sandbox_universal::{EventPayload, EventSource, ItemDelta};
    sandbox_universal::UniversalEvent {
        sequence,
        time: chrono::Utc::now(),
        session_id: "s".into(),
        native_session_id: None,
        source: EventSource::Agent,
        synthetic: false,
        payload: EventPayload::ItemDelta(ItemDelta {
            item_id: "i".into(),
            delta: delta.into(),
        }),
        raw: Some(serde_json::json!({"native": delta})),
    }
}
