//! OpenCode's side of the one protocol contract ([`crate::kernel::Protocol`]), run by the
//! shared-server runner ([`crate::kernel::server`]): a turn is `POST
//! /session/{id}/prompt_async`, cancel `POST /session/{id}/abort` plus a `reject` of every
//! request the server still holds, answers are the permission and question replies; every
//! call names the session's directory (OpenCode routes requests by it).

use reqwest::Method;
use sandbox_universal::{AgentError, McpToolRef, PermissionReply};
use serde_json::{Map, Value, json};

use super::{Converter, NativeCall, Turn};
use crate::kernel::server::Call;
use crate::kernel::{Converted, Gone, Protocol, StepLimit, gone_facts};
use crate::{AgentEvent, QuestionAnswer, SessionIds, UserMessage, UserPart};

/// What every prompt of a session carries besides the text.
#[derive(Debug, Clone, Default)]
pub struct PromptSettings {
    /// `(providerID, modelID)`, when the session names a model.
    pub model: Option<(String, String)>,
    /// OpenCode's agent (`build`, `plan`, ...).
    pub agent: Option<String>,
    /// The model variant (checked against the model's metadata before).
    pub variant: Option<String>,
    /// The session's `systemPrompt` in `append` mode (after OpenCode's own).
    pub system: Option<String>,
    /// OpenCode tools the session takes away (`{name: false}`).
    pub tools: Map<String, Value>,
}

impl PromptSettings {
    /// The `prompt_async` body for `message`: its text and images (as `file` parts with a
    /// `data:` URL) in order.
    pub fn body(&self, message: &UserMessage) -> Value {
        let parts: Vec<Value> = message
            .parts
            .iter()
            .enumerate()
            .map(|(i, part)| match part {
                UserPart::Text(text) => json!({"type": "text", "text": text}),
                UserPart::Image(image) => {
                    let filename = image
                        .path
                        .as_ref()
                        .and_then(|p| p.file_name())
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| {
                            let ext = image.media_type.trim_start_matches("image/");
                            format!("image-{}.{ext}", i + 1)
                        });
                    json!({"type": "file", "mime": image.media_type, "url": image.data_url(),
                           "filename": filename})
                }
            })
            .collect();
        let mut body = json!({"parts": parts});
        if let Some(system) = &self.system {
            body["system"] = json!(system);
        }
        if !self.tools.is_empty() {
            body["tools"] = Value::Object(self.tools.clone());
        }
        if let Some((provider, model)) = &self.model {
            body["model"] = json!({"providerID": provider, "modelID": model});
        }
        if let Some(agent) = &self.agent {
            body["agent"] = json!(agent);
        }
        if let Some(variant) = &self.variant {
            body["variant"] = json!(variant);
        }
        body
    }
}

impl Converter {
    /// This converter, whose prompts carry `prompt`.
    pub fn with_prompt(mut self, prompt: PromptSettings) -> Self {
        self.prompt = prompt;
        self
    }

    /// This converter for a session with `mcp_servers` (by name: their tools' calls and
    /// permissions name server and tool) and at most `max_turns` model calls a turn.
    pub fn with_policy(mut self, mcp_servers: Vec<String>, max_turns: Option<u32>) -> Self {
        self.mcp_servers = mcp_servers;
        self.limit = StepLimit::new(max_turns);
        self
    }

    /// The session's directory.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The MCP server and tool of an OpenCode tool name (`<server>_<tool>`), for the
    /// session's servers (the longest name that fits wins).
    pub(crate) fn mcp_tool(&self, name: &str) -> Option<McpToolRef> {
        self.mcp_servers
            .iter()
            .filter_map(|server| {
                let tool = name.strip_prefix(server.as_str())?.strip_prefix('_')?;
                (!tool.is_empty()).then_some((server, tool))
            })
            .max_by_key(|(server, _)| server.len())
            .map(|(server, tool)| McpToolRef {
                server: server.clone(),
                tool: tool.to_string(),
            })
    }
}

impl Call for NativeCall {
    fn method(&self) -> Method {
        self.method.clone()
    }

    fn path(&self) -> String {
        self.path_with_directory()
    }

    fn body(&self) -> Option<&Value> {
        self.body.as_ref()
    }
}

impl Protocol for Converter {
    type Out = NativeCall;

    fn begin_turn(&mut self, turn_id: &str, message: &UserMessage) -> Vec<NativeCall> {
        self.generation += 1;
        self.limit.begin();
        let keep = self.generation.saturating_sub(1);
        self.messages
            .retain(|_, m| !m.finished || m.generation >= keep);
        self.done_before = std::mem::take(&mut self.done);
        self.turn = Some(Turn {
            id: turn_id.to_string(),
            ..Turn::default()
        });
        let Some(root) = &self.root else {
            return Vec::new();
        };
        vec![NativeCall::post(
            format!("/session/{root}/prompt_async"),
            Some(self.prompt.body(message)),
            &self.cwd,
        )]
    }

    fn turn_undelivered(&mut self) {
        self.turn = None;
    }

    fn current_turn(&self) -> Option<&str> {
        self.turn.as_ref().map(|t| t.id.as_str())
    }

    /// Past the session's `maxTurns`, the turn is cancelled as a cancel would (and ends
    /// with `maxTurns`).
    fn convert(&mut self, native: &Value, ids: &dyn SessionIds) -> Converted<NativeCall> {
        let events = self.event(native, ids);
        let replies = if std::mem::take(&mut self.over_limit) {
            self.cancel()
        } else {
            Vec::new()
        };
        Converted { events, replies }
    }

    /// `POST /session/{id}/abort`, then a `reject` of every pending permission and
    /// question (the abort leaves them pending on the server). The universal requests
    /// stay pending: the daemon resolves them as cancelled when the turn ends.
    fn cancel(&mut self) -> Vec<NativeCall> {
        let Some(turn) = &mut self.turn else {
            return Vec::new();
        };
        turn.cancelling = true;
        let mut calls = Vec::new();
        if let Some(root) = &self.root {
            calls.push(NativeCall::post(
                format!("/session/{root}/abort"),
                None,
                &self.cwd,
            ));
        }
        calls.extend(self.reject_pending());
        calls
    }

    fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<Vec<NativeCall>, AgentError> {
        Ok(vec![self.permission_reply(permission_id, reply)?])
    }

    fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<Vec<NativeCall>, AgentError> {
        Ok(vec![self.question_reply(question_id, answer)?])
    }

    /// The server is gone; pending requests are forgotten (the server forgot them too).
    fn gone(&mut self, gone: &Gone) -> Vec<AgentEvent> {
        // Forgotten, not closed: the core fails what was open.
        drop(self.close_all(sandbox_universal::ItemStatus::Failed));
        self.permissions.clear();
        self.questions.clear();
        self.early.clear();
        let turn = self.turn.take();
        let cancelling = turn.as_ref().is_some_and(|t| t.cancelling);
        let error = gone.exit.error(format!(
            "{}; the next message continues the session on a new server",
            gone.why
        ));
        gone_facts(turn.map(|t| t.id), cancelling, error)
    }
}
