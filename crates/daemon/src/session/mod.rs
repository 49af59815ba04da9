//! Sessions: the manager that creates, loads and lets them go; each loaded session's core
//! (state + log), lifecycle rules and actor; what is stored about them.

pub mod actor;
mod answers;
mod bundle;
pub mod core;
mod create;
mod error;
pub mod files;
mod handle;
mod handover;
mod host;
pub mod host_calls;
pub mod legacy;
mod lifecycle;
mod manager;
pub mod message;
mod policy;
pub mod portable;
pub mod record;
mod replay;
mod state;
mod travel;
mod upkeep;
mod validate;

use std::path::PathBuf;
use std::time::Duration;

pub use self::core::SessionCore;
pub use error::{ConfigField, SessionError};
pub use handle::SessionHandle;
pub use manager::{DEFAULT_LIST_LIMIT, EventPage, MAX_LIST_LIMIT, SessionManager, View};
pub use state::STATE_VERSION;
pub use validate::{SessionId, validate_session_id};

/// A loaded session with no agent running is let go after this long unused.
pub const DEFAULT_EVICT_AFTER: Duration = Duration::from_secs(10);

/// Default `--idle-timeout`.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Where sessions live and how long they are kept.
#[derive(Debug, Clone)]
pub struct SessionSettings {
    /// Root of the daemon's own state; each session gets a private directory below it.
    pub data_dir: PathBuf,
    /// Working directory of sessions that do not name one.
    pub default_cwd: PathBuf,
    /// When set, session working directories must be inside it.
    pub workspace_root: Option<PathBuf>,
    /// An agent idle this long is stopped (and restored by the next command); `None`
    /// keeps agents running.
    pub idle_timeout: Option<Duration>,
    /// Ended sessions are purged this long after they ended; `None` keeps them.
    pub retain_ended: Option<Duration>,
    /// A loaded session with no agent running is let go after this long unused.
    pub evict_after: Duration,
    /// The user agents run as (`--agent-user`); `None`: the daemon's own.
    pub agent_user: Option<sandbox_agents::user::AgentUser>,
    /// The host tool broker: the MCP endpoint's tokens, the http tool caller.
    pub host_tools: std::sync::Arc<crate::host_tools::HostBroker>,
    /// The files API's limits.
    pub files: crate::workspace::FileLimits,
    /// Every session's processes (the processes API), and their limits.
    pub processes: std::sync::Arc<crate::processes::ProcessTable>,
    /// What each turn changed in the workspace is tracked within these bounds; `None`
    /// (`--no-turn-changes`): not tracked.
    pub turn_changes: Option<crate::changes::ChangeLimits>,
    /// When webhook deliveries are retried and given up.
    pub webhooks: crate::webhooks::DeliveryPolicy,
    /// Trace export (`--otlp-endpoint`, `OTEL_*`); `None`: off.
    pub telemetry: Option<crate::telemetry::Telemetry>,
}

impl SessionSettings {
    /// Settings for `data_dir` with the defaults.
    pub fn new(data_dir: PathBuf, default_cwd: PathBuf) -> Self {
        Self {
            data_dir,
            default_cwd,
            workspace_root: None,
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            retain_ended: None,
            evict_after: DEFAULT_EVICT_AFTER,
            agent_user: None,
            host_tools: crate::host_tools::HostBroker::new(None),
            files: crate::workspace::FileLimits::default(),
            processes: crate::processes::ProcessTable::new(Default::default()),
            turn_changes: Some(crate::changes::ChangeLimits::default()),
            webhooks: crate::webhooks::DeliveryPolicy::default(),
            telemetry: None,
        }
    }
}
