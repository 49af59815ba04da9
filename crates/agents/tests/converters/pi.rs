//! Pi: the conformance kit on the test kit's recordings (`fixtures/pi/`), then the facts
//! each fixture shows. A recording holds the commands we wrote to `pi --mode rpc` (`in`)
//! and every stdout line (`out`). Our `abort`, and every `extension_ui_response` the
//! recorder wrote, is rebuilt from the universal answer it stands for and must be the same
//! line.

use std::collections::HashMap;

use sandbox_agents::QuestionAnswer;
use sandbox_agents::kernel::{LineProtocol, Outgoing};
use sandbox_agents::pi::convert::Converter;
use sandbox_universal::{
    AgentError, ContentPart, EventPayload, FileChangeKind, ItemKind, ItemStatus, PermissionReply,
    StopReason,
};
use serde_json::Value;

use crate::kit::{self, Fixture, Replay, Reply, Sent};

impl Fixture for Converter {
    fn new(cwd: &str) -> Self {
        Converter::new(cwd)
    }

    /// Pi's stream never names its working directory (the driver starts it there).
    fn cwd(_transcript: &[Value]) -> Option<String> {
        None
    }

    fn sent(&mut self, msg: &Value, _asked: &HashMap<String, Value>) -> Sent {
        match msg["type"].as_str() {
            Some("prompt") => Sent::Turn {
                text: msg["message"].as_str().expect("a message").into(),
                key: None,
            },
            Some("abort") => Sent::Cancel,
            Some("extension_ui_response") => {
                let reply = match msg["confirmed"].as_bool() {
                    Some(true) => Reply::Permission(PermissionReply::Once),
                    Some(false) => Reply::Permission(PermissionReply::Reject),
                    None => Reply::Question(match msg["value"].as_str() {
                        Some(value) => QuestionAnswer::Answered(vec![vec![value.to_string()]]),
                        None => QuestionAnswer::Rejected,
                    }),
                };
                Sent::Reply {
                    key: msg["id"].as_str().expect("a dialog id").into(),
                    reply,
                }
            }
            Some(method) if msg["id"].is_string() => Sent::Request {
                key: msg["id"].as_str().expect("an id").into(),
                method: method.into(),
            },
            _ => Sent::Nothing,
        }
    }

    fn asked_key(native: &Value) -> String {
        native["id"].as_str().expect("a dialog id").into()
    }

    fn answer(&mut self, native: &Value) -> Option<(String, Value)> {
        LineProtocol::answer(self, native).map(|(key, answer)| (key, answer.unwrap_or_default()))
    }

    /// A prompt by its text (the recorder gave it an id of its own); every other line
    /// exactly.
    fn assert_same(ours: &Outgoing, recorded: &Value) {
        let ours = ours.line().expect("Pi is sent lines");
        if recorded["type"] == "prompt" {
            assert_eq!(ours["message"], recorded["message"], "{recorded}");
        } else {
            assert_eq!(ours, recorded);
        }
    }
}

fn replay(name: &str) -> Replay {
    kit::conform::<Converter>("pi", &kit::fixture("pi", name))
}

fn deltas(replay: &Replay, item_id: &str) -> String {
    replay
        .payloads()
        .filter_map(|p| match p {
            EventPayload::ItemDelta(d) if d.item_id == item_id => Some(d.delta.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn every_fixture_conforms() {
    let replays = kit::conform_all::<Converter>("pi");
    assert_eq!(replays.len(), 8, "{:?}", replays.keys());
}

#[test]
fn text_streams_deltas_and_reports_usage() {
    let replay = replay("text");
    assert_eq!(replay.stop_reasons(), [StopReason::Completed]);
    let messages = replay.completed(ItemKind::Message);
    assert_eq!(messages.len(), 1, "the user's own text is not an item");
    assert_eq!(messages[0].text(), "hello from fake model");
    assert_eq!(
        deltas(&replay, &messages[0].item_id),
        "hello from fake model"
    );
    let usage = replay.usage().expect("usage");
    assert_eq!((usage.input_tokens, usage.output_tokens), (12, 7));
}

#[test]
fn think_streams_reasoning_before_the_text() {
    let replay = replay("think");
    let reasoning = replay.completed(ItemKind::Reasoning);
    assert_eq!(
        reasoning[0].text(),
        "The user wants a short demonstration, so I will think briefly and answer."
    );
    assert_eq!(
        replay.completed(ItemKind::Message)[0].text(),
        "hello from fake model"
    );
}

#[test]
fn bash_is_a_command_under_its_call_with_streamed_output_and_exit_code() {
    let replay = replay("tool");
    assert_eq!(replay.stop_reasons(), [StopReason::Completed]);
    let call = &replay.completed(ItemKind::ToolCall)[0];
    let command_line = "echo fake-tool-ran > fake_tool_output.txt && cat fake_tool_output.txt";
    assert!(matches!(&call.content[0],
        ContentPart::ToolCall { name, arguments, .. }
            if name == "bash" && arguments["command"] == command_line));
    let commands = replay.completed(ItemKind::CommandExecution);
    assert_eq!(commands.len(), 1);
    assert_eq!(commands[0].status, ItemStatus::Completed);
    assert_eq!(commands[0].parent_id.as_ref(), Some(&call.item_id));
    let ContentPart::CommandExecution {
        command,
        output,
        exit_code,
        ..
    } = &commands[0].content[0]
    else {
        panic!("{commands:?}")
    };
    assert_eq!(command, command_line);
    assert_eq!(output.as_deref(), Some("fake-tool-ran\n"));
    assert_eq!(*exit_code, Some(0));
    assert_eq!(deltas(&replay, &commands[0].item_id), "fake-tool-ran\n");
    assert_eq!(
        replay.completed(ItemKind::Message)[0].text(),
        "tool finished; hello from fake model"
    );
    // Two model calls, one prompt: one turn, the usage of both.
    let usage = replay.usage().expect("usage");
    assert_eq!((usage.input_tokens, usage.output_tokens), (24, 14));
}

#[test]
fn write_is_a_file_change_with_a_creation_diff() {
    let replay = replay("write");
    let call = &replay.completed(ItemKind::ToolCall)[0];
    let changes = replay.completed(ItemKind::FileChange);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].parent_id.as_ref(), Some(&call.item_id));
    let ContentPart::FileChange {
        path,
        change_kind,
        diff,
    } = &changes[0].content[0]
    else {
        panic!("{changes:?}")
    };
    assert!(path.ends_with("/pi/write/work/fake_written.txt"), "{path}");
    assert_eq!(*change_kind, FileChangeKind::Add);
    assert!(
        diff.as_deref()
            .unwrap()
            .ends_with("@@ -0,0 +1,1 @@\n+written by fake model\n"),
        "{diff:?}"
    );
}

#[test]
fn cancel_ends_the_turn_cancelled_with_the_partial_text_and_the_next_completes() {
    let replay = replay("cancel");
    assert_eq!(
        replay.stop_reasons(),
        [StopReason::Cancelled, StopReason::Completed]
    );
    let messages = replay.completed(ItemKind::Message);
    assert_eq!(messages[0].status, ItemStatus::Failed);
    assert_eq!(messages[0].text(), "this ");
    assert_eq!(messages[1].status, ItemStatus::Completed);
    assert!(replay.errors().is_empty(), "our own abort is no error");
}

#[test]
fn a_failing_provider_ends_the_turn_with_its_error() {
    let replay = replay("fail");
    assert_eq!(replay.stop_reasons(), [StopReason::Error]);
    assert_eq!(
        replay.errors(),
        [AgentError::ProviderError {
            message: "fake provider failure (FAIL keyword)".into(),
            status: Some(500)
        }]
    );
}

#[test]
fn a_retried_request_is_invisible_and_the_turn_completes() {
    // The Anthropic SDK under Pi retries the 529 itself; Pi never sees it.
    let replay = replay("flaky");
    assert_eq!(replay.stop_reasons(), [StopReason::Completed]);
    assert!(replay.completed(ItemKind::Status).is_empty());
    assert!(replay.errors().is_empty());
    assert_eq!(
        replay.completed(ItemKind::Message)[0].text(),
        "hello from fake model"
    );
}

#[test]
fn a_refused_request_ends_the_turn_with_the_providers_message() {
    let replay = replay("refuse");
    assert_eq!(replay.stop_reasons(), [StopReason::Error]);
    assert_eq!(
        replay.errors(),
        [AgentError::ProviderError {
            message: "fake provider refuses this request (REFUSE keyword)".into(),
            status: Some(400)
        }]
    );
}
