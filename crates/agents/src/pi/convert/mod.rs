//! Pi `--mode rpc` stdout lines → universal events, and universal replies → the
//! `extension_ui_response` lines Pi reads on stdin.
//!
//! One [`Converter`] per universal session (one Pi process). It is pure: it returns
//! universal events and the lines the driver must write; ids come from the session
//! ([`crate::SessionIds`]).
//!
//! - Assistant messages stream as `message_update`s: `text_*` → a `message` item,
//!   `thinking_*` → a `reasoning` item (started at `*_start`, grown by `*_delta`, completed
//!   at `*_end` with the whole text), `toolcall_*` → a `toolCall` item completed with its
//!   arguments at `toolcall_end` ([`stream`]). `message_end` completes what is still open:
//!   a message cut by an abort or an error ends `failed` with its text so far.
//! - `tool_execution_*` → the call's result item, child of the `toolCall` item: `bash` →
//!   `commandExecution`, `write` / `edit` → `fileChange`, anything else → `toolResult`
//!   ([`tools`]).
//! - A Pi "turn" is one model call; the daemon's turn is one prompt, a Pi *run*: it ends
//!   (`turnEnded`, exactly once) at `agent_end`, with the usage of the run's assistant
//!   messages summed and the stop reason of its last one ([`turn`]). A prompt Pi rejects
//!   (a failed `prompt` response before `agent_start`) ends it with `error`.
//! - Extension dialogs (`extension_ui_request`) → `permissionAsked` (`confirm`) or
//!   `questionAsked` (`select`, `input`, `editor`); `notify` → a `status` item ([`hitl`]).
//! - The tools of the session's MCP servers, registered by the daemon's bridge extension
//!   as `mcp__<server>__<tool>`: their `toolCall` items name the server and tool (`mcp`),
//!   their permissions are `mcpTool`s.
//!
//! Pi's own retries and overflow compaction run *after* `agent_end` (`auto_retry_start`,
//! `compaction_end` with `willRetry`, then a new run). The driver launches Pi without
//! retries (`retry.enabled: false`, as the recordings do); a continuation that still comes
//! is converted (its `status` items and items) but ends no second turn.
//!
//! Lines handled without universal events are listed in [`IGNORED_EVENTS`], with
//! `response`s that succeeded (the driver reads them) and fire-and-forget UI calls other
//! than `notify` ([`hitl::IGNORED_UI_METHODS`]); anything else becomes an `unparsed` item
//! with the raw JSON.

mod hitl;
mod protocol;
mod stream;
mod tools;
mod turn;

use std::collections::{HashMap, HashSet};

use sandbox_universal::Item;
use serde_json::Value;

pub use hitl::{IGNORED_UI_METHODS, always_scope};

use super::native;
use crate::items::{finished_item, native_event as event, parse, unparsed_item};
use crate::{AgentEvent, SessionIds};

/// Lines that carry nothing the universal log needs, ignored on purpose:
/// - `turn_start`, `turn_end`: one model call and its tool results (items come from the
///   message and tool events; the turn ends at `agent_end`); `agent_start`: the run began
///   (noted, no event: the daemon emits `turnStarted`);
/// - `message_start`: items start with their blocks; user, tool result and the coding
///   agent's own messages (`bashExecution`, `custom`, summaries) make no items (the prompt
///   is the daemon's; tool results come from `tool_execution_end`);
/// - `queue_update`: steering / follow-up queues, which the daemon does not use;
/// - `compaction_start`: `compaction_end` reports the compaction;
/// - `auto_retry_end`: the retried run's own messages and `agent_end` say how it went;
/// - `session_info_changed`, `thinking_level_changed`: session name and thinking level.
pub const IGNORED_EVENTS: &[&str] = &[
    "agent_start",
    "turn_start",
    "turn_end",
    "message_start",
    "queue_update",
    "compaction_start",
    "auto_retry_end",
    "session_info_changed",
    "thinking_level_changed",
];

/// The turn the daemon is running.
#[derive(Debug, Default)]
struct Turn {
    id: String,
    /// The daemon asked to cancel (`abort` sent).
    cancelling: bool,
    /// Pi started the prompt's run (`agent_start`).
    running: bool,
}

/// A block of the assistant message being streamed that is an open item.
#[derive(Debug, Clone)]
struct OpenBlock {
    /// Its `contentIndex`.
    index: usize,
    item: Item,
    /// Text sent as deltas so far.
    streamed: String,
}

/// A tool call of the model, once its `toolCall` item started.
#[derive(Debug, Clone)]
struct Call {
    item_id: String,
    arguments: Value,
}

/// A tool execution between `tool_execution_start` and `_end`.
#[derive(Debug, Clone)]
struct Running {
    call_id: String,
    name: String,
    args: Value,
    /// Its open item (`bash`: the `commandExecution`, started with the execution).
    item: Option<Item>,
    /// Output sent as deltas so far.
    streamed: String,
}

/// The conversion state of one universal session.
#[derive(Debug, Default)]
pub struct Converter {
    cwd: String,
    turn: Option<Turn>,
    blocks: Vec<OpenBlock>,
    /// Content indices of the streamed assistant message that made items.
    seen: HashSet<usize>,
    /// Tool calls by call id (this run's).
    calls: HashMap<String, Call>,
    running: Vec<Running>,
    pending: Vec<hitl::Pending>,
    /// The session's `maxTurns`: Pi's model calls (`turn_start`) per prompt.
    limit: crate::kernel::StepLimit,
    /// The session's MCP servers (their tools are `mcp__<server>__<tool>`).
    mcp_servers: Vec<String>,
}

impl Converter {
    /// A converter for a session whose Pi runs in `cwd`.
    pub fn new(cwd: impl Into<String>) -> Self {
        Self {
            cwd: cwd.into(),
            ..Self::default()
        }
    }

    /// Limits each prompt to `max` model calls (the session's `maxTurns`): past it the
    /// run is aborted and the turn ends `maxTurns`.
    pub fn with_max_turns(mut self, max: Option<u32>) -> Self {
        self.limit = crate::kernel::StepLimit::new(max);
        self
    }

    /// Names the session's MCP servers, whose tools the bridge extension registers.
    pub fn with_mcp_servers(mut self, servers: Vec<String>) -> Self {
        self.mcp_servers = servers;
        self
    }

    /// The session MCP server and tool of a Pi tool name, if it is one.
    fn mcp_tool(&self, name: &str) -> Option<sandbox_universal::McpToolRef> {
        crate::mcp::tool_ref(name, &self.mcp_servers)
    }

    /// Converts one stdout line. Anything not understood becomes an `unparsed` item.
    fn event(&mut self, raw: &Value, ids: &dyn SessionIds) -> Vec<AgentEvent> {
        let kind = native::event_type(raw);
        match self.dispatch(kind, raw, ids) {
            Ok(events) => events,
            Err(error) => unparsed_item(ids, raw, format!("`{kind}`: {error}")),
        }
    }

    fn dispatch(
        &mut self,
        kind: &str,
        raw: &Value,
        ids: &dyn SessionIds,
    ) -> Result<Vec<AgentEvent>, String> {
        if kind == "agent_start"
            && let Some(turn) = &mut self.turn
        {
            turn.running = true;
        }
        if IGNORED_EVENTS.contains(&kind) {
            return Ok(Vec::new());
        }
        let events = match kind {
            "response" => self.response(parse(raw)?, raw),
            "agent_end" => self.agent_end(parse(raw)?, raw),
            "message_update" => self.message_update(ids, parse(raw)?, raw)?,
            "message_end" => self.message_end(ids, parse(raw)?, raw),
            "tool_execution_start" => self.tool_start(ids, parse(raw)?, raw),
            "tool_execution_update" => self.tool_update(parse(raw)?, raw),
            "tool_execution_end" => self.tool_end(ids, parse(raw)?, raw),
            "compaction_end" => self.compaction_end(ids, parse(raw)?, raw),
            "auto_retry_start" => self.retry_start(ids, parse(raw)?, raw),
            "extension_ui_request" => self.ui_request(ids, parse(raw)?, raw)?,
            "extension_error" => self.extension_error(parse(raw)?, raw),
            "" => return Err("a line without a type".into()),
            _ => return Err("unknown Pi event".into()),
        };
        Ok(events)
    }
}

/// A finished `status` item (retries, compaction, extension notices).
fn status_item(
    ids: &dyn SessionIds,
    label: &str,
    detail: Option<String>,
    raw: &Value,
) -> Vec<AgentEvent> {
    finished_item(crate::items::status(ids, label, detail), raw)
}

#[cfg(test)]
mod tests;
