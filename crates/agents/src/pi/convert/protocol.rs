//! Pi's side of the one protocol contract ([`crate::kernel::Protocol`]): a turn is a
//! `prompt` command, cancel an `abort` plus a cancellation of every dialog Pi waits on,
//! answers `extension_ui_response` lines, and the daemon's own commands carry ids of its
//! own (`sandbox-daemon-<n>`) that Pi's `response` lines echo.

use sandbox_universal::{AgentError, AgentId, PermissionReply};
use serde_json::{Value, json};

use super::{Converter, Turn};
use crate::kernel::{Converted, Gone, LineProtocol, Outgoing, Protocol, gone_facts};
use crate::{AgentEvent, QuestionAnswer, SessionIds};

/// The prefix of the ids of the daemon's own commands.
const OWN_ID: &str = "sandbox-daemon-";

/// A request Pi no longer waits for is gone (its run ended or was aborted).
fn gone_request(error: AgentError) -> AgentError {
    AgentError::RequestGone {
        message: error.message().to_string(),
    }
}

impl Protocol for Converter {
    type Out = Outgoing;

    fn begin_turn(&mut self, turn_id: &str, message: &crate::UserMessage) -> Vec<Outgoing> {
        self.calls.clear();
        self.limit.begin();
        self.turn = Some(Turn {
            id: turn_id.to_string(),
            ..Turn::default()
        });
        let mut prompt = json!({"type": "prompt", "message": message.plain_text()});
        let images: Vec<Value> = message
            .images()
            .map(|image| json!({"type": "image", "data": image.data, "mimeType": image.media_type}))
            .collect();
        if !images.is_empty() {
            prompt["images"] = Value::Array(images);
        }
        vec![Outgoing::Line(prompt)]
    }

    fn turn_undelivered(&mut self) {
        self.turn = None;
    }

    fn current_turn(&self) -> Option<&str> {
        self.turn.as_ref().map(|t| t.id.as_str())
    }

    /// A model call past the session's `maxTurns` (`turn_start`) aborts the run, as a
    /// cancel does; the turn then ends `maxTurns`.
    fn convert(&mut self, native: &Value, ids: &dyn SessionIds) -> Converted<Outgoing> {
        let over = native["type"] == "turn_start" && self.turn.is_some() && self.limit.step();
        let mut converted = Converted::events(self.event(native, ids));
        if over {
            converted.replies = self.cancel();
        }
        converted
    }

    /// `{"type":"abort"}`, then a cancellation of every dialog Pi waits on (an abort does
    /// not close them). The turn ends `cancelled` at the aborted run's `agent_end`; the
    /// universal requests stay pending for the daemon to resolve as cancelled.
    fn cancel(&mut self) -> Vec<Outgoing> {
        let Some(turn) = &mut self.turn else {
            return Vec::new();
        };
        turn.cancelling = true;
        let mut lines = vec![json!({"type": "abort"})];
        lines.extend(self.cancel_pending());
        lines.into_iter().map(Outgoing::Line).collect()
    }

    fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<Vec<Outgoing>, AgentError> {
        let line = self
            .permission_reply(permission_id, reply)
            .map_err(gone_request)?;
        Ok(vec![Outgoing::Line(line)])
    }

    fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<Vec<Outgoing>, AgentError> {
        let line = self
            .question_reply(question_id, answer)
            .map_err(gone_request)?;
        Ok(vec![Outgoing::Line(line)])
    }

    fn gone(&mut self, gone: &Gone) -> Vec<AgentEvent> {
        // Forgotten, not closed: the core fails what was open.
        drop(self.close_all(sandbox_universal::ItemStatus::Failed));
        self.pending.clear();
        self.calls.clear();
        let turn = self.turn.take();
        let cancelling = turn.as_ref().is_some_and(|t| t.cancelling);
        let error = gone.exit.error(format!(
            "pi exited with {}; the next message resumes the session",
            gone.exit.describe()
        ));
        gone_facts(turn.map(|t| t.id), cancelling, error)
    }
}

impl LineProtocol for Converter {
    const AGENT: AgentId = AgentId::Pi;

    fn frame(&mut self, id: u64, method: &str, params: Value) -> (String, Value) {
        let key = format!("{OWN_ID}{id}");
        let mut line = json!({"type": method, "id": key});
        if let Value::Object(params) = params {
            line.as_object_mut().expect("an object").extend(params);
        }
        (key, line)
    }

    fn answer(&mut self, native: &Value) -> Option<(String, Result<Value, AgentError>)> {
        let id = native["id"].as_str().filter(|id| id.starts_with(OWN_ID))?;
        if native["type"] != "response" {
            return None;
        }
        let result = if native["success"] == false {
            Err(AgentError::protocol(format!(
                "pi refused `{}`: {}",
                native["command"].as_str().unwrap_or("a command"),
                native["error"].as_str().unwrap_or("no reason given")
            )))
        } else {
            Ok(native.clone())
        };
        Some((id.to_string(), result))
    }
}
