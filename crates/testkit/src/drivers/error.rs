//! Errors of the agent drivers.

use std::time::Duration;

/// Why driving an agent failed.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The agent could not be started or written to.
    #[error("i/o with the agent: {0}")]
    Io(#[from] std::io::Error),
    /// Nothing expected arrived in time.
    #[error("timed out after {:.1} s waiting for {what}\n--- agent stderr (tail) ---\n{stderr}", .after.as_secs_f64())]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long.
        after: Duration,
        /// Tail of the agent's stderr.
        stderr: String,
    },
    /// The agent closed its output or exited.
    #[error(
        "agent exited ({status}) while waiting for {what}\n--- agent stderr (tail) ---\n{stderr}"
    )]
    Exited {
        /// What was awaited.
        what: String,
        /// Exit status, if known.
        status: String,
        /// Tail of the agent's stderr.
        stderr: String,
    },
    /// The agent answered something the driver did not expect.
    #[error("protocol: {0}")]
    Protocol(String),
    /// An HTTP call to a server agent failed.
    #[error("http: {0}")]
    Http(#[from] reqwest::Error),
}

/// Result of driver operations.
pub type Result<T> = std::result::Result<T, DriverError>;
