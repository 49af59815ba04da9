//! One session's spans, built from its universal events as the core logs them: a span
//! per turn (`invoke_agent {agent}`, from `turnStarted` to `turnEnded`, at the events'
//! own times), a child span per tool call (`execute_tool {name}`, from the call's item to
//! its result), and the turn's permission, question and host tool waits as span events.
//! Nothing outlives the session: what is open ends when the session ends or is let go,
//! and a turn keeps at most [`MAX_OPEN_TOOLS`] tools and [`MAX_WAITS`] waits open.

use std::collections::HashMap;
use std::time::SystemTime;

use opentelemetry::trace::{
    Span as _, SpanBuilder, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _,
    TraceFlags, TraceId, TraceState, Tracer as _,
};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SdkTracer, Span};
use sandbox_universal::{
    ContentPart, EventPayload, Item, ItemKind, ItemRole, ItemStatus, StopReason, TurnEnded,
    UniversalEvent,
};

use super::TraceParent;
use super::content;
use super::keys as key;
use super::waits::{Wait, Waits};

/// Tool spans a turn keeps open at most (calls past it are not traced).
pub const MAX_OPEN_TOOLS: usize = 256;
/// Permission, question and host tool waits a turn keeps open at most.
pub const MAX_WAITS: usize = 256;

/// A session's span state: the running turn's span and its open tool spans.
#[derive(Debug)]
pub struct SessionSpans {
    tracer: SdkTracer,
    capture: bool,
    session_id: String,
    agent: String,
    model: Option<String>,
    /// The caller's span for the turn about to start, by turn id.
    parent: Option<(String, TraceParent)>,
    turn: Option<Turn>,
    ended: bool,
}

/// A running turn's span.
#[derive(Debug)]
struct Turn {
    id: String,
    span: Span,
    /// The turn span as its children's parent.
    context: Context,
    tools: HashMap<String, Tool>,
    waits: Waits,
    /// The last `error` event's type.
    error: Option<&'static str>,
    input: Option<String>,
    output: Vec<String>,
    output_bytes: usize,
}

/// An open tool span.
#[derive(Debug)]
struct Tool {
    span: Span,
    arguments: Option<String>,
}

impl SessionSpans {
    /// The spans of session `session_id` of `agent` (its `model`, when known); with
    /// `capture`, spans carry content.
    pub fn new(
        tracer: SdkTracer,
        capture: bool,
        session_id: &str,
        agent: &str,
        model: Option<&str>,
    ) -> Self {
        Self {
            tracer,
            capture,
            session_id: session_id.to_string(),
            agent: agent.to_string(),
            model: model.map(str::to_string),
            parent: None,
            turn: None,
            ended: false,
        }
    }

    /// The caller's span for turn `turn_id`, whose `turnStarted` comes next; only that
    /// turn takes it.
    pub fn parent_turn(&mut self, turn_id: &str, parent: TraceParent) {
        self.parent = Some((turn_id.to_string(), parent));
    }

    /// Takes one event of the session's log.
    pub fn observe(&mut self, event: &UniversalEvent) {
        if self.ended {
            return;
        }
        let at = SystemTime::from(event.time);
        match &event.payload {
            EventPayload::SessionStarted(started) => {
                self.agent = started.agent.as_str().to_string();
                if started.model.is_some() {
                    self.model.clone_from(&started.model);
                }
            }
            EventPayload::SessionHandedOver(handover) => {
                self.agent = handover.to_agent.as_str().to_string();
                self.model.clone_from(&handover.model);
            }
            EventPayload::TurnStarted(started) => self.start_turn(&started.turn_id, at),
            EventPayload::TurnEnded(ended) => {
                if let Some(turn) = self.turn.take() {
                    turn.end(ended, event.native_session_id.as_deref(), at, self.capture);
                }
            }
            EventPayload::SessionEnded(_) => {
                self.close("sessionEnded", at);
                self.ended = true;
            }
            payload => {
                if let Some(turn) = &mut self.turn {
                    turn.observe(payload, at, &self.tracer, self.capture);
                }
            }
        }
    }

    /// Ends what is open at `at`, as failed for `reason` (the session ended or was let
    /// go with a turn running).
    pub fn close(&mut self, reason: &'static str, at: SystemTime) {
        self.parent = None;
        if let Some(turn) = self.turn.take() {
            turn.abort(reason, at);
        }
    }

    fn start_turn(&mut self, turn_id: &str, at: SystemTime) {
        if let Some(turn) = self.turn.take() {
            turn.abort("superseded", at);
        }
        let parent = match self.parent.take() {
            Some((id, parent)) if id == turn_id => remote(&parent),
            _ => Context::new(),
        };
        let mut attributes = vec![
            KeyValue::new(key::OPERATION, "invoke_agent"),
            KeyValue::new(key::AGENT_NAME, self.agent.clone()),
            KeyValue::new(key::CONVERSATION_ID, self.session_id.clone()),
            KeyValue::new(key::SESSION_ID, self.session_id.clone()),
            KeyValue::new(key::TURN_ID, turn_id.to_string()),
        ];
        if let Some(model) = &self.model {
            attributes.push(KeyValue::new(key::REQUEST_MODEL, model.clone()));
        }
        let span = self.tracer.build_with_context(
            SpanBuilder::from_name(format!("invoke_agent {}", self.agent))
                .with_kind(SpanKind::Client)
                .with_start_time(at)
                .with_attributes(attributes),
            &parent,
        );
        let context = Context::new().with_remote_span_context(span.span_context().clone());
        self.turn = Some(Turn {
            id: turn_id.to_string(),
            span,
            context,
            tools: HashMap::new(),
            waits: Waits::new(MAX_WAITS),
            error: None,
            input: None,
            output: Vec::new(),
            output_bytes: 0,
        });
    }
}

impl Drop for SessionSpans {
    fn drop(&mut self) {
        self.close("unloaded", SystemTime::now());
    }
}

/// The caller's span as a parent context.
fn remote(parent: &TraceParent) -> Context {
    let state = parent
        .state
        .as_deref()
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    Context::new().with_remote_span_context(SpanContext::new(
        TraceId::from_bytes(parent.trace_id),
        SpanId::from_bytes(parent.span_id),
        TraceFlags::new(parent.flags),
        true,
        state,
    ))
}

/// A serde enum's camelCase name (`completed`, `once`, ...).
pub(super) fn wire_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "unknown".into(),
    }
}

impl Turn {
    fn observe(
        &mut self,
        payload: &EventPayload,
        at: SystemTime,
        tracer: &SdkTracer,
        capture: bool,
    ) {
        match payload {
            EventPayload::ItemStarted(e) => self.item(&e.item, false, at, tracer, capture),
            EventPayload::ItemCompleted(e) => self.item(&e.item, true, at, tracer, capture),
            EventPayload::Error(error) => {
                self.error = Some(error.kind());
                let mut attributes = vec![KeyValue::new("exception.type", error.kind())];
                if capture {
                    attributes.push(KeyValue::new(
                        "exception.message",
                        content::clip(error.message(), content::MAX_CAPTURED),
                    ));
                }
                self.span
                    .add_event_with_timestamp("exception", at, attributes);
            }
            payload => {
                if let Some(wait) = Wait::of(payload, capture) {
                    self.waits.record(wait, at, &mut self.span);
                }
            }
        }
    }

    /// An item's start or completion: the user's message and the agent's text (captured),
    /// tool calls and their results, commands.
    fn item(
        &mut self,
        item: &Item,
        completed: bool,
        at: SystemTime,
        tracer: &SdkTracer,
        capture: bool,
    ) {
        let failed = item.status == ItemStatus::Failed;
        match item.kind {
            ItemKind::Message if capture && completed => match item.role {
                Some(ItemRole::User) if self.input.is_none() => {
                    self.input = Some(content::input_messages(item));
                }
                Some(ItemRole::Assistant) => {
                    let text = item.text();
                    let room = content::MAX_OUTPUT.saturating_sub(self.output_bytes);
                    if !text.is_empty() && room > 0 {
                        let text = content::clip(&text, room);
                        self.output_bytes += text.len();
                        self.output.push(text);
                    }
                }
                _ => {}
            },
            ItemKind::ToolCall => {
                for part in &item.content {
                    if let ContentPart::ToolCall {
                        call_id,
                        name,
                        arguments,
                        mcp,
                    } = part
                    {
                        let arguments = capture.then(|| content::arguments(arguments));
                        let (name, tool_type, mut extra) = match mcp {
                            Some(mcp) => (
                                mcp.tool.as_str(),
                                "extension",
                                vec![
                                    KeyValue::new(key::MCP_SERVER, mcp.server.clone()),
                                    KeyValue::new(key::AGENT_TOOL_NAME, name.clone()),
                                ],
                            ),
                            None => (name.as_str(), "function", Vec::new()),
                        };
                        extra.push(KeyValue::new(key::ITEM_ID, item.item_id.clone()));
                        self.open(call_id, name, tool_type, extra, arguments, at, tracer);
                    }
                }
                if completed {
                    for part in &item.content {
                        match part {
                            ContentPart::ToolResult {
                                call_id,
                                output,
                                is_error,
                            } => {
                                let result =
                                    capture.then(|| content::clip(output, content::MAX_CAPTURED));
                                self.close(call_id, at, *is_error || failed, result, None);
                            }
                            ContentPart::ToolCall { call_id, .. } if failed => {
                                self.close(call_id, at, true, None, None);
                            }
                            _ => {}
                        }
                    }
                }
            }
            ItemKind::ToolResult if completed => {
                for part in &item.content {
                    if let ContentPart::ToolResult {
                        call_id,
                        output,
                        is_error,
                    } = part
                    {
                        let result = capture.then(|| content::clip(output, content::MAX_CAPTURED));
                        self.close(call_id, at, *is_error || failed, result, None);
                    }
                }
            }
            ItemKind::CommandExecution | ItemKind::FileChange => {
                let exit_code = item.content.iter().find_map(|part| match part {
                    ContentPart::CommandExecution { exit_code, .. } => *exit_code,
                    _ => None,
                });
                // The result of a tool call (the call's id as its native id) ends that call.
                let call = item
                    .native_item_id
                    .as_deref()
                    .filter(|id| self.tools.contains_key(*id));
                let key = match call {
                    Some(call) => call.to_string(),
                    None if item.kind == ItemKind::CommandExecution => {
                        let command = item.content.iter().find_map(|part| match part {
                            ContentPart::CommandExecution { command, .. } => Some(command.as_str()),
                            _ => None,
                        });
                        let arguments = command.filter(|_| capture).map(|command| {
                            content::arguments(&serde_json::json!({"command": command}))
                        });
                        let extra = vec![KeyValue::new(key::ITEM_ID, item.item_id.clone())];
                        self.open(
                            &item.item_id,
                            "shell",
                            "function",
                            extra,
                            arguments,
                            at,
                            tracer,
                        );
                        item.item_id.clone()
                    }
                    None => return,
                };
                if completed {
                    let result = capture.then(|| content::result(item)).flatten();
                    self.close(&key, at, failed, result, exit_code);
                }
            }
            _ => {}
        }
    }

    /// Opens the span of tool call `call_id` (unless open, or too many are).
    #[allow(clippy::too_many_arguments)]
    fn open(
        &mut self,
        call_id: &str,
        name: &str,
        tool_type: &'static str,
        extra: Vec<KeyValue>,
        arguments: Option<String>,
        at: SystemTime,
        tracer: &SdkTracer,
    ) {
        if let Some(open) = self.tools.get_mut(call_id) {
            // A later sighting of the call (its completion) has the final arguments.
            if arguments.is_some() {
                open.arguments = arguments;
            }
            return;
        }
        if self.tools.len() >= MAX_OPEN_TOOLS {
            return;
        }
        let mut attributes = vec![
            KeyValue::new(key::OPERATION, "execute_tool"),
            KeyValue::new(key::TOOL_NAME, name.to_string()),
            KeyValue::new(key::TOOL_CALL_ID, call_id.to_string()),
            KeyValue::new(key::TOOL_TYPE, tool_type),
            KeyValue::new(key::TURN_ID, self.id.clone()),
        ];
        attributes.extend(extra);
        let span = tracer.build_with_context(
            SpanBuilder::from_name(format!("execute_tool {name}"))
                .with_kind(SpanKind::Internal)
                .with_start_time(at)
                .with_attributes(attributes),
            &self.context,
        );
        self.tools
            .insert(call_id.to_string(), Tool { span, arguments });
    }

    /// Ends the span of tool call `call_id`, if open.
    fn close(
        &mut self,
        call_id: &str,
        at: SystemTime,
        failed: bool,
        result: Option<String>,
        exit_code: Option<i32>,
    ) {
        if let Some(tool) = self.tools.remove(call_id) {
            tool.end(at, failed.then_some("tool_error"), result, exit_code);
        }
    }

    /// Ends the turn as `turnEnded` says, at its time.
    fn end(mut self, ended: &TurnEnded, native: Option<&str>, at: SystemTime, capture: bool) {
        let finished = matches!(
            ended.stop_reason,
            StopReason::Completed | StopReason::ToolStop
        );
        for (_, tool) in self.tools.drain() {
            tool.end(at, (!finished).then_some("turn_ended"), None, None);
        }
        let stop = wire_name(&ended.stop_reason);
        let span = &mut self.span;
        span.set_attribute(KeyValue::new(
            key::FINISH_REASONS,
            Value::Array(Array::String(vec![StringValue::from(stop.clone())])),
        ));
        if let Some(usage) = &ended.usage {
            let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            span.set_attribute(KeyValue::new(key::INPUT_TOKENS, count(usage.input_tokens)));
            span.set_attribute(KeyValue::new(
                key::OUTPUT_TOKENS,
                count(usage.output_tokens),
            ));
            let optional = [
                (key::CACHE_READ_TOKENS, usage.cached_input_tokens),
                (key::CACHE_CREATION_TOKENS, usage.cache_write_tokens),
                (key::REASONING_TOKENS, usage.reasoning_tokens),
            ];
            for (name, value) in optional {
                if let Some(value) = value {
                    span.set_attribute(KeyValue::new(name, count(value)));
                }
            }
            if let Some(cost) = usage.total_cost_usd {
                span.set_attribute(KeyValue::new(key::COST_USD, cost));
            }
        }
        if let Some(changes) = &ended.changes {
            let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            span.set_attribute(KeyValue::new(key::CHANGES_ADDED, count(changes.added)));
            span.set_attribute(KeyValue::new(
                key::CHANGES_MODIFIED,
                count(changes.modified),
            ));
            span.set_attribute(KeyValue::new(key::CHANGES_DELETED, count(changes.deleted)));
        }
        if let Some(native) = native {
            span.set_attribute(KeyValue::new(key::NATIVE_SESSION_ID, native.to_string()));
        }
        if capture {
            if let Some(input) = self.input.take() {
                span.set_attribute(KeyValue::new(key::INPUT_MESSAGES, input));
            }
            let output = content::output_messages(&self.output, &stop);
            span.set_attribute(KeyValue::new(key::OUTPUT_MESSAGES, output));
        }
        // Failed: by its stop reason, or cut short after an error (a crash, a shutdown).
        let failed = ended.stop_reason == StopReason::Error || (!finished && self.error.is_some());
        if failed {
            let error = self.error.unwrap_or("error");
            span.set_attribute(KeyValue::new(key::ERROR_TYPE, error));
            span.set_status(Status::error(error));
        }
        span.end_with_timestamp(at);
    }

    /// Ends the turn without its `turnEnded`, as failed for `reason`.
    fn abort(mut self, reason: &'static str, at: SystemTime) {
        for (_, tool) in self.tools.drain() {
            tool.end(at, Some(reason), None, None);
        }
        self.span
            .set_attribute(KeyValue::new(key::ERROR_TYPE, reason));
        self.span.set_status(Status::error(reason));
        self.span.end_with_timestamp(at);
    }
}

impl Tool {
    fn end(
        mut self,
        at: SystemTime,
        error: Option<&'static str>,
        result: Option<String>,
        exit_code: Option<i32>,
    ) {
        if let Some(arguments) = self.arguments.take() {
            self.span
                .set_attribute(KeyValue::new(key::TOOL_ARGUMENTS, arguments));
        }
        if let Some(result) = result {
            self.span
                .set_attribute(KeyValue::new(key::TOOL_RESULT, result));
        }
        if let Some(code) = exit_code {
            self.span
                .set_attribute(KeyValue::new(key::EXIT_CODE, i64::from(code)));
        }
        if let Some(error) = error {
            self.span
                .set_attribute(KeyValue::new(key::ERROR_TYPE, error));
            self.span.set_status(Status::error(error));
        }
        self.span.end_with_timestamp(at);
    }
}
