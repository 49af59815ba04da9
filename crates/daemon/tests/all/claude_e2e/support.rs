//! The context every Claude end-to-end scenario shares, and assertion helpers.

use std::path::PathBuf;

use sandbox_testkit::provider::FakeProvider;
use sandbox_universal::{
    ContentPart, CreateSessionRequest, CreateSessionResponse, EventPayload, Item, ItemKind,
    StopReason, UniversalEvent,
};

use std::collections::HashMap;

use crate::common::{TestDaemon, skeleton};

pub const API_KEY: &str = "sk-ant-e2e-key";
pub const DAEMON_TOKEN: &str = "daemon-token-must-not-leak";
pub const OPENAI_SECRET: &str = "sk-openai-must-not-leak";

pub use crate::common::agent_events::TEXT_TURN;

pub struct Ctx {
    pub daemon: TestDaemon,
    pub provider: FakeProvider,
    pub claude: PathBuf,
    pub work: PathBuf,
}

pub type Observed = Vec<&'static str>;

impl Ctx {
    pub fn request(&self, name: &str) -> CreateSessionRequest {
        let cwd = self.work.join(name);
        std::fs::create_dir_all(&cwd).unwrap();
        CreateSessionRequest {
            agent: "claude".into(),
            cwd: Some(cwd.display().to_string()),
            ..CreateSessionRequest::default()
        }
    }

    pub async fn create(&self, name: &str, request: CreateSessionRequest) -> CreateSessionResponse {
        self.daemon
            .client
            .create_session(name, &request)
            .await
            .unwrap()
    }

    /// Creates a session the daemon must refuse, and returns its problem.
    pub async fn refused(
        &self,
        name: &str,
        request: CreateSessionRequest,
    ) -> sandbox_universal::ProblemDetails {
        match self.daemon.client.create_session(name, &request).await {
            Err(sandbox_client::ClientError::Problem(problem)) => *problem,
            other => panic!("{name}: expected a problem, got {other:?}"),
        }
    }

    pub async fn session(&self, name: &str) -> CreateSessionResponse {
        self.healthy(name, self.request(name)).await
    }

    pub async fn healthy(
        &self,
        name: &str,
        request: CreateSessionRequest,
    ) -> CreateSessionResponse {
        let created = self.create(name, request).await;
        assert!(created.healthy, "{name}: {created:?}");
        created
    }

    /// Sends a message and returns the turn id.
    pub async fn send(&self, id: &str, message: &str) -> String {
        self.daemon
            .client
            .send_message(id, message)
            .await
            .unwrap()
            .turn_id
    }

    /// Waits for the turn to end and returns its events.
    pub async fn ended(&self, id: &str, turn: &str) -> Vec<UniversalEvent> {
        let events = self
            .daemon
            .wait_for(
                id,
                |e| matches!(&e.payload, EventPayload::TurnEnded(t) if t.turn_id == turn),
            )
            .await;
        turn_events(&events, turn)
    }

    pub async fn turn(&self, id: &str, message: &str) -> Vec<UniversalEvent> {
        let turn = self.send(id, message).await;
        self.ended(id, &turn).await
    }

    /// Waits for the first event (of the whole session) that `pick` accepts.
    pub async fn first<T>(&self, id: &str, pick: impl Fn(&EventPayload) -> Option<T>) -> T {
        let events = self
            .daemon
            .wait_for(id, |e| pick(&e.payload).is_some())
            .await;
        pick(&events.last().unwrap().payload).unwrap()
    }

    pub fn cwd(&self, name: &str) -> PathBuf {
        self.work.join(name)
    }
}

pub fn expect<S: AsRef<str>>(events: &[UniversalEvent], wanted: &[S]) {
    let got = skeleton(events);
    let wanted: Vec<&str> = wanted.iter().map(AsRef::as_ref).collect();
    assert_eq!(got, wanted, "skeleton");
    assert!(
        !got.iter().any(|e| e.ends_with(":unparsed")),
        "unparsed events"
    );
}

pub fn items(events: &[UniversalEvent], kind: ItemKind) -> Vec<Item> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) if i.item.kind == kind => Some(i.item.clone()),
            _ => None,
        })
        .collect()
}

pub fn stop_reason(events: &[UniversalEvent]) -> StopReason {
    match &events.last().unwrap().payload {
        EventPayload::TurnEnded(t) => t.stop_reason,
        other => panic!("not a turnEnded: {other:?}"),
    }
}

pub fn command(item: &Item) -> (String, Option<String>, Option<i32>) {
    match &item.content[0] {
        ContentPart::CommandExecution {
            command,
            output,
            exit_code,
            ..
        } => (command.clone(), output.clone(), *exit_code),
        other => panic!("not a command: {other:?}"),
    }
}

/// The session's Claude process (exactly one).
pub fn claude_pid(native_id: &str) -> u32 {
    let pids = pids_with_arg(native_id);
    assert_eq!(pids.len(), 1, "one Claude process per session: {pids:?}");
    pids[0]
}

/// A turn whose model call uses one tool: the call, any HITL events, the result item,
/// then the final text.
pub fn tool_turn(hitl: &[&str], result: &str) -> Vec<String> {
    let mut skeleton: Vec<String> = TEXT_TURN[..3].iter().map(|s| s.to_string()).collect();
    skeleton.push("itemStarted:toolCall".into());
    skeleton.push("itemCompleted:toolCall".into());
    skeleton.extend(hitl.iter().map(|s| s.to_string()));
    skeleton.push(format!("itemStarted:{result}"));
    skeleton.push(format!("itemCompleted:{result}"));
    skeleton.extend(TEXT_TURN[3..].iter().map(|s| s.to_string()));
    skeleton
}

/// The provider's request for `message` carries the earlier `history`.
pub fn assert_history(ctx: &Ctx, message: &str, history: &str) {
    let request = ctx
        .provider
        .model_requests()
        .into_iter()
        .find(|r| r.body.to_string().contains(message))
        .expect("a model call for the message");
    assert!(
        request.body.to_string().contains(history),
        "the resumed call lacks the history"
    );
}

/// The events of one turn, from its `turnStarted` to its `turnEnded`.
pub fn turn_events(events: &[UniversalEvent], turn_id: &str) -> Vec<UniversalEvent> {
    let start = events
        .iter()
        .position(|e| matches!(&e.payload, EventPayload::TurnStarted(t) if t.turn_id == turn_id))
        .unwrap_or_else(|| panic!("turn {turn_id} never started"));
    let end = events
        .iter()
        .position(|e| matches!(&e.payload, EventPayload::TurnEnded(t) if t.turn_id == turn_id))
        .unwrap_or_else(|| panic!("turn {turn_id} never ended"));
    events[start..=end].to_vec()
}

/// Pids of this namespace's processes that have `arg` among their arguments.
pub fn pids_with_arg(arg: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if cmdline.split(|b| *b == 0).any(|a| a == arg.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

/// The environment a process was started with.
pub fn environ(pid: u32) -> HashMap<String, String> {
    let bytes = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    bytes
        .split(|b| *b == 0)
        .filter_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (name, value) = entry.split_once('=')?;
            Some((name.to_string(), value.to_string()))
        })
        .collect()
}
