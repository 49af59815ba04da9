//! The Claude converter on native transcripts recorded from the real pinned CLI
//! (`{"dir":"in"|"out","msg":...}` lines): the test kit's scenario recordings in
//! `fixtures/claude/` and the adapter's own in `crates/agents/tests/fixtures/claude/`
//! (permission always/deny, exit codes, interrupt, API error, permission modes, plan
//! approval accepted and rejected). Checks
//! golden universal skeletons, lifecycle invariants, zero `unparsed`, and the facts each
//! scenario shows.
//!
//! Regenerate the goldens after a deliberate converter change with
//! `UPDATE_GOLDEN=1 cargo test -p sandbox-agents --test claude_fixtures` and review the diff.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use sandbox_agents::claude::convert::Converter;
use sandbox_agents::{AgentEvent, CollectingSink};
use sandbox_universal::{
    AgentError, ContentPart, EventPayload, FileChangeKind, ItemKind, PermissionKind, StopReason,
};
use serde_json::Value;

/// The test kit's recordings of its scenarios.
fn testkit_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/claude")
}

/// The adapter's own recordings.
fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude")
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/claude")
}

/// Replays a transcript the way the driver feeds the converter: our user lines start
/// turns, our interrupts cancel, the CLI's lines are converted.
fn replay(path: &Path) -> (Vec<AgentEvent>, usize) {
    let (store, sink) = CollectingSink::new();
    let mut converter = Converter::new("/work");
    let mut turns = 0;
    let text = std::fs::read_to_string(path).unwrap();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let line: Value = serde_json::from_str(line).unwrap();
        let msg = &line["msg"];
        if line["dir"] == "in" {
            match msg["type"].as_str() {
                Some("user") => {
                    turns += 1;
                    converter.begin_turn(&format!("turn_{turns}"));
                }
                Some("control_request") if msg["request"]["subtype"] == "interrupt" => {
                    converter.cancel_requested();
                }
                _ => {}
            }
            continue;
        }
        let converted = converter.convert(msg, &sink);
        sink.emit_all(converted.events);
        assert!(
            converted.replies.is_empty(),
            "unexpected auto-reply for {msg}"
        );
    }
    (store.events(), turns)
}

fn kind(kind: ItemKind) -> String {
    serde_json::to_value(kind).unwrap().as_str().unwrap().into()
}

/// Types with item kinds, consecutive deltas collapsed.
fn skeleton(events: &[AgentEvent]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for event in events {
        let entry = match &event.payload {
            EventPayload::ItemStarted(e) => format!("itemStarted:{}", kind(e.item.kind)),
            EventPayload::ItemCompleted(e) => format!("itemCompleted:{}", kind(e.item.kind)),
            EventPayload::ItemDelta(_) => "itemDelta*".into(),
            EventPayload::TurnEnded(t) => {
                format!(
                    "turnEnded:{}",
                    serde_json::to_value(t.stop_reason)
                        .unwrap()
                        .as_str()
                        .unwrap()
                )
            }
            EventPayload::Error(e) => format!("error:{}", e.kind()),
            other => other.event_type().as_str().into(),
        };
        if entry == "itemDelta*" && out.last().map(String::as_str) == Some("itemDelta*") {
            continue;
        }
        out.push(entry);
    }
    out
}

fn check_invariants(name: &str, events: &[AgentEvent], turns: usize) {
    let mut open = HashSet::new();
    let mut done = HashSet::new();
    let mut ended = 0;
    for event in events {
        match &event.payload {
            EventPayload::ItemStarted(e) => {
                assert_ne!(
                    e.item.kind,
                    ItemKind::Unparsed,
                    "{name}: unparsed {:?}",
                    e.item
                );
                assert!(open.insert(e.item.item_id.clone()), "{name}: started twice");
            }
            EventPayload::ItemDelta(d) => {
                assert!(open.contains(&d.item_id), "{name}: delta for a closed item")
            }
            EventPayload::ItemCompleted(e) => {
                assert!(
                    open.remove(&e.item.item_id),
                    "{name}: completed but not started"
                );
                assert!(done.insert(e.item.item_id.clone()));
            }
            EventPayload::TurnEnded(_) => {
                assert!(
                    open.is_empty(),
                    "{name}: turn ended with open items {open:?}"
                );
                ended += 1;
            }
            EventPayload::SessionStarted(_) | EventPayload::TurnStarted(_) => {
                panic!(
                    "{name}: the converter must not emit {:?}",
                    event.payload.event_type()
                )
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "{name}: items left open: {open:?}");
    assert_eq!(ended, turns, "{name}: every turn ends exactly once");
}

#[test]
fn every_fixture_matches_its_golden_skeleton() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut names = Vec::new();
    let entries = std::fs::read_dir(testkit_fixtures())
        .unwrap()
        .chain(std::fs::read_dir(fixtures_dir()).unwrap());
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let (events, turns) = replay(&path);
        check_invariants(&name, &events, turns);
        let got = skeleton(&events).join("\n") + "\n";
        let golden = golden_dir().join(format!("{name}.txt"));
        if update {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&golden, &got).unwrap();
        } else {
            let want = std::fs::read_to_string(&golden).unwrap_or_else(|_| {
                panic!(
                    "no golden {}; run with UPDATE_GOLDEN=1 and review",
                    golden.display()
                )
            });
            assert_eq!(
                got,
                want,
                "{name}: skeleton differs from {}",
                golden.display()
            );
        }
        names.push(name);
    }
    assert!(names.len() >= 16, "fixtures missing: {names:?}");
}

fn events_of(name: &str) -> Vec<AgentEvent> {
    replay(&fixtures_dir().join(format!("{name}.jsonl"))).0
}

fn completed_items(events: &[AgentEvent], wanted: ItemKind) -> Vec<sandbox_universal::Item> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) if i.item.kind == wanted => Some(i.item.clone()),
            _ => None,
        })
        .collect()
}

fn stop_reasons(events: &[AgentEvent]) -> Vec<StopReason> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::TurnEnded(t) => Some(t.stop_reason),
            _ => None,
        })
        .collect()
}

#[test]
fn thinking_and_text_stream_as_deltas_and_turns_report_usage() {
    let events = events_of("adapter-think-multiturn");
    let reasoning = completed_items(&events, ItemKind::Reasoning);
    assert_eq!(
        reasoning[0].text(),
        "The user wants a short demonstration, so I will think briefly and answer."
    );
    let deltas: HashMap<String, String> = events.iter().fold(HashMap::new(), |mut acc, e| {
        if let EventPayload::ItemDelta(d) = &e.payload {
            acc.entry(d.item_id.clone()).or_default().push_str(&d.delta);
        }
        acc
    });
    for message in completed_items(&events, ItemKind::Message) {
        assert_eq!(message.text(), "hello from fake model");
        assert_eq!(
            deltas[&message.item_id],
            message.text(),
            "deltas add up to the text"
        );
    }
    assert_eq!(deltas[&reasoning[0].item_id], reasoning[0].text());
    let usage = events.iter().find_map(|e| match &e.payload {
        EventPayload::TurnEnded(t) => t.usage.clone(),
        _ => None,
    });
    let usage = usage.expect("usage");
    assert!(usage.input_tokens > 0 && usage.output_tokens > 0);
    assert!(usage.total_cost_usd.is_some());
    assert!(events.iter().all(|e| e.raw.is_some() || e.synthetic));
}

#[test]
fn permissions_carry_command_paths_and_claude_scopes() {
    let events = events_of("adapter-always-then-deny");
    let asked: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::PermissionAsked(p) => Some(p.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        asked.len(),
        3,
        "Bash twice (the redirect is always re-checked), Write once"
    );
    let bash = &asked[0];
    assert_eq!(bash.kind, PermissionKind::Command);
    assert_eq!(
        bash.command.as_deref(),
        Some("echo fake-tool-ran > fake_tool_output.txt && cat fake_tool_output.txt")
    );
    assert!(bash.item_id.is_some(), "points at the tool call item");
    let scope = bash.always_scope.as_deref().unwrap();
    assert!(
        scope.starts_with("claude:Bash(echo fake-tool-ran *) dir:/"),
        "{scope}"
    );
    assert_eq!(
        asked[1].always_scope, bash.always_scope,
        "same call, same scope"
    );
    let write = &asked[2];
    assert_eq!(write.kind, PermissionKind::FileChange);
    assert!(write.paths[0].ends_with("/fake_written.txt"));
    assert_eq!(
        write.always_scope.as_deref(),
        Some("claude:mode:acceptEdits")
    );
    let commands = completed_items(&events, ItemKind::CommandExecution);
    assert_eq!(
        commands.len(),
        1,
        "the second Bash call was denied and never ran"
    );
    match &commands[0].content[0] {
        ContentPart::CommandExecution {
            output, exit_code, ..
        } => {
            assert_eq!(output.as_deref(), Some("fake-tool-ran"));
            assert_eq!(*exit_code, Some(0));
        }
        other => panic!("{other:?}"),
    }
    let files = completed_items(&events, ItemKind::FileChange);
    assert_eq!(
        files.len(),
        2,
        "two writes allowed (the second by acceptEdits)"
    );
    match &files[0].content[0] {
        ContentPart::FileChange {
            path,
            change_kind,
            diff,
        } => {
            assert!(path.ends_with("fake_written.txt"));
            assert_eq!(*change_kind, FileChangeKind::Add);
            assert!(diff.as_deref().unwrap().contains("+written by fake model"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_denied_tool_is_a_failed_tool_result_and_a_failed_command_keeps_its_exit_code() {
    let events = events_of("adapter-question-answer-reject");
    let results = completed_items(&events, ItemKind::ToolResult);
    let denied = results.last().unwrap();
    assert_eq!(denied.status, sandbox_universal::ItemStatus::Failed);
    assert!(denied.parent_id.is_some());
    let events = events_of("adapter-bash-exit-code");
    let command = &completed_items(&events, ItemKind::CommandExecution)[0];
    assert_eq!(command.status, sandbox_universal::ItemStatus::Failed);
    match &command.content[0] {
        ContentPart::CommandExecution {
            output, exit_code, ..
        } => {
            assert_eq!(*exit_code, Some(1));
            assert!(output.as_deref().unwrap().contains("Is a directory"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn questions_keep_order_options_and_multi_select() {
    let events = events_of("adapter-question-answer-reject");
    let asked: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::QuestionAsked(q) => Some(q.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(asked.len(), 2);
    let questions = &asked[0].questions;
    assert_eq!(questions.len(), 2);
    assert_eq!(questions[0].header.as_deref(), Some("Color"));
    assert!(!questions[0].multi_select && questions[1].multi_select);
    let labels: Vec<&str> = questions[1]
        .options
        .iter()
        .map(|o| o.label.as_str())
        .collect();
    assert_eq!(labels, ["Tests", "Docs", "Benchmarks"]);
    assert!(asked[0].item_id.is_some());
}

#[test]
fn an_interrupt_ends_the_turn_cancelled_and_the_next_turn_completes() {
    let events = events_of("adapter-interrupt");
    assert_eq!(
        stop_reasons(&events),
        [StopReason::Cancelled, StopReason::Completed]
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.payload, EventPayload::Error(_)))
    );
}

#[test]
fn a_provider_failure_is_an_error_event_and_an_error_turn() {
    let events = events_of("adapter-api-error");
    let error = events
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::Error(error) => Some(error.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        matches!(&error, AgentError::ProviderError { status: Some(500), message } if message.contains("fake provider failure")),
        "{error:?}"
    );
    assert_eq!(stop_reasons(&events), [StopReason::Error]);
}

/// The `(label, detail)` of each completed `status` item.
fn statuses(events: &[AgentEvent]) -> Vec<(String, String)> {
    completed_items(events, ItemKind::Status)
        .iter()
        .map(|item| match &item.content[0] {
            ContentPart::Status { label, detail } => {
                (label.clone(), detail.clone().unwrap_or_default())
            }
            other => panic!("{other:?}"),
        })
        .collect()
}

/// The ExitPlanMode (last) tool result of a fixture's first turn: `(output, is_error)`.
fn exit_plan_result(events: &[AgentEvent]) -> (String, bool) {
    let results = completed_items(events, ItemKind::ToolResult);
    match &results[1].content[0] {
        ContentPart::ToolResult {
            output, is_error, ..
        } => (output.clone(), *is_error),
        other => panic!("{other:?}"),
    }
}

#[test]
fn plan_mode_asks_to_approve_the_plan_read_from_the_plan_file() {
    for name in ["adapter-plan-approve", "adapter-plan-reject"] {
        let events = events_of(name);
        let asked: Vec<_> = events
            .iter()
            .filter_map(|e| match &e.payload {
                EventPayload::PermissionAsked(p) => Some(p.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(asked[0].kind, PermissionKind::PlanApproval, "{name}");
        assert!(
            asked[0]
                .plan
                .as_deref()
                .unwrap()
                .starts_with("## Fake plan"),
            "{name}: {asked:?}"
        );
        assert_eq!(asked[0].always_scope, None);
        let plan_file = &completed_items(&events, ItemKind::FileChange)[0];
        assert!(
            matches!(&plan_file.content[0], ContentPart::FileChange { path, .. } if path.contains("/.claude/plans/")),
            "{plan_file:?}"
        );
        // ToolSearch loaded ExitPlanMode.
        let loaded = &completed_items(&events, ItemKind::ToolResult)[0];
        assert!(
            matches!(&loaded.content[0], ContentPart::ToolResult { output, .. } if output == "ExitPlanMode")
        );
    }
    let approved = events_of("adapter-plan-approve");
    let (output, is_error) = exit_plan_result(&approved);
    assert!(!is_error && output.contains("User has approved your plan"));
    assert_eq!(
        statuses(&approved),
        [("permissionMode".to_string(), "default".to_string())]
    );
    let rejected = events_of("adapter-plan-reject");
    let (output, is_error) = exit_plan_result(&rejected);
    assert!(is_error && output.contains("rejected the plan"), "{output}");
    // Still planning: the next command is refused by plan mode without asking.
    let notices = statuses(&rejected);
    assert_eq!(notices[0].0, "warning");
    assert_eq!(notices[1].0, "permissionDenied");
    assert!(notices[1].1.starts_with("Bash: "));
}
