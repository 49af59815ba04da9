//! Tests of the conversions: events built by hand, exact updates expected.

use agent_client_protocol::v1::schema as acp;
use chrono::Utc;
use sandbox_universal::{
    AgentError, ContentPart, EventPayload, EventSource, Item, ItemDelta, ItemEvent, ItemKind,
    ItemRole, ItemStatus, StopReason, TurnEnded, UniversalEvent,
};

use super::*;

mod diff;
mod hitl;
mod prompt;
mod tools;
mod transcript;

/// An event of session `s1` carrying `payload`.
fn event(payload: EventPayload) -> UniversalEvent {
    UniversalEvent {
        sequence: 1,
        time: Utc::now(),
        session_id: "s1".into(),
        native_session_id: None,
        source: EventSource::Agent,
        synthetic: false,
        payload,
        raw: None,
    }
}

fn started(item: &Item) -> UniversalEvent {
    let item = Item {
        status: ItemStatus::InProgress,
        ..item.clone()
    };
    event(EventPayload::ItemStarted(ItemEvent { item }))
}

fn completed(item: &Item) -> UniversalEvent {
    event(EventPayload::ItemCompleted(ItemEvent {
        item: item.clone(),
    }))
}

fn delta(item_id: &str, text: &str) -> UniversalEvent {
    event(EventPayload::ItemDelta(ItemDelta {
        item_id: item_id.into(),
        delta: text.into(),
    }))
}

fn turn_ended() -> UniversalEvent {
    event(EventPayload::TurnEnded(TurnEnded {
        turn_id: "turn1".into(),
        stop_reason: StopReason::Completed,
        usage: None,
        changes: None,
    }))
}

/// The updates of each event, in order, as one list.
fn run(converter: &mut UpdateConverter, events: &[UniversalEvent]) -> Vec<acp::SessionUpdate> {
    events.iter().flat_map(|e| converter.updates(e)).collect()
}

/// A message item (completed) with `text`.
fn message(id: &str, role: ItemRole, text: &str) -> Item {
    Item::new(id, ItemKind::Message, ItemStatus::Completed)
        .with_role(role)
        .with_content(ContentPart::Text { text: text.into() })
}

fn chunk(item_id: &str, text: &str) -> acp::ContentChunk {
    acp::ContentChunk::new(text.into()).message_id(acp::MessageId::new(item_id))
}

fn agent(item_id: &str, text: &str) -> acp::SessionUpdate {
    acp::SessionUpdate::AgentMessageChunk(chunk(item_id, text))
}

fn text(text: &str) -> acp::ToolCallContent {
    acp::ToolCallContent::Content(acp::Content::new(acp::ContentBlock::from(text.to_string())))
}

fn update(id: &str, fields: acp::ToolCallUpdateFields) -> acp::SessionUpdate {
    acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(id.to_string(), fields))
}

/// The JSON of a `session/update` notification of `update`.
fn wire(update: acp::SessionUpdate) -> serde_json::Value {
    serde_json::to_value(acp::SessionNotification::new("s1".to_string(), update)).unwrap()
}

#[test]
fn stop_reasons_map_to_acp() {
    let cases = [
        (StopReason::Completed, acp::StopReason::EndTurn),
        (StopReason::Cancelled, acp::StopReason::Cancelled),
        (StopReason::Error, acp::StopReason::EndTurn),
        (StopReason::MaxTokens, acp::StopReason::MaxTokens),
        (StopReason::MaxTurns, acp::StopReason::MaxTurnRequests),
        (StopReason::MaxBudget, acp::StopReason::MaxTurnRequests),
        (StopReason::ToolStop, acp::StopReason::EndTurn),
    ];
    for (reason, expected) in cases {
        assert_eq!(stop_reason(reason), expected, "{reason:?}");
    }
}

#[test]
fn error_text_says_message_kind_and_details() {
    let provider = AgentError::ProviderError {
        message: "Rate limited".into(),
        status: Some(429),
    };
    assert_eq!(
        error_text(&provider),
        "Rate limited (providerError, HTTP 429)"
    );
    let exited = AgentError::ProcessExited {
        message: "the agent exited".into(),
        exit_code: Some(1),
        signal: None,
        stderr_tail: None,
    };
    assert_eq!(
        error_text(&exited),
        "the agent exited (processExited, exit code 1)"
    );
    let timeout = AgentError::Timeout {
        message: "no answer".into(),
    };
    assert_eq!(error_text(&timeout), "no answer (timeout)");
}
