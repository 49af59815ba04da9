//! What a stopped writer leaves: the events it could not write ([`Unwritten`]), and the
//! backend that refuses everything once the store is closed ([`Closed`]).

use super::queue::SessionWrites;
use super::writer::{Batch, StateSnapshot, WriteBackend};
use super::{EventRow, NativeRow, NewSession, StoreError};

/// What a stopping writer could not write: events per session, in the order they were
/// appended. Empty when everything was committed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Unwritten {
    /// `(session id, events)` for each session with events the store never took.
    pub sessions: Vec<(String, usize)>,
}

impl Unwritten {
    pub(super) fn of(batch: &Batch) -> Self {
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

/// The backend of a stopped writer: refuses everything.
pub(super) struct Closed;

impl Closed {
    fn refuse<T>() -> Result<T, StoreError> {
        Err(StoreError::Unavailable("the store is closed".into()))
    }
}

impl WriteBackend for Closed {
    fn commit(&mut self, _: &[SessionWrites], _: &str) -> Result<Vec<i64>, StoreError> {
        Self::refuse()
    }
    fn create(&mut self, _: &NewSession, _: &str) -> Result<i64, StoreError> {
        Self::refuse()
    }
    fn claim(&mut self, _: i64, _: &str, _: i64) -> Result<(), StoreError> {
        Self::refuse()
    }
    fn purge(&mut self, _: i64) -> Result<(), StoreError> {
        Self::refuse()
    }
    fn reap(&mut self, _: usize) -> Result<usize, StoreError> {
        Self::refuse()
    }
    fn heartbeat(&mut self, _: &str, _: i64) -> Result<(), StoreError> {
        Self::refuse()
    }
    fn rewrite(&mut self, _: i64, _: &NewSession, _: &str) -> Result<(), StoreError> {
        Self::refuse()
    }
    fn save_native(&mut self, _: i64, _: &NativeRow, _: &str) -> Result<(), StoreError> {
        Self::refuse()
    }
    fn side(&mut self) -> Result<&mut dyn super::side::SideWrites, StoreError> {
        Self::refuse()
    }
    fn import(
        &mut self,
        _: &NewSession,
        _: &str,
        _: &mut dyn Iterator<Item = EventRow>,
        _: Option<&StateSnapshot>,
    ) -> Result<i64, StoreError> {
        Self::refuse()
    }
}
