//! Claude Code: the conformance kit on the test kit's recordings (`fixtures/claude/`)
//! and the adapter's own (`tests/fixtures/claude/`: permission always/deny, exit codes,
//! interrupt, API error, permission modes, plan approval accepted and rejected), then the
//! facts each fixture shows.

use std::collections::HashMap;

use sandbox_agents::QuestionAnswer;
use sandbox_agents::claude::convert::Converter;
use sandbox_agents::kernel::{LineProtocol, Outgoing};
use sandbox_universal::{
    AgentError, ContentPart, EventPayload, FileChangeKind, ItemKind, ItemStatus, PermissionKind,
    PermissionReply, StopReason,
};
use serde_json::Value;

use crate::kit::{self, Fixture, Replay, Reply, Sent};

impl Fixture for Converter {
    fn new(cwd: &str) -> Self {
        Converter::new(cwd)
    }

    fn cwd(transcript: &[Value]) -> Option<String> {
        transcript
            .iter()
            .find(|m| m["type"] == "system" && m["subtype"] == "init")
            .and_then(|m| m["cwd"].as_str())
            .map(String::from)
    }

    fn sent(&mut self, msg: &Value, asked: &HashMap<String, Value>) -> Sent {
        match (msg["type"].as_str(), msg["request"]["subtype"].as_str()) {
            (Some("user"), _) => Sent::Turn {
                text: msg["message"]["content"][0]["text"]
                    .as_str()
                    .expect("a text")
                    .into(),
                key: None,
            },
            (Some("control_request"), Some("interrupt")) => Sent::Cancel,
            (Some("control_request"), Some(method)) => Sent::Request {
                key: msg["request_id"].as_str().expect("an id").into(),
                method: method.into(),
            },
            (Some("control_response"), _) => {
                let key = msg["response"]["request_id"].as_str().expect("an id");
                let request = &asked[key]["request"];
                Sent::Reply {
                    key: key.into(),
                    reply: reply(request, &msg["response"]["response"]),
                }
            }
            _ => Sent::Nothing,
        }
    }

    fn asked_key(native: &Value) -> String {
        native["request_id"].as_str().expect("a request id").into()
    }

    fn answer(&mut self, native: &Value) -> Option<(String, Value)> {
        LineProtocol::answer(self, native).map(|(key, answer)| (key, answer.unwrap_or_default()))
    }

    /// The user's line and the interrupt as sent; an answer says the same as the recorded
    /// one (the wording of a denial may differ).
    fn assert_same(ours: &Outgoing, recorded: &Value) {
        match ours {
            Outgoing::Request { method, .. } => {
                assert_eq!(recorded["request"]["subtype"], *method, "{recorded}")
            }
            Outgoing::Line(line) if line["type"] == "user" => {
                assert_eq!(line["message"], recorded["message"], "{recorded}")
            }
            Outgoing::Line(line) => {
                let (ours, recorded) = (
                    &line["response"]["response"],
                    &recorded["response"]["response"],
                );
                assert_eq!(ours["behavior"], recorded["behavior"], "{recorded}");
                if recorded["behavior"] == "allow" {
                    assert_eq!(ours["updatedInput"], recorded["updatedInput"], "{recorded}");
                }
            }
        }
    }
}

/// The universal answer the recorded `response` to the `can_use_tool` `request` stands
/// for.
fn reply(request: &Value, response: &Value) -> Reply {
    let allowed = response["behavior"] == "allow";
    if request["tool_name"] != "AskUserQuestion" {
        return Reply::Permission(match (allowed, response.get("updatedPermissions")) {
            (false, _) => PermissionReply::Reject,
            (true, Some(_)) => PermissionReply::Always,
            (true, None) => PermissionReply::Once,
        });
    }
    if !allowed {
        return Reply::Question(QuestionAnswer::Rejected);
    }
    let answers = &response["updatedInput"]["answers"];
    let per_question = request["input"]["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .map(|q| {
            answers[q["question"].as_str().expect("a question")]
                .as_str()
                .map(|a| a.split(", ").map(String::from).collect())
                .unwrap_or_default()
        })
        .collect();
    Reply::Question(QuestionAnswer::Answered(per_question))
}

fn replay(name: &str) -> Replay {
    kit::conform::<Converter>("claude", &kit::fixture("claude", name))
}

#[test]
fn every_fixture_conforms() {
    let replays = kit::conform_all::<Converter>("claude");
    assert!(
        replays.len() >= 19,
        "fixtures missing: {:?}",
        replays.keys()
    );
    assert!(replays["tool-allow"].replies == 1 && replays["question"].replies == 1);
}

#[test]
fn thinking_and_text_stream_as_deltas_and_turns_report_usage() {
    let replay = replay("adapter-think-multiturn");
    let reasoning = replay.completed(ItemKind::Reasoning);
    assert_eq!(
        reasoning[0].text(),
        "The user wants a short demonstration, so I will think briefly and answer."
    );
    for message in replay.completed(ItemKind::Message) {
        assert_eq!(message.text(), "hello from fake model");
    }
    let usage = replay.usage().expect("usage");
    assert!(usage.input_tokens > 0 && usage.output_tokens > 0);
    assert!(usage.total_cost_usd.is_some());
}

#[test]
fn permissions_carry_command_paths_and_claude_scopes() {
    let replay = replay("adapter-always-then-deny");
    let asked = replay.permissions();
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
    assert_eq!(asked[1].always_scope, bash.always_scope);
    let write = &asked[2];
    assert_eq!(write.kind, PermissionKind::FileChange);
    assert!(write.paths[0].ends_with("/fake_written.txt"));
    assert_eq!(
        write.always_scope.as_deref(),
        Some("claude:mode:acceptEdits")
    );
    let commands = replay.completed(ItemKind::CommandExecution);
    assert_eq!(commands.len(), 1, "the second Bash call was denied");
    match &commands[0].content[0] {
        ContentPart::CommandExecution {
            output, exit_code, ..
        } => {
            assert_eq!(output.as_deref(), Some("fake-tool-ran"));
            assert_eq!(*exit_code, Some(0));
        }
        other => panic!("{other:?}"),
    }
    let files = replay.completed(ItemKind::FileChange);
    assert_eq!(files.len(), 2, "two writes (the second by acceptEdits)");
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
    let results = replay("adapter-question-answer-reject").completed(ItemKind::ToolResult);
    let denied = results.last().unwrap();
    assert_eq!(denied.status, ItemStatus::Failed);
    assert!(denied.parent_id.is_some());
    let command = &replay("adapter-bash-exit-code").completed(ItemKind::CommandExecution)[0];
    assert_eq!(command.status, ItemStatus::Failed);
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
    let replay = replay("adapter-question-answer-reject");
    let asked = replay.questions();
    assert_eq!(asked.len(), 2);
    let questions = &asked[0].questions;
    assert_eq!(questions[0].header.as_deref(), Some("Color"));
    assert!(!questions[0].multi_select && questions[1].multi_select);
    let labels: Vec<&str> = questions[1]
        .options
        .iter()
        .map(|o| o.label.as_str())
        .collect();
    assert_eq!(labels, ["Tests", "Docs", "Benchmarks"]);
    assert!(asked[0].item_id.is_some());
    assert_eq!(replay.replies, 2, "one answered, one rejected");
}

#[test]
fn an_interrupt_ends_the_turn_cancelled_and_the_next_turn_completes() {
    let replay = replay("adapter-interrupt");
    assert_eq!(
        replay.stop_reasons(),
        [StopReason::Cancelled, StopReason::Completed]
    );
    assert!(
        !replay
            .payloads()
            .any(|p| matches!(p, EventPayload::Error(_)))
    );
}

#[test]
fn a_provider_failure_is_an_error_event_and_an_error_turn() {
    let replay = replay("adapter-api-error");
    let error = replay
        .payloads()
        .find_map(|p| match p {
            EventPayload::Error(error) => Some(error.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        matches!(&error, AgentError::ProviderError { status: Some(500), message } if message.contains("fake provider failure")),
        "{error:?}"
    );
    assert_eq!(replay.stop_reasons(), [StopReason::Error]);
}

#[test]
fn a_retried_request_is_a_retrying_status_and_the_turn_completes() {
    let replay = replay("flaky");
    let statuses = statuses(&replay);
    assert_eq!(statuses.len(), 1, "{statuses:?}");
    let (label, detail) = &statuses[0];
    assert_eq!(label, "retrying");
    assert!(
        detail.starts_with("attempt 1/10 in ") && detail.ends_with("ms: overloaded (HTTP 529)"),
        "{detail}"
    );
    assert!(replay.errors().is_empty());
    assert_eq!(replay.stop_reasons(), [StopReason::Completed]);
    assert_eq!(
        replay.completed(ItemKind::Message)[0].text(),
        "hello from fake model"
    );
}

#[test]
fn a_refused_request_ends_the_turn_with_the_providers_message() {
    let replay = replay("refuse");
    assert_eq!(
        replay.errors(),
        [AgentError::ProviderError {
            message: "API Error: 400 fake provider refuses this request (REFUSE keyword)".into(),
            status: Some(400)
        }]
    );
    assert_eq!(replay.stop_reasons(), [StopReason::Error]);
    assert!(statuses(&replay).is_empty(), "a 400 is not retried");
}

/// The `(label, detail)` of each completed `status` item.
fn statuses(replay: &Replay) -> Vec<(String, String)> {
    replay
        .completed(ItemKind::Status)
        .iter()
        .map(|item| match &item.content[0] {
            ContentPart::Status { label, detail } => {
                (label.clone(), detail.clone().unwrap_or_default())
            }
            other => panic!("{other:?}"),
        })
        .collect()
}

/// The ExitPlanMode (second) tool result of a fixture: `(output, is_error)`.
fn exit_plan_result(replay: &Replay) -> (String, bool) {
    match &replay.completed(ItemKind::ToolResult)[1].content[0] {
        ContentPart::ToolResult {
            output, is_error, ..
        } => (output.clone(), *is_error),
        other => panic!("{other:?}"),
    }
}

#[test]
fn plan_mode_asks_to_approve_the_plan_read_from_the_plan_file() {
    for name in ["adapter-plan-approve", "adapter-plan-reject"] {
        let replay = replay(name);
        let asked = replay.permissions();
        assert_eq!(asked[0].kind, PermissionKind::PlanApproval, "{name}");
        assert!(
            asked[0]
                .plan
                .as_deref()
                .unwrap()
                .starts_with("## Fake plan")
        );
        assert_eq!(asked[0].always_scope, None);
        let plan_file = &replay.completed(ItemKind::FileChange)[0];
        assert!(
            matches!(&plan_file.content[0], ContentPart::FileChange { path, .. } if path.contains("/.claude/plans/")),
            "{plan_file:?}"
        );
        let loaded = &replay.completed(ItemKind::ToolResult)[0];
        assert!(
            matches!(&loaded.content[0], ContentPart::ToolResult { output, .. } if output == "ExitPlanMode")
        );
    }
    let approved = replay("adapter-plan-approve");
    let (output, is_error) = exit_plan_result(&approved);
    assert!(!is_error && output.contains("User has approved your plan"));
    assert_eq!(
        statuses(&approved),
        [("permissionMode".to_string(), "default".to_string())]
    );
    let rejected = replay("adapter-plan-reject");
    let (output, is_error) = exit_plan_result(&rejected);
    assert!(is_error && output.contains("rejected the plan"), "{output}");
    let notices = statuses(&rejected);
    assert_eq!(notices[0].0, "warning");
    assert_eq!(notices[1].0, "permissionDenied");
    assert!(notices[1].1.starts_with("Bash: "));
}
