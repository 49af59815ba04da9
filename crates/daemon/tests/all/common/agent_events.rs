//! What the real-agent end-to-end tests share: reading a session's events (turns, items,
//! stop reasons), and holding an agent's reported capability flags to what its tests prove.

use std::collections::{BTreeSet, HashMap};

use sandbox_client::Client;
use sandbox_universal::{
    AgentId, ContentPart, EventPayload, Item, ItemKind, StopReason, UniversalEvent,
};
use serde_json::Value;

/// A text turn: the user's message, then the streamed reply (every agent).
pub const TEXT_TURN: &[&str] = &[
    "turnStarted",
    "itemStarted:message",
    "itemCompleted:message",
    "itemStarted:message",
    "itemDelta*",
    "itemCompleted:message",
    "turnEnded",
];

/// The capability flags `GET /agents` reports for `agent`, as a JSON object.
pub async fn capabilities(client: &Client, agent: AgentId) -> serde_json::Map<String, Value> {
    let agents = client.list_agents().await.unwrap();
    let info = agents.agents.iter().find(|a| a.id == agent).unwrap();
    serde_json::to_value(info.capabilities)
        .unwrap()
        .as_object()
        .unwrap()
        .clone()
}

/// The flags `agent` reports are exactly the ones its tests claim (`claims`: test name →
/// the flags it proves).
pub async fn assert_claims_are_reported(
    client: &Client,
    agent: AgentId,
    claims: &[(&str, &[&str])],
) {
    let caps = capabilities(client, agent).await;
    let reported: BTreeSet<&str> = caps
        .iter()
        .filter(|(_, v)| **v == Value::Bool(true))
        .map(|(k, _)| k.as_str())
        .collect();
    let claimed: BTreeSet<&str> = claims
        .iter()
        .flat_map(|(_, flags)| flags.iter().copied())
        .collect();
    assert_eq!(
        reported, claimed,
        "{agent}: true flags must be exactly those the e2e tests prove"
    );
}

/// Checks that everything `events` show is a `true` capability of `agent`, and that the
/// flags `test` claims are `true` (and, when events can show them, shown).
pub async fn check_capabilities(
    client: &Client,
    agent: AgentId,
    claims: &[(&str, &[&str])],
    test: &str,
    events: &[UniversalEvent],
) {
    let caps = capabilities(client, agent).await;
    let observed = observed_capabilities(events);
    for flag in &observed {
        assert_eq!(
            caps[*flag], true,
            "{test} observed `{flag}`, reported false"
        );
    }
    let claimed = claims
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
}

// Flags that events alone can show.
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

pub fn kill_9(pid: i32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}
