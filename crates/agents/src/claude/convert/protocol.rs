//! Claude Code's side of the one protocol contract ([`crate::kernel::Protocol`]): a turn is
//! a `user` line, cancel an `interrupt` control request, answers `control_response`s, and
//! the daemon's own requests `control_request`s answered by `control_response`s with the
//! same `request_id`. Amp, which prints the same stream, uses the same converter.

use sandbox_universal::{AgentError, AgentId, PermissionReply};
use serde_json::{Value, json};

use super::hitl::{PendingKind, permission_response, question_response};
use super::{Converted, Converter, Turn};
use crate::claude::native::ControlResponseLine;
use crate::kernel::{Gone, LineProtocol, Outgoing, Protocol, gone_facts};
use crate::{AgentEvent, QuestionAnswer, SessionIds, UserMessage, UserPart};

/// The line that sends the user's `message`: its text and images as content blocks, in
/// order (images as base64 `image` blocks of the Messages API).
pub fn user_line(message: &UserMessage) -> Value {
    let content: Vec<Value> = message
        .parts
        .iter()
        .map(|part| match part {
            UserPart::Text(text) => json!({"type": "text", "text": text}),
            UserPart::Image(image) => json!({"type": "image", "source": {
                "type": "base64", "media_type": image.media_type, "data": image.data}}),
        })
        .collect();
    json!({"type": "user", "session_id": "", "parent_tool_use_id": null,
        "message": {"role": "user", "content": content}})
}

impl Converter {
    /// Takes the pending request `id` when it is (`question`) or is not a question.
    fn answerable(
        &mut self,
        id: &str,
        question: bool,
    ) -> Result<Option<super::Pending>, AgentError> {
        let Some(pending) = self.pending.remove(id) else {
            tracing::debug!(
                id,
                "{} no longer waits for this request",
                crate::context::display_name(self.dialect.agent)
            );
            return Ok(None);
        };
        if (pending.kind == PendingKind::Question) != question {
            let (is, not) = if question {
                ("permission", "question")
            } else {
                ("question", "permission")
            };
            self.pending.insert(id.to_string(), pending);
            return Err(AgentError::protocol(format!(
                "`{id}` is a {is}, not a {not}"
            )));
        }
        Ok(Some(pending))
    }
}

impl Protocol for Converter {
    type Out = Outgoing;

    fn begin_turn(&mut self, turn_id: &str, message: &crate::UserMessage) -> Vec<Outgoing> {
        self.turn = Some(Turn {
            id: turn_id.to_string(),
            delivered: false,
            cancelling: false,
            error_reported: false,
        });
        vec![Outgoing::Line(user_line(message))]
    }

    fn turn_delivered(&mut self, _answer: Option<&Value>) {
        if let Some(turn) = &mut self.turn {
            turn.delivered = true;
        }
    }

    fn turn_undelivered(&mut self) {
        self.turn = None;
    }

    fn current_turn(&self) -> Option<&str> {
        self.turn.as_ref().map(|t| t.id.as_str())
    }

    fn convert(&mut self, native: &Value, ids: &dyn SessionIds) -> Converted {
        self.convert_line(native, ids)
    }

    fn cancel(&mut self) -> Vec<Outgoing> {
        let Some(turn) = &mut self.turn else {
            return Vec::new();
        };
        turn.cancelling = true;
        vec![Outgoing::Request {
            method: "interrupt",
            params: json!({}),
        }]
    }

    fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<Vec<Outgoing>, AgentError> {
        Ok(self
            .answerable(permission_id, false)?
            .map(|pending| Outgoing::Line(permission_response(&pending, reply)))
            .into_iter()
            .collect())
    }

    fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<Vec<Outgoing>, AgentError> {
        Ok(self
            .answerable(question_id, true)?
            .map(|pending| Outgoing::Line(question_response(&pending, &answer)))
            .into_iter()
            .collect())
    }

    /// A turn whose line never reached the CLI stays: the runner delivers it again to a
    /// new process.
    fn gone(&mut self, gone: &Gone) -> Vec<AgentEvent> {
        // Forgotten, not closed: the core fails what was open.
        drop(self.items.close_all(false));
        self.pending.clear();
        let turn = self.turn.take_if(|t| t.delivered);
        let cancelling = turn.as_ref().is_some_and(|t| t.cancelling);
        let error = gone.exit.error(format!(
            "{} exited unexpectedly ({}); the next message resumes the conversation",
            crate::context::display_name(self.dialect.agent),
            gone.exit.describe()
        ));
        gone_facts(turn.map(|t| t.id), cancelling, error)
    }
}

impl LineProtocol for Converter {
    const AGENT: AgentId = AgentId::Claude;

    fn frame(&mut self, id: u64, method: &str, params: Value) -> (String, Value) {
        let key = format!("{method}-{id}");
        let mut request = json!({"subtype": method});
        if let Value::Object(params) = params {
            request.as_object_mut().expect("an object").extend(params);
        }
        let line = json!({"type": "control_request", "request_id": key, "request": request});
        (key, line)
    }

    fn answer(&mut self, native: &Value) -> Option<(String, Result<Value, AgentError>)> {
        if native["type"] != "control_response" {
            return None;
        }
        let body = serde_json::from_value::<ControlResponseLine>(native.clone())
            .ok()?
            .response;
        let result = match body.subtype.as_str() {
            "success" => Ok(body.response.unwrap_or(Value::Null)),
            _ => Err(AgentError::AgentReported {
                message: body
                    .error
                    .unwrap_or_else(|| "control request failed".into()),
                code: Some(body.subtype),
            }),
        };
        Some((body.request_id, result))
    }
}
