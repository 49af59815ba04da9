//! A turn's waits on people and hosts — permission requests, questions, host tool calls
//! the client answers — as events on the turn's span: when each was asked, when and how
//! it was resolved, and how long it waited.

use std::collections::HashMap;
use std::time::SystemTime;

use opentelemetry::KeyValue;
use opentelemetry::trace::Span as _;
use opentelemetry_sdk::trace::Span;
use sandbox_universal::EventPayload;

use super::content;

/// The seconds a request waited for its answer, on its `resolved` event.
pub const WAIT_DURATION: &str = "sandbox.wait.duration";

/// One side of a wait: asked, or resolved.
#[derive(Debug)]
pub struct Wait {
    /// `permission`, `question` or `tool_call`.
    what: &'static str,
    id: String,
    resolved: bool,
    attributes: Vec<KeyValue>,
}

impl Wait {
    /// The wait an event opens or closes (`None` for other events); with `capture`, its
    /// content (titles, questions, answers, arguments) too.
    pub fn of(payload: &EventPayload, capture: bool) -> Option<Self> {
        let wait = |what, id: &str, resolved, attributes| {
            Some(Self {
                what,
                id: id.to_string(),
                resolved,
                attributes,
            })
        };
        match payload {
            EventPayload::PermissionAsked(request) => {
                let mut attributes = permission(request);
                if capture {
                    attributes.push(KeyValue::new(
                        "sandbox.permission.title",
                        request.title.clone(),
                    ));
                }
                wait("permission", &request.permission_id, false, attributes)
            }
            EventPayload::PermissionResolved(resolved) => {
                let mut attributes = vec![
                    KeyValue::new(
                        "sandbox.permission.outcome",
                        super::spans::wire_name(&resolved.outcome),
                    ),
                    KeyValue::new("sandbox.permission.automatic", resolved.automatic),
                ];
                if let Some(request) = &resolved.request {
                    attributes.extend(permission(request));
                }
                wait("permission", &resolved.permission_id, true, attributes)
            }
            EventPayload::QuestionAsked(request) => {
                let count = i64::try_from(request.questions.len()).unwrap_or(i64::MAX);
                let mut attributes = vec![KeyValue::new("sandbox.question.count", count)];
                if let Some(item) = &request.item_id {
                    attributes.push(KeyValue::new(super::keys::ITEM_ID, item.clone()));
                }
                if capture {
                    let texts: Vec<&str> = request
                        .questions
                        .iter()
                        .map(|q| q.question.as_str())
                        .collect();
                    let texts = serde_json::to_string(&texts).unwrap_or_default();
                    attributes.push(KeyValue::new(
                        "sandbox.question.questions",
                        content::clip(&texts, content::MAX_CAPTURED),
                    ));
                }
                wait("question", &request.question_id, false, attributes)
            }
            EventPayload::QuestionResolved(resolved) => {
                let mut attributes = vec![KeyValue::new(
                    "sandbox.question.outcome",
                    super::spans::wire_name(&resolved.outcome),
                )];
                if capture && let Some(answers) = &resolved.answers {
                    let answers = serde_json::to_string(answers).unwrap_or_default();
                    attributes.push(KeyValue::new(
                        "sandbox.question.answers",
                        content::clip(&answers, content::MAX_CAPTURED),
                    ));
                }
                wait("question", &resolved.question_id, true, attributes)
            }
            EventPayload::ToolCallRequested(request) => {
                let mut attributes =
                    vec![KeyValue::new(super::keys::TOOL_NAME, request.tool.clone())];
                if let Some(item) = &request.item_id {
                    attributes.push(KeyValue::new(super::keys::ITEM_ID, item.clone()));
                }
                if capture {
                    attributes.push(KeyValue::new(
                        super::keys::TOOL_ARGUMENTS,
                        content::arguments(&request.input),
                    ));
                }
                wait("tool_call", &request.call_id, false, attributes)
            }
            EventPayload::ToolCallResolved(resolved) => {
                let attributes = vec![KeyValue::new(
                    "sandbox.tool_call.outcome",
                    super::spans::wire_name(&resolved.outcome),
                )];
                wait("tool_call", &resolved.call_id, true, attributes)
            }
            _ => None,
        }
    }

    /// The event's name: `sandbox.permission.asked`, `sandbox.question.resolved`,
    /// `sandbox.tool_call.requested`, ...
    fn name(&self) -> String {
        let phase = match (self.what, self.resolved) {
            (_, true) => "resolved",
            ("tool_call", false) => "requested",
            (_, false) => "asked",
        };
        format!("sandbox.{}.{phase}", self.what)
    }

    /// The id attribute: `sandbox.permission.id`, `sandbox.question.id`, or the call's
    /// `gen_ai.tool.call.id`.
    fn id_key(&self) -> &'static str {
        match self.what {
            "permission" => "sandbox.permission.id",
            "question" => "sandbox.question.id",
            _ => super::keys::TOOL_CALL_ID,
        }
    }
}

/// What a permission request is about (never its content).
fn permission(request: &sandbox_universal::PermissionRequest) -> Vec<KeyValue> {
    let mut attributes = vec![KeyValue::new(
        "sandbox.permission.kind",
        super::spans::wire_name(&request.kind),
    )];
    if let Some(tool) = &request.tool {
        attributes.push(KeyValue::new(super::keys::TOOL_NAME, tool.clone()));
    }
    if let Some(item) = &request.item_id {
        attributes.push(KeyValue::new(super::keys::ITEM_ID, item.clone()));
    }
    attributes
}

/// The turn's open waits, by kind and id, at most `max` (more are not timed).
#[derive(Debug)]
pub struct Waits {
    asked: HashMap<(&'static str, String), SystemTime>,
    max: usize,
}

impl Waits {
    /// No open waits; at most `max` kept.
    pub fn new(max: usize) -> Self {
        Self {
            asked: HashMap::new(),
            max,
        }
    }

    /// Adds the wait's event to `span` at `at`; a resolution carries how long it waited.
    pub fn record(&mut self, wait: Wait, at: SystemTime, span: &mut Span) {
        let name = wait.name();
        let mut attributes = vec![KeyValue::new(wait.id_key(), wait.id.clone())];
        attributes.extend(wait.attributes);
        let key = (wait.what, wait.id);
        if wait.resolved {
            if let Some(asked) = self.asked.remove(&key) {
                let waited = at.duration_since(asked).unwrap_or_default();
                attributes.push(KeyValue::new(WAIT_DURATION, waited.as_secs_f64()));
            }
        } else if self.asked.len() < self.max {
            self.asked.insert(key, at);
        }
        span.add_event_with_timestamp(name, at, attributes);
    }
}
