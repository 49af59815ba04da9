//! The session rows as this build reads and writes them, with their status and agent
//! typed.
//!
//! Contract (stable: what is stored): the `sessions.status` and `sessions.agent` columns
//! hold names, and [`StoredName`] is the one mapping between those names and the typed
//! values (`idle` / `running` / `ended`; the agents' wire names). A row is parsed once,
//! where it is read; a name this build does not know (a newer build wrote it, or a legacy
//! import kept it as found) stays readable as [`Stored::Unknown`], and is written back as
//! it was: reading never fails on it.

use sandbox_universal::{AgentId, SessionStatus};

/// A value the store keeps by name: one this build knows, or a name it does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored<T> {
    /// A value this build knows.
    Known(T),
    /// A name this build does not know (written by a newer build, or imported as found).
    Unknown(String),
}

/// A value with one stored name per variant: the only place such names are spelled.
pub trait StoredName: Copy + PartialEq + 'static {
    /// Every value.
    const ALL: &'static [Self];
    /// The name it is stored as.
    fn stored_name(self) -> &'static str;
}

impl<T: StoredName> Stored<T> {
    /// The value a stored name stands for (never fails: see [`Stored::Unknown`]).
    pub fn parse(name: String) -> Self {
        match T::ALL.iter().find(|value| value.stored_name() == name) {
            Some(value) => Self::Known(*value),
            None => Self::Unknown(name),
        }
    }

    /// The name it is stored as.
    pub fn name(&self) -> &str {
        match self {
            Self::Known(value) => value.stored_name(),
            Self::Unknown(name) => name,
        }
    }

    /// The value, when this build knows it.
    pub fn known(&self) -> Option<T> {
        match self {
            Self::Known(value) => Some(*value),
            Self::Unknown(_) => None,
        }
    }
}

impl<T: StoredName> From<T> for Stored<T> {
    fn from(value: T) -> Self {
        Self::Known(value)
    }
}

impl StoredName for SessionStatus {
    const ALL: &'static [Self] = &[Self::Idle, Self::Running, Self::Ended];

    fn stored_name(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Running => "running",
            Self::Ended => "ended",
        }
    }
}

impl StoredName for AgentId {
    const ALL: &'static [Self] = &AgentId::ALL;

    /// Its wire name (`claude`, `codex`, ...).
    fn stored_name(self) -> &'static str {
        self.as_str()
    }
}

/// A session's status as stored (as of its last state snapshot).
pub type StoredStatus = Stored<SessionStatus>;

/// A session's agent as stored.
pub type StoredAgent = Stored<AgentId>;

/// A session as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    /// Store-internal key (never reused; orders sessions by creation).
    pub sid: i64,
    /// The client's session id.
    pub session_id: String,
    /// Schema version of `record`.
    pub record_version: u32,
    /// How the session was created (JSON).
    pub record: String,
    /// The agent.
    pub agent: StoredAgent,
    /// Idle, running or ended, as of the last state snapshot.
    pub status: StoredStatus,
    /// Creation time, ms since the Unix epoch.
    pub created_ms: i64,
    /// When it ended.
    pub ended_ms: Option<i64>,
    /// The last stored sequence.
    pub last_sequence: u64,
    /// Schema version of `state`.
    pub state_version: Option<u32>,
    /// The sequence `state` reflects.
    pub state_sequence: Option<u64>,
    /// The state snapshot (JSON).
    pub state: Option<String>,
    /// The daemon that owns it.
    pub owner: Option<String>,
    /// Whether that owner's heartbeat is fresh.
    pub owner_alive: bool,
    /// When the event at `last_sequence` was logged, µs since the Unix epoch (`None`: no
    /// event).
    pub last_event_us: Option<i64>,
}

/// A session to create (stored as `idle`).
#[derive(Debug, Clone)]
pub struct NewSession {
    /// The client's session id.
    pub session_id: String,
    /// Schema version of `record`.
    pub record_version: u32,
    /// How it was created (JSON).
    pub record: String,
    /// The agent.
    pub agent: StoredAgent,
    /// Creation time, ms since the Unix epoch.
    pub created_ms: i64,
}

/// The agent's native state of a session, as stored for another daemon to continue it
/// (a `NativeBundle` as JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeRow {
    /// The agent the state belongs to.
    pub agent: StoredAgent,
    /// The state (JSON).
    pub body: String,
    /// When it was saved, ms since the Unix epoch.
    pub saved_ms: i64,
}

/// A page request of `GET /sessions`.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// Sessions after this key.
    pub after_sid: Option<i64>,
    /// Page size.
    pub limit: usize,
    /// Only sessions with this status.
    pub status: Option<SessionStatus>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_names_parse_to_their_values_and_back() {
        for status in SessionStatus::ALL {
            let stored = StoredStatus::parse(status.stored_name().to_string());
            assert_eq!(stored, Stored::Known(*status));
            assert_eq!(stored.name(), status.stored_name());
        }
        for agent in AgentId::ALL {
            assert_eq!(
                StoredAgent::parse(agent.as_str().into()).known(),
                Some(agent)
            );
        }
        assert_eq!(StoredStatus::from(SessionStatus::Running).name(), "running");
    }

    #[test]
    fn unknown_names_stay_readable_and_are_written_back_as_they_were() {
        let status = StoredStatus::parse("hibernating".into());
        assert_eq!(status, Stored::Unknown("hibernating".into()));
        assert_eq!((status.known(), status.name()), (None, "hibernating"));
        let agent = StoredAgent::parse("telepath".into());
        assert_eq!((agent.known(), agent.name()), (None, "telepath"));
        assert_eq!(StoredAgent::parse(String::new()).name(), "");
    }
}
