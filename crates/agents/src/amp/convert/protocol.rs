//! Amp's side of the one protocol contract ([`crate::kernel::Protocol`]), run by the
//! process-per-turn runner ([`crate::kernel::per_turn`]): Claude's converter with Amp's
//! dialect for the stream; the prompt on the turn's stdin; cancel stops the turn's
//! process; the questions of Amp's delegate program (asks of the relay, `relay.rs`:
//! `{"tool", "thread", "input", "ask"}`) become `permissionAsked`, answered with the
//! relay's `{"allow", "reason"}`. The thread id comes from the stream's `session_id`.

use std::collections::HashMap;

use sandbox_universal::{
    AgentError, EventPayload, PermissionKind, PermissionReply, PermissionRequest,
};
use serde_json::{Value, json};

use crate::claude::convert::{Converter, patch};
use crate::kernel::per_turn::TurnOut;
use crate::kernel::{Converted, Gone, Protocol};
use crate::{AgentEvent, QuestionAnswer, SessionIds};

/// The conversion state of one Amp session.
#[derive(Debug)]
pub struct AmpProtocol {
    converter: Converter,
    cwd: String,
    /// The thread id, once Amp said it (or restored).
    thread: Option<String>,
    /// Permission id → the relay ask it answers.
    asks: HashMap<String, String>,
}

impl AmpProtocol {
    /// A session working in `cwd`, continuing `thread` when it has one.
    pub fn new(cwd: impl Into<String>, thread: Option<String>) -> Self {
        let cwd = cwd.into();
        let mut converter = super::converter(cwd.clone());
        if let Some(thread) = &thread {
            converter.set_native_session_id(thread);
        }
        Self {
            converter,
            cwd,
            thread,
            asks: HashMap::new(),
        }
    }

    /// Amp's thread id, once known.
    pub fn thread(&self) -> Option<&str> {
        self.thread.as_deref()
    }

    /// A tool call Amp's delegate program asks about.
    fn ask(&mut self, key: &str, native: &Value, ids: &dyn SessionIds) -> Vec<AgentEvent> {
        let tool = native["tool"].as_str().unwrap_or_default();
        let input = &native["input"];
        let item_id = self.converter.call_item(tool, input);
        let request = permission_request(ids.next_id("perm"), tool, input, item_id, &self.cwd);
        self.asks
            .insert(request.permission_id.clone(), key.to_string());
        vec![AgentEvent::native(
            EventPayload::PermissionAsked(request),
            Some(native.clone()),
        )]
    }
}

impl Protocol for AmpProtocol {
    type Out = TurnOut;

    fn begin_turn(&mut self, turn_id: &str, message: &crate::UserMessage) -> Vec<TurnOut> {
        // Claude's `user` line is not Amp's: the prompt goes to stdin as it is.
        drop(self.converter.begin_turn(turn_id, message));
        vec![TurnOut::Prompt(message.plain_text())]
    }

    fn turn_delivered(&mut self, answer: Option<&Value>) {
        self.converter.turn_delivered(answer);
    }

    fn turn_undelivered(&mut self) {
        self.converter.turn_undelivered();
    }

    fn current_turn(&self) -> Option<&str> {
        self.converter.current_turn()
    }

    fn convert(&mut self, native: &Value, ids: &dyn SessionIds) -> Converted<TurnOut> {
        if let Some(key) = native["ask"].as_str() {
            return Converted::events(self.ask(key, native, ids));
        }
        if self.thread.is_none()
            && let Some(thread) = native["session_id"].as_str()
        {
            self.thread = Some(thread.to_string());
        }
        // Amp reads nothing after its prompt: the converter's replies have no reader.
        Converted::events(self.converter.convert(native, ids).events)
    }

    fn cancel(&mut self) -> Vec<TurnOut> {
        if self.converter.cancel().is_empty() {
            return Vec::new();
        }
        vec![TurnOut::Stop]
    }

    fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<Vec<TurnOut>, AgentError> {
        let key = self
            .asks
            .remove(permission_id)
            .ok_or_else(|| AgentError::RequestGone {
                message: format!("Amp no longer waits for `{permission_id}` (its turn ended)"),
            })?;
        let answer = match reply {
            PermissionReply::Once | PermissionReply::Always => json!({"allow": true}),
            PermissionReply::Reject => {
                json!({"allow": false, "reason": "The user rejected this tool call."})
            }
        };
        Ok(vec![TurnOut::Answer { key, answer }])
    }

    fn reply_question(
        &mut self,
        question_id: &str,
        _answer: QuestionAnswer,
    ) -> Result<Vec<TurnOut>, AgentError> {
        Err(AgentError::RequestGone {
            message: format!("Amp asks no questions; `{question_id}` is not Amp's"),
        })
    }

    fn gone(&mut self, gone: &Gone) -> Vec<AgentEvent> {
        self.asks.clear();
        self.converter.gone(gone)
    }
}

/// The universal request for a tool call of Amp's.
fn permission_request(
    id: String,
    tool: &str,
    input: &Value,
    item_id: Option<String>,
    cwd: &str,
) -> PermissionRequest {
    let command = input["command"]
        .as_str()
        .or_else(|| input["cmd"].as_str())
        .map(str::to_string);
    let paths: Vec<String> = match input["patchText"].as_str() {
        Some(text) => patch::file_changes(text, cwd)
            .into_iter()
            .filter_map(|part| match part {
                sandbox_universal::ContentPart::FileChange { path, .. } => Some(path),
                _ => None,
            })
            .collect(),
        None => input["path"]
            .as_str()
            .map(str::to_string)
            .into_iter()
            .collect(),
    };
    let (kind, title) = match (&command, paths.is_empty()) {
        (Some(command), _) => (PermissionKind::Command, format!("Run `{command}`")),
        (None, false) => (
            PermissionKind::FileChange,
            format!("Change {}", paths.join(", ")),
        ),
        (None, true) => (PermissionKind::Tool, format!("Use {tool}")),
    };
    let scope = match &command {
        Some(command) => format!("amp:{tool}:{command}"),
        None => format!("amp:{tool}"),
    };
    PermissionRequest {
        permission_id: id,
        kind,
        title,
        item_id,
        tool: Some(tool.to_string()),
        command,
        paths,
        plan: None,
        input: Some(input.clone()),
        always_scope: Some(scope),
        mcp: None,
    }
}
