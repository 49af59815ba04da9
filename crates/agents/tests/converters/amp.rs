//! Amp: the conformance kit on hand-written transcripts of Amp's documented stream JSON
//! (`fixtures/amp/`, see its README: Amp's agent loop runs on Amp's servers, so nothing
//! can be recorded offline), then the facts each fixture shows.
//!
//! The driver runs one process per turn (`amp [threads continue <T-id>] --execute
//! --stream-json ...`), writes the prompt to its stdin and closes it. A transcript's `in`
//! lines are `{"prompt": text}` (the bytes written to stdin: the turn starts and is
//! delivered at once) or `{"cancel": true}` (the daemon kills the process group); its
//! `exit` lines are each process's end.

use std::collections::HashMap;

use sandbox_agents::amp::convert::AmpProtocol;
use sandbox_agents::kernel::per_turn::TurnOut;
use sandbox_universal::{
    AgentError, ContentPart, EventPayload, FileChangeKind, ItemKind, ItemStatus, StopReason,
};
use serde_json::Value;

use crate::kit::{self, Fixture, Replay, Sent};

impl Fixture for AmpProtocol {
    fn new(cwd: &str) -> Self {
        AmpProtocol::new(cwd, None)
    }

    fn cwd(transcript: &[Value]) -> Option<String> {
        transcript
            .iter()
            .find(|m| m["type"] == "system" && m["subtype"] == "init")
            .and_then(|m| m["cwd"].as_str())
            .map(String::from)
    }

    fn sent(&mut self, msg: &Value, _asked: &HashMap<String, Value>) -> Sent {
        if let Some(text) = msg["prompt"].as_str() {
            // A new process: the prompt is written to its stdin, which is then closed.
            return Sent::Turn {
                text: text.into(),
                key: None,
            };
        }
        assert_eq!(msg["cancel"], true, "an unknown input line: {msg}");
        Sent::Cancel
    }

    fn asked_key(native: &Value) -> String {
        native["ask"].as_str().expect("an ask").into()
    }

    fn answer(&mut self, _native: &Value) -> Option<(String, Value)> {
        None
    }

    fn assert_same(ours: &TurnOut, recorded: &Value) {
        match ours {
            TurnOut::Prompt(text) => assert_eq!(recorded["prompt"], *text),
            TurnOut::Stop => assert_eq!(recorded["cancel"], true),
            TurnOut::Answer { answer, .. } => assert_eq!(answer, recorded),
        }
    }
}

fn replay(name: &str) -> Replay {
    kit::conform::<AmpProtocol>("amp", &kit::fixture("amp", name))
}

#[test]
fn every_fixture_conforms() {
    let replays = kit::conform_all::<AmpProtocol>("amp");
    assert!(replays.len() >= 8, "fixtures missing: {:?}", replays.keys());
}

#[test]
fn texts_arrive_whole_and_each_process_is_one_turn() {
    let replay = replay("text");
    assert!(
        !replay
            .payloads()
            .any(|p| matches!(p, EventPayload::ItemDelta(_))),
        "Amp prints no token deltas"
    );
    let texts: Vec<String> = replay
        .completed(ItemKind::Message)
        .iter()
        .map(|m| m.text())
        .collect();
    assert_eq!(texts, ["Hello! How can I help you today?", "Hi!"]);
    assert_eq!(
        replay.stop_reasons(),
        [StopReason::Completed, StopReason::Completed],
        "two processes, the second continuing the thread; a clean exit adds nothing"
    );
    assert!(replay.errors().is_empty());
}

#[test]
fn thinking_is_a_reasoning_item_before_the_text() {
    let replay = replay("think");
    let kinds: Vec<ItemKind> = replay
        .payloads()
        .filter_map(|p| match p {
            EventPayload::ItemCompleted(e) => Some(e.item.kind),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [ItemKind::Reasoning, ItemKind::Message]);
    assert_eq!(
        replay.completed(ItemKind::Reasoning)[0].text(),
        "The user wants a short demonstration, so I will think briefly and answer."
    );
}

#[test]
fn a_shell_command_is_a_command_item_with_its_output_and_exit_code() {
    let replay = replay("tool");
    let call = &replay.completed(ItemKind::ToolCall)[0];
    let command = &replay.completed(ItemKind::CommandExecution)[0];
    assert_eq!(command.status, ItemStatus::Completed);
    assert_eq!(command.parent_id.as_ref(), Some(&call.item_id));
    match &command.content[0] {
        ContentPart::CommandExecution {
            command,
            cwd,
            output,
            exit_code,
        } => {
            assert_eq!(
                command,
                "echo fake-tool-ran > fake_tool_output.txt && cat fake_tool_output.txt"
            );
            assert_eq!(cwd.as_deref(), Some("/work/project"));
            assert_eq!(output.as_deref(), Some("fake-tool-ran\n"));
            assert_eq!(*exit_code, Some(0));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_patch_is_one_file_change_per_file_with_its_diff() {
    let replay = replay("patch");
    let changes = replay.completed(ItemKind::FileChange);
    assert_eq!(changes.len(), 1, "one apply_patch call");
    let parts: Vec<(&str, FileChangeKind, &str)> = changes[0]
        .content
        .iter()
        .map(|part| match part {
            ContentPart::FileChange {
                path,
                change_kind,
                diff,
            } => (path.as_str(), *change_kind, diff.as_deref().unwrap()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        parts[0].0, "/work/project/fake_written.txt",
        "made absolute"
    );
    assert_eq!(parts[0].1, FileChangeKind::Add);
    assert!(
        parts[0].2.contains("+written by fake model"),
        "{}",
        parts[0].2
    );
    assert_eq!(parts[1].0, "/work/project/README.md");
    assert_eq!(parts[1].1, FileChangeKind::Update);
    assert!(
        parts[1].2.contains("-# Demo\n+# Demo project\n"),
        "{}",
        parts[1].2
    );
}

#[test]
fn rejected_tool_calls_keep_amps_refusal_and_the_turn_goes_on() {
    let replay = replay("tool-rejected");
    // What these become is Claude's shell mapping (a command item): see the report on the
    // Amp converter; this test only holds what must stay true whatever the item kind.
    let results: Vec<_> = replay
        .payloads()
        .filter_map(|p| match p {
            EventPayload::ItemCompleted(e) if e.item.parent_id.is_some() => Some(e.item.clone()),
            _ => None,
        })
        .collect();
    let output = |i: usize| match &results[i].content[0] {
        ContentPart::CommandExecution { output, .. } => output.clone().unwrap_or_default(),
        ContentPart::ToolResult { output, .. } => output.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(results.len(), 2);
    // Delegate exit 1 ("ask") under --execute: rejected, `is_error: false`.
    assert!(output(0).starts_with("Tool rejected by plugin: Matches user permissions rule 1"));
    // Delegate exit 2 with stderr: `Plugin error: <stderr>`, `is_error: true`.
    assert_eq!(
        output(1),
        "Plugin error: the user rejected this tool call\n"
    );
    assert_eq!(results[1].status, ItemStatus::Failed);
    assert_eq!(replay.stop_reasons(), [StopReason::Completed]);
    assert!(replay.errors().is_empty());
}

#[test]
fn a_failed_run_reports_amps_error_text_and_ends_the_turn_in_error() {
    let replay = replay("fail");
    assert_eq!(
        replay.errors(),
        [AgentError::AgentReported {
            message: "Out of credits".into(),
            code: Some("error_during_execution".into()),
        }]
    );
    assert_eq!(replay.stop_reasons(), [StopReason::Error]);
}

#[test]
fn a_process_that_dies_before_its_result_is_a_process_error_and_an_error_turn() {
    let replay = replay("crash");
    match replay.errors().as_slice() {
        [
            AgentError::ProcessExited {
                message,
                exit_code,
                stderr_tail,
                ..
            },
        ] => {
            assert!(message.starts_with("Amp exited unexpectedly"), "{message}");
            assert_eq!(*exit_code, Some(1));
            assert!(stderr_tail.as_deref().unwrap().contains("guarded file"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(replay.stop_reasons(), [StopReason::Error]);
    assert!(replay.events.last().unwrap().synthetic);
}

#[test]
fn a_killed_process_ends_its_turn_cancelled_and_the_thread_goes_on() {
    let replay = replay("cancel");
    assert_eq!(
        replay.stop_reasons(),
        [StopReason::Cancelled, StopReason::Completed]
    );
    assert!(replay.errors().is_empty(), "a cancel is no error");
    assert_eq!(
        replay.completed(ItemKind::Message).last().unwrap().text(),
        "Hello! I stopped the build."
    );
}
