//! Tool parts: the agent's tool calls and their results, commands, file changes, the
//! permission requests that gate them and the host tool calls a client answers, as the
//! AI SDK's dynamic tool parts (`tool-input-start` → `tool-input-available` → an
//! approval → `tool-output-*`).
//!
//! Every part is kept as the client sees it, so each chunk is sent once and in the order
//! the AI SDK requires: a part exists before its input, its input before an approval or
//! an output, and nothing follows its output.

use std::collections::HashMap;

use sandbox_universal::{
    ContentPart, Item, ItemStatus, PermissionOutcome, PermissionRequest, PermissionResolved,
    ToolCallOutcome, ToolCallRequest, ToolCallResolved,
};
use serde_json::{Map, Value, json};

use super::chunks::UiChunk;

/// The tool name of a `commandExecution` item's part.
pub const COMMAND_TOOL: &str = "commandExecution";
/// The tool name of a `fileChange` item's part.
pub const FILE_CHANGE_TOOL: &str = "fileChange";
/// The tool name of a `toolResult` item whose call is not known.
pub const RESULT_TOOL: &str = "toolResult";

/// What the client was told of one tool part.
#[derive(Debug)]
struct Part {
    name: String,
    /// `Some(true)` for what the agent runs, `None` for a host tool the client answers.
    provider_executed: Option<bool>,
    /// The input sent, once sent.
    input: Option<Value>,
    /// An approval was asked for it (its input is then fixed).
    asked: bool,
    /// Its item completed without error and waits for a result (a `toolCall`).
    completed: bool,
    /// Its output (or error, or denial) was sent: nothing more is.
    done: bool,
}

/// The tool parts of one turn.
#[derive(Debug, Default)]
pub(super) struct Tools {
    parts: HashMap<String, Part>,
    /// Part ids in the order they were opened (the order they are closed in).
    order: Vec<String>,
    /// The agent's call id of each `toolCall` part.
    calls: HashMap<String, String>,
    /// Output of running commands, from their deltas.
    output: HashMap<String, String>,
    /// Open approvals: permission id → (tool part, whether the part is the request's own).
    approvals: HashMap<String, (String, bool)>,
}

impl Tools {
    /// Appends a command's output delta (sent with its final output).
    pub fn command_delta(&mut self, item_id: &str, delta: &str) {
        if let Some(output) = self.output.get_mut(item_id) {
            output.push_str(delta);
        }
    }

    fn open(
        &mut self,
        id: &str,
        name: &str,
        title: Option<String>,
        provider_executed: Option<bool>,
        out: &mut Vec<UiChunk>,
    ) {
        if self.parts.contains_key(id) {
            return;
        }
        out.push(UiChunk::ToolInputStart {
            tool_call_id: id.to_string(),
            tool_name: name.to_string(),
            provider_executed,
            dynamic: true,
            title,
        });
        self.parts.insert(
            id.to_string(),
            Part {
                name: name.to_string(),
                provider_executed,
                input: None,
                asked: false,
                completed: false,
                done: false,
            },
        );
        self.order.push(id.to_string());
    }

    /// Sends a part's input: the first time, or again when it changed before anything
    /// else was said of the part.
    fn input(&mut self, id: &str, input: Value, out: &mut Vec<UiChunk>) {
        let Some(part) = self.parts.get_mut(id) else {
            return;
        };
        let resend = part.input.as_ref().is_some_and(|sent| *sent != input);
        if part.done || part.asked || (part.input.is_some() && !resend) {
            return;
        }
        out.push(UiChunk::ToolInputAvailable {
            tool_call_id: id.to_string(),
            tool_name: part.name.clone(),
            input: input.clone(),
            provider_executed: part.provider_executed,
            dynamic: true,
            title: None,
        });
        part.input = Some(input);
    }

    /// Sends a part's output (`Ok`) or error (`Err`), once; its input first if it had none.
    fn output(&mut self, id: &str, result: Result<Value, String>, out: &mut Vec<UiChunk>) {
        if self.parts.get(id).is_none_or(|p| p.done) {
            return;
        }
        if self.parts.get(id).is_some_and(|p| p.input.is_none()) {
            self.input(id, json!({}), out);
        }
        let part = self.parts.get_mut(id).expect("checked above");
        part.done = true;
        out.push(match result {
            Ok(output) => UiChunk::ToolOutputAvailable {
                tool_call_id: id.to_string(),
                output,
                provider_executed: part.provider_executed,
                dynamic: true,
            },
            Err(error_text) => UiChunk::ToolOutputError {
                tool_call_id: id.to_string(),
                error_text,
                provider_executed: part.provider_executed,
                dynamic: true,
            },
        });
    }

    /// A `toolCall` item: its part (named as the agent named the tool) and its input; when
    /// it completes, its final input and the result it carries, if any. A call that
    /// completed without a result waits for its `toolResult` item.
    pub fn call(&mut self, item: &Item, completed: bool, out: &mut Vec<UiChunk>) {
        let call = item.content.iter().find_map(|part| match part {
            ContentPart::ToolCall {
                call_id,
                name,
                arguments,
                mcp,
            } => Some((call_id, name, arguments, mcp)),
            _ => None,
        });
        let id = &item.item_id;
        match call {
            Some((call_id, name, arguments, mcp)) => {
                let title = mcp.as_ref().map(|m| format!("{}: {}", m.server, m.tool));
                self.open(id, name, title, Some(true), out);
                self.calls.insert(call_id.clone(), id.clone());
                if completed || !is_empty(arguments) {
                    self.input(id, arguments.clone(), out);
                }
            }
            None => self.open(id, "tool", None, Some(true), out),
        }
        if !completed {
            return;
        }
        if let Some((output, is_error)) = tool_result(item) {
            let failed = is_error || item.status == ItemStatus::Failed;
            self.output(id, result_of(output, failed, "the tool failed"), out);
        } else if item.status == ItemStatus::Failed {
            self.output(id, Err("the tool call failed".into()), out);
        } else if let Some(part) = self.parts.get_mut(id) {
            part.completed = true;
        }
    }

    /// A completed `toolResult` item: the output of its call (its parent, or the call its
    /// `callId` names), or a part of its own when the call is not known.
    pub fn result(&mut self, item: &Item, out: &mut Vec<UiChunk>) {
        let call_id = item.content.iter().find_map(|part| match part {
            ContentPart::ToolResult { call_id, .. } => Some(call_id.clone()),
            _ => None,
        });
        let target = item
            .parent_id
            .clone()
            .filter(|parent| self.parts.contains_key(parent))
            .or_else(|| call_id.as_ref().and_then(|c| self.calls.get(c).cloned()));
        let id = match target {
            Some(target) => target,
            None => {
                let id = item.item_id.clone();
                self.open(&id, RESULT_TOOL, None, Some(true), out);
                self.input(&id, json!({ "callId": call_id }), out);
                id
            }
        };
        let (output, is_error) = tool_result(item).unwrap_or((item.text(), false));
        let failed = is_error || item.status == ItemStatus::Failed;
        self.output(&id, result_of(output, failed, "the tool failed"), out);
    }

    /// A `commandExecution` item: a `commandExecution` part whose input is the command
    /// line and working directory; once it completes, its output and exit code (an error
    /// when the item failed).
    pub fn command(&mut self, item: &Item, completed: bool, out: &mut Vec<UiChunk>) {
        let Some((command, cwd, output, exit_code)) =
            item.content.iter().find_map(|part| match part {
                ContentPart::CommandExecution {
                    command,
                    cwd,
                    output,
                    exit_code,
                } => Some((command, cwd, output, *exit_code)),
                _ => None,
            })
        else {
            return;
        };
        let id = &item.item_id;
        if !self.parts.contains_key(id) {
            self.output.insert(id.clone(), String::new());
        }
        self.open(id, COMMAND_TOOL, Some(command.clone()), Some(true), out);
        let mut input = Map::new();
        input.insert("command".into(), Value::String(command.clone()));
        if let Some(cwd) = cwd {
            input.insert("cwd".into(), Value::String(cwd.clone()));
        }
        self.input(id, Value::Object(input), out);
        if !completed {
            return;
        }
        let streamed = self.output.remove(id).unwrap_or_default();
        let text = output.clone().unwrap_or(streamed);
        if item.status == ItemStatus::Failed {
            let error = if text.is_empty() {
                "the command failed".to_string()
            } else {
                text
            };
            self.output(id, Err(error), out);
            return;
        }
        let mut result = Map::new();
        if let Some(code) = exit_code {
            result.insert("exitCode".into(), json!(code));
        }
        result.insert("output".into(), Value::String(text));
        self.output(id, Ok(Value::Object(result)), out);
    }

    /// A `fileChange` item: a `fileChange` part whose input lists the changes (path, kind,
    /// diff) as first known; once it completes, the changes as made (an error when it
    /// failed).
    pub fn file_change(&mut self, item: &Item, completed: bool, out: &mut Vec<UiChunk>) {
        let changes: Vec<Value> = item
            .content
            .iter()
            .filter_map(|part| match part {
                ContentPart::FileChange {
                    path,
                    change_kind,
                    diff,
                } => {
                    let mut change = json!({"path": path, "changeKind": change_kind});
                    if let Some(diff) = diff {
                        change["diff"] = Value::String(diff.clone());
                    }
                    Some(change)
                }
                _ => None,
            })
            .collect();
        let id = &item.item_id;
        let title = changes
            .iter()
            .filter_map(|c| c["path"].as_str())
            .collect::<Vec<_>>()
            .join(", ");
        self.open(id, FILE_CHANGE_TOOL, Some(title), Some(true), out);
        self.input(id, json!({ "changes": changes }), out);
        if completed {
            let result = if item.status == ItemStatus::Failed {
                Err("the file change failed".to_string())
            } else {
                Ok(json!({ "changes": changes }))
            };
            self.output(id, result, out);
        }
    }

    /// `permissionAsked`: an approval request on the part of the item it gates, or on a
    /// part of its own (named after the request's tool or kind) when it gates none.
    pub fn asked(&mut self, request: &PermissionRequest, automatic: bool, out: &mut Vec<UiChunk>) {
        let gated = request
            .item_id
            .clone()
            .filter(|id| self.parts.get(id).is_some_and(|p| !p.done));
        let (target, own) = match gated {
            Some(id) => (id, false),
            None => {
                let id = request.permission_id.clone();
                let kind = serde_json::to_value(request.kind).unwrap_or_default();
                let name = request
                    .tool
                    .clone()
                    .unwrap_or_else(|| kind.as_str().unwrap_or("permission").to_string());
                self.open(&id, &name, Some(request.title.clone()), Some(true), out);
                (id, true)
            }
        };
        if self.parts.get(&target).is_some_and(|p| p.input.is_none()) {
            self.input(&target, permission_input(request), out);
        }
        if let Some(part) = self.parts.get_mut(&target) {
            part.asked = true;
        }
        out.push(UiChunk::ToolApprovalRequest {
            approval_id: request.permission_id.clone(),
            tool_call_id: target.clone(),
            approval_descriptor: serde_json::to_value(request).ok(),
            reason: Some(request.title.clone()),
            is_automatic: automatic.then_some(true),
        });
        self.approvals
            .insert(request.permission_id.clone(), (target, own));
    }

    /// `permissionResolved`: the approval's decision; a denial ends the part
    /// (`tool-output-denied`). A part of the request's own ends with the decision. A
    /// resolution the daemon made by itself is its request and its decision at once.
    pub fn resolved(&mut self, resolved: &PermissionResolved, out: &mut Vec<UiChunk>) {
        if resolved.automatic
            && let Some(request) = &resolved.request
        {
            self.asked(request, true, out);
        }
        let Some((target, own)) = self.approvals.remove(&resolved.permission_id) else {
            return;
        };
        let (approved, reason) = match resolved.outcome {
            PermissionOutcome::Once => (true, "once"),
            PermissionOutcome::Always => (true, "always"),
            PermissionOutcome::Reject => (false, "reject"),
            PermissionOutcome::Cancelled => {
                if own {
                    let error = "the turn ended before the permission was answered";
                    self.output(&target, Err(error.into()), out);
                }
                return;
            }
        };
        out.push(UiChunk::ToolApprovalResponse {
            approval_id: resolved.permission_id.clone(),
            approved,
            reason: Some(reason.into()),
        });
        if !approved {
            if let Some(part) = self.parts.get_mut(&target).filter(|p| !p.done) {
                part.done = true;
                out.push(UiChunk::ToolOutputDenied {
                    tool_call_id: target,
                });
            }
        } else if own {
            self.output(&target, Ok(json!({ "outcome": reason })), out);
        }
    }

    /// `toolCallRequested`: a host tool call the client answers, as a part of its own
    /// (its id is the call's id, which the answer names) the client runs.
    pub fn host_call(&mut self, request: &ToolCallRequest, out: &mut Vec<UiChunk>) {
        self.open(&request.call_id, &request.tool, None, None, out);
        self.input(&request.call_id, request.input.clone(), out);
    }

    /// `toolCallResolved`: how the host tool call ended.
    pub fn host_resolved(&mut self, resolved: &ToolCallResolved, out: &mut Vec<UiChunk>) {
        let result = match resolved.outcome {
            ToolCallOutcome::Answered => Ok(json!({ "outcome": "answered" })),
            ToolCallOutcome::Rejected => Err("the client rejected the call".to_string()),
            ToolCallOutcome::Cancelled => {
                Err("the turn ended before the call was answered".to_string())
            }
        };
        self.output(&resolved.call_id, result, out);
    }

    /// Ends every part still open as the turn ends: a call that completed waiting for a
    /// result with no output, anything else with an error.
    pub fn close(&mut self, out: &mut Vec<UiChunk>) {
        for id in std::mem::take(&mut self.order) {
            let Some(part) = self.parts.get(&id) else {
                continue;
            };
            let result = if part.completed {
                Ok(Value::Null)
            } else {
                Err("the turn ended before the tool finished".to_string())
            };
            self.output(&id, result, out);
        }
    }
}

/// The output text and error flag of an item's `toolResult` part.
fn tool_result(item: &Item) -> Option<(String, bool)> {
    item.content.iter().find_map(|part| match part {
        ContentPart::ToolResult {
            output, is_error, ..
        } => Some((output.clone(), *is_error)),
        _ => None,
    })
}

fn result_of(output: String, failed: bool, fallback: &str) -> Result<Value, String> {
    match (failed, output.is_empty()) {
        (false, _) => Ok(Value::String(output)),
        (true, true) => Err(fallback.to_string()),
        (true, false) => Err(output),
    }
}

/// Whether a tool's arguments are not known yet (`null`, `{}`).
fn is_empty(arguments: &Value) -> bool {
    match arguments {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// The input of a permission's own part: the tool's input, or what the request names.
fn permission_input(request: &PermissionRequest) -> Value {
    if let Some(input) = &request.input {
        return input.clone();
    }
    let mut input = Map::new();
    if let Some(command) = &request.command {
        input.insert("command".into(), Value::String(command.clone()));
    }
    if !request.paths.is_empty() {
        input.insert("paths".into(), json!(request.paths));
    }
    if let Some(plan) = &request.plan {
        input.insert("plan".into(), Value::String(plan.clone()));
    }
    Value::Object(input)
}
