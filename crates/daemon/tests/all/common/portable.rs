//! Portable sessions below the daemon, on a real agent CLI offline against the test kit's
//! provider: drivers of two "daemons" (each its own data dir), sessions started, exported,
//! imported into a fresh state dir and another cwd, restored, and what the model was sent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_agents::locate::BinaryLocator;
use sandbox_agents::{
    AgentDriver, AgentEvent, AgentSession, CollectingSink, DriverContext, ProviderEnv,
    SessionConfig,
};
use sandbox_testkit::provider::FakeProvider;
use sandbox_universal::history::{CommandStep, History, HistoryStep, HistoryTurn};
use sandbox_universal::{AgentId, ContentPart, EventPayload, PermissionMode, StopReason};

use crate::scenarios::subject::testkit_agent;

/// A fake provider and a way to make drivers of one agent, each like another daemon's.
pub struct Portable {
    /// The agent.
    pub agent: AgentId,
    /// The provider every driver's agent calls.
    pub provider: FakeProvider,
    binary: PathBuf,
    /// Holds every daemon's data dir, state dirs and working directories.
    pub root: tempfile::TempDir,
}

/// A running session and what it emitted.
pub struct Running {
    /// The session.
    pub session: Box<dyn AgentSession>,
    /// Its events.
    pub events: Arc<CollectingSink>,
    turns: usize,
}

impl Portable {
    /// `None` (after a loud skip) when the agent's binary is missing.
    pub async fn new(agent: AgentId) -> Option<Self> {
        let binary = sandbox_testkit::agents::require(testkit_agent(agent))?;
        let provider = FakeProvider::builder().start().await.expect("provider");
        Some(Self {
            agent,
            provider,
            binary,
            root: tempfile::tempdir().expect("root"),
        })
    }

    /// The driver of the daemon whose data dir is `<root>/<daemon>`.
    pub fn driver(&self, daemon: &str) -> Arc<dyn AgentDriver> {
        let base = self.provider.base_url();
        let env = ProviderEnv::default()
            .with("ANTHROPIC_API_KEY", "sk-ant-portable")
            .with("ANTHROPIC_BASE_URL", &base)
            .with("OPENAI_API_KEY", "sk-openai-portable")
            .with("OPENAI_BASE_URL", format!("{base}/v1"));
        let context = Arc::new(DriverContext {
            locator: BinaryLocator::new(
                HashMap::from([(self.agent, self.binary.clone())]),
                None,
                None,
            ),
            provider_env: env,
            data_dir: self.root.path().join(daemon),
            executable: PathBuf::from("/bin/false"),
        });
        match self.agent {
            AgentId::Codex => Arc::new(sandbox_agents::codex::CodexDriver::new(context)),
            AgentId::Opencode => Arc::new(sandbox_agents::opencode::OpenCodeDriver::new(context)),
            other => panic!("no portable test for {other:?}"),
        }
    }

    /// A session `name` (state dir `<root>/<daemon>/sessions/<name>`) working in
    /// `<root>/<cwd>`, running without permission prompts.
    pub fn config(&self, daemon: &str, name: &str, cwd: &str) -> SessionConfig {
        let cwd = self.root.path().join(cwd);
        let state_dir = self.root.path().join(daemon).join("sessions").join(name);
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(&state_dir).unwrap();
        SessionConfig {
            session_id: name.into(),
            agent_mode: None,
            permission_mode: PermissionMode::Bypass,
            model: None,
            variant: None,
            token: None,
            validate_token: false,
            dangerously_skip_permissions: true,
            agent_version: None,
            cwd,
            state_dir,
            tap: None,
            policy: Default::default(),
        }
    }

    /// Starts a session.
    pub async fn start(&self, driver: &Arc<dyn AgentDriver>, config: SessionConfig) -> Running {
        let (events, sink) = CollectingSink::new();
        let session = driver.start(config, sink).await.expect("start");
        Running {
            session,
            events,
            turns: 0,
        }
    }

    /// Restores session `native_id`.
    pub async fn restore(
        &self,
        driver: &Arc<dyn AgentDriver>,
        config: SessionConfig,
        native_id: &str,
    ) -> Running {
        let (events, sink) = CollectingSink::new();
        let session = driver
            .restore(config, Some(native_id.to_string()), sink)
            .await
            .expect("restore");
        Running {
            session,
            events,
            turns: 0,
        }
    }

    /// The model requests whose body holds `later`.
    pub fn calls_with(&self, later: &str) -> Vec<String> {
        self.provider
            .model_requests()
            .into_iter()
            .map(|r| r.body.to_string())
            .filter(|body| body.contains(later))
            .collect()
    }
}

impl Running {
    /// Sends `text` and waits for its turn to end; answers the turn's stop reason and the
    /// session's events so far.
    pub async fn turn(&mut self, text: &str) -> (StopReason, Vec<AgentEvent>) {
        self.turns += 1;
        let turn = format!("turn_{}", self.turns);
        self.session
            .send_message(&turn, &text.into())
            .await
            .expect("send");
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let events = self.events.events();
            let ended: Vec<StopReason> = events
                .iter()
                .filter_map(|e| match &e.payload {
                    EventPayload::TurnEnded(t) => Some(t.stop_reason),
                    _ => None,
                })
                .collect();
            if ended.len() >= self.turns {
                return (ended[self.turns - 1], events);
            }
            assert!(
                Instant::now() < deadline,
                "turn {turn} never ended: {events:#?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A conversation of another agent: the user's distinctive word, a command and its output,
/// and the assistant's reply.
pub fn foreign_history(word: &str, output: &str, reply: &str) -> History {
    History {
        turns: vec![HistoryTurn {
            user: vec![ContentPart::Text {
                text: format!("Remember the word {word}."),
            }],
            steps: vec![
                HistoryStep::Reasoning("the user wants me to remember".into()),
                HistoryStep::Command(CommandStep {
                    call_id: "toolu_01".into(),
                    command: "cat notes.txt".into(),
                    output: format!("{output}\n"),
                    exit_code: Some(0),
                }),
                HistoryStep::Text(reply.into()),
            ],
            stop_reason: Some(StopReason::Completed),
        }],
    }
}

/// Whether `dir` (a path) appears in `body`.
pub fn mentions(body: &str, dir: &Path) -> bool {
    body.contains(&dir.display().to_string())
}
