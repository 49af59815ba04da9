//! Codex: the conformance kit on the test kit's recordings (`fixtures/codex/`), then the
//! facts each fixture shows. The recorder drives Codex as the daemon does (`default`
//! mode): every `turn/start` and `turn/interrupt` it sent, and every reply to a server
//! request (rebuilt from the universal answer), must be what the protocol sends.

use std::collections::HashMap;

use sandbox_agents::QuestionAnswer;
use sandbox_agents::codex::convert::Converter;
use sandbox_agents::codex::launch::TurnSettings;
use sandbox_agents::kernel::{LineProtocol, Outgoing};
use sandbox_universal::{
    AgentError, EventPayload, ItemKind, ItemStatus, PermissionMode, PermissionReply, StopReason,
};
use serde_json::Value;

use crate::kit::{self, Fixture, Replay, Reply, Sent};

/// The universal answer that produces the recorded reply to a server request.
fn universal_reply(recorded: &Value, request: &Value) -> Reply {
    match recorded["result"]["decision"].as_str() {
        Some("accept") => Reply::Permission(PermissionReply::Once),
        Some("acceptForSession") => Reply::Permission(PermissionReply::Always),
        Some("decline") => Reply::Permission(PermissionReply::Reject),
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
            Reply::Question(QuestionAnswer::Answered(per_question))
        }
    }
}

/// The recorder drives Codex as the daemon does (`default` mode).
impl Fixture for Converter {
    fn new(cwd: &str) -> Self {
        Converter::new(TurnSettings::in_mode(PermissionMode::Default, cwd))
    }

    fn cwd(transcript: &[Value]) -> Option<String> {
        transcript
            .iter()
            .find(|m| m["method"] == "thread/start")
            .and_then(|m| m["params"]["cwd"].as_str())
            .map(String::from)
    }

    fn sent(&mut self, msg: &Value, asked: &HashMap<String, Value>) -> Sent {
        let key = msg["id"].to_string();
        match msg["method"].as_str() {
            Some("turn/start") => Sent::Turn {
                text: msg["params"]["input"][0]["text"]
                    .as_str()
                    .expect("a text")
                    .into(),
                key: Some(key),
            },
            Some("turn/interrupt") => Sent::Cancel,
            Some(method) if msg.get("id").is_some() => Sent::Request {
                key,
                method: method.into(),
            },
            Some(_) => Sent::Nothing,
            None => match asked.get(&key) {
                Some(request) => Sent::Reply {
                    reply: universal_reply(msg, request),
                    key,
                },
                None => Sent::Nothing,
            },
        }
    }

    fn asked_key(native: &Value) -> String {
        native["id"].to_string()
    }

    fn answer(&mut self, native: &Value) -> Option<(String, Value)> {
        LineProtocol::answer(self, native).map(|(key, answer)| (key, answer.unwrap_or_default()))
    }

    fn answered(&mut self, method: &str, answer: &Value) {
        if method == "thread/start" {
            self.set_thread(answer["thread"]["id"].as_str().expect("a thread id"));
        }
    }

    /// Requests by method and params; replies exactly.
    fn assert_same(ours: &Outgoing, recorded: &Value) {
        match ours {
            Outgoing::Request { method, params } => {
                assert_eq!(recorded["method"], *method, "{recorded}");
                assert_eq!(&recorded["params"], params, "{method}");
            }
            Outgoing::Line(line) => {
                assert_eq!(line, recorded, "the reply differs from the recorded one")
            }
        }
    }
}

fn replay(name: &str) -> Replay {
    kit::conform::<Converter>("codex", &kit::fixture("codex", name))
}

#[test]
fn every_fixture_conforms() {
    let replays = kit::conform_all::<Converter>("codex");
    assert_eq!(replays.len(), 10, "{:?}", replays.keys());
    for name in [
        "command-approval",
        "command-decline",
        "apply-patch",
        "question",
    ] {
        assert_eq!(replays[name].replies, 1, "{name}");
    }
}

#[test]
fn text_streams_deltas() {
    let replay = replay("text");
    assert_eq!(replay.stop_reasons(), [StopReason::Completed]);
    let deltas = replay
        .payloads()
        .filter(|p| matches!(p, EventPayload::ItemDelta(_)))
        .count();
    assert!(deltas >= 3, "{deltas} deltas");
}

#[test]
fn think_has_reasoning() {
    let replay = replay("think");
    assert!(
        replay
            .completed(ItemKind::Reasoning)
            .iter()
            .any(|r| !r.text().is_empty())
    );
}

#[test]
fn a_declined_command_fails() {
    let replay = replay("command-decline");
    let commands = replay.completed(ItemKind::CommandExecution);
    assert!(commands.iter().any(|c| c.status == ItemStatus::Failed));
}

#[test]
fn cancel_ends_the_turn_cancelled_and_the_next_completes() {
    assert_eq!(
        replay("cancel").stop_reasons(),
        [StopReason::Cancelled, StopReason::Completed]
    );
}

#[test]
fn a_failing_provider_is_an_error_turn_after_codex_retries() {
    let replay = replay("fail");
    assert_eq!(replay.stop_reasons(), [StopReason::Error]);
    assert!(
        replay
            .payloads()
            .any(|p| matches!(p, EventPayload::Error(_)))
    );
}

#[test]
fn a_retried_request_is_invisible_and_the_turn_completes() {
    // Codex retries a 503 of the request itself without telling the client.
    let replay = replay("flaky");
    assert_eq!(replay.stop_reasons(), [StopReason::Completed]);
    assert!(replay.completed(ItemKind::Status).is_empty());
    assert!(
        !replay
            .payloads()
            .any(|p| matches!(p, EventPayload::Error(_)))
    );
    assert_eq!(
        replay.completed(ItemKind::Message)[0].text(),
        "hello from fake model"
    );
}

#[test]
fn a_refused_request_ends_the_turn_with_the_providers_message() {
    let replay = replay("refuse");
    assert_eq!(replay.stop_reasons(), [StopReason::Error]);
    let errors = replay.errors();
    // Codex passes the response body on as its message (`codexErrorInfo: "other"`); the
    // client gets the provider's own words and the error's type.
    assert_eq!(
        errors,
        [AgentError::ProviderError {
            message: "fake provider refuses this request (REFUSE keyword) (invalid_request_error)"
                .into(),
            status: None,
        }]
    );
}
