//! Claude Code stream-json → universal events (and universal replies → native lines).
//!
//! [`Converter`] is a pure state machine: the driver tells it when a turn starts and when
//! a cancel was requested, feeds it every stdout line, and writes back the native lines it
//! returns. It gets ids from the session ([`crate::SessionIds`]) and never emits: the driver
//! does, so a converter can be re-run on stored native output, deterministically with a
//! [`crate::CollectingSink`].
//!
//! Native lines handled on purpose without universal events:
//! - `system/init` (every turn; `sessionStarted` is emitted once by the driver at spawn),
//!   `system/status` without a permission-mode change, `system/thinking_tokens`,
//!   `system/hook_*`, `system/task_*` (see [`system`]);
//! - `stream_event` `message_start`/`message_delta`/`ping`, `input_json_delta`,
//!   `signature_delta`, `citations_delta` (the tool input and the final text come complete
//!   in the `assistant` line);
//! - `redacted_thinking` and `image` blocks (nothing readable);
//! - `user` text blocks (the CLI's `[Request interrupted by user]` marker and echoes of
//!   our own input) and replayed/synthetic user lines;
//! - `control_response` (answers to the driver's own requests, consumed by the driver),
//!   `rate_limit_event`, `keep_alive`.
//!
//! Anything else becomes an `unparsed` item with the raw JSON and the reason.

pub mod dialect;
pub mod hitl;
mod items;
pub mod patch;
mod protocol;
mod system;
mod tools;

use std::collections::HashMap;

use sandbox_universal::{
    AgentError, EventPayload, PermissionReply, StopReason, ToolName, ToolPolicy, TurnEnded, Usage,
};
use serde::Deserialize;
use serde_json::Value;

pub use dialect::{CLAUDE, Dialect, FileTool};
pub use hitl::{Pending, PendingKind, always_scope, permission_response, question_response};

use self::items::Items;
use super::native::{
    AssistantLine, ControlRequest, OutLine, ResultLine, StreamEventLine, UserLine,
};
use crate::items::unparsed_item;
use crate::kernel::Outgoing;
use crate::{AgentEvent, SessionIds};

/// What one native line turned into: universal events, and native lines to write to the
/// CLI's stdin (answers to control requests the daemon cannot forward to a client).
type Converted = crate::kernel::Converted<Outgoing>;

#[derive(Debug)]
struct Turn {
    id: String,
    /// The user's line reached the CLI's stdin.
    delivered: bool,
    cancelling: bool,
    error_reported: bool,
}

/// The conversion state of one session of an agent that prints Claude Code's stream JSON.
#[derive(Debug)]
pub struct Converter {
    dialect: &'static Dialect,
    cwd: String,
    turn: Option<Turn>,
    items: Items,
    pending: HashMap<String, Pending>,
    native_session_id: Option<String>,
    /// The permission mode the CLI last reported (`system/init`, `system/status`).
    permission_mode: Option<String>,
    /// The session's tool policy (MCP tools it takes away are refused when they ask).
    tools: ToolPolicy,
}

impl Converter {
    /// A converter for a Claude Code session working in `cwd`.
    pub fn new(cwd: impl Into<String>) -> Self {
        Self::with_dialect(cwd, &CLAUDE)
    }

    /// A converter for a session of the agent speaking `dialect`, working in `cwd`.
    pub fn with_dialect(cwd: impl Into<String>, dialect: &'static Dialect) -> Self {
        Self {
            dialect,
            cwd: cwd.into(),
            turn: None,
            items: Items::default(),
            pending: HashMap::new(),
            native_session_id: None,
            permission_mode: None,
            tools: ToolPolicy::default(),
        }
    }

    /// Applies the session's policy: its MCP servers name tool calls, and an MCP tool its
    /// `tools` take away is refused when it asks (Claude removes what it can up front;
    /// the rest of a server whose tools `allow` names one by one asks, see
    /// `claude::policy::partly_allowed`).
    pub fn set_policy(&mut self, policy: &sandbox_universal::SessionPolicy) {
        self.items
            .set_mcp_servers(policy.mcp_servers.keys().cloned().collect());
        self.tools = policy.tools.clone();
    }

    /// What the daemon answers by itself to a permission request, if anything: a refusal
    /// of an MCP tool the policy takes away, or (in bypass mode, where nothing else asks)
    /// an allowance of a permitted one.
    fn answer_itself(&self, event: &AgentEvent) -> Option<PermissionReply> {
        let EventPayload::PermissionAsked(asked) = &event.payload else {
            return None;
        };
        let mcp = self.items.mcp_tool(asked.tool.as_deref()?)?;
        let tool = ToolName::Mcp {
            server: mcp.server,
            tool: Some(mcp.tool),
        };
        if !self.tools.permits(&tool) {
            Some(PermissionReply::Reject)
        } else if self.permission_mode.as_deref() == Some("bypassPermissions") {
            Some(PermissionReply::Once)
        } else {
            None
        }
    }

    /// Records the CLI's session id (known up front from `--session-id`).
    pub fn set_native_session_id(&mut self, id: &str) {
        self.native_session_id = Some(id.to_string());
    }

    /// The permission mode the CLI last reported (its own name: `plan`, `default`,
    /// `acceptEdits`, ...), e.g. `default` after an approved plan.
    pub fn permission_mode(&self) -> Option<&str> {
        self.permission_mode.as_deref()
    }

    /// The universal item of the tool call named `tool` with exactly this input.
    pub fn call_item(&self, tool: &str, input: &Value) -> Option<String> {
        self.items
            .call_with(tool, input)
            .map(|call| call.item_id.clone())
    }

    /// Takes the pending request with this universal id (to answer it).
    pub fn take_pending(&mut self, universal_id: &str) -> Option<Pending> {
        self.pending.remove(universal_id)
    }

    /// Converts one stdout line (already parsed as JSON).
    fn convert_line(&mut self, raw: &Value, ids: &dyn SessionIds) -> Converted {
        let mut out = Converted::default();
        let line: OutLine = match OutLine::deserialize(raw) {
            Ok(line) => line,
            Err(error) => {
                out.events.extend(unparsed_item(
                    ids,
                    raw,
                    format!("not a known Claude line: {error}"),
                ));
                return out;
            }
        };
        match line {
            OutLine::System(system) => self.system(system, raw, ids, &mut out),
            OutLine::StreamEvent(event) => self.stream_event(event, raw, ids, &mut out),
            OutLine::Assistant(assistant) => self.assistant(assistant, raw, ids, &mut out),
            OutLine::User(user) => self.user(user, raw, ids, &mut out),
            OutLine::Result(result) => self.result(&result, raw, &mut out),
            OutLine::ControlRequest(request) => match request.request {
                ControlRequest::CanUseTool(can_use) => {
                    let (events, pending) =
                        hitl::ask(&request.request_id, *can_use, &self.items, raw, ids);
                    let planning = self.permission_mode.as_deref() == Some("plan");
                    let itself = events.first().and_then(|e| self.answer_itself(e));
                    match (pending, events.as_slice()) {
                        (Some((_, pending)), [event]) if itself.is_some() => {
                            let reply = itself.expect("an answer");
                            out.replies
                                .push(Outgoing::Line(hitl::permission_response(&pending, reply)));
                            if reply == PermissionReply::Reject {
                                out.events.push(hitl::refused_automatically(event, raw));
                            }
                        }
                        // Plan mode changes no file, whatever the user would answer (the
                        // pinned CLI would ask, and write once allowed): the daemon refuses
                        // the edit itself, visibly.
                        (Some((_, pending)), [event])
                            if planning && hitl::is_file_change(&event.payload) =>
                        {
                            out.replies
                                .push(Outgoing::Line(hitl::plan_mode_refusal(&pending)));
                            out.events.push(hitl::refused_automatically(event, raw));
                        }
                        (pending, _) => {
                            if let Some((id, pending)) = pending {
                                self.pending.insert(id, pending);
                            }
                            out.events.extend(events);
                        }
                    }
                }
                other => {
                    let subtype = match other {
                        ControlRequest::HookCallback(_) => "hook_callback",
                        _ => "mcp_message",
                    };
                    out.replies.push(Outgoing::Line(hitl::error_response(
                        &request.request_id,
                        &format!("sandbox-daemon does not handle `{subtype}` requests"),
                    )));
                    out.events.extend(unparsed_item(
                        ids,
                        raw,
                        format!("unexpected control request `{subtype}` (answered with an error)"),
                    ));
                }
            },
            OutLine::ControlCancelRequest(cancel) => {
                self.pending
                    .retain(|_, p| p.request_id != cancel.request_id);
            }
            OutLine::ConversationReset(reset) => {
                ids.set_native_session_id(&reset.new_conversation_id);
                self.native_session_id = Some(reset.new_conversation_id);
            }
            OutLine::ControlResponse(_) | OutLine::RateLimitEvent(_) | OutLine::KeepAlive(_) => {}
        }
        out
    }

    fn stream_event(
        &mut self,
        line: StreamEventLine,
        raw: &Value,
        ids: &dyn SessionIds,
        out: &mut Converted,
    ) {
        use super::native::StreamEvent;
        match line.event {
            StreamEvent::MessageStart { message } => self.items.message_started(&message.id),
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => out.events.extend(self.items.block_started(
                line.api_message_id.as_deref(),
                index,
                &content_block,
                raw,
                ids,
            )),
            StreamEvent::ContentBlockDelta { index, delta } => out.events.extend(
                self.items
                    .block_delta(line.api_message_id.as_deref(), index, delta, raw),
            ),
            StreamEvent::MessageStop {} => out
                .events
                .extend(self.items.message_stopped(line.api_message_id.as_deref())),
            StreamEvent::Error { error } => {
                if let Some(turn) = &mut self.turn {
                    turn.error_reported = true;
                }
                let message = error["message"]
                    .as_str()
                    .unwrap_or("the model stream failed")
                    .to_string();
                out.events.push(AgentEvent::native(
                    EventPayload::Error(AgentError::ProviderError {
                        message,
                        status: None,
                    }),
                    Some(raw.clone()),
                ));
            }
            StreamEvent::ContentBlockStop { .. }
            | StreamEvent::MessageDelta {}
            | StreamEvent::Ping {} => {}
        }
    }

    fn assistant(
        &mut self,
        line: AssistantLine,
        raw: &Value,
        ids: &dyn SessionIds,
        out: &mut Converted,
    ) {
        if let Some(code) = &line.error {
            if let Some(turn) = &mut self.turn {
                turn.error_reported = true;
            }
            out.events.push(AgentEvent::native(
                EventPayload::Error(api_error(&line, code)),
                Some(raw.clone()),
            ));
            return;
        }
        let cut_short = self.turn.as_ref().is_some_and(|t| t.cancelling);
        out.events
            .extend(self.items.assistant(&line, raw, ids, cut_short));
    }

    fn user(&mut self, line: UserLine, raw: &Value, ids: &dyn SessionIds, out: &mut Converted) {
        if line.is_replay || line.is_synthetic {
            return;
        }
        let Value::Array(blocks) = &line.message.content else {
            return;
        };
        for block in blocks {
            if block["type"] != "tool_result" {
                // Text blocks: the interrupt marker or echoes of our own input.
                if block["type"] == "text" {
                    continue;
                }
                out.events.extend(unparsed_item(
                    ids,
                    raw,
                    format!("unexpected user content block `{}`", block["type"]),
                ));
                continue;
            }
            match tools::tool_result(
                block,
                &line,
                (&self.items, self.dialect),
                &self.cwd,
                raw,
                ids,
            ) {
                Ok(events) => out.events.extend(events),
                Err(error) => out.events.extend(unparsed_item(ids, raw, error)),
            }
        }
    }

    fn result(&mut self, result: &ResultLine, raw: &Value, out: &mut Converted) {
        let Some(turn) = self.turn.take() else {
            // A result with no turn (e.g. `--resume` of an unknown id at start-up): the
            // driver reports it; nothing for the log.
            return;
        };
        let stop_reason = stop_reason(&turn, result);
        out.events
            .extend(self.items.close_all(stop_reason != StopReason::Cancelled));
        if result.is_error && !turn.error_reported && stop_reason != StopReason::Cancelled {
            let message = result
                .result
                .clone()
                .or_else(|| result.error.clone())
                .filter(|r| !r.is_empty())
                .or_else(|| (!result.errors.is_empty()).then(|| result.errors.join("; ")))
                .unwrap_or_else(|| format!("the turn failed ({})", result.subtype));
            out.events.push(AgentEvent::native(
                EventPayload::Error(AgentError::AgentReported {
                    message,
                    code: Some(result.subtype.clone()),
                }),
                Some(raw.clone()),
            ));
        }
        self.pending.clear();
        out.events.push(AgentEvent::native(
            EventPayload::TurnEnded(TurnEnded {
                turn_id: turn.id,
                stop_reason,
                // Amp's `result` has no usage.
                usage: (result.usage.is_some() || result.total_cost_usd.is_some())
                    .then(|| usage(result)),
                changes: None,
            }),
            Some(raw.clone()),
        ));
    }
}

fn api_error(line: &AssistantLine, code: &str) -> AgentError {
    let message = line
        .message
        .content
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let message = if message.is_empty() {
        format!("the model provider failed ({code})")
    } else {
        message
    };
    let auth = matches!(
        code,
        "authentication_failed" | "invalid_api_key" | "oauth_org_not_allowed"
    ) || matches!(line.api_error_status, Some(401 | 403));
    if auth {
        AgentError::TokenError { message }
    } else {
        AgentError::ProviderError {
            message,
            status: line.api_error_status,
        }
    }
}

fn stop_reason(turn: &Turn, result: &ResultLine) -> StopReason {
    if turn.cancelling {
        return StopReason::Cancelled;
    }
    match result.subtype.as_str() {
        "error_max_turns" => StopReason::MaxTurns,
        "error_max_budget_usd" => StopReason::MaxBudget,
        _ if result.is_error => StopReason::Error,
        _ if result.stop_reason.as_deref() == Some("max_tokens") => StopReason::MaxTokens,
        _ => StopReason::Completed,
    }
}

fn usage(result: &ResultLine) -> Usage {
    let usage = result.usage.clone().unwrap_or_default();
    Usage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cached_input_tokens: usage.cache_read_input_tokens,
        cache_write_tokens: usage.cache_creation_input_tokens,
        reasoning_tokens: usage.output_tokens_details.and_then(|d| d.thinking_tokens),
        total_cost_usd: result.total_cost_usd,
    }
}

#[cfg(test)]
mod tests;
