//! What a scenario gets: the subject, the daemon driving it, and the universal checks
//! every scenario makes of every turn.

use std::collections::HashSet;
use std::path::PathBuf;

use sandbox_universal::{
    AgentId, CreateSessionRequest, EventPayload, Item, ItemKind, ItemStatus, PermissionReply,
    PermissionRequest, QuestionRequest, StopReason, UniversalEvent,
};

use sandbox_testkit::provider::RecordedRequest;

use super::subject::{Ask, Subject};
use crate::common::TestDaemon;
use crate::common::agent_events::turn_events;

/// One run of the table: an agent and the daemon that drives it.
pub struct Ctx {
    /// The agent under test.
    pub subject: Subject,
    /// The daemon, over HTTP.
    pub daemon: TestDaemon,
}

/// A session a scenario created.
pub struct Session {
    /// Its id.
    pub id: String,
    /// Its working directory (canonical).
    pub cwd: PathBuf,
}

impl Ctx {
    /// `subject` and a daemon set up for it.
    pub async fn start_for(subject: Subject) -> Self {
        let daemon = TestDaemon::start_with(subject.options.clone()).await;
        Self { subject, daemon }
    }

    /// The table's setup for `agent`, for a test of one agent; `None` (after a loud skip)
    /// when its binary is missing.
    pub async fn start(agent: AgentId) -> Option<Self> {
        Some(Self::start_for(Subject::new(agent).await?).await)
    }

    /// A create request for a session of the subject in its own directory, `work/<id>`.
    pub fn request(&self, id: &str) -> (CreateSessionRequest, PathBuf) {
        let cwd = self.daemon.data_dir.path().join("work").join(id);
        std::fs::create_dir_all(&cwd).unwrap();
        let cwd = cwd.canonicalize().unwrap();
        let request = CreateSessionRequest {
            agent: self.subject.agent.to_string(),
            cwd: Some(cwd.display().to_string()),
            model: self.subject.model.map(str::to_string),
            ..CreateSessionRequest::default()
        };
        (request, cwd)
    }

    /// Creates a healthy session; `tweak` adjusts the request.
    pub async fn session_with(
        &self,
        id: &str,
        tweak: impl FnOnce(CreateSessionRequest) -> CreateSessionRequest,
    ) -> Session {
        let (request, cwd) = self.request(id);
        let created = self
            .daemon
            .client
            .create_session(id, &tweak(request))
            .await
            .unwrap_or_else(|e| panic!("{id}: create: {e}"));
        assert!(created.healthy, "{id}: {created:?}");
        Session {
            id: id.to_string(),
            cwd,
        }
    }

    /// Creates a healthy session with the defaults.
    pub async fn session(&self, id: &str) -> Session {
        self.session_with(id, |r| r).await
    }

    /// The prompt asking the subject for `ask`.
    pub fn prompt(&self, ask: Ask, tag: &str) -> String {
        self.subject.prompt(ask, tag)
    }

    /// Sends a message and returns the turn id.
    pub async fn send(&self, id: &str, message: &str) -> String {
        self.daemon
            .client
            .send_message(id, message)
            .await
            .unwrap_or_else(|e| panic!("{id}: send: {e}"))
            .turn_id
    }

    /// Waits for `turn` to end and returns its events, checked (see [`check_turn`]).
    pub async fn ended(&self, id: &str, turn: &str) -> Vec<UniversalEvent> {
        let events = self.daemon.turn_ended(id, turn).await;
        check_turn(id, &events);
        events
    }

    /// Sends a message and returns the checked events of its turn.
    pub async fn turn(&self, id: &str, message: &str) -> Vec<UniversalEvent> {
        let turn = self.send(id, message).await;
        self.ended(id, &turn).await
    }

    /// Every event of the session so far.
    pub async fn events(&self, id: &str) -> Vec<UniversalEvent> {
        self.daemon.events(id).await
    }

    /// Waits for the first event after `after` (a sequence) that `pick` accepts.
    pub async fn next<T>(
        &self,
        id: &str,
        after: u64,
        pick: impl Fn(&EventPayload) -> Option<T>,
    ) -> T {
        let events = self
            .daemon
            .wait_for(id, |e| e.sequence > after && pick(&e.payload).is_some())
            .await;
        pick(&events.last().unwrap().payload).unwrap()
    }

    /// The sequence of the session's last event (0 before any).
    pub async fn last_sequence(&self, id: &str) -> u64 {
        self.events(id).await.last().map_or(0, |e| e.sequence)
    }

    /// Waits for the next permission request after `after`.
    pub async fn next_permission(&self, id: &str, after: u64) -> PermissionRequest {
        self.next(id, after, |p| match p {
            EventPayload::PermissionAsked(p) => Some(p.clone()),
            _ => None,
        })
        .await
    }

    /// Waits for the next question after `after`.
    pub async fn next_question(&self, id: &str, after: u64) -> QuestionRequest {
        self.next(id, after, |p| match p {
            EventPayload::QuestionAsked(q) => Some(q.clone()),
            _ => None,
        })
        .await
    }

    /// Sends `message`, rejects the question it asks, and returns the question and the
    /// turn's checked events.
    pub async fn reject_next_question(
        &self,
        id: &str,
        message: &str,
    ) -> (QuestionRequest, Vec<UniversalEvent>) {
        let after = self.last_sequence(id).await;
        let turn = self.send(id, message).await;
        let asked = self.next_question(id, after).await;
        self.daemon
            .client
            .reject_question(id, &asked.question_id)
            .await
            .unwrap_or_else(|e| panic!("{id}: reject: {e}"));
        (asked, self.ended(id, &turn).await)
    }

    /// Answers a permission request.
    pub async fn reply(&self, id: &str, asked: &PermissionRequest, reply: PermissionReply) {
        self.daemon
            .client
            .reply_permission(id, &asked.permission_id, reply)
            .await
            .unwrap_or_else(|e| panic!("{id}: reply: {e}"));
    }

    /// Sends `message` and answers every permission it asks with `reply` until the turn
    /// ends; returns the turn's events and the requests it asked.
    pub async fn turn_answering(
        &self,
        id: &str,
        message: &str,
        reply: PermissionReply,
    ) -> (Vec<UniversalEvent>, Vec<PermissionRequest>) {
        let after = self.last_sequence(id).await;
        let turn = self.send(id, message).await;
        let mut answered = HashSet::new();
        let mut asked = Vec::new();
        loop {
            let events = self
                .daemon
                .wait_for(id, |e| {
                    e.sequence > after
                        && match &e.payload {
                            EventPayload::PermissionAsked(p) => {
                                !answered.contains(&p.permission_id)
                            }
                            EventPayload::TurnEnded(t) => t.turn_id == turn,
                            _ => false,
                        }
                })
                .await;
            match &events.last().unwrap().payload {
                EventPayload::PermissionAsked(p) => {
                    answered.insert(p.permission_id.clone());
                    asked.push(p.clone());
                    self.reply(id, p, reply).await;
                }
                _ => {
                    let events = turn_events(&events, &turn);
                    check_turn(id, &events);
                    return (events, asked);
                }
            }
        }
    }

    /// The session's native id (the agent's own session or thread id).
    pub async fn native_id(&self, session: &Session) -> String {
        self.daemon
            .client
            .get_session(&session.id)
            .await
            .unwrap()
            .native_session_id
            .unwrap_or_else(|| panic!("{}: no native session id", session.id))
    }

    /// The model calls of one session: those that name its native id in a header (Codex
    /// sends `session-id`, OpenCode `x-session-id`).
    pub async fn model_calls(&self, session: &Session) -> Vec<RecordedRequest> {
        let native = self.native_id(session).await;
        let Some(provider) = &self.subject.provider else {
            return Vec::new();
        };
        provider
            .model_requests()
            .into_iter()
            .filter(|r| r.headers.values().any(|v| *v == native))
            .collect()
    }

    /// Whether the subject acts on disk and `name` exists in `session`'s directory.
    pub fn on_disk(&self, session: &Session, name: &str) -> bool {
        session.cwd.join(name).exists()
    }
}

/// The checks every turn must pass, whatever the agent: it starts with `turnStarted` and
/// ends with one `turnEnded`; every item started in it completes in it; no `unparsed`
/// item; events are numbered without gaps.
pub fn check_turn(id: &str, events: &[UniversalEvent]) {
    assert!(
        matches!(
            events.first().map(|e| &e.payload),
            Some(EventPayload::TurnStarted(_))
        ),
        "{id}: a turn starts with turnStarted"
    );
    assert!(
        matches!(
            events.last().map(|e| &e.payload),
            Some(EventPayload::TurnEnded(_))
        ),
        "{id}: a turn ends with turnEnded"
    );
    for pair in events.windows(2) {
        assert_eq!(pair[1].sequence, pair[0].sequence + 1, "{id}: a gap");
    }
    let mut open = HashSet::new();
    for event in events {
        match &event.payload {
            EventPayload::ItemStarted(i) => {
                open.insert(i.item.item_id.clone());
            }
            EventPayload::ItemCompleted(i) => {
                assert_ne!(
                    i.item.kind,
                    ItemKind::Unparsed,
                    "{id}: an unparsed item: {:?}",
                    i.item
                );
                open.remove(&i.item.item_id);
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "{id}: items never completed: {open:?}");
}

/// The completed items of `kind`.
pub fn items(events: &[UniversalEvent], kind: ItemKind) -> Vec<Item> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) if i.item.kind == kind => Some(i.item.clone()),
            _ => None,
        })
        .collect()
}

/// The text of the turn's last completed assistant message.
pub fn reply_text(events: &[UniversalEvent]) -> String {
    items(events, ItemKind::Message)
        .into_iter()
        .rev()
        .find(|m| m.role == Some(sandbox_universal::ItemRole::Assistant))
        .map(|m| m.text())
        .unwrap_or_default()
}

/// How the turn ended.
pub fn stop_reason(events: &[UniversalEvent]) -> StopReason {
    match &events.last().unwrap().payload {
        EventPayload::TurnEnded(t) => t.stop_reason,
        other => panic!("not a turnEnded: {other:?}"),
    }
}

/// Whether any event of the turn asked a permission.
pub fn asked_permission(events: &[UniversalEvent]) -> bool {
    events
        .iter()
        .any(|e| matches!(e.payload, EventPayload::PermissionAsked(_)))
}

/// The turn's completed command items that exited 0.
pub fn commands_ok(events: &[UniversalEvent]) -> Vec<Item> {
    items(events, ItemKind::CommandExecution)
        .into_iter()
        .filter(|i| {
            i.status == ItemStatus::Completed
                && i.content.iter().any(|p| {
                    matches!(
                        p,
                        sandbox_universal::ContentPart::CommandExecution {
                            exit_code: Some(0),
                            ..
                        }
                    )
                })
        })
        .collect()
}

/// The tools a model call offered, by the names the agent gave them: an OpenAI
/// Responses call's as the provider reads them (code mode's nested tools included), any
/// other's with those deferred behind a tool search included.
pub fn offered(call: &RecordedRequest) -> Vec<String> {
    if call.route().ends_with("/responses") {
        return sandbox_testkit::provider::view::responses(&call.body)
            .tools
            .into_iter()
            .map(|t| t.name)
            .collect();
    }
    call.tool_names()
        .into_iter()
        .map(|t| t.strip_prefix("deferred:").map(str::to_string).unwrap_or(t))
        .collect()
}
