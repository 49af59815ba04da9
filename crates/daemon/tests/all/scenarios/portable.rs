//! Portable sessions with the real CLIs offline: a session exported from one daemon and
//! imported into another (another data dir, so another HOME; another workspace path) goes
//! on with its memory; a session of a partner agent handed over to the subject goes on
//! with the earlier turns as the subject's own history.

use std::sync::Arc;

use sandbox_testkit::agents;
use sandbox_testkit::provider::script::TOOL_OUTPUT_FILE;
use sandbox_universal::{
    AgentId, CreateSessionRequest, EventPayload, HandoverRequest, ItemKind, ItemRole,
    PermissionMode, PermissionReply, StopReason, UniversalEvent,
};

use super::Proved;
use super::ctx::{Ctx, check_turn, reply_text, stop_reason};
use super::subject::{USE_PYTHON, testkit_agent};
use crate::common::{TestDaemon, assert_contiguous, completed};

/// The partner whose session a `handover` row hands to the subject.
fn partner_of(agent: AgentId) -> AgentId {
    match agent {
        AgentId::Claude => AgentId::Codex,
        _ => AgentId::Claude,
    }
}

/// The last assistant message of a turn's events.
fn reply(events: &[UniversalEvent]) -> String {
    completed(events, ItemKind::Message)
        .iter()
        .rev()
        .find(|item| item.role == Some(ItemRole::Assistant))
        .map(|item| item.text())
        .unwrap_or_default()
}

/// A workspace directory of `daemon`'s own, canonical.
fn workspace(daemon: &TestDaemon, name: &str) -> String {
    let dir = daemon.data_dir.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap().display().to_string()
}

/// How many times `needle` appears in a model call: a command and its output both name
/// the marker it prints, so two mentions show the output came back too.
fn mentions(body: &str, needle: &str) -> usize {
    body.matches(needle).count()
}

/// Export from the table's daemon, import into a second one (its own data dir and agent
/// homes) working in another directory: the log keeps its numbering and the next turn's
/// model call carries the earlier one — the user's word, the command and its output —
/// and the new directory. A copy imported beside the original, on the same daemon, goes
/// on by itself too.
pub async fn export_import(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("export").await;
    let (first, _) = ctx
        .turn_answering(
            &s.id,
            "remember the word PELICAN then USE_TOOL (export)",
            PermissionReply::Once,
        )
        .await;
    assert_eq!(stop_reason(&first), StopReason::Completed, "export");
    assert!(
        ctx.on_disk(&s, TOOL_OUTPUT_FILE),
        "export: the command did not run"
    );
    let before = ctx.events(&s.id).await;
    let text = ctx
        .daemon
        .client
        .export_session_text(&s.id, false)
        .await
        .unwrap_or_else(|e| panic!("export: {e}"));
    let other = TestDaemon::start_with(ctx.subject.options.clone()).await;
    let cwd = workspace(&other, "moved-workspace");
    assert_ne!(cwd, s.cwd.display().to_string());
    let info = other
        .client
        .import_session("imported", text.to_vec(), Some(&cwd))
        .await
        .unwrap_or_else(|e| panic!("import: {e}"));
    assert_eq!(
        info.event_count,
        before.len() as u64,
        "export: the log moved whole"
    );
    assert_eq!(info.cwd, cwd);
    let later = "which word did I ask you to remember? (export)";
    let events = other.turn("imported", later).await;
    check_turn("imported", &events);
    assert_eq!(
        stop_reason(&events),
        StopReason::Completed,
        "export: the next turn"
    );
    assert!(
        ctx.subject.is_reply(&reply_text(&events), later),
        "export: {events:?}"
    );
    assert_eq!(
        events[0].sequence,
        before.len() as u64 + 1,
        "export: the log goes on"
    );
    assert_contiguous(&other.events("imported").await, "imported");
    let calls = ctx.subject.calls_with(later);
    let body = calls
        .last()
        .unwrap_or_else(|| panic!("export: no model call carries {later:?}"))
        .body
        .to_string();
    assert!(
        body.contains("PELICAN"),
        "export: the earlier turn is lost: {body}"
    );
    assert!(
        mentions(&body, "fake-tool-ran") >= 2,
        "export: the command and its output are lost: {body}"
    );
    assert!(
        body.contains(&cwd),
        "export: the new cwd is not sent: {body}"
    );

    // A copy beside the original, on the same daemon (and for OpenCode, the same server).
    ctx.daemon
        .client
        .import_session("export-copy", text.to_vec(), None)
        .await
        .unwrap_or_else(|e| panic!("import a copy: {e}"));
    let copied = "which word was it, copy? (export)";
    let events = ctx.turn("export-copy", copied).await;
    assert_eq!(
        stop_reason(&events),
        StopReason::Completed,
        "export: the copy"
    );
    assert!(
        ctx.subject
            .remembers(ctx.daemon.data_dir.path(), copied, "PELICAN"),
        "export: the copy lost the conversation"
    );
    vec![]
}

/// A partner agent's session (a reply and a shell command) handed over to the subject:
/// the subject's first model call carries the partner's turns.
pub async fn handover(ctx: Arc<Ctx>) -> Proved {
    let subject = ctx.subject.agent;
    let partner = partner_of(subject);
    let Some(binary) = agents::require(testkit_agent(partner)) else {
        return vec![];
    };
    let mut options = ctx.subject.options.clone();
    options.agent_paths.insert(partner, binary);
    let daemon = TestDaemon::start_with(options).await;
    let request = CreateSessionRequest {
        agent: partner.to_string(),
        cwd: Some(workspace(&daemon, "handover")),
        permission_mode: Some(PermissionMode::Bypass),
        dangerously_skip_permissions: Some(true),
        ..CreateSessionRequest::default()
    };
    daemon
        .client
        .create_session("handover", &request)
        .await
        .unwrap_or_else(|e| panic!("handover: create the {partner} session: {e}"));
    let first = daemon
        .turn("handover", "remember the word GANNET (handover)")
        .await;
    assert_eq!(stop_reason(&first), StopReason::Completed, "handover");
    let earlier_reply = reply(&first);
    let ran = daemon
        .turn("handover", &format!("{USE_PYTHON} (handover)"))
        .await;
    assert!(
        completed(&ran, ItemKind::CommandExecution)
            .iter()
            .any(|item| format!("{:?}", item.content).contains("fake-python-ran")),
        "handover: the {partner} session ran no command: {ran:?}"
    );
    let handed = daemon
        .client
        .handover(
            "handover",
            &HandoverRequest {
                agent: subject.to_string(),
                ..HandoverRequest::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("handover {partner} → {subject}: {e}"));
    assert_eq!(handed.agent, subject);
    let later = "which word did I ask you to remember? (handover)";
    let events = daemon.turn("handover", later).await;
    assert_eq!(
        stop_reason(&events),
        StopReason::Completed,
        "handover: next turn"
    );
    let log = daemon.events("handover").await;
    assert_contiguous(&log, "handover");
    assert!(
        log.iter()
            .any(|e| matches!(&e.payload, EventPayload::SessionHandedOver(h) if h.to_agent == subject && h.turns == 2)),
        "handover: the log does not record it"
    );
    let calls = ctx.subject.calls_with(later);
    let call = calls
        .first()
        .unwrap_or_else(|| panic!("handover: no model call carries {later:?}"));
    let body = call.body.to_string();
    assert!(
        body.contains("GANNET"),
        "handover: the earlier turn is missing: {body}"
    );
    assert!(
        mentions(&body, "fake-python-ran") >= 2,
        "handover: the command's output is missing: {body}"
    );
    // The partner's reply, by its longest word (the body escapes punctuation).
    let word = earlier_reply
        .split(|c: char| !c.is_alphanumeric())
        .max_by_key(|w| w.len())
        .unwrap_or_default();
    assert!(
        body.contains(word),
        "handover: the earlier reply {earlier_reply:?} is missing: {body}"
    );
    vec![]
}
