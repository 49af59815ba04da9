//! Codex app-server messages → universal events, and universal replies → Codex responses.
//!
//! [`Converter`] is Codex's [`crate::kernel::Protocol`] (`protocol.rs`): pure, it holds
//! the state a conversion needs (the session's turn settings and thread, the running
//! turn, open items, token totals, pending server requests) and turns one native message
//! at a time into universal events, and each command into the JSON-RPC messages that
//! carry it. It never does I/O; ids come from the session ([`crate::SessionIds`]).

pub mod hitl;
mod items;
mod protocol;

use std::collections::HashMap;

use sandbox_universal::{
    AgentError, ContentPart, EventPayload, Item, ItemEvent, ItemKind, ItemStatus, PlanEntry,
    PlanEntryStatus, StopReason, TurnEnded, Usage,
};
use serde_json::Value;

pub use hitl::Pending;

use super::launch::TurnSettings;
use super::native::{
    self, DeltaNotification, ErrorNotification, ItemNotification, ModelRerouted, PatchUpdated,
    PlanUpdated, ServerRequestResolved, SummaryPartAdded, TokenUsageBreakdown,
    TokenUsageNotification, TurnResult, TurnStatus, WarningNotification,
};
use crate::items::{finished_item, native_event as event, parse, unparsed_item};
use crate::kernel::{Outgoing, StepLimit};
use crate::{AgentEvent, SessionIds};

/// What one native message turned into: universal events, and JSON-RPC responses to send
/// at once (server requests answered without asking, or not supported).
type Converted = crate::kernel::Converted<Outgoing>;

/// Notifications that carry nothing for clients, ignored on purpose:
/// - `thread/started`, `thread/status/changed`, `thread/readState/changed`,
///   `thread/settings/updated`, `thread/name/updated`, `thread/goal/updated`,
///   `thread/goal/cleared`: thread bookkeeping (goals are off in the generated config; the
///   daemon has no goal API); the session and turn events already say what runs.
/// - `account/updated`, `account/login/completed`, `account/rateLimits/updated`,
///   `remoteControl/status/changed`: account and app state of the handshake.
/// - `turn/diff/updated`: the turn's aggregated diff; `fileChange` items carry each file's
///   diff.
/// - `item/fileChange/outputDelta`: apply_patch's own summary text ("Success. Updated ...").
/// - `item/commandExecution/terminalInteraction`: stdin the model wrote to a running
///   command; its output arrives as output deltas.
/// - `item/mcpToolCall/progress`: progress text of an MCP call; the call's item carries the
///   result.
/// - `thread/compacted`: the `contextCompaction` item reports it.
/// - `skills/changed`, `app/list/updated`: the daemon configures no plugins or apps.
///
/// `mcpServer/startupStatus/updated` (an MCP server starting) is not shown either; a
/// failure is logged for the operator.
pub const IGNORED_NOTIFICATIONS: &[&str] = &[
    "thread/started",
    "thread/status/changed",
    "thread/readState/changed",
    "thread/settings/updated",
    "thread/name/updated",
    "thread/goal/updated",
    "thread/goal/cleared",
    "account/updated",
    "account/login/completed",
    "account/rateLimits/updated",
    "remoteControl/status/changed",
    "turn/diff/updated",
    "item/fileChange/outputDelta",
    "item/commandExecution/terminalInteraction",
    "item/mcpToolCall/progress",
    "thread/compacted",
    "skills/changed",
    "app/list/updated",
];

/// Notifications about the daemon's own setup (e.g. "bubblewrap not found"): written to
/// the daemon's log for the operator, not shown to clients.
pub const LOGGED_NOTIFICATIONS: &[&str] = &["configWarning", "deprecationNotice"];

/// The turn the daemon is running, as Codex knows it.
#[derive(Debug, Clone)]
struct TurnState {
    /// Daemon turn id.
    turn_id: String,
    /// Codex turn id, once known.
    codex_turn_id: Option<String>,
    /// Codex accepted the turn: from now on its app-server going away ends it.
    delivered: bool,
    /// An interrupt was asked for: the turn ends `cancelled`.
    cancelling: bool,
    /// Thread token totals before this turn.
    baseline: TokenUsageBreakdown,
    /// Whether Codex reported usage during this turn.
    usage_seen: bool,
    /// Whether an `error` was already emitted for this turn.
    error_reported: bool,
    /// The next item Codex starts begins a model response (none began yet, or the last
    /// one's usage was reported).
    awaiting_response: bool,
}

/// An item that started and has not completed yet.
#[derive(Debug, Clone)]
struct OpenItem {
    native_id: String,
    item: Item,
}

/// The conversion state of one Codex session.
#[derive(Debug)]
pub struct Converter {
    settings: TurnSettings,
    /// The session's thread (empty until the first app-server started it).
    thread_id: String,
    turn: Option<TurnState>,
    open: Vec<OpenItem>,
    usage_total: TokenUsageBreakdown,
    pending: HashMap<String, Pending>,
    /// The daemon's requests awaiting their answer, by id: their method, named when
    /// Codex refuses one.
    requests: HashMap<String, String>,
    /// The session's `maxTurns`: model responses per turn.
    limit: StepLimit,
    /// The session's MCP servers, and those of them the running app-server has not
    /// reported started (or failed) yet: a turn waits for them
    /// ([`crate::kernel::Protocol::ready_for_turn`]).
    mcp_servers: Vec<String>,
    mcp_starting: Vec<String>,
}

impl Converter {
    /// A converter for a session whose turns carry `settings` (in permission mode
    /// `acceptEdits`, patches inside its working directory are approved without asking).
    pub fn new(settings: TurnSettings) -> Self {
        Self {
            settings,
            thread_id: String::new(),
            turn: None,
            open: Vec::new(),
            usage_total: TokenUsageBreakdown::default(),
            pending: HashMap::new(),
            requests: HashMap::new(),
            limit: StepLimit::default(),
            mcp_servers: Vec::new(),
            mcp_starting: Vec::new(),
        }
    }

    /// Each turn may take at most `max_turns` model responses (`None`: no limit).
    pub fn with_max_turns(mut self, max_turns: Option<u32>) -> Self {
        self.limit = StepLimit::new(max_turns);
        self
    }

    /// Counts the running turn's model responses: one begins with the first item Codex
    /// starts after the turn began or after the last response's usage was reported
    /// (`thread/tokenUsage/updated` follows every response, after its tools ran). One
    /// response too many interrupts the turn (`turn/interrupt`, whose answer nobody
    /// awaits), which then ends with `maxTurns`.
    fn count_response(&mut self, method: &str, params: &Value) -> Option<Outgoing> {
        let turn = self.turn.as_mut()?;
        match method {
            "thread/tokenUsage/updated" => {
                turn.awaiting_response = true;
                None
            }
            "item/started" if turn.awaiting_response => {
                if params.pointer("/item/type").and_then(Value::as_str) == Some("userMessage") {
                    return None;
                }
                turn.awaiting_response = false;
                if !self.limit.step() {
                    return None;
                }
                let codex_turn = turn.codex_turn_id.as_ref()?;
                tracing::info!(target: "codex", turn = %turn.turn_id, "maxTurns reached: interrupting the turn");
                Some(Outgoing::Line(serde_json::json!({
                    "id": format!("maxTurns:{}", turn.turn_id),
                    "method": native::method::TURN_INTERRUPT,
                    "params": {"threadId": self.thread_id, "turnId": codex_turn},
                })))
            }
            _ => None,
        }
    }

    /// The session has these MCP servers: each app-server's first turn waits until Codex
    /// reports them started or failed.
    pub fn with_mcp_servers(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.mcp_servers = names.into_iter().collect();
        self.mcp_starting = self.mcp_servers.clone();
        self
    }

    /// Whether every MCP server of the session has started or failed in this app-server.
    pub(super) fn mcp_ready(&self) -> bool {
        self.mcp_starting.is_empty()
    }

    /// A new app-server starts the session's MCP servers again.
    pub(super) fn mcp_restarting(&mut self) {
        self.mcp_starting = self.mcp_servers.clone();
    }

    /// The session's thread is `thread_id`: turns start and are interrupted there.
    pub fn set_thread(&mut self, thread_id: &str) {
        self.thread_id = thread_id.to_string();
    }

    /// Converts one notification. `raw` is the whole JSON-RPC message. Anything not
    /// understood becomes an `unparsed` item.
    fn notification(
        &mut self,
        ids: &dyn SessionIds,
        method: &str,
        params: &Value,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        match self.dispatch(ids, method, params, raw) {
            Ok(events) => events,
            Err(error) => unparsed_item(ids, raw, &error),
        }
    }

    fn dispatch(
        &mut self,
        ids: &dyn SessionIds,
        method: &str,
        params: &Value,
        raw: &Value,
    ) -> Result<Vec<AgentEvent>, String> {
        let events = match method {
            "item/started" => {
                self.item_started(ids, &parse::<ItemNotification>(params)?.item, raw)?
            }
            "item/completed" => {
                self.item_completed(ids, &parse::<ItemNotification>(params)?.item, raw)?
            }
            "item/agentMessage/delta"
            | "item/reasoning/summaryTextDelta"
            | "item/reasoning/textDelta"
            | "item/commandExecution/outputDelta"
            | "item/plan/delta" => {
                let delta: DeltaNotification = parse(params)?;
                self.delta(&delta.item_id, &delta.delta, raw)?
            }
            "item/reasoning/summaryPartAdded" => {
                // Later summary parts start a new paragraph, as in the completed item.
                let part: SummaryPartAdded = parse(params)?;
                if part.summary_index > 0 {
                    self.delta(&part.item_id, "\n\n", raw)?
                } else {
                    Vec::new()
                }
            }
            "item/fileChange/patchUpdated" => {
                let patch: PatchUpdated = parse(params)?;
                self.patch_updated(&patch);
                Vec::new()
            }
            "turn/started" => {
                self.turn_started(params);
                Vec::new()
            }
            "turn/completed" => self.turn_completed(&parse::<TurnResult>(params)?, raw),
            "thread/tokenUsage/updated" => {
                self.usage_updated(&parse::<TokenUsageNotification>(params)?);
                Vec::new()
            }
            "turn/plan/updated" => plan_item(ids, &parse::<PlanUpdated>(params)?, raw),
            "error" => self.error(ids, &parse::<ErrorNotification>(params)?, raw),
            "serverRequest/resolved" => {
                let resolved: ServerRequestResolved = parse(params)?;
                self.pending
                    .retain(|_, p| p.native_id() != &resolved.request_id);
                Vec::new()
            }
            "warning" => {
                let warning: WarningNotification = parse(params)?;
                status_item(ids, "warning", Some(warning.message), raw)
            }
            "model/rerouted" => {
                let rerouted: ModelRerouted = parse(params)?;
                let detail = format!("{} → {}", rerouted.from_model, rerouted.to_model);
                status_item(ids, "modelRerouted", Some(detail), raw)
            }
            "mcpServer/startupStatus/updated" => {
                if params["status"] == "failed" {
                    tracing::warn!(target: "codex", %params, "an MCP server of the session failed to start");
                }
                if params["status"] != "starting"
                    && let Some(name) = params["name"].as_str()
                {
                    self.mcp_starting.retain(|n| n != name);
                }
                Vec::new()
            }
            m if IGNORED_NOTIFICATIONS.contains(&m) => Vec::new(),
            m if LOGGED_NOTIFICATIONS.contains(&m) => {
                tracing::warn!(target: "codex", method = m, %params, "codex reported a setup problem");
                Vec::new()
            }
            other => return Err(format!("unknown Codex notification `{other}`")),
        };
        Ok(events)
    }

    fn usage_updated(&mut self, update: &TokenUsageNotification) {
        let total = update.token_usage.total;
        self.usage_total = total;
        if let Some(turn) = &mut self.turn {
            let ours = turn.codex_turn_id.is_some() && update.turn_id == turn.codex_turn_id;
            if ours {
                turn.usage_seen = true;
            } else {
                // Totals restated for an earlier turn (e.g. right after `thread/resume`).
                turn.baseline = total;
            }
        }
    }

    fn turn_completed(&mut self, completed: &TurnResult, raw: &Value) -> Vec<AgentEvent> {
        let Some(turn) = self.turn.take() else {
            return Vec::new();
        };
        let stop_reason = match completed.turn.status {
            TurnStatus::Interrupted => self.limit.stop_reason(StopReason::Cancelled),
            TurnStatus::Failed => StopReason::Error,
            _ => self.limit.stop_reason(StopReason::Completed),
        };
        let item_status = if stop_reason == StopReason::Completed {
            ItemStatus::Completed
        } else {
            ItemStatus::Failed
        };
        let mut events = self.close_open_items(item_status);
        if let (Some(error), false) = (&completed.turn.error, turn.error_reported)
            && stop_reason == StopReason::Error
        {
            events.push(event(EventPayload::Error(agent_error(error)), raw));
        }
        self.pending.clear();
        let usage = turn
            .usage_seen
            .then(|| usage(&self.usage_total.since(&turn.baseline)));
        events.push(event(
            EventPayload::TurnEnded(TurnEnded {
                turn_id: turn.turn_id,
                stop_reason,
                usage,
                changes: None,
            }),
            raw,
        ));
        events
    }

    fn error(
        &mut self,
        ids: &dyn SessionIds,
        notification: &ErrorNotification,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        if notification.will_retry {
            return status_item(
                ids,
                "retrying",
                Some(notification.error.message.clone()),
                raw,
            );
        }
        if let Some(turn) = &mut self.turn {
            turn.error_reported = true;
        }
        vec![event(
            EventPayload::Error(agent_error(&notification.error)),
            raw,
        )]
    }

    fn close_open_items(&mut self, status: ItemStatus) -> Vec<AgentEvent> {
        std::mem::take(&mut self.open)
            .into_iter()
            .map(|open| {
                let item = Item {
                    status,
                    ..open.item
                };
                AgentEvent::synthetic(EventPayload::ItemCompleted(ItemEvent { item }))
            })
            .collect()
    }
}

/// Maps Codex's error info to the universal error kinds.
/// The message of a provider's error body that Codex passes on verbatim as its own
/// message (OpenAI's `{"error": {"message", "type"}}`), with the error's type.
fn provider_message(message: &str) -> Option<String> {
    let body: Value = serde_json::from_str(message).ok()?;
    let error = body.get("error")?;
    let text = error.get("message")?.as_str()?;
    Some(match error.get("type").and_then(Value::as_str) {
        Some(kind) => format!("{text} ({kind})"),
        None => text.to_string(),
    })
}

fn agent_error(error: &native::TurnError) -> AgentError {
    let info = error.codex_error_info.as_ref();
    let http_status = info
        .and_then(Value::as_object)
        .and_then(|map| map.values().next())
        .and_then(|v| v.get("httpStatusCode"))
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    // A request the provider refused: its own words, not the JSON around them.
    if let Some(message) = provider_message(&error.message)
        && !matches!(http_status, Some(401 | 403))
    {
        return AgentError::ProviderError {
            message,
            status: http_status,
        };
    }
    let message = match &error.additional_details {
        Some(details) if !details.is_empty() => format!("{} ({details})", error.message),
        _ => error.message.clone(),
    };
    let code = info.and_then(|i| match i {
        Value::String(s) => Some(s.clone()),
        Value::Object(map) => map.keys().next().cloned(),
        _ => None,
    });
    match code.as_deref() {
        _ if matches!(http_status, Some(401 | 403)) => AgentError::TokenError { message },
        Some("unauthorized") => AgentError::TokenError { message },
        Some(
            "internalServerError"
            | "serverOverloaded"
            | "usageLimitExceeded"
            | "rateLimitExceeded"
            | "badRequest"
            | "modelNotFound"
            | "httpConnectionFailed"
            | "responseStreamConnectionFailed"
            | "responseStreamDisconnected"
            | "responseTooManyFailedAttempts",
        ) => AgentError::ProviderError {
            message,
            status: http_status,
        },
        _ => AgentError::AgentReported { message, code },
    }
}

fn usage(delta: &TokenUsageBreakdown) -> Usage {
    Usage {
        input_tokens: delta.input_tokens.saturating_sub(delta.cached_input_tokens),
        output_tokens: delta.output_tokens,
        cached_input_tokens: Some(delta.cached_input_tokens),
        cache_write_tokens: Some(delta.cache_write_input_tokens),
        reasoning_tokens: Some(delta.reasoning_output_tokens),
        total_cost_usd: None,
    }
}

fn status_item(
    ids: &dyn SessionIds,
    label: &str,
    detail: Option<String>,
    raw: &Value,
) -> Vec<AgentEvent> {
    finished_item(crate::items::status(ids, label, detail), raw)
}

fn plan_item(ids: &dyn SessionIds, plan: &PlanUpdated, raw: &Value) -> Vec<AgentEvent> {
    let entries = plan
        .plan
        .iter()
        .map(|step| PlanEntry {
            content: step.step.clone(),
            status: match step.status.as_str() {
                "completed" => PlanEntryStatus::Completed,
                "inProgress" => PlanEntryStatus::InProgress,
                _ => PlanEntryStatus::Pending,
            },
        })
        .collect();
    let item = Item::new(ids.next_id("itm"), ItemKind::Plan, ItemStatus::Completed)
        .with_role(sandbox_universal::ItemRole::Assistant)
        .with_content(ContentPart::Plan {
            entries,
            text: plan.explanation.clone(),
        });
    finished_item(item, raw)
}

#[cfg(test)]
mod policy_tests;
#[cfg(test)]
mod tests;
