//! Codex's side of the one protocol contract ([`crate::kernel::Protocol`]), JSON-RPC over
//! stdio: a turn is a `turn/start` request on the session's thread, cancel a
//! `turn/interrupt` request with Codex's turn id, the client's answers are responses to
//! Codex's server requests, and the daemon's own requests are `{id, method, params}`
//! answered by `{id, result | error}`.

use sandbox_universal::{AgentError, AgentId, PermissionReply};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Converted, Converter, TurnState};
use crate::codex::native::{Incoming, TurnResult, method};
use crate::items::unparsed_item;
use crate::kernel::{Gone, LineProtocol, Outgoing, Protocol, gone_facts};
use crate::{AgentEvent, QuestionAnswer, SessionIds};

impl Converter {
    /// `turn/started`: Codex runs the turn, under this id. From now on the app-server
    /// going away ends it, even if the answer to `turn/start` was not seen yet.
    pub(super) fn turn_started(&mut self, params: &Value) {
        if let (Some(turn), Ok(started)) = (&mut self.turn, TurnResult::deserialize(params)) {
            turn.codex_turn_id = Some(started.turn.id);
            turn.delivered = true;
        }
    }
}

impl Protocol for Converter {
    type Out = Outgoing;

    fn begin_turn(&mut self, turn_id: &str, message: &crate::UserMessage) -> Vec<Outgoing> {
        self.limit.begin();
        self.turn = Some(TurnState {
            turn_id: turn_id.to_string(),
            codex_turn_id: None,
            delivered: false,
            cancelling: false,
            baseline: self.usage_total,
            usage_seen: false,
            error_reported: false,
            awaiting_response: true,
        });
        vec![Outgoing::Request {
            method: method::TURN_START,
            params: self.settings.turn_start(&self.thread_id, message),
        }]
    }

    /// `answer` is the `turn/start` result: it names Codex's turn.
    fn turn_delivered(&mut self, answer: Option<&Value>) {
        let Some(turn) = &mut self.turn else {
            // The turn already completed.
            return;
        };
        turn.delivered = true;
        if let Some(accepted) = answer.and_then(|a| TurnResult::deserialize(a).ok()) {
            turn.codex_turn_id = Some(accepted.turn.id);
        }
    }

    fn turn_undelivered(&mut self) {
        self.turn = None;
    }

    fn current_turn(&self) -> Option<&str> {
        self.turn.as_ref().map(|t| t.turn_id.as_str())
    }

    fn convert(&mut self, native: &Value, ids: &dyn SessionIds) -> Converted {
        match Incoming::classify(native) {
            Ok(Incoming::Notification { method, params }) => {
                let interrupt = self.count_response(&method, &params);
                let mut converted =
                    Converted::events(self.notification(ids, &method, &params, native));
                converted.replies.extend(interrupt);
                converted
            }
            Ok(Incoming::Request { id, method, params }) => {
                self.server_request(ids, &id, &method, &params, native)
            }
            Ok(Incoming::Response { id, .. }) => {
                tracing::debug!(target: "codex", %id, "a response to no request of the daemon's");
                Converted::default()
            }
            Err(error) => Converted::events(unparsed_item(ids, native, &error)),
        }
    }

    /// Until Codex named its turn there is nothing to interrupt: the turn is marked
    /// cancelling and the runner's watchdog ends it.
    fn cancel(&mut self) -> Vec<Outgoing> {
        let Some(turn) = &mut self.turn else {
            return Vec::new();
        };
        turn.cancelling = true;
        let Some(codex_turn) = &turn.codex_turn_id else {
            return Vec::new();
        };
        vec![Outgoing::Request {
            method: method::TURN_INTERRUPT,
            params: json!({"threadId": self.thread_id, "turnId": codex_turn}),
        }]
    }

    /// Codex must still wait for the request: an answer to one it settled is an error.
    fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<Vec<Outgoing>, AgentError> {
        Ok(vec![Outgoing::Line(
            self.permission_reply(permission_id, reply)?,
        )])
    }

    fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<Vec<Outgoing>, AgentError> {
        Ok(vec![Outgoing::Line(
            self.question_reply(question_id, answer)?,
        )])
    }

    /// A turn Codex never accepted stays: the runner starts it again on a new process.
    fn ready_for_turn(&self) -> bool {
        self.mcp_ready()
    }

    fn gone(&mut self, gone: &Gone) -> Vec<AgentEvent> {
        self.mcp_restarting();
        // Forgotten, not closed: the core fails what was open and cancels what was asked.
        self.open.clear();
        self.pending.clear();
        self.requests.clear();
        let turn = self.turn.take_if(|t| t.delivered);
        let cancelling = turn.as_ref().is_some_and(|t| t.cancelling);
        let error = gone.exit.error(format!(
            "{} exited with {}; the next message resumes the thread",
            crate::context::display_name(Self::AGENT),
            gone.exit.describe()
        ));
        gone_facts(turn.map(|t| t.turn_id), cancelling, error)
    }
}

impl LineProtocol for Converter {
    const AGENT: AgentId = AgentId::Codex;

    fn frame(&mut self, id: u64, method: &str, params: Value) -> (String, Value) {
        let key = id.to_string();
        self.requests.insert(key.clone(), method.to_string());
        (key, json!({"id": id, "method": method, "params": params}))
    }

    /// Every response is an answer: the daemon is Codex's only client.
    fn answer(&mut self, native: &Value) -> Option<(String, Result<Value, AgentError>)> {
        if native.get("method").is_some() {
            return None;
        }
        let Ok(Incoming::Response { id, outcome }) = Incoming::classify(native) else {
            return None;
        };
        let key = id.to_string();
        let method = self.requests.remove(&key);
        let result = outcome.map_err(|error| AgentError::AgentReported {
            message: match method {
                Some(method) => format!("codex rejected `{method}`: {}", error.message),
                None => format!("codex rejected request {key}: {}", error.message),
            },
            code: Some(error.code.to_string()),
        });
        Some((key, result))
    }
}
