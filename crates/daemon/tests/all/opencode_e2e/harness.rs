//! The daemon-level harness: a fake provider, a daemon configured for it the way a user
//! configures it (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, the binary as
//! `SANDBOX_DAEMON_OPENCODE_PATH` gives it), sessions in their own directories, and the
//! servers the daemon runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::CLAIMS;
pub use crate::common::agent_events::*;
pub use crate::common::completed;
use crate::common::{Options, TestDaemon, skeleton};
use sandbox_agents::ProviderEnv;
use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::provider::{FakeProvider, RecordedRequest};
use sandbox_universal::{AgentId, CreateSessionRequest, EventPayload, UniversalEvent};

/// The key the daemon is given (the provider's key 0).
pub const KEY: &str = "sk-ant-opencode-e2e-51c0";
/// Two session `token`s (the provider's keys 1 and 2); it refuses any other key.
pub const TOKENS: [&str; 2] = ["sk-ant-token-one-8d2e", "sk-ant-token-two-a07b"];

pub struct OpenCode {
    pub provider: FakeProvider,
    pub daemon: TestDaemon,
    pub binary: PathBuf,
    pub started: Instant,
}

impl OpenCode {
    /// A fake provider and a daemon configured for it; `None` (after a loud skip) when the
    /// pinned OpenCode is not installed.
    pub async fn start() -> Option<Self> {
        let binary = agents::require(Agent::OpenCode)?;
        let provider = FakeProvider::builder()
            .require_api_key(KEY)
            .require_api_key(TOKENS[0])
            .require_api_key(TOKENS[1])
            .start()
            .await
            .unwrap();
        let daemon = TestDaemon::start_with(Options {
            provider_env: ProviderEnv::default()
                .with("ANTHROPIC_API_KEY", KEY)
                .with("ANTHROPIC_BASE_URL", provider.base_url()),
            agent_paths: HashMap::from([(AgentId::Opencode, binary.clone())]),
            event_timeout: Duration::from_secs(90),
            ..Options::default()
        })
        .await;
        Some(Self {
            provider,
            daemon,
            binary,
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
        self.daemon.agent_session("opencode", id, request).await
    }

    /// Sends a message and returns the events of that turn once it ended.
    pub async fn turn(&self, id: &str, message: &str) -> Vec<UniversalEvent> {
        self.daemon.turn(id, message).await
    }

    /// Waits for the end of `turn_id` and returns its events.
    pub async fn turn_ended(&self, id: &str, turn_id: &str) -> Vec<UniversalEvent> {
        self.daemon.turn_ended(id, turn_id).await
    }

    /// The session's OpenCode session id.
    pub async fn native_id(&self, id: &str) -> String {
        self.daemon
            .client
            .get_session(id)
            .await
            .unwrap()
            .native_session_id
            .expect("an OpenCode session id")
    }

    /// The model calls of one session (OpenCode sends its session id as `x-session-id`).
    pub async fn model_requests(&self, id: &str) -> Vec<RecordedRequest> {
        let native = self.native_id(id).await;
        self.provider
            .model_requests()
            .into_iter()
            .filter(|r| r.headers.get("x-session-id") == Some(&native))
            .collect()
    }

    /// The pids of the `opencode serve` processes of this daemon.
    pub fn servers(&self) -> Vec<i32> {
        server_pids(&self.binary, &self.daemon.data_dir.path().join("opencode"))
    }

    /// Checks `events` against the capability flags (see [`check_capabilities`]).
    pub async fn check_capabilities(&self, test: &str, events: &[UniversalEvent]) {
        check_capabilities(&self.daemon.client, AgentId::Opencode, CLAIMS, test, events).await;
        eprintln!("{test}: {:.1} s", self.started.elapsed().as_secs_f64());
    }
}

/// Processes of `binary` whose working directory is under `root` (a server runs in its
/// HOME, `<data>/opencode/<key>/home`).
pub fn server_pids(binary: &Path, root: &Path) -> Vec<i32> {
    let binary = binary.canonicalize().unwrap();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
            let dir = std::fs::read_link(entry.path().join("cwd")).ok()?;
            (exe == binary && dir.starts_with(root)).then_some(pid)
        })
        .collect()
}

/// Waits (up to 10 s) until `done` holds.
pub async fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "waited in vain for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The skeleton of a turn, each tool item's repeated updates aside: OpenCode reports a
/// running tool's output as it grows, as often as its timing allows.
pub fn canonical(events: &[UniversalEvent]) -> Vec<String> {
    let kinds = item_kinds(events);
    let kept: Vec<UniversalEvent> = events
        .iter()
        .filter(|e| {
            !matches!(&e.payload, EventPayload::ItemDelta(d)
                if kinds.get(&d.item_id) != Some(&sandbox_universal::ItemKind::Message)
                    && kinds.get(&d.item_id) != Some(&sandbox_universal::ItemKind::Reasoning))
        })
        .cloned()
        .collect();
    skeleton(&kept)
}

/// A turn whose tool (`kind`) asks before it runs, then the model answers.
pub fn asked_then_answered(kind: &str) -> Vec<String> {
    [
        "turnStarted",
        "itemStarted:message",
        "itemCompleted:message",
        &format!("itemStarted:{kind}"),
        "permissionAsked",
        "permissionResolved",
        &format!("itemCompleted:{kind}"),
        "itemStarted:message",
        "itemDelta*",
        "itemCompleted:message",
        "turnEnded",
    ]
    .map(str::to_string)
    .to_vec()
}
