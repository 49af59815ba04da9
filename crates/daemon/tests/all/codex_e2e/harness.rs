//! The test harness: a fake provider, a daemon configured for it, and event helpers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::CLAIMS;
pub use crate::common::agent_events::*;
pub use crate::common::completed;
use crate::common::{Options, TestDaemon, skeleton};
use sandbox_agents::ProviderEnv;
use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::provider::{Effect, FakeProvider, RecordedRequest, Script, ToolTemplate};
use sandbox_universal::{AgentId, CreateSessionRequest, EventPayload, ItemKind, UniversalEvent};
use serde_json::json;

/// The key the daemon is given; the fake provider refuses any other.
pub const KEY: &str = "sk-codex-e2e-7f3a9c";
/// The model of every session: the fake provider speaks the classic function-tool
/// dialect of the Responses API, which Codex uses with this model of its catalog (its
/// default model, `gpt-6.1-sol`, gets its tools through a JavaScript "code mode" instead).
pub const MODEL: &str = "gpt-5.5";
/// A prompt keyword that makes the fake model run `env` (added to the default script).
pub const SHOW_ENV: &str = "SHOW_ENV";

pub struct Codex {
    pub provider: FakeProvider,
    pub daemon: TestDaemon,
    pub binary: PathBuf,
    pub started: Instant,
}

impl Codex {
    /// A fake provider and a daemon configured for it; `None` (after a loud skip) when the
    /// pinned Codex is not installed.
    pub async fn start() -> Option<Self> {
        let binary = agents::require(Agent::Codex)?;
        let script = Script::default().with_rule(
            SHOW_ENV,
            Effect::CallTool(vec![ToolTemplate::json(
                "exec_command",
                json!({"cmd": "env"}),
            )]),
        );
        let provider = FakeProvider::builder()
            .script(script)
            .require_api_key(KEY)
            .start()
            .await
            .unwrap();
        let base = provider.base_url();
        let daemon = TestDaemon::start_with(Options {
            provider_env: ProviderEnv::default()
                .with("OPENAI_API_KEY", KEY)
                .with("OPENAI_BASE_URL", format!("{base}/v1"))
                .with("ANTHROPIC_BASE_URL", base),
            agent_paths: HashMap::from([(AgentId::Codex, binary.clone())]),
            event_timeout: Duration::from_secs(60),
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

    /// Creates a healthy Codex session in its own working directory; returns the directory.
    pub async fn session(&self, id: &str, request: CreateSessionRequest) -> PathBuf {
        let request = CreateSessionRequest {
            model: request.model.clone().or(Some(MODEL.into())),
            ..request
        };
        self.daemon.agent_session("codex", id, request).await
    }

    /// Waits until `n` events match, and returns every event so far.
    pub async fn wait_count(
        &self,
        id: &str,
        n: usize,
        matches: impl Fn(&UniversalEvent) -> bool,
    ) -> Vec<UniversalEvent> {
        let seen = AtomicUsize::new(0);
        self.daemon
            .wait_for(id, |e| {
                matches(e) && seen.fetch_add(1, Ordering::SeqCst) + 1 == n
            })
            .await
    }

    /// Sends a message and returns the events of that turn once it ended.
    pub async fn turn(&self, id: &str, message: &str) -> Vec<UniversalEvent> {
        self.daemon.turn(id, message).await
    }

    /// The model calls of one session (Codex sends its thread id as `session-id`).
    pub async fn model_requests(&self, id: &str) -> Vec<RecordedRequest> {
        let thread = self
            .daemon
            .client
            .get_session(id)
            .await
            .unwrap()
            .native_session_id
            .expect("thread id");
        self.provider
            .model_requests()
            .into_iter()
            .filter(|r| r.headers.get("session-id") == Some(&thread))
            .collect()
    }

    /// Checks `events` against the capability flags (see [`check_capabilities`]).
    pub async fn check_capabilities(&self, test: &str, events: &[UniversalEvent]) {
        check_capabilities(&self.daemon.client, AgentId::Codex, CLAIMS, test, events).await;
        eprintln!("{test}: {:.1} s", self.started.elapsed().as_secs_f64());
    }
}

/// The skeleton without command output deltas: Codex streams the output of a quick
/// command only sometimes (the completed item always carries it).
pub fn canonical(events: &[UniversalEvent]) -> Vec<String> {
    let kinds = item_kinds(events);
    let kept: Vec<UniversalEvent> = events
        .iter()
        .filter(|e| {
            !matches!(&e.payload, EventPayload::ItemDelta(d)
            if kinds.get(&d.item_id) == Some(&ItemKind::CommandExecution))
        })
        .cloned()
        .collect();
    skeleton(&kept)
}

pub const MESSAGE_TURN: &[&str] = TEXT_TURN;

pub fn app_server_pid(binary: &Path, cwd: &Path) -> Option<i32> {
    let binary = binary.canonicalize().unwrap();
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
            let dir = std::fs::read_link(entry.path().join("cwd")).ok()?;
            (exe == binary && dir == cwd).then_some(pid)
        })
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
