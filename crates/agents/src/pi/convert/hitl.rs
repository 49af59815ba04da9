//! Extension dialogs. Pi has no permission prompts of its own: an extension asks through
//! `ctx.ui.*`, which RPC mode writes as `extension_ui_request` and which waits for an
//! `extension_ui_response` with the same `id`:
//! - `confirm` → `permissionAsked`, about the tool running when it asks (extensions gate
//!   tools from their `tool_call` hook, after `tool_execution_start`): its kind (`mcpTool`
//!   for a tool of the session's MCP servers), command, paths, and item (the
//!   `commandExecution` of a `bash`, else the `toolCall`); answered `{"confirmed": bool}`;
//! - `select` (one of its options), `input` and `editor` (free text) → `questionAsked`
//!   with one question; answered `{"value": …}`, or `{"cancelled": true}` when rejected;
//! - `notify` → a `status` item; the other fire-and-forget calls
//!   ([`IGNORED_UI_METHODS`]) drive Pi's terminal UI and are ignored.
//!
//! Pi resolves a dialog itself when its `timeout` expires (the extension gets its default);
//! the universal request then stays open until the turn ends (the daemon cancels it).

use sandbox_universal::{
    AgentError, EventPayload, PermissionKind, PermissionReply, PermissionRequest, Question,
    QuestionOption, QuestionRequest,
};
use serde_json::{Value, json};

use super::{Converter, event, status_item};
use crate::pi::native::UiRequest;
use crate::{AgentEvent, QuestionAnswer, SessionIds};

/// Fire-and-forget UI calls for Pi's terminal (status bar, widgets, window title, editor
/// text), ignored on purpose.
pub const IGNORED_UI_METHODS: &[&str] = &["setStatus", "setWidget", "setTitle", "set_editor_text"];

/// A dialog Pi waits on.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    universal: String,
    request_id: String,
    confirm: bool,
}

/// What an `always` answer covers: the tool and, for `bash`, the command's first word
/// (`pi:bash:npm`), for `write` / `edit` the file (`pi:edit:/w/src/main.rs`).
pub fn always_scope(tool: &str, command: Option<&str>, path: Option<&str>) -> String {
    let prefix = command.and_then(|c| c.split_whitespace().next()).or(path);
    match prefix {
        Some(prefix) => format!("pi:{tool}:{prefix}"),
        None => format!("pi:{tool}"),
    }
}

fn kind_of(tool: &str) -> PermissionKind {
    match tool {
        "bash" => PermissionKind::Command,
        "write" | "edit" => PermissionKind::FileChange,
        "read" | "grep" | "find" | "ls" => PermissionKind::FileRead,
        _ => PermissionKind::Tool,
    }
}

impl Converter {
    pub(super) fn ui_request(
        &mut self,
        ids: &dyn SessionIds,
        request: UiRequest,
        raw: &Value,
    ) -> Result<Vec<AgentEvent>, String> {
        let title = request.title.clone().unwrap_or_default();
        let events = match request.method.as_str() {
            "confirm" => self.confirm(ids, request, raw),
            "select" | "input" | "editor" => {
                let options = request
                    .options
                    .iter()
                    .map(|label| QuestionOption {
                        label: label.clone(),
                        description: None,
                    })
                    .collect();
                let question = Question {
                    question: title,
                    header: None,
                    options,
                    multi_select: false,
                    allow_custom: request.method != "select",
                };
                let asked = QuestionRequest {
                    question_id: ids.next_id("q"),
                    questions: vec![question],
                    item_id: self.running_item(),
                };
                self.pending.push(Pending {
                    universal: asked.question_id.clone(),
                    request_id: request.id,
                    confirm: false,
                });
                vec![event(EventPayload::QuestionAsked(asked), raw)]
            }
            "notify" => {
                let message = request.message.unwrap_or_default();
                let detail = match request.notify_type.as_deref() {
                    Some(level @ ("warning" | "error")) => format!("{level}: {message}"),
                    _ => message,
                };
                status_item(ids, "notice", Some(detail), raw)
            }
            method if IGNORED_UI_METHODS.contains(&method) => Vec::new(),
            method => return Err(format!("unknown extension UI method `{method}`")),
        };
        Ok(events)
    }

    /// The item of the running tool: its `commandExecution`, else its `toolCall`.
    fn running_item(&self) -> Option<String> {
        let running = self.running.last()?;
        running
            .item
            .as_ref()
            .map(|i| i.item_id.clone())
            .or_else(|| self.calls.get(&running.call_id).map(|c| c.item_id.clone()))
    }

    fn confirm(
        &mut self,
        ids: &dyn SessionIds,
        request: UiRequest,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let running = self.running.last();
        let tool = running.map(|r| r.name.clone());
        let args = running.map(|r| r.args.clone()).unwrap_or_default();
        let mcp = tool.as_deref().and_then(|t| self.mcp_tool(t));
        let kind = match (&mcp, tool.as_deref()) {
            (Some(_), _) => PermissionKind::McpTool,
            (None, Some(tool)) => kind_of(tool),
            (None, None) => PermissionKind::Tool,
        };
        let command = args["command"]
            .as_str()
            .filter(|_| kind == PermissionKind::Command)
            .map(str::to_string);
        let paths: Vec<String> = match kind {
            PermissionKind::FileChange | PermissionKind::FileRead => args["path"]
                .as_str()
                .map(str::to_string)
                .into_iter()
                .collect(),
            _ => Vec::new(),
        };
        let ours = request.title.as_deref() == Some(crate::pi::launch::PERMISSION_MARKER);
        let title = match (request.title.as_deref(), request.message.as_deref()) {
            // The daemon's own extension: the call itself says what is asked.
            _ if ours => match (&command, paths.first(), tool.as_deref()) {
                _ if let Some(mcp) = &mcp => format!("Use {} ({})", mcp.tool, mcp.server),
                (Some(command), _, _) => format!("Run `{command}`"),
                (None, Some(path), _) => format!("Change {path}"),
                (None, None, Some(tool)) => format!("Use {tool}"),
                (None, None, None) => "Use a tool".to_string(),
            },
            (Some(title), Some(message)) if !message.is_empty() => format!("{title}: {message}"),
            (Some(title), _) => title.to_string(),
            (None, Some(message)) => message.to_string(),
            (None, None) => "Confirm".to_string(),
        };
        let always = tool
            .as_deref()
            .map(|t| always_scope(t, command.as_deref(), paths.first().map(String::as_str)));
        let asked = PermissionRequest {
            permission_id: ids.next_id("perm"),
            kind,
            title,
            item_id: self.running_item(),
            tool,
            command,
            paths,
            plan: None,
            input: Some(if ours { args.clone() } else { raw.clone() }),
            always_scope: always,
            mcp: mcp.clone(),
        };
        self.pending.push(Pending {
            universal: asked.permission_id.clone(),
            request_id: request.id,
            confirm: true,
        });
        vec![event(EventPayload::PermissionAsked(asked), raw)]
    }

    fn take_pending(&mut self, id: &str, confirm: bool) -> Result<Pending, AgentError> {
        let index = self
            .pending
            .iter()
            .position(|p| p.universal == id && p.confirm == confirm)
            .ok_or_else(|| {
                AgentError::protocol(format!("Pi is not waiting for an answer to `{id}`"))
            })?;
        Ok(self.pending.remove(index))
    }

    /// The line answering the `confirm` behind permission `permission_id`:
    /// `{"type":"extension_ui_response","id":…,"confirmed":…}` (`always` confirms; the
    /// daemon keeps the scope).
    pub fn permission_reply(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<Value, AgentError> {
        let pending = self.take_pending(permission_id, true)?;
        Ok(json!({
            "type": "extension_ui_response",
            "id": pending.request_id,
            "confirmed": reply != PermissionReply::Reject,
        }))
    }

    /// The line answering the dialog behind question `question_id`: `{"value": …}` with the
    /// chosen label or the typed text, or `{"cancelled": true}` when rejected (or empty).
    pub fn question_reply(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<Value, AgentError> {
        let pending = self.take_pending(question_id, false)?;
        let value = match answer {
            QuestionAnswer::Answered(answers) => answers
                .into_iter()
                .next()
                .and_then(|a| a.into_iter().next()),
            QuestionAnswer::Rejected => None,
        };
        Ok(match value {
            Some(value) => json!({
                "type": "extension_ui_response",
                "id": pending.request_id,
                "value": value,
            }),
            None => cancelled(&pending.request_id),
        })
    }

    /// Cancels every dialog Pi waits on (cancel) and forgets them.
    pub(super) fn cancel_pending(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.pending)
            .iter()
            .map(|p| cancelled(&p.request_id))
            .collect()
    }
}

fn cancelled(request_id: &str) -> Value {
    json!({"type": "extension_ui_response", "id": request_id, "cancelled": true})
}
