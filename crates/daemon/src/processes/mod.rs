//! Processes a client runs beside the agent in a session's workspace: one run to its end
//! (`run.rs`) or long-running ones with a log (`managed.rs`), kept per session here.
//!
//! Invariants: every process runs the way agents run — the allow-listed environment, a
//! private HOME in the session's agent dir, the agent user and umask — in a process group
//! of its own, which `stop` (SIGTERM), `kill` and the session's end signal whole; a
//! session's processes end with the session and with the daemon. Memory stays bounded: a
//! run keeps at most `maxOutputBytes` of each stream, a long-running process's log at most
//! `--process-log-bytes` (oldest chunks dropped, and readers told so), and each session
//! at most `--max-processes` running at once.

mod decode;
pub mod groups;
pub mod managed;
pub mod pty;
pub mod run;
pub mod tickets;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandbox_agents::process::ProcessSpec;
use sandbox_universal::ProcessInfo;

pub use managed::Managed;

/// Limits of the processes API (`--max-processes`, `--process-timeout`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessLimits {
    /// The most processes (runs and long-running) one session may have running at once.
    pub max_running: usize,
    /// The longest `timeoutMs` a run may ask for.
    pub max_timeout: Duration,
    /// The most output per stream a run may ask to keep.
    pub max_output_bytes: u64,
    /// The bytes of log a long-running process keeps (its oldest chunks go first).
    pub log_bytes: usize,
}

impl Default for ProcessLimits {
    fn default() -> Self {
        Self {
            max_running: 16,
            max_timeout: Duration::from_secs(60 * 60),
            max_output_bytes: 16 << 20,
            log_bytes: 4 << 20,
        }
    }
}

/// A run's timeout when it names none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The output a run keeps per stream when it names no limit.
pub const DEFAULT_OUTPUT_BYTES: u64 = 1 << 20;

/// What a process failed with before or while starting.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// No process with that id in the session (404).
    #[error("no process `{0}` in this session")]
    NotFound(String),
    /// The session has `--max-processes` running (409).
    #[error("this session already runs {0} processes (--max-processes); stop one first")]
    TooMany(usize),
    /// A running process cannot be deleted (409).
    #[error("process `{0}` is still running; stop or kill it first")]
    Running(String),
    /// The program could not be started: not found, not executable (422).
    #[error("{0}")]
    Spawn(String),
    /// The process has no terminal (409).
    #[error("process `{0}` runs without a terminal; start it with `tty: true` to open one")]
    NotATerminal(String),
    /// A terminal ticket that is unknown, used, expired or for another process (401).
    #[error(
        "the ticket is unknown, used up, expired or minted for another process; mint one with POST .../terminal-ticket (each opens one connection within 30 s)"
    )]
    TicketRefused,
    /// A plain request to the terminal's WebSocket route (400).
    #[error("this route is a WebSocket: {0}")]
    NotWebSocket(String),
}

/// One process to start: what runs, and how the API shows it.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The program, arguments, working directory and environment.
    pub spec: ProcessSpec,
    /// The program as the client named it.
    pub command: String,
    /// The arguments as given.
    pub args: Vec<String>,
    /// The working directory relative to the session's.
    pub cwd: String,
    /// Its terminal's first size, when it runs on one (`tty: true`).
    pub tty: Option<sandbox_universal::TerminalSize>,
}

/// Every session's processes.
#[derive(Debug)]
pub struct ProcessTable {
    limits: ProcessLimits,
    sessions: Mutex<HashMap<String, SessionProcesses>>,
    tickets: tickets::Tickets,
}

#[derive(Debug, Default)]
struct SessionProcesses {
    next_id: u64,
    /// Runs under way (they have no entry in `managed`).
    runs: usize,
    managed: Vec<Arc<Managed>>,
}

impl SessionProcesses {
    fn running(&self) -> usize {
        self.runs + self.managed.iter().filter(|p| p.is_running()).count()
    }
}

impl ProcessTable {
    /// An empty table with these limits.
    pub fn new(limits: ProcessLimits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            sessions: Mutex::new(HashMap::new()),
            tickets: tickets::Tickets::default(),
        })
    }

    /// Its limits.
    pub fn limits(&self) -> &ProcessLimits {
        &self.limits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionProcesses>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a run against the session's limit until the returned guard drops.
    pub fn begin_run(self: &Arc<Self>, session: &str) -> Result<RunSlot, ProcessError> {
        let mut sessions = self.lock();
        let entry = sessions.entry(session.to_string()).or_default();
        if entry.running() >= self.limits.max_running {
            return Err(ProcessError::TooMany(self.limits.max_running));
        }
        entry.runs += 1;
        Ok(RunSlot {
            table: self.clone(),
            session: session.to_string(),
        })
    }

    /// Starts a long-running process of `session`.
    pub fn start(&self, session: &str, launch: Launch) -> Result<ProcessInfo, ProcessError> {
        let mut sessions = self.lock();
        let entry = sessions.entry(session.to_string()).or_default();
        if entry.running() >= self.limits.max_running {
            return Err(ProcessError::TooMany(self.limits.max_running));
        }
        entry.next_id += 1;
        let id = format!("p{}", entry.next_id);
        let process = Managed::spawn(id, launch, self.limits.log_bytes)?;
        let info = process.info();
        entry.managed.push(process);
        Ok(info)
    }

    /// The session's processes, oldest first.
    pub fn list(&self, session: &str) -> Vec<ProcessInfo> {
        self.lock()
            .get(session)
            .map(|s| s.managed.iter().map(|p| p.info()).collect())
            .unwrap_or_default()
    }

    /// One process of the session.
    pub fn get(&self, session: &str, id: &str) -> Result<Arc<Managed>, ProcessError> {
        self.lock()
            .get(session)
            .and_then(|s| s.managed.iter().find(|p| p.id() == id).cloned())
            .ok_or_else(|| ProcessError::NotFound(id.to_string()))
    }

    /// A single-use ticket for the terminal of `id` (which must run on one).
    pub fn mint_ticket(&self, session: &str, id: &str) -> Result<String, ProcessError> {
        if self.get(session, id)?.terminal().is_none() {
            return Err(ProcessError::NotATerminal(id.to_string()));
        }
        Ok(self.tickets.mint(session, id))
    }

    /// Uses up a terminal ticket: whether it opens `id`'s terminal.
    pub fn redeem_ticket(&self, ticket: &str, session: &str, id: &str) -> bool {
        self.tickets.redeem(ticket, session, id)
    }

    /// Forgets an exited process and its log.
    pub fn remove(&self, session: &str, id: &str) -> Result<(), ProcessError> {
        let mut sessions = self.lock();
        let entry = sessions
            .get_mut(session)
            .ok_or_else(|| ProcessError::NotFound(id.to_string()))?;
        let at = entry
            .managed
            .iter()
            .position(|p| p.id() == id)
            .ok_or_else(|| ProcessError::NotFound(id.to_string()))?;
        if entry.managed[at].is_running() {
            return Err(ProcessError::Running(id.to_string()));
        }
        entry.managed.remove(at);
        Ok(())
    }

    /// Kills every process of the session (it ended), and what exited ones left behind;
    /// they stay listed, exited.
    pub fn end_session(&self, session: &str) {
        if let Some(entry) = self.lock().get(session) {
            for process in &entry.managed {
                process.kill_all();
            }
        }
    }

    /// Kills every process of the session and what they left behind, and forgets them
    /// (it is deleted).
    pub fn forget_session(&self, session: &str) {
        if let Some(entry) = self.lock().remove(session) {
            for process in entry.managed {
                process.kill_all();
            }
        }
    }

    /// Kills every process and what they left behind (the daemon stops).
    pub fn kill_all(&self) {
        for (_, entry) in self.lock().drain() {
            for process in entry.managed {
                process.kill_all();
            }
        }
    }
}

/// A run counted against its session's limit while it lives.
#[derive(Debug)]
pub struct RunSlot {
    table: Arc<ProcessTable>,
    session: String,
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        if let Some(entry) = self.table.lock().get_mut(&self.session) {
            entry.runs = entry.runs.saturating_sub(1);
        }
    }
}

/// The HOME of a session's processes: `<session dir>/agent/process-home`.
pub fn home_of(session_dir: &std::path::Path) -> PathBuf {
    session_dir
        .join(crate::session::files::AGENT_DIR)
        .join("process-home")
}
