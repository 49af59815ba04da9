//! A fake provider and a daemon configured for Pi, sessions in their own directories.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::CLAIMS;
pub use crate::common::agent_events::*;
pub use crate::common::completed;
use crate::common::{Options, TestDaemon};
use sandbox_agents::ProviderEnv;
use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::provider::{FakeProvider, RecordedRequest};
use sandbox_universal::{AgentId, CreateSessionRequest, UniversalEvent};

/// The key the daemon is given (the provider's key 0).
pub const KEY: &str = "sk-ant-pi-e2e-93c1";
/// A session's own `token` (the provider's key 1); the provider refuses any other key.
pub const TOKEN: &str = "sk-ant-pi-token-5e7a";

pub struct Pi {
    pub provider: FakeProvider,
    pub daemon: TestDaemon,
    pub started: Instant,
}

impl Pi {
    /// A fake provider and a daemon configured for it; `None` (after a loud skip) when the
    /// pinned Pi is not installed.
    pub async fn start() -> Option<Self> {
        let binary = agents::require(Agent::Pi)?;
        let provider = FakeProvider::builder()
            .require_api_key(KEY)
            .require_api_key(TOKEN)
            .start()
            .await
            .unwrap();
        let daemon = TestDaemon::start_with(Options {
            provider_env: ProviderEnv::default()
                .with("ANTHROPIC_API_KEY", KEY)
                .with("ANTHROPIC_BASE_URL", provider.base_url()),
            agent_paths: HashMap::from([(AgentId::Pi, binary)]),
            event_timeout: Duration::from_secs(90),
            ..Options::default()
        })
        .await;
        Some(Self {
            provider,
            daemon,
            started: Instant::now(),
        })
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
        self.daemon.agent_session("pi", id, request).await
    }

    /// Sends a message and returns the events of that turn once it ended.
    pub async fn turn(&self, id: &str, message: &str) -> Vec<UniversalEvent> {
        self.daemon.turn(id, message).await
    }

    /// Waits for the end of `turn_id` and returns its events.
    pub async fn turn_ended(&self, id: &str, turn_id: &str) -> Vec<UniversalEvent> {
        self.daemon.turn_ended(id, turn_id).await
    }

    /// The model calls whose body contains `text`.
    pub fn calls_with(&self, text: &str) -> Vec<RecordedRequest> {
        self.provider
            .model_requests()
            .into_iter()
            .filter(|r| r.body.to_string().contains(text))
            .collect()
    }

    /// The pids of Pi processes (node, which Pi renames to `pi`) working in `cwd`.
    pub fn processes(&self, cwd: &Path) -> Vec<i32> {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
                let dir = std::fs::read_link(entry.path().join("cwd")).ok()?;
                let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
                let node = exe.file_name()?.to_string_lossy().starts_with("node");
                (dir == cwd && node).then_some(pid)
            })
            .collect()
    }

    /// Checks `events` against the capability flags (see [`check_capabilities`]).
    pub async fn check_capabilities(&self, test: &str, events: &[UniversalEvent]) {
        check_capabilities(&self.daemon.client, AgentId::Pi, CLAIMS, test, events).await;
        eprintln!("{test}: {:.1} s", self.started.elapsed().as_secs_f64());
    }
}
