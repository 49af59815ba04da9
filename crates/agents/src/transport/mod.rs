//! What every agent that talks over a child process's stdio shares: writing JSON lines to
//! its stdin from any task (`LineWriter`), reading its stdout as JSON lines (a line that is
//! not JSON becomes an `unparsed` item, never an error), correlating requests with responses
//! (`Pending`), waiting for its exit, and the errors a dead process produces. Agents that
//! run as local servers share an HTTP + SSE client instead (`HttpPeer`, `EventStream`).

mod http;
mod lines;
mod pending;
mod writer;

pub use http::{EventStream, HttpError, HttpPeer};
pub use lines::{JsonLines, Line, wait_exit};
pub use pending::Pending;
pub use writer::{LineWriter, WriterClosed};

use sandbox_universal::AgentError;

use crate::process::ExitInfo;

impl ExitInfo {
    /// The `processExited` error for this exit, with `message` (which should say what the
    /// exit means for the session).
    pub fn error(&self, message: String) -> AgentError {
        AgentError::ProcessExited {
            message,
            exit_code: self.code,
            signal: self.signal,
            stderr_tail: (!self.stderr_tail.is_empty()).then(|| self.stderr_tail.clone()),
        }
    }
}

/// The `processExited` error for a process that is not running (or whose pipe broke), when
/// there is no exit status to report.
pub fn not_running(message: impl Into<String>) -> AgentError {
    AgentError::ProcessExited {
        message: message.into(),
        exit_code: None,
        signal: None,
        stderr_tail: None,
    }
}

/// The error of a process that could not be started: not installed when the program is
/// missing.
pub fn spawn_error(spec: &crate::process::ProcessSpec, error: &std::io::Error) -> AgentError {
    if error.kind() == std::io::ErrorKind::NotFound {
        AgentError::NotInstalled {
            message: format!("{} was not found", spec.program.display()),
        }
    } else {
        AgentError::SpawnFailed {
            message: format!("starting {} failed: {error}", spec.program.display()),
        }
    }
}

/// Adds the process's last stderr lines to a failed start's error.
pub fn with_stderr(error: AgentError, exit: Option<&ExitInfo>) -> AgentError {
    let Some(tail) = exit
        .map(|e| e.stderr_tail.as_str())
        .filter(|t| !t.is_empty())
    else {
        return error;
    };
    if error.message().contains(tail) {
        return error;
    }
    let message = format!("{}; stderr: {tail}", error.message());
    match error {
        AgentError::TokenError { .. } => AgentError::TokenError { message },
        AgentError::Timeout { .. } => AgentError::Timeout { message },
        AgentError::ProcessExited {
            exit_code,
            signal,
            stderr_tail,
            ..
        } => AgentError::ProcessExited {
            message,
            exit_code,
            signal,
            stderr_tail,
        },
        _ => AgentError::SpawnFailed { message },
    }
}
