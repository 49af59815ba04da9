//! [`SessionManager`]: creates sessions, loads them from the store when they are used,
//! and lets them go when they are not.
//!
//! Memory: only sessions in use are loaded (a running agent, a recent command, a turn to
//! recover); an ended or idle session costs nothing once evicted, and is read from the
//! store. Sessions never share a lock: the manager's map is only locked to look up,
//! insert or remove a slot.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use sandbox_agents::AgentRegistry;
use sandbox_universal::constraints::SEQUENCE;
use sandbox_universal::{SessionInfo, SessionListResponse, SessionStatus};
use tokio::sync::OnceCell;

use super::SessionError;
use super::handle::SessionHandle;
use super::legacy::Imports;
use super::record::{SessionRecord, stored_info};
use super::{SessionCore, SessionSettings, files};
use crate::credentials::Credentials;
use crate::installs::AgentInstalls;
use crate::log::{Heads, SessionLog};
use crate::store::{ListQuery, SessionRow, Store, StoreError, StoredEvent};

/// Largest page of `GET /sessions`.
pub const MAX_LIST_LIMIT: usize = 1000;
/// Default page of `GET /sessions`.
pub const DEFAULT_LIST_LIMIT: usize = 100;

pub(super) type Slot = Arc<OnceCell<Arc<SessionHandle>>>;

/// A page of a session's (durable) events.
pub struct EventPage {
    /// The events, oldest first.
    pub events: Vec<Arc<StoredEvent>>,
    /// The last durable sequence: events up to it can be read.
    pub durable_sequence: u64,
    /// The last sequence appended (later ones are on their way to the store).
    pub last_sequence: u64,
    /// Whether the session has ended (no event follows its last).
    pub ended: bool,
}

/// What a read of one session goes to.
pub enum View {
    /// A loaded session.
    Live(Arc<SessionHandle>),
    /// A session only in the store.
    Stored(Box<SessionRow>),
}

/// Creates, loads, finds, ends and purges sessions.
pub struct SessionManager {
    pub(super) registry: AgentRegistry,
    pub(super) installs: Arc<AgentInstalls>,
    pub(super) credentials: Arc<Credentials>,
    pub(super) settings: Arc<SessionSettings>,
    pub(super) store: Arc<Store>,
    pub(super) heads: Arc<Heads>,
    pub(super) loaded: Mutex<HashMap<String, Slot>>,
    pub(super) creating: Mutex<HashSet<String>>,
    pub(super) imports: Imports,
    pub(super) closing: tokio::sync::watch::Sender<bool>,
}

impl SessionManager {
    /// A manager over `store`.
    pub fn new(
        registry: AgentRegistry,
        installs: Arc<AgentInstalls>,
        credentials: Arc<Credentials>,
        settings: SessionSettings,
        store: Arc<Store>,
    ) -> Self {
        Self {
            registry,
            installs,
            credentials,
            settings: Arc::new(settings),
            store,
            heads: Arc::new(Heads::default()),
            loaded: Mutex::default(),
            creating: Mutex::default(),
            imports: Imports::default(),
            closing: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Turns true when the daemon stops: long-lived responses (SSE) end so it can.
    pub fn closing(&self) -> tokio::sync::watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// The agent registry.
    pub fn registry(&self) -> &AgentRegistry {
        &self.registry
    }

    /// Installing agents.
    pub fn installs(&self) -> &Arc<AgentInstalls> {
        &self.installs
    }

    /// What each session's agent gets from the daemon.
    pub(super) fn agent_services(&self) -> super::handle::AgentServices {
        super::handle::AgentServices {
            installs: self.installs.clone(),
            credentials: self.credentials.clone(),
        }
    }

    /// The daemon's credentials: its environment's and its stored logins.
    pub fn credentials(&self) -> &Arc<Credentials> {
        &self.credentials
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The session heads SSE followers wait on.
    pub fn heads(&self) -> &Arc<Heads> {
        &self.heads
    }

    /// The settings.
    pub fn settings(&self) -> &SessionSettings {
        &self.settings
    }

    pub(super) fn sessions_dir(&self) -> PathBuf {
        self.settings.data_dir.join("sessions")
    }

    pub(super) fn loaded_handle(&self, id: &str) -> Option<Arc<SessionHandle>> {
        self.loaded
            .lock()
            .expect("sessions lock")
            .get(id)
            .and_then(|slot| slot.get().cloned())
    }

    /// Number of sessions loaded in memory (tests and the benchmark).
    pub fn loaded_count(&self) -> usize {
        self.loaded.lock().expect("sessions lock").len()
    }

    /// Whether session `id` is loaded and its agent running (tests and the benchmark).
    pub async fn agent_running(&self, id: &str) -> bool {
        match self.loaded_handle(id) {
            Some(handle) => handle.agent_running().await,
            None => false,
        }
    }

    /// The slot of session `id`: loads and creations of one id wait on it, one at a time.
    pub(super) fn slot(&self, id: &str) -> Slot {
        self.loaded
            .lock()
            .expect("sessions lock")
            .entry(id.to_string())
            .or_default()
            .clone()
    }

    /// Forgets `slot` if it is still the (empty) slot of `id`: its load or creation failed.
    pub(super) fn forget_empty(&self, id: &str, slot: &Slot) {
        let mut loaded = self.loaded.lock().expect("sessions lock");
        if loaded
            .get(id)
            .is_some_and(|s| Arc::ptr_eq(s, slot) && s.get().is_none())
        {
            loaded.remove(id);
        }
    }

    /// Makes this daemon the owner of stored session `id` (key `sid`).
    async fn claim(&self, id: &str, sid: i64) -> Result<(), SessionError> {
        self.store.claim(sid).await.map_err(|e| match e {
            StoreError::NotFound(_) => SessionError::NotFound(id.to_string()),
            StoreError::OwnedElsewhere(_) => SessionError::TakenOver(id.to_string()),
            other => other.into(),
        })
    }

    /// A session ready for commands: loaded (and claimed for this daemon) if it was not.
    pub async fn open(&self, id: &str) -> Result<Arc<SessionHandle>, SessionError> {
        self.imports.wait(id).await?;
        let slot = self.slot(id);
        let result = slot.get_or_try_init(|| self.load(id)).await.cloned();
        match result {
            Ok(handle) => {
                handle.touch();
                Ok(handle)
            }
            Err(error) => {
                self.forget_empty(id, &slot);
                Err(error)
            }
        }
    }

    /// Loads a stored session: claims it, rebuilds its state, and closes what a dead
    /// daemon left open.
    async fn load(&self, id: &str) -> Result<Arc<SessionHandle>, SessionError> {
        let row = self
            .store
            .session(id)
            .await?
            .ok_or_else(|| SessionError::NotFound(id.to_string()))?;
        let record = SessionRecord::from_row(&row).map_err(|detail| SessionError::Unreadable {
            session: id.to_string(),
            detail,
        })?;
        self.claim(id, row.sid).await?;
        let mut state = super::replay::restore_state(&self.store, &row).await?;
        let last = self.store.last_event(row.sid).await?;
        state.sequence = state.sequence.max(last.map_or(0, |(sequence, _)| sequence));
        let log = SessionLog::new(
            id,
            row.sid,
            (state.sequence, last.map(|(_, time_us)| time_us)),
            self.store.clone(),
            self.heads.sender(row.sid),
        );
        let core = SessionCore::new(id, log, state);
        if let Some(telemetry) = &self.settings.telemetry {
            core.observe_with(telemetry.observer(id, record.agent, record.model.as_deref()));
        }
        if core.recover_interrupted(
            "the daemon stopped while this turn was running (it was not shut down cleanly)",
        ) {
            tracing::warn!(session = id, "closed a turn a crashed daemon left running");
            // Readers see the closed turn as soon as they see the session again.
            if let Err(error) = core.log().flush().await {
                tracing::warn!(session = id, %error, "the closed turn is not durable yet");
            }
        }
        Ok(Arc::new(SessionHandle::new(
            record.clone(),
            row.sid,
            core,
            self.registry.get(record.agent),
            self.agent_services(),
            self.sessions_dir().join(id),
            self.settings.clone(),
        )))
    }

    /// What a read of session `id` goes to: the loaded session, or its stored row. A
    /// stored session this daemon may own that a crash left running is loaded first, so
    /// its turn is closed before anyone reads it; while the store cannot write (closing
    /// it would have to be written) the read is answered from the stored row at once.
    pub async fn view(&self, id: &str) -> Result<View, SessionError> {
        self.imports.wait(id).await?;
        if let Some(handle) = self.loaded_handle(id) {
            return Ok(View::Live(handle));
        }
        let row = self
            .store
            .session(id)
            .await?
            .ok_or_else(|| SessionError::NotFound(id.to_string()))?;
        let running = row.status.known() == Some(SessionStatus::Running);
        if running && self.may_own(&row) && self.store.check_writable().is_ok() {
            match self.open(id).await {
                Ok(handle) => return Ok(View::Live(handle)),
                // The store failed meanwhile: the read is served from the row.
                Err(error) if error.is_store_outage() => {}
                Err(error) => return Err(error),
            }
        }
        Ok(View::Stored(Box::new(row)))
    }

    fn may_own(&self, row: &SessionRow) -> bool {
        match &row.owner {
            None => true,
            Some(owner) => owner == self.store.daemon_id() || !row.owner_alive,
        }
    }

    /// One session as the API shows it.
    pub async fn info(&self, id: &str) -> Result<SessionInfo, SessionError> {
        match self.view(id).await? {
            View::Live(handle) => Ok(handle.info()),
            View::Stored(row) => stored_info(&row).map_err(|u| SessionError::Unreadable {
                session: id.to_string(),
                detail: u.error,
            }),
        }
    }

    /// A page of sessions, oldest first.
    pub async fn list(
        &self,
        cursor: Option<&str>,
        limit: Option<usize>,
        status: Option<SessionStatus>,
    ) -> Result<SessionListResponse, SessionError> {
        let limit = limit.unwrap_or(DEFAULT_LIST_LIMIT);
        if !(1..=MAX_LIST_LIMIT).contains(&limit) {
            return Err(SessionError::InvalidListLimit(limit));
        }
        let after_sid = cursor
            .map(|c| {
                let number = SEQUENCE.matches(c).then(|| c.parse::<i64>().ok());
                number
                    .flatten()
                    .ok_or_else(|| SessionError::InvalidCursor(c.to_string()))
            })
            .transpose()?;
        if status.is_some() && self.store.check_writable().is_ok() {
            // Stored statuses follow the live ones within one commit: wait for it.
            self.store.flush().await?;
        }
        let rows = self
            .store
            .sessions(&ListQuery {
                after_sid,
                limit: limit + 1,
                status,
            })
            .await?;
        let next_cursor = (rows.len() > limit).then(|| rows[limit - 1].sid.to_string());
        let mut page = SessionListResponse {
            sessions: Vec::new(),
            unreadable: Vec::new(),
            next_cursor,
        };
        for row in rows.into_iter().take(limit) {
            if let Some(handle) = self.loaded_handle(&row.session_id) {
                page.sessions.push(handle.info());
                continue;
            }
            match stored_info(&row) {
                Ok(info) => page.sessions.push(info),
                Err(broken) if status.is_none() => page.unreadable.push(broken),
                Err(_) => {}
            }
        }
        Ok(page)
    }

    /// Up to `limit` events of session `id` after `after`, with where its log ends.
    pub async fn read_events(
        &self,
        id: &str,
        after: u64,
        limit: usize,
        include_raw: bool,
    ) -> Result<EventPage, SessionError> {
        match self.view(id).await? {
            View::Live(handle) => {
                let log = handle.core.log();
                let events = log.read(after, limit, include_raw).await?;
                Ok(EventPage {
                    events,
                    durable_sequence: log.durable_sequence(),
                    last_sequence: log.last_sequence(),
                    ended: handle.core.is_ended(),
                })
            }
            View::Stored(row) => {
                let events = self
                    .store
                    .events(row.sid, after, limit, include_raw)
                    .await?
                    .into_iter()
                    .map(|r| Arc::new(r.decode(id)))
                    .collect();
                Ok(EventPage {
                    events,
                    durable_sequence: row.last_sequence,
                    last_sequence: row.last_sequence,
                    ended: row.status.known() == Some(SessionStatus::Ended),
                })
            }
        }
    }

    /// Ends a session (its events stay readable); answers it as it ended.
    pub async fn end(&self, id: &str) -> Result<SessionInfo, SessionError> {
        let handle = self.open(id).await?;
        // Ending is idempotent: a session that has ended (before, or concurrently) is
        // simply answered as it is.
        let ended = match handle.end().await {
            Ok(()) | Err(SessionError::Ended(_)) => Ok(handle.info()),
            Err(error) => Err(error),
        };
        // Its processes end with it.
        self.settings.processes.end_session(id);
        ended
    }

    /// Removes a session and its events (ending it first if needed).
    pub async fn purge(&self, id: &str) -> Result<(), SessionError> {
        self.imports.wait(id).await?;
        let row = self
            .store
            .session(id)
            .await?
            .ok_or_else(|| SessionError::NotFound(id.to_string()))?;
        self.claim(id, row.sid).await?;
        self.settings.processes.forget_session(id);
        let slot = self.loaded.lock().expect("sessions lock").remove(id);
        if let Some(handle) = slot.and_then(|s| s.get().cloned()) {
            if !handle.core.is_ended() {
                handle.end().await?;
            }
            handle.core.log().flush().await?;
        }
        self.store.purge(row.sid).await?;
        files::remove_dir(&self.sessions_dir().join(id))
            .map_err(|e| SessionError::Internal(format!("removing the files of `{id}`: {e}")))?;
        Ok(())
    }
}
