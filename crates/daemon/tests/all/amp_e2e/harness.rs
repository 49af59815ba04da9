//! A daemon configured for Amp the way a user configures it (`AMP_API_KEY`, `AMP_URL`,
//! the binary as `SANDBOX_DAEMON_AMP_PATH` gives it), sessions in their own directories.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::CLAIMS;
pub use crate::common::agent_events::*;
pub use crate::common::completed;
use crate::common::{Options, TestDaemon};
use sandbox_agents::ProviderEnv;
use sandbox_universal::{AgentId, CreateSessionRequest, UniversalEvent};

/// The key the daemon is given.
pub const KEY: &str = "sk-amp-e2e-4b1d";

pub struct Amp {
    pub daemon: TestDaemon,
    pub started: Instant,
}

impl Amp {
    /// A daemon running `binary` as Amp with `env`.
    pub async fn start(binary: PathBuf, env: ProviderEnv) -> Self {
        let daemon = TestDaemon::start_with(Options {
            provider_env: env,
            agent_paths: HashMap::from([(AgentId::Amp, binary)]),
            event_timeout: Duration::from_secs(60),
            ..Options::default()
        })
        .await;
        Self {
            daemon,
            started: Instant::now(),
        }
    }

    /// Restarts the daemon on the same data directory with the same settings.
    pub async fn restart(self) -> Self {
        Self {
            daemon: self.daemon.restart().await,
            ..self
        }
    }

    /// Creates a healthy session in its own working directory; returns the directory.
    pub async fn session(&self, id: &str, request: CreateSessionRequest) -> PathBuf {
        self.daemon.agent_session("amp", id, request).await
    }

    /// Sends a message and returns the events of that turn once it ended.
    pub async fn turn(&self, id: &str, message: &str) -> Vec<UniversalEvent> {
        self.daemon.turn(id, message).await
    }

    /// Waits for the end of `turn_id` and returns its events.
    pub async fn turn_ended(&self, id: &str, turn_id: &str) -> Vec<UniversalEvent> {
        self.daemon.turn_ended(id, turn_id).await
    }

    /// Every file under the daemon's data dir, for secrets that must not be on disk.
    pub fn files(&self) -> Vec<PathBuf> {
        files_under(self.daemon.data_dir.path())
    }

    /// Checks `events` against the capability flags (see [`check_capabilities`]).
    pub async fn check_capabilities(&self, test: &str, events: &[UniversalEvent]) {
        check_capabilities(&self.daemon.client, AgentId::Amp, CLAIMS, test, events).await;
        eprintln!("{test}: {:.1} s", self.started.elapsed().as_secs_f64());
    }
}

pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => files.push(path),
                _ => {}
            }
        }
    }
    files
}

/// No file under `dir` contains `secret`.
pub fn assert_not_on_disk(files: &[PathBuf], secret: &str) {
    for file in files {
        let bytes = std::fs::read(file).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the key",
            file.display()
        );
    }
}
