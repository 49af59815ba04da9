//! The test harness: a fake provider, a daemon configured for it, and event helpers.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::CLAIMS;
use crate::common::{Options, TestDaemon, assert_contiguous, skeleton};
use sandbox_agents::ProviderEnv;
use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::provider::{Effect, FakeProvider, RecordedRequest, Script, ToolTemplate};
use sandbox_universal::{
    AgentId, ContentPart, CreateSessionRequest, EventPayload, Item, ItemKind, StopReason,
    UniversalEvent,
};
use serde_json::{Value, json};

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
        let cwd = self.daemon.data_dir.path().join("work").join(id);
        std::fs::create_dir_all(&cwd).unwrap();
        let cwd = cwd.canonicalize().unwrap();
        let created = self
            .daemon
            .client
            .create_session(
                id,
                &CreateSessionRequest {
                    agent: "codex".into(),
                    cwd: Some(cwd.display().to_string()),
                    model: request.model.clone().or(Some(MODEL.into())),
                    ..request
                },
            )
            .await
            .unwrap();
        assert!(created.healthy, "{created:?}");
        cwd
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
        let turn = self.daemon.client.send_message(id, message).await.unwrap();
        let n = turn.turn_id.trim_start_matches("turn_").parse().unwrap();
        let events = self.daemon.wait_turn_ended(id, n).await;
        assert_contiguous(&events, id);
        turn_events(&events, &turn.turn_id)
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

    /// The capability flags of `GET /agents` for codex, as a JSON object.
    pub async fn capabilities(&self) -> serde_json::Map<String, Value> {
        let agents = self.daemon.client.list_agents().await.unwrap();
        let codex = agents
            .agents
            .iter()
            .find(|a| a.id == AgentId::Codex)
            .unwrap();
        serde_json::to_value(codex.capabilities)
            .unwrap()
            .as_object()
            .unwrap()
            .clone()
    }

    /// Checks that everything `events` show is a `true` capability, and that the flags
    /// the test claims are `true` (and, when events can show them, shown).
    pub async fn check_capabilities(&self, test: &str, events: &[UniversalEvent]) {
        let caps = self.capabilities().await;
        let observed = observed_capabilities(events);
        for flag in &observed {
            assert_eq!(
                caps[*flag], true,
                "{test} observed `{flag}`, reported false"
            );
        }
        let claimed = CLAIMS
            .iter()
            .find(|(t, _)| *t == test)
            .map_or(&[][..], |c| c.1);
        for flag in claimed {
            assert_eq!(caps[*flag], true, "{test} claims `{flag}`, reported false");
            if EVENT_FLAGS.contains(flag) {
                assert!(
                    observed.contains(flag),
                    "{test} claims `{flag}` but shows none"
                );
            }
        }
        eprintln!("{test}: {:.1} s", self.started.elapsed().as_secs_f64());
    }
}

/// Flags that events alone can show.
pub const EVENT_FLAGS: &[&str] = &[
    "textMessages",
    "streamingDeltas",
    "reasoning",
    "toolCalls",
    "commandExecution",
    "fileChanges",
    "plans",
    "permissions",
    "questions",
    "cancel",
    "multiTurn",
    "usage",
];

pub fn observed_capabilities(events: &[UniversalEvent]) -> BTreeSet<&'static str> {
    let mut flags = BTreeSet::new();
    let kinds = item_kinds(events);
    let mut completed_turns = 0;
    for event in events {
        match &event.payload {
            EventPayload::ItemCompleted(e) => match e.item.kind {
                ItemKind::Message if !e.item.text().is_empty() => {
                    flags.insert("textMessages");
                }
                ItemKind::Reasoning => {
                    flags.insert("reasoning");
                }
                ItemKind::ToolCall | ItemKind::ToolResult => {
                    flags.insert("toolCalls");
                }
                ItemKind::CommandExecution => {
                    flags.insert("commandExecution");
                }
                ItemKind::FileChange => {
                    flags.insert("fileChanges");
                }
                ItemKind::Plan => {
                    flags.insert("plans");
                }
                _ => {}
            },
            EventPayload::ItemDelta(d) if kinds.get(&d.item_id) == Some(&ItemKind::Message) => {
                flags.insert("streamingDeltas");
            }
            EventPayload::PermissionAsked(_) => {
                flags.insert("permissions");
            }
            EventPayload::QuestionAsked(_) => {
                flags.insert("questions");
            }
            EventPayload::TurnEnded(t) => {
                if t.stop_reason == StopReason::Cancelled {
                    flags.insert("cancel");
                }
                if t.stop_reason == StopReason::Completed {
                    completed_turns += 1;
                }
                if t.usage.is_some() {
                    flags.insert("usage");
                }
            }
            _ => {}
        }
    }
    if completed_turns >= 2 {
        flags.insert("multiTurn");
    }
    flags
}

pub fn item_kinds(events: &[UniversalEvent]) -> HashMap<String, ItemKind> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemStarted(i) => Some((i.item.item_id.clone(), i.item.kind)),
            _ => None,
        })
        .collect()
}

/// The events from `turnStarted` of `turn_id` to its `turnEnded`.
pub fn turn_events(events: &[UniversalEvent], turn_id: &str) -> Vec<UniversalEvent> {
    let start = events
        .iter()
        .position(|e| matches!(&e.payload, EventPayload::TurnStarted(t) if t.turn_id == turn_id))
        .expect("turnStarted");
    let end = events
        .iter()
        .position(|e| matches!(&e.payload, EventPayload::TurnEnded(t) if t.turn_id == turn_id))
        .expect("turnEnded");
    events[start..=end].to_vec()
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

pub fn completed(events: &[UniversalEvent], kind: ItemKind) -> Vec<Item> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) if i.item.kind == kind => Some(i.item.clone()),
            _ => None,
        })
        .collect()
}

pub fn find<T>(events: &[UniversalEvent], pick: impl Fn(&EventPayload) -> Option<T>) -> Option<T> {
    events.iter().find_map(|e| pick(&e.payload))
}

pub fn stop_reason(events: &[UniversalEvent]) -> StopReason {
    find(events, |p| match p {
        EventPayload::TurnEnded(t) => Some(t.stop_reason),
        _ => None,
    })
    .expect("turnEnded")
}

pub fn assert_no_unparsed(events: &[UniversalEvent]) {
    let unparsed: Vec<_> = events
        .iter()
        .filter(|e| matches!(&e.payload, EventPayload::ItemCompleted(i) if i.item.kind == ItemKind::Unparsed))
        .collect();
    assert!(unparsed.is_empty(), "unparsed events: {unparsed:#?}");
}

pub fn command_part(item: &Item) -> (&str, Option<&str>, Option<i32>) {
    match &item.content[0] {
        ContentPart::CommandExecution {
            command,
            output,
            exit_code,
            ..
        } => (command.as_str(), output.as_deref(), *exit_code),
        other => panic!("not a command: {other:?}"),
    }
}

pub const MESSAGE_TURN: &[&str] = &[
    "turnStarted",
    "itemStarted:message",
    "itemCompleted:message",
    "itemStarted:message",
    "itemDelta*",
    "itemCompleted:message",
    "turnEnded",
];

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

pub fn kill_9(pid: i32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
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
