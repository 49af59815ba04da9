//! Codex: the conformance kit on the test kit's recordings (`fixtures/codex/`), then the
//! facts each fixture shows. Every reply the recorder sent to a server request is
//! rebuilt from the universal answer and must match byte for byte.

use std::collections::HashMap;

use sandbox_agents::codex::convert::Converter;
use sandbox_agents::codex::native::Incoming;
use sandbox_agents::{AgentEvent, QuestionAnswer, SessionIds};
use sandbox_universal::{
    AgentError, EventPayload, ItemKind, ItemStatus, PermissionReply, StopReason,
};
use serde_json::Value;

use crate::kit::{self, Replay, Replayer, Sent};

/// The Codex driver's view of a transcript.
pub struct Codex {
    converter: Converter,
    turns: usize,
    /// Ids of our `turn/start` requests.
    turn_requests: Vec<String>,
    /// Server request id → (universal id, the request).
    asked: HashMap<String, (String, Value)>,
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

impl Replayer for Codex {
    fn new(cwd: &str) -> Self {
        Self {
            converter: Converter::new(cwd, false),
            turns: 0,
            turn_requests: Vec::new(),
            asked: HashMap::new(),
        }
    }

    fn cwd(transcript: &[Value]) -> Option<String> {
        transcript
            .iter()
            .find(|m| m["method"] == "thread/start")
            .and_then(|m| m["params"]["cwd"].as_str())
            .map(String::from)
    }

    fn sent(&mut self, msg: &Value, _ids: &dyn SessionIds) -> Sent {
        if msg["method"] == "turn/start" {
            self.turns += 1;
            self.converter.begin_turn(&format!("turn_{}", self.turns));
            self.turn_requests.push(msg["id"].to_string());
            return Sent {
                turn: true,
                resolved: None,
            };
        }
        if msg.get("method").is_some() {
            return Sent::default();
        }
        let Some((universal, request)) = self.asked.remove(&msg["id"].to_string()) else {
            return Sent::default();
        };
        let rebuilt = match universal_reply(msg, &request) {
            Ok(reply) => self.converter.permission_reply(&universal, reply),
            Err(answer) => self.converter.question_reply(&universal, answer),
        }
        .unwrap();
        assert_eq!(&rebuilt, msg, "the reply differs from the recorded one");
        Sent {
            turn: false,
            resolved: Some(universal),
        }
    }

    fn received(&mut self, msg: &Value, ids: &dyn SessionIds) -> Vec<AgentEvent> {
        match Incoming::classify(msg).unwrap() {
            Incoming::Response { id, outcome } => {
                if self.turn_requests.contains(&id.to_string()) {
                    self.converter.turn_accepted(&outcome.unwrap());
                }
                Vec::new()
            }
            Incoming::Notification { method, params } => {
                self.converter.notification(ids, &method, &params, msg)
            }
            Incoming::Request { id, method, params } => {
                let outcome = self
                    .converter
                    .server_request(ids, &id, &method, &params, msg);
                assert!(outcome.reply.is_none(), "answered {method} by itself");
                for event in &outcome.events {
                    let universal = match &event.payload {
                        EventPayload::PermissionAsked(p) => &p.permission_id,
                        EventPayload::QuestionAsked(q) => &q.question_id,
                        _ => continue,
                    };
                    self.asked
                        .insert(id.to_string(), (universal.clone(), msg.clone()));
                }
                outcome.events
            }
        }
    }
}

impl Codex {
    /// The daemon's native answer to the question `universal`.
    pub fn reply_to_question(&mut self, universal: &str, answer: QuestionAnswer) -> Value {
        self.converter.question_reply(universal, answer).unwrap()
    }
}

fn replay(name: &str) -> Replay {
    kit::conform::<Codex>("codex", &kit::fixture("codex", name))
}

#[test]
fn every_fixture_conforms() {
    let replays = kit::conform_all::<Codex>("codex");
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
