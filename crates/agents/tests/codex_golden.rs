//! Golden tests of the Codex converter on the transcripts recorded from the real pinned CLI
//! (`fixtures/codex/*.jsonl`, written by `testkit record`).
//!
//! Each transcript is replayed through [`Converter`] as the driver would: `turn/start`
//! begins a turn, server messages are converted, and every reply the recorder sent to a
//! server request is rebuilt from the universal answer and must match byte for byte.
//! The universal events are compared with `tests/golden/codex/<scenario>.jsonl`;
//! `UPDATE_GOLDEN=1 cargo test -p sandbox-agents --test codex_golden` rewrites them.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use sandbox_agents::codex::convert::Converter;
use sandbox_agents::codex::native::Incoming;
use sandbox_agents::{AgentEvent, CollectingSink, QuestionAnswer};
use sandbox_universal::{EventPayload, ItemKind, PermissionReply, StopReason};
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

struct Replay {
    events: Vec<AgentEvent>,
    turns: usize,
    replies_checked: usize,
}

/// The universal answer that produces the recorded reply to a server request.
fn universal_reply(recorded: &Value, request: &Value) -> Result<PermissionReply, QuestionAnswer> {
    match recorded["result"]["decision"].as_str() {
        Some("accept") => Ok(PermissionReply::Once),
        Some("acceptForSession") => Ok(PermissionReply::Always),
        Some("decline") => Ok(PermissionReply::Reject),
        _ => {
            let answers = &recorded["result"]["answers"];
            let per_question = request["params"]["questions"]
                .as_array()
                .expect("questions")
                .iter()
                .map(|q| {
                    answers[q["id"].as_str().unwrap()]["answers"]
                        .as_array()
                        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
                        .unwrap_or_default()
                })
                .collect();
            Err(QuestionAnswer::Answered(per_question))
        }
    }
}

fn replay(name: &str) -> Replay {
    let path = root().join(format!("../../fixtures/codex/{name}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let (collected, sink) = CollectingSink::new();
    let mut converter = Converter::new("/tmp/sandbox-testkit-record", false);
    let mut turn_requests = HashSet::new();
    // Server request id → (universal id, the request).
    let mut asked: HashMap<String, (String, Value)> = HashMap::new();
    let mut turns = 0;
    let mut replies_checked = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let line: Value = serde_json::from_str(line).unwrap();
        let msg = &line["msg"];
        if line["dir"] == "in" {
            if msg["method"] == "turn/start" {
                turns += 1;
                converter.begin_turn(&format!("turn_{turns}"));
                turn_requests.insert(msg["id"].to_string());
            } else if msg.get("method").is_none() {
                let (universal, request) = asked
                    .remove(&msg["id"].to_string())
                    .unwrap_or_else(|| panic!("{name}: reply to an unknown request: {msg}"));
                let rebuilt = match universal_reply(msg, &request) {
                    Ok(reply) => converter.permission_reply(&universal, reply),
                    Err(answer) => converter.question_reply(&universal, answer),
                }
                .unwrap();
                assert_eq!(&rebuilt, msg, "{name}: reply differs from the recorded one");
                replies_checked += 1;
            }
            continue;
        }
        match Incoming::classify(msg).unwrap() {
            Incoming::Response { id, outcome } => {
                if turn_requests.contains(&id.to_string()) {
                    converter.turn_accepted(&outcome.unwrap());
                }
            }
            Incoming::Notification { method, params } => {
                for event in converter.notification(&sink, &method, &params, msg) {
                    sink.emit(event);
                }
            }
            Incoming::Request { id, method, params } => {
                let outcome = converter.server_request(&sink, &id, &method, &params, msg);
                assert!(
                    outcome.reply.is_none(),
                    "{name}: answered {method} by itself"
                );
                for event in outcome.events {
                    let universal = match &event.payload {
                        EventPayload::PermissionAsked(p) => Some(p.permission_id.clone()),
                        EventPayload::QuestionAsked(q) => Some(q.question_id.clone()),
                        _ => None,
                    };
                    if let Some(universal) = universal {
                        asked.insert(id.to_string(), (universal, msg.clone()));
                    }
                    sink.emit(event);
                }
            }
        }
    }
    Replay {
        events: collected.events(),
        turns,
        replies_checked,
    }
}

fn render(events: &[AgentEvent]) -> String {
    events
        .iter()
        .map(|e| {
            let mut value = serde_json::to_value(&e.payload).unwrap();
            if e.synthetic {
                value["synthetic"] = json!(true);
            }
            format!("{value}\n")
        })
        .collect()
}

/// Lifecycle invariants every conversion must keep.
fn check_invariants(name: &str, replay: &Replay) {
    let mut open = HashSet::new();
    let mut ended = 0;
    for event in &replay.events {
        if !event.synthetic {
            assert!(event.raw.is_some(), "{name}: native event without raw JSON");
        }
        match &event.payload {
            EventPayload::ItemStarted(e) => {
                assert_ne!(e.item.kind, ItemKind::Unparsed, "{name}: unparsed {e:?}");
                assert!(open.insert(e.item.item_id.clone()), "{name}: started twice");
            }
            EventPayload::ItemDelta(d) => {
                assert!(open.contains(&d.item_id), "{name}: delta of a closed item")
            }
            EventPayload::ItemCompleted(e) => {
                assert!(
                    open.remove(&e.item.item_id),
                    "{name}: completed without start"
                );
            }
            EventPayload::TurnEnded(_) => {
                assert!(open.is_empty(), "{name}: items open at turn end: {open:?}");
                ended += 1;
            }
            _ => {}
        }
    }
    assert_eq!(ended, replay.turns, "{name}: every turn ends");
}

fn golden(name: &str) -> Replay {
    let replay = replay(name);
    check_invariants(name, &replay);
    let rendered = render(&replay.events);
    let path = root().join(format!("tests/golden/codex/{name}.jsonl"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &rendered).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path:?}: {e} (run with UPDATE_GOLDEN=1)"));
    assert_eq!(rendered, expected, "{name}: events differ from {path:?}");
    replay
}

fn payloads(replay: &Replay) -> impl Iterator<Item = &EventPayload> {
    replay.events.iter().map(|e| &e.payload)
}

fn stop_reason(replay: &Replay) -> StopReason {
    payloads(replay)
        .find_map(|p| match p {
            EventPayload::TurnEnded(t) => Some(t.stop_reason),
            _ => None,
        })
        .expect("turnEnded")
}

#[test]
fn text() {
    let replay = golden("text");
    assert_eq!(stop_reason(&replay), StopReason::Completed);
    let deltas = payloads(&replay)
        .filter(|p| matches!(p, EventPayload::ItemDelta(_)))
        .count();
    assert!(deltas >= 3, "{deltas} deltas");
}

#[test]
fn think() {
    let replay = golden("think");
    assert!(payloads(&replay).any(|p| matches!(p,
        EventPayload::ItemCompleted(e) if e.item.kind == ItemKind::Reasoning && !e.item.text().is_empty())));
}

#[test]
fn command_approval() {
    let replay = golden("command-approval");
    assert_eq!(replay.replies_checked, 1);
}

#[test]
fn command_decline() {
    let replay = golden("command-decline");
    assert_eq!(replay.replies_checked, 1);
    assert!(payloads(&replay).any(|p| matches!(p,
        EventPayload::ItemCompleted(e) if e.item.kind == ItemKind::CommandExecution
            && e.item.status == sandbox_universal::ItemStatus::Failed)));
}

#[test]
fn apply_patch() {
    let replay = golden("apply-patch");
    assert_eq!(replay.replies_checked, 1);
}

#[test]
fn question() {
    let replay = golden("question");
    assert_eq!(replay.replies_checked, 1);
}

#[test]
fn cancel() {
    let replay = golden("cancel");
    assert_eq!(stop_reason(&replay), StopReason::Cancelled);
}

#[test]
fn fail() {
    let replay = golden("fail");
    assert_eq!(stop_reason(&replay), StopReason::Error);
    assert!(payloads(&replay).any(|p| matches!(p, EventPayload::Error(_))));
}
