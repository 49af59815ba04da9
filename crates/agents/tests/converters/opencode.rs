//! OpenCode: the conformance kit on the test kit's recordings (`fixtures/opencode/`), then
//! the facts each fixture shows. A recording holds our HTTP requests (`in`, each routed by
//! `?directory=<cwd>` as the daemon sends it), the server's HTTP answers and its SSE events
//! (`out`, recorded from `GET /global/event`: envelopes `{"directory", "payload"}`, of which
//! the driver reads the payload). Every reply the recorder sent to a permission or question,
//! and its abort, is rebuilt from the universal answer it stands for and must be the same
//! request, query included.

use std::collections::HashMap;

use sandbox_agents::QuestionAnswer;
use sandbox_agents::opencode::convert::{Converter, NativeCall};
use sandbox_agents::opencode::native::{self, Scope};
use sandbox_universal::{
    AgentError, ContentPart, EventPayload, ItemKind, ItemStatus, PermissionKind, PermissionReply,
    StopReason,
};
use serde_json::{Value, json};

use crate::kit::{self, Fixture, Replay, Reply, Sent};

/// Whether a recorded call is the one the protocol built: the same method, the same path
/// with `?directory=` ([`NativeCall::path_with_directory`]), the same body or none; a
/// prompt's by its parts (the recorder chose the model its own way), and `always` is sent
/// as `once` (the daemon keeps the scope).
fn assert_same(call: &NativeCall, recorded: &Value) {
    assert_eq!(call.method.as_str(), recorded["method"], "{recorded}");
    assert_eq!(call.path_with_directory(), recorded["path"], "{recorded}");
    let mut recorded_body = recorded.get("body").cloned();
    if call.path.ends_with("/prompt_async") {
        assert_eq!(
            call.body.as_ref().map(|b| &b["parts"]),
            recorded_body.as_ref().map(|b| &b["parts"]),
            "{recorded}"
        );
        return;
    }
    if let Some(body) = &mut recorded_body
        && body["reply"] == "always"
    {
        body["reply"] = json!("once");
    }
    assert_eq!(call.body, recorded_body, "{recorded}");
}

/// A recorded request's route (its path without the query) and its `directory`
/// parameter, percent-decoded.
fn route_and_directory(path: &str) -> (&str, Option<String>) {
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    let directory = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("directory="))
        .map(percent_decode);
    (route, directory)
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded).expect("a UTF-8 directory")
}

/// A recording holds HTTP requests (`in`), HTTP answers and the server's events (`out`).
impl Fixture for Converter {
    fn new(cwd: &str) -> Self {
        Converter::new(cwd)
    }

    /// The directory the session was created in (`POST /session?directory=<cwd>`).
    fn cwd(transcript: &[Value]) -> Option<String> {
        transcript
            .iter()
            .filter(|m| m["method"] == "POST")
            .filter_map(|m| m["path"].as_str())
            .map(route_and_directory)
            .find(|(route, _)| *route == "/session")
            .and_then(|(_, directory)| directory)
    }

    fn sent(&mut self, msg: &Value, _asked: &HashMap<String, Value>) -> Sent {
        let path = msg["path"].as_str().unwrap_or_default();
        let (route, directory) = route_and_directory(path);
        assert!(directory.is_some(), "a request without ?directory=: {msg}");
        let segments: Vec<&str> = route.trim_start_matches('/').split('/').collect();
        match segments.as_slice() {
            ["session", id, "prompt_async"] => {
                self.set_native_session_id(id);
                Sent::Turn {
                    text: msg["body"]["parts"][0]["text"]
                        .as_str()
                        .expect("a text")
                        .into(),
                    key: None,
                }
            }
            ["session", _, "abort"] => Sent::Cancel,
            ["permission", request, "reply"] => Sent::Reply {
                key: request.to_string(),
                reply: Reply::Permission(match msg["body"]["reply"].as_str() {
                    Some("once") => PermissionReply::Once,
                    Some("always") => PermissionReply::Always,
                    _ => PermissionReply::Reject,
                }),
            },
            ["question", request, action @ ("reply" | "reject")] => Sent::Reply {
                key: request.to_string(),
                reply: Reply::Question(if *action == "reject" {
                    QuestionAnswer::Rejected
                } else {
                    let answers = serde_json::from_value(msg["body"]["answers"].clone());
                    QuestionAnswer::Answered(answers.expect("answers"))
                }),
            },
            _ => Sent::Nothing,
        }
    }

    /// An event is the payload of its envelope (a bare payload when the runner's tap
    /// recorded it); an HTTP answer has none. The server pool's routing: this session and
    /// its children only; events about the server or of no session reach no session.
    fn received<'a>(&self, msg: &'a Value) -> Option<&'a Value> {
        let payload = msg.get("payload").unwrap_or(msg);
        payload.get("type")?;
        match native::classify(payload) {
            Scope::Server | Scope::Unscoped => None,
            Scope::Session { id, parent } => {
                (self.owns(&id) || parent.is_some_and(|p| self.owns(&p))).then_some(payload)
            }
        }
    }

    fn asked_key(native: &Value) -> String {
        native["properties"]["id"]
            .as_str()
            .expect("a request id")
            .into()
    }

    fn answer(&mut self, _native: &Value) -> Option<(String, Value)> {
        None
    }

    fn assert_same(ours: &NativeCall, recorded: &Value) {
        assert_same(ours, recorded);
    }
}

fn replay(name: &str) -> Replay {
    kit::conform::<Converter>("opencode", &kit::fixture("opencode", name))
}

fn deltas(replay: &Replay) -> usize {
    replay
        .payloads()
        .filter(|p| matches!(p, EventPayload::ItemDelta(_)))
        .count()
}

#[test]
fn every_fixture_conforms() {
    let replays = kit::conform_all::<Converter>("opencode");
    assert_eq!(replays.len(), 10, "{:?}", replays.keys());
    for name in ["permission", "permission-reject", "question"] {
        assert_eq!(replays[name].replies, 1, "{name}");
    }
}

#[test]
fn text_streams_deltas_and_reports_usage() {
    let replay = replay("text");
    assert_eq!(replay.stop_reasons(), [StopReason::Completed]);
    assert!(deltas(&replay) >= 2, "{} deltas", deltas(&replay));
    let messages = replay.completed(ItemKind::Message);
    assert_eq!(messages.len(), 1, "the user's own text is not an item");
    assert_eq!(messages[0].text(), "hello from fake model");
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
fn bash_is_a_command_with_streamed_output_and_exit_code() {
    let replay = replay("tool");
    let commands = replay.completed(ItemKind::CommandExecution);
    assert_eq!(commands.len(), 1);
    assert_eq!(commands[0].status, ItemStatus::Completed);
    let ContentPart::CommandExecution {
        command,
        cwd,
        output,
        exit_code,
    } = &commands[0].content[0]
    else {
        panic!("{commands:?}")
    };
    assert_eq!(
        command,
        "echo fake-tool-ran > fake_tool_output.txt && cat fake_tool_output.txt"
    );
    assert!(cwd.as_deref().unwrap().ends_with("/opencode/tool/work"));
    assert_eq!(output.as_deref(), Some("fake-tool-ran\n"));
    assert_eq!(*exit_code, Some(0));
    let streamed: String = replay
        .payloads()
        .filter_map(|p| match p {
            EventPayload::ItemDelta(d) if d.item_id == commands[0].item_id => {
                Some(d.delta.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "fake-tool-ran\n");
}

#[test]
fn a_permission_names_the_command_its_item_and_opencode_scope() {
    let replay = replay("permission");
    let asked = replay.permissions();
    assert_eq!(asked.len(), 1);
    let bash = &asked[0];
    assert_eq!(bash.kind, PermissionKind::Command);
    assert_eq!(
        bash.command.as_deref(),
        Some("echo fake-tool-ran > fake_tool_output.txt && cat fake_tool_output.txt")
    );
    assert_eq!(bash.tool.as_deref(), Some("bash"));
    assert_eq!(
        bash.always_scope.as_deref(),
        Some("opencode:bash:echo *, cat *")
    );
    let command = &replay.completed(ItemKind::CommandExecution)[0];
    assert_eq!(bash.item_id.as_ref(), Some(&command.item_id));
    assert_eq!(command.status, ItemStatus::Completed);
}

#[test]
fn a_rejected_permission_fails_the_command_and_the_turn_completes() {
    let replay = replay("permission-reject");
    assert_eq!(replay.stop_reasons(), [StopReason::Completed]);
    let command = &replay.completed(ItemKind::CommandExecution)[0];
    assert_eq!(command.status, ItemStatus::Failed);
    let result = &replay.completed(ItemKind::ToolResult)[0];
    assert_eq!(result.parent_id.as_ref(), Some(&command.item_id));
    assert!(matches!(&result.content[0],
        ContentPart::ToolResult { is_error: true, output, .. } if output.contains("rejected")));
}

#[test]
fn a_question_points_at_its_tool_call_and_the_answer_is_its_result() {
    let replay = replay("question");
    let question = replay.questions().into_iter().next().expect("a question");
    assert_eq!(question.questions.len(), 2);
    let labels: Vec<_> = question.questions[1]
        .options
        .iter()
        .map(|o| o.label.as_str())
        .collect();
    assert_eq!(labels, ["Tests", "Docs", "Benchmarks"]);
    assert!(!question.questions[0].multi_select && question.questions[1].multi_select);
    assert_eq!(question.questions[0].header.as_deref(), Some("Color"));
    let call = &replay.completed(ItemKind::ToolCall)[0];
    assert_eq!(question.item_id.as_ref(), Some(&call.item_id));
    assert!(matches!(&call.content[0], ContentPart::ToolCall { name, .. } if name == "question"));
    let result = &replay.completed(ItemKind::ToolResult)[0];
    assert!(matches!(&result.content[0],
        ContentPart::ToolResult { is_error: false, output, .. } if output.contains("\"Blue\"")));
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
    assert!(
        !replay
            .payloads()
            .any(|p| matches!(p, EventPayload::Error(_))),
        "our own abort is no error"
    );
}

#[test]
fn a_failing_provider_retries_then_ends_the_turn_with_its_error() {
    let replay = replay("fail");
    assert_eq!(replay.stop_reasons(), [StopReason::Error]);
    let retries = replay.completed(ItemKind::Status);
    assert_eq!(retries.len(), 5);
    assert!(matches!(&retries[0].content[0],
        ContentPart::Status { label, detail: Some(d) } if label == "retrying" && d.starts_with("attempt 1:")));
    let errors: Vec<_> = replay.errors();
    assert_eq!(
        errors,
        [AgentError::ProviderError {
            message: "fake provider failure (FAIL keyword)".into(),
            status: Some(500)
        }]
    );
}

#[test]
fn a_retried_request_is_a_retrying_status_and_the_turn_completes() {
    let replay = replay("flaky");
    assert_eq!(replay.stop_reasons(), [StopReason::Completed]);
    let retries = replay.completed(ItemKind::Status);
    assert_eq!(retries.len(), 1);
    assert!(matches!(&retries[0].content[0],
        ContentPart::Status { label, detail: Some(d) }
            if label == "retrying" && d == "attempt 1: fake provider is overloaded, try again (FLAKY keyword)"));
    assert!(
        !replay
            .payloads()
            .any(|p| matches!(p, EventPayload::Error(_)))
    );
}

#[test]
fn a_refused_request_ends_the_turn_with_the_providers_message() {
    let replay = replay("refuse");
    assert_eq!(replay.stop_reasons(), [StopReason::Error]);
    assert!(replay.completed(ItemKind::Status).is_empty(), "no retry");
    let errors: Vec<_> = replay.errors();
    assert_eq!(
        errors,
        [AgentError::ProviderError {
            message: "fake provider refuses this request (REFUSE keyword)".into(),
            status: Some(400)
        }]
    );
}
