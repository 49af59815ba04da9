//! Messages, reasoning, plans and the events that give nothing.

use sandbox_universal::{
    PermissionKind, PermissionRequest, PlanEntry, PlanEntryStatus, SessionEndReason, SessionEnded,
    TurnStarted,
};
use serde_json::json;

use super::*;

#[test]
fn assistant_deltas_stream_and_completion_sends_only_the_rest() {
    let mut converter = UpdateConverter::new(false);
    let events = [
        started(&message("m1", ItemRole::Assistant, "")),
        delta("m1", "Hel"),
        delta("m1", "lo"),
        completed(&message("m1", ItemRole::Assistant, "Hello world")),
    ];
    assert_eq!(
        run(&mut converter, &events),
        [agent("m1", "Hel"), agent("m1", "lo"), agent("m1", " world")]
    );
}

#[test]
fn message_never_streamed_is_sent_whole_once() {
    let mut converter = UpdateConverter::new(false);
    let item = message("m1", ItemRole::Assistant, "Hi there");
    let events = [started(&item), completed(&item)];
    assert_eq!(run(&mut converter, &events), [agent("m1", "Hi there")]);
}

#[test]
fn completion_that_differs_from_the_stream_sends_nothing_more() {
    let mut converter = UpdateConverter::new(false);
    let events = [
        started(
            &Item::new("m1", ItemKind::Message, ItemStatus::InProgress)
                .with_role(ItemRole::Assistant),
        ),
        delta("m1", "Hello"),
        completed(&message("m1", ItemRole::Assistant, "Goodbye")),
        delta("m1", ""),
    ];
    assert_eq!(run(&mut converter, &events), [agent("m1", "Hello")]);
}

#[test]
fn reasoning_streams_as_thought_chunks() {
    let mut converter = UpdateConverter::new(false);
    let reasoning = |text: &str| {
        Item::new("r1", ItemKind::Reasoning, ItemStatus::Completed)
            .with_role(ItemRole::Assistant)
            .with_content(ContentPart::Reasoning { text: text.into() })
    };
    let events = [
        started(&reasoning("Let")),
        delta("r1", " me"),
        completed(&reasoning("Let me think")),
    ];
    let thought = |t: &str| acp::SessionUpdate::AgentThoughtChunk(chunk("r1", t));
    assert_eq!(
        run(&mut converter, &events),
        [thought("Let"), thought(" me"), thought(" think")]
    );
}

fn user_message_with_images() -> Item {
    message("u1", ItemRole::User, "Look")
        .with_content(ContentPart::Image {
            media_type: "image/png".into(),
            data: Some("iVBORw0KGgo=".into()),
            path: None,
        })
        .with_content(ContentPart::Image {
            media_type: "image/png".into(),
            data: None,
            path: Some("shot.png".into()),
        })
}

#[test]
fn user_messages_are_left_out_of_a_live_prompt() {
    let mut converter = UpdateConverter::new(false);
    let item = user_message_with_images();
    assert_eq!(run(&mut converter, &[started(&item), completed(&item)]), []);
}

#[test]
fn user_messages_replay_with_their_inline_images() {
    let mut converter = UpdateConverter::new(true);
    let item = user_message_with_images();
    let image = acp::ContentBlock::Image(acp::ImageContent::new("iVBORw0KGgo=", "image/png"));
    assert_eq!(
        run(&mut converter, &[started(&item), completed(&item)]),
        [
            acp::SessionUpdate::UserMessageChunk(chunk("u1", "Look")),
            acp::SessionUpdate::UserMessageChunk(
                acp::ContentChunk::new(image).message_id(acp::MessageId::new("u1"))
            ),
        ]
    );
}

fn plan(id: &str, entries: &[(&str, PlanEntryStatus)]) -> Item {
    let entries = entries
        .iter()
        .map(|(content, status)| PlanEntry {
            content: (*content).into(),
            status: *status,
        })
        .collect();
    Item::new(id, ItemKind::Plan, ItemStatus::Completed)
        .with_role(ItemRole::Assistant)
        .with_content(ContentPart::Plan {
            entries,
            text: None,
        })
}

#[test]
fn plans_are_sent_whole_when_they_change() {
    let mut converter = UpdateConverter::new(false);
    let first = plan(
        "p1",
        &[
            ("Read", PlanEntryStatus::Completed),
            ("Write", PlanEntryStatus::InProgress),
        ],
    );
    let second = plan(
        "p2",
        &[
            ("Read", PlanEntryStatus::Completed),
            ("Write", PlanEntryStatus::Pending),
        ],
    );
    let events = [started(&first), completed(&first), completed(&second)];
    let entry = |content: &str, status| {
        acp::PlanEntry::new(content, acp::PlanEntryPriority::Medium, status)
    };
    assert_eq!(
        run(&mut converter, &events),
        [
            acp::SessionUpdate::Plan(acp::Plan::new(vec![
                entry("Read", acp::PlanEntryStatus::Completed),
                entry("Write", acp::PlanEntryStatus::InProgress),
            ])),
            acp::SessionUpdate::Plan(acp::Plan::new(vec![
                entry("Read", acp::PlanEntryStatus::Completed),
                entry("Write", acp::PlanEntryStatus::Pending),
            ])),
        ]
    );
}

#[test]
fn a_plan_of_text_streams_as_a_message() {
    let mut converter = UpdateConverter::new(false);
    let text_plan = |text: &str| {
        Item::new("p1", ItemKind::Plan, ItemStatus::Completed).with_content(ContentPart::Plan {
            entries: Vec::new(),
            text: Some(text.into()),
        })
    };
    let events = [
        started(&text_plan("")),
        delta("p1", "1. Read"),
        completed(&text_plan("1. Read\n2. Write")),
    ];
    assert_eq!(
        run(&mut converter, &events),
        [agent("p1", "1. Read"), agent("p1", "\n2. Write")]
    );
}

#[test]
fn lifecycle_hitl_status_and_error_events_give_nothing() {
    let mut converter = UpdateConverter::new(true);
    let status = Item::new("st", ItemKind::Status, ItemStatus::Completed).with_content(
        ContentPart::Status {
            label: "compacting".into(),
            detail: None,
        },
    );
    let unparsed = Item::new("un", ItemKind::Unparsed, ItemStatus::Completed).with_content(
        ContentPart::Unparsed {
            raw: json!({"odd": true}),
            error: "unknown".into(),
        },
    );
    let permission = PermissionRequest {
        permission_id: "perm1".into(),
        kind: PermissionKind::Command,
        title: "Run `ls`".into(),
        item_id: None,
        tool: None,
        command: Some("ls".into()),
        paths: Vec::new(),
        plan: None,
        input: None,
        always_scope: None,
        mcp: None,
    };
    let events = [
        event(EventPayload::TurnStarted(TurnStarted {
            turn_id: "turn1".into(),
        })),
        started(&status),
        completed(&status),
        started(&unparsed),
        completed(&unparsed),
        event(EventPayload::Error(AgentError::protocol("bad line"))),
        event(EventPayload::PermissionAsked(permission)),
        delta("nobody", "text of an unknown item"),
        turn_ended(),
        event(EventPayload::SessionEnded(SessionEnded {
            reason: SessionEndReason::Completed,
            exit_code: None,
            stderr_tail: None,
        })),
    ];
    assert_eq!(run(&mut converter, &events), []);
}

#[test]
fn message_chunks_on_the_wire() {
    let json = wire(agent("m1", "Hello"));
    assert_eq!(
        json,
        json!({
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "Hello"},
                "messageId": "m1",
            },
        })
    );
}
