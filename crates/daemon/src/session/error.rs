//! [`SessionError`]: what can go wrong with sessions, in the session layer's own words.
//!
//! The session layer (the manager, a loaded session, its core and actor) answers with
//! this; the HTTP edge (`crate::error`, `error/session.rs`) turns it into a problem, which
//! fixes each variant's status, problem `type` and title. Each message is the problem's
//! `detail`, word for word: these are the only place its words are written (the edge
//! carries a session layer's own problem as the `SessionError` itself).

use sandbox_universal::constraints::SESSION_ID;
use sandbox_universal::{AgentError, AgentId, UnknownAgentName};

use super::manager::MAX_LIST_LIMIT;
use crate::installs::InstallFailure;
use crate::store::StoreError;

/// Everything a session operation can fail with.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SessionError {
    /// A session id breaks `constraints::SESSION_ID`.
    #[error("invalid session id `{0}`: use {meaning}", meaning = SESSION_ID.meaning)]
    InvalidId(String),
    /// A page size outside `1..=MAX_LIST_LIMIT`.
    #[error("limit must be between 1 and {MAX_LIST_LIMIT}, got {0}")]
    InvalidListLimit(usize),
    /// A list cursor this daemon did not hand out.
    #[error("cursor `{0}` is not one this daemon gave (use `nextCursor` of the previous page)")]
    InvalidCursor(String),
    /// No agent has this name.
    #[error("{0}")]
    UnknownAgent(UnknownAgentName),
    /// Two fields of the request contradict each other (a relation its schema states).
    #[error("{0}")]
    ContradictoryRequest(String),
    /// `validateToken` was asked of an agent that cannot check a key before its first turn.
    #[error(
        "validateToken: {0} cannot check a key before its first turn (its capabilities say \
         `validateToken: false`); leave the field out"
    )]
    TokenCheckUnsupported(AgentId),
    /// A setting the agent or this daemon cannot honour.
    #[error("{detail}")]
    InvalidConfig {
        /// The setting.
        field: ConfigField,
        /// Why, naming the value.
        detail: String,
    },
    /// The agent cannot honour part of the session policy or a message part (the detail
    /// names the field).
    #[error("{0}")]
    Unhonoured(String),
    /// A message part is unusable (an image file missing or outside the workspace, data
    /// that is not base64, an image over the size limit).
    #[error("{0}")]
    InvalidContent(String),
    /// Question answers do not fit the questions.
    #[error("{0}")]
    InvalidAnswers(String),
    /// The session's agent cannot be installed here.
    #[error(transparent)]
    Install(#[from] InstallFailure),
    /// The agent cannot be used: it failed to start or come back, or to answer what its
    /// settings are checked against.
    #[error("{}", agent_detail(.0))]
    Agent(AgentError),
    /// The running agent failed to carry out a command (a message, a cancel, a reply).
    #[error("the agent failed: {0}")]
    AgentCommand(AgentError),
    /// A session bundle that cannot be imported: a newer format, a checksum that does
    /// not match, events not numbered from 1, fields missing or invalid.
    #[error("the session bundle cannot be imported: {0}")]
    InvalidBundle(String),
    /// No session has this id.
    #[error("no session with id `{0}`")]
    NotFound(String),
    /// The id is taken (by any stored session, ended or unreadable ones too).
    #[error("a session with id `{0}` already exists")]
    AlreadyExists(String),
    /// The session has ended; its events stay readable.
    #[error("session `{0}` has ended")]
    Ended(String),
    /// A turn is running; messages are not interleaved.
    #[error("session `{session}` is running turn `{turn}`; wait for its `turnEnded` or cancel it")]
    TurnRunning {
        /// The session.
        session: String,
        /// The running turn.
        turn: String,
    },
    /// There is no turn to cancel.
    #[error("session `{0}` has no running turn")]
    NotRunning(String),
    /// No such pending permission request.
    #[error("session `{session}` has no permission request `{id}`")]
    PermissionNotFound {
        /// The session.
        session: String,
        /// The permission id.
        id: String,
    },
    /// The permission request was already answered or cancelled.
    #[error("permission request `{0}` was already resolved")]
    PermissionAnswered(String),
    /// No such pending question request.
    #[error("session `{session}` has no question request `{id}`")]
    QuestionNotFound {
        /// The session.
        session: String,
        /// The question id.
        id: String,
    },
    /// The question request was already answered, rejected or cancelled.
    #[error("question request `{0}` was already resolved")]
    QuestionAnswered(String),
    /// No such host tool call waits in the session.
    #[error("no tool call `{id}` in session `{session}`")]
    ToolCallNotFound {
        /// The session.
        session: String,
        /// The call id.
        id: String,
    },
    /// The host tool call was already answered, rejected or cancelled.
    #[error("tool call `{0}` was already resolved")]
    ToolCallAnswered(String),
    /// Another live daemon sharing the store owns the session (or took it over): it can
    /// be read here but not changed.
    #[error(
        "session `{0}` is owned by another sandbox-daemon sharing this store; read it here, change it there"
    )]
    TakenOver(String),
    /// The session's stored record cannot be read by this build.
    #[error("session `{session}` cannot be used by this build: {detail}; its events stay readable")]
    Unreadable {
        /// The session.
        session: String,
        /// Why.
        detail: String,
    },
    /// The session's files or cwd changed while the daemon was down: its agent is not
    /// started.
    #[error("session `{session}` cannot start its agent: {detail}")]
    Unusable {
        /// The session.
        session: String,
        /// Why.
        detail: String,
    },
    /// The session went on with another agent while this request waited for it.
    #[error("session `{0}` was just handed over to another agent; send the request again")]
    HandedOver(String),
    /// The session is still being imported from an older data dir.
    #[error("session `{0}` is still being restored; retry shortly")]
    Restoring(String),
    /// The store has no space left: nothing new can be written.
    #[error(
        "the session store has no space left ({0}); new sessions and messages are refused until space returns, stored events stay readable"
    )]
    StoreFull(String),
    /// The store cannot be written.
    #[error(
        "the session store cannot be written ({0}); new sessions and messages are refused until it recovers, stored events stay readable"
    )]
    StoreUnavailable(String),
    /// The daemon failed at its own work (the session's files, a bug).
    #[error("internal error: {0}")]
    Internal(String),
}

/// The session setting a [`SessionError::InvalidConfig`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigField {
    /// `agentMode`.
    AgentMode,
    /// `permissionMode` (or `dangerouslySkipPermissions`).
    PermissionMode,
    /// `model` or its `variant`.
    Model,
    /// `cwd`.
    Cwd,
}

impl ConfigField {
    /// The request field's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AgentMode => "agentMode",
            Self::PermissionMode => "permissionMode",
            Self::Model => "model",
            Self::Cwd => "cwd",
        }
    }
}

impl SessionError {
    /// A setting that cannot be honoured.
    pub(super) fn config(field: ConfigField, detail: impl Into<String>) -> Self {
        Self::InvalidConfig {
            field,
            detail: detail.into(),
        }
    }

    /// Whether the store could not write (the read that met it can be served from what
    /// is stored).
    pub fn is_store_outage(&self) -> bool {
        matches!(self, Self::StoreFull(_) | Self::StoreUnavailable(_))
    }
}

/// What an unusable agent says: a missing or unsupported agent its own message, anything
/// else that the agent failed.
fn agent_detail(error: &AgentError) -> String {
    match error {
        AgentError::NotInstalled { message } | AgentError::UnsupportedAgent { message } => {
            message.clone()
        }
        other => format!("the agent failed: {other}"),
    }
}

impl From<StoreError> for SessionError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Full(detail) => Self::StoreFull(detail),
            StoreError::Unavailable(detail) => Self::StoreUnavailable(detail),
            StoreError::Exists(id) => Self::AlreadyExists(id),
            StoreError::OwnedElsewhere(id) => Self::TakenOver(id),
            StoreError::NotFound(detail) => Self::NotFound(detail),
        }
    }
}

impl From<UnknownAgentName> for SessionError {
    fn from(error: UnknownAgentName) -> Self {
        Self::UnknownAgent(error)
    }
}
