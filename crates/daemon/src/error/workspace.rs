//! The HTTP edge of the files and processes APIs: each [`WorkspaceError`] and
//! [`ProcessError`] as the problem it answers.

use axum::http::StatusCode;

use super::session::Kind;
use crate::processes::ProcessError;
use crate::workspace::WorkspaceError;

/// The one place a files API failure's status, `type` and title are fixed.
pub(super) fn kind(error: &WorkspaceError) -> Kind {
    let (status, slug, title) = match error {
        WorkspaceError::InvalidPath(_) => (
            StatusCode::BAD_REQUEST,
            "invalid-path",
            "Invalid workspace path",
        ),
        WorkspaceError::Outside(_) => (
            StatusCode::FORBIDDEN,
            "outside-workspace",
            "The path leads outside the workspace",
        ),
        WorkspaceError::PermissionDenied(_) => (
            StatusCode::FORBIDDEN,
            "file-permission-denied",
            "The workspace's user may not do this",
        ),
        WorkspaceError::NotFound(_) => (StatusCode::NOT_FOUND, "file-not-found", "No such file"),
        WorkspaceError::WrongKind(_) => (
            StatusCode::CONFLICT,
            "wrong-file-kind",
            "A file where a directory is needed, or the other way round",
        ),
        WorkspaceError::NotEmpty(_) => (
            StatusCode::CONFLICT,
            "directory-not-empty",
            "The directory is not empty",
        ),
        WorkspaceError::TooLarge(_) => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "files-limit-exceeded",
            "Over a limit of the files API",
        ),
        WorkspaceError::SnapshotTooLarge(_) => (
            StatusCode::CONFLICT,
            "archive-too-large",
            "The snapshot would be larger than asked",
        ),
        WorkspaceError::Root(_) => (
            StatusCode::CONFLICT,
            "workspace-root",
            "The workspace itself cannot be the target",
        ),
        WorkspaceError::RangeNotSatisfiable { .. } => (
            StatusCode::RANGE_NOT_SATISFIABLE,
            "range-not-satisfiable",
            "Range not satisfiable",
        ),
        WorkspaceError::InvalidArchive(_) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-archive",
            "Not a tar or tar.gz archive",
        ),
        WorkspaceError::EntryRefused(_) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "archive-entry-refused",
            "The archive holds an entry that is never extracted",
        ),
        WorkspaceError::Full(_) => (
            StatusCode::INSUFFICIENT_STORAGE,
            "workspace-full",
            "The workspace's disk is full",
        ),
        WorkspaceError::Internal(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Internal error",
        ),
    };
    Kind {
        status,
        slug,
        title,
    }
}

/// The one place a processes API failure's status, `type` and title are fixed.
pub(super) fn process_kind(error: &ProcessError) -> Kind {
    let (status, slug, title) = match error {
        ProcessError::NotFound(_) => (
            StatusCode::NOT_FOUND,
            "process-not-found",
            "No such process",
        ),
        ProcessError::TooMany(_) => (
            StatusCode::CONFLICT,
            "too-many-processes",
            "The session runs as many processes as it may",
        ),
        ProcessError::Running(_) => (
            StatusCode::CONFLICT,
            "process-running",
            "The process is still running",
        ),
        ProcessError::Spawn(_) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "process-not-started",
            "The program could not be started",
        ),
        ProcessError::NotATerminal(_) => (
            StatusCode::CONFLICT,
            "not-a-terminal",
            "The process has no terminal",
        ),
        ProcessError::TicketRefused => (
            StatusCode::UNAUTHORIZED,
            "terminal-ticket-refused",
            "The terminal ticket is not accepted",
        ),
        ProcessError::NotWebSocket(_) => (
            StatusCode::BAD_REQUEST,
            "websocket-required",
            "This route takes a WebSocket handshake",
        ),
    };
    Kind {
        status,
        slug,
        title,
    }
}
