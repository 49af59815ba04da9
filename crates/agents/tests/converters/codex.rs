//! Codex: the conformance kit on the test kit's recordings (`fixtures/codex/`), then the
//! facts each fixture shows. The recorder drives Codex as the daemon does (`default`
//! mode): every `turn/start` and `turn/interrupt` it sent, and every reply to a server
//! request (rebuilt from the universal answer), must be what the protocol sends.

use std::collections::HashMap;

use sandbox_agents::codex::convert::Converter;
use sandbox_agents::codex::launch::TurnSettings;
use sandbox_agents::kernel::{LineProtocol, Outgoing, Protocol};
use sandbox_agents::{AgentEvent, QuestionAnswer, SessionIds};
use sandbox_universal::{
    AgentError, EventPayload, ItemKind, ItemStatus, PermissionMode, PermissionReply, StopReason,
};
use serde_json::Value;

use crate::kit::{self, Replay, Replayer, Sent};

/// The Codex driver's view of a transcript.
pub struct Codex {
    converter: Converter,
    turns: usize,
    /// Our requests awaiting their answer: id → method.
    requests: HashMap<String, String>,
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
            converter: Converter::new(TurnSettings::in_mode(PermissionMode::Default, cwd)),
            turns: 0,
            requests: HashMap::new(),
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
        if let Some(method) = msg["method"].as_str() {
            if msg.get("id").is_some() {
                self.requests.insert(msg["id"].to_string(), method.into());
            }
            let sent = match method {
                "turn/start" => {
                    self.turns += 1;
                    let text = msg["params"]["input"][0]["text"].as_str().unwrap();
                    self.converter
                        .begin_turn(&format!("turn_{}", self.turns), text)
                }
                "turn/interrupt" => self.converter.cancel(),
                _ => return Sent::default(),
            };
            let [
                Outgoing::Request {
                    method: ours,
                    params,
                },
            ] = sent.as_slice()
            else {
                panic!("the protocol sends {sent:?} for {msg}")
            };
            assert_eq!((*ours, params), (method, &msg["params"]), "{method}");
            return Sent {
                turn: method == "turn/start",
                resolved: None,
            };
        }
        let Some((universal, request)) = self.asked.remove(&msg["id"].to_string()) else {
            return Sent::default();
        };
        let rebuilt = match universal_reply(msg, &request) {
            Ok(reply) => self.converter.reply_permission(&universal, reply),
            Err(answer) => self.converter.reply_question(&universal, answer),
        }
        .unwrap();
        assert_eq!(
            rebuilt,
            [Outgoing::Line(msg.clone())],
            "the reply differs from the recorded one"
        );
        Sent {
            turn: false,
            resolved: Some(universal),
        }
    }

    fn received(&mut self, msg: &Value, ids: &dyn SessionIds) -> Vec<AgentEvent> {
        if let Some((key, answer)) = self.converter.answer(msg) {
            match self.requests.remove(&key).as_deref() {
                Some("thread/start") => {
                    let thread = answer.unwrap()["thread"]["id"].clone();
                    self.converter.set_thread(thread.as_str().unwrap());
                }
                Some("turn/start") => self.converter.turn_delivered(Some(&answer.unwrap())),
                _ => {}
            }
            return Vec::new();
        }
        let converted = self.converter.convert(msg, ids);
        assert!(
            converted.replies.is_empty(),
            "answered {} by itself",
            msg["method"]
        );
        for event in &converted.events {
            let universal = match &event.payload {
                EventPayload::PermissionAsked(p) => &p.permission_id,
                EventPayload::QuestionAsked(q) => &q.question_id,
                _ => continue,
            };
            self.asked
                .insert(msg["id"].to_string(), (universal.clone(), msg.clone()));
        }
        converted.events
    }
}

impl Codex {
    /// The daemon's native answer to the question `universal`.
    pub fn reply_to_question(&mut self, universal: &str, answer: QuestionAnswer) -> Value {
        let reply = self.converter.reply_question(universal, answer).unwrap();
        let [Outgoing::Line(line)] = reply.as_slice() else {
            panic!("{reply:?}")
        };
        line.clone()
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
