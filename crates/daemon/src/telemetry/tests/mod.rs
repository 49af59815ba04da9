//! The span builder against an in-memory exporter: events in, spans out.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use chrono::{DateTime, TimeZone, Utc};
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId};
use opentelemetry::{Array, Key, Value};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use sandbox_universal::{
    AgentError, AgentId, ContentPart, EventPayload, EventSource, Item, ItemEvent, ItemKind,
    ItemRole, ItemStatus, McpToolRef, PermissionKind, PermissionOutcome, PermissionRequest,
    PermissionResolved, Question, QuestionOutcome, QuestionRequest, QuestionResolved,
    SessionEndReason, SessionEnded, SessionStarted, StopReason, TurnEnded, TurnStarted,
    UniversalEvent, Usage,
};
use serde_json::json;

use super::keys as key;
use super::spans::MAX_OPEN_TOOLS;
use super::waits::WAIT_DURATION;
use super::{EventObserver, Telemetry, TraceParent};

mod lifecycle;

/// Spans as the SDK hands them to an exporter.
#[derive(Debug, Clone, Default)]
struct Collected(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collected {
    fn export(
        &self,
        batch: Vec<SpanData>,
    ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        self.0.lock().unwrap().extend(batch);
        std::future::ready(Ok(()))
    }
}

impl Collected {
    fn spans(&self) -> Vec<SpanData> {
        self.0.lock().unwrap().clone()
    }

    fn named(&self, name: &str) -> Vec<SpanData> {
        self.spans()
            .into_iter()
            .filter(|s| s.name == name)
            .collect()
    }
}

/// A session's observer whose spans end up in the returned collection.
fn observer(capture: bool) -> (Box<dyn EventObserver>, Collected) {
    let collected = Collected::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(collected.clone())
        .build();
    let telemetry = Telemetry::with_provider(provider, capture);
    (
        telemetry.observer("s1", AgentId::Mock, Some("mock-model")),
        collected,
    )
}

fn time(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(1_700_000_000_000 + ms).unwrap()
}

/// Feeds events to an observer, numbered in order, each at its own time.
struct Feed<'a> {
    observer: &'a dyn EventObserver,
    sequence: u64,
}

impl Feed<'_> {
    fn at(&mut self, ms: i64, payload: EventPayload) {
        self.sequence += 1;
        self.observer.observe(&UniversalEvent {
            sequence: self.sequence,
            time: time(ms),
            session_id: "s1".into(),
            native_session_id: Some("native-1".into()),
            source: EventSource::Agent,
            synthetic: false,
            payload,
            raw: None,
        });
    }
}

fn attr(span: &SpanData, name: &str) -> Option<Value> {
    let key = Key::from(name.to_string());
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .map(|kv| kv.value.clone())
}

fn text(span: &SpanData, name: &str) -> String {
    attr(span, name)
        .map(|v| v.as_str().into_owned())
        .unwrap_or_else(|| panic!("{} has no {name}: {:?}", span.name, span.attributes))
}

fn user(text: &str) -> EventPayload {
    let item = Item::new("itm_1", ItemKind::Message, ItemStatus::Completed)
        .with_role(ItemRole::User)
        .with_content(ContentPart::Text { text: text.into() });
    EventPayload::ItemCompleted(ItemEvent { item })
}

fn assistant(text: &str) -> EventPayload {
    let item = Item::new("itm_9", ItemKind::Message, ItemStatus::Completed)
        .with_role(ItemRole::Assistant)
        .with_content(ContentPart::Text { text: text.into() });
    EventPayload::ItemCompleted(ItemEvent { item })
}

fn call(item: &str, call_id: &str, status: ItemStatus) -> Item {
    Item::new(item, ItemKind::ToolCall, status).with_content(ContentPart::ToolCall {
        call_id: call_id.into(),
        name: "mock_search".into(),
        arguments: json!({"query": "secret query"}),
        mcp: None,
    })
}

fn result(call_id: &str, is_error: bool) -> EventPayload {
    let item = Item::new("itm_r", ItemKind::ToolResult, ItemStatus::Completed).with_content(
        ContentPart::ToolResult {
            call_id: call_id.into(),
            output: "secret result".into(),
            is_error,
        },
    );
    EventPayload::ItemCompleted(ItemEvent { item })
}

fn command(status: ItemStatus) -> Item {
    Item::new("itm_c", ItemKind::CommandExecution, status).with_content(
        ContentPart::CommandExecution {
            command: "echo permitted".into(),
            cwd: None,
            output: (status != ItemStatus::InProgress).then(|| "permitted".into()),
            exit_code: (status != ItemStatus::InProgress).then_some(0),
        },
    )
}

fn started(turn: &str) -> EventPayload {
    EventPayload::TurnStarted(TurnStarted {
        turn_id: turn.into(),
    })
}

fn ended(turn: &str, stop_reason: StopReason) -> EventPayload {
    EventPayload::TurnEnded(TurnEnded {
        turn_id: turn.into(),
        stop_reason,
        usage: Some(Usage {
            input_tokens: 12,
            output_tokens: 34,
            cached_input_tokens: Some(5),
            ..Usage::default()
        }),
        changes: None,
    })
}

/// A turn with a tool call and its result, a command asking permission, and a question.
fn full_turn(feed: &mut Feed<'_>) {
    feed.at(0, started("turn_1"));
    feed.at(1, user("hello secret"));
    feed.at(
        10,
        EventPayload::ItemStarted(ItemEvent {
            item: call("itm_2", "call_1", ItemStatus::InProgress),
        }),
    );
    feed.at(
        15,
        EventPayload::ItemCompleted(ItemEvent {
            item: call("itm_2", "call_1", ItemStatus::Completed),
        }),
    );
    feed.at(30, result("call_1", false));
    feed.at(
        40,
        EventPayload::ItemStarted(ItemEvent {
            item: command(ItemStatus::InProgress),
        }),
    );
    feed.at(
        41,
        EventPayload::PermissionAsked(PermissionRequest {
            permission_id: "perm_1".into(),
            kind: PermissionKind::Command,
            title: "Run `echo permitted`".into(),
            item_id: Some("itm_c".into()),
            tool: Some("shell".into()),
            command: Some("echo permitted".into()),
            paths: Vec::new(),
            plan: None,
            input: None,
            always_scope: None,
            mcp: None,
        }),
    );
    feed.at(
        541,
        EventPayload::PermissionResolved(PermissionResolved {
            permission_id: "perm_1".into(),
            outcome: PermissionOutcome::Once,
            automatic: false,
            request: None,
        }),
    );
    feed.at(
        550,
        EventPayload::ItemCompleted(ItemEvent {
            item: command(ItemStatus::Completed),
        }),
    );
    feed.at(
        600,
        EventPayload::QuestionAsked(QuestionRequest {
            question_id: "q_1".into(),
            questions: vec![Question {
                question: "secret question?".into(),
                header: None,
                options: Vec::new(),
                multi_select: false,
                allow_custom: true,
            }],
            item_id: None,
        }),
    );
    feed.at(
        850,
        EventPayload::QuestionResolved(QuestionResolved {
            question_id: "q_1".into(),
            outcome: QuestionOutcome::Answered,
            answers: Some(vec![vec!["secret answer".into()]]),
        }),
    );
    feed.at(900, assistant("echo: secret reply"));
    feed.at(1000, ended("turn_1", StopReason::Completed));
}

#[test]
fn a_turn_is_a_span_with_its_tools_as_children() {
    let (observer, collected) = observer(false);
    let mut feed = Feed {
        observer: &*observer,
        sequence: 0,
    };
    full_turn(&mut feed);
    let turn = collected
        .named("invoke_agent mock")
        .pop()
        .expect("the turn's span");
    assert_eq!(turn.span_kind, SpanKind::Client);
    assert_eq!(turn.start_time, SystemTime::from(time(0)));
    assert_eq!(turn.end_time, SystemTime::from(time(1000)));
    assert_eq!(turn.parent_span_id, SpanId::INVALID);
    assert_eq!(text(&turn, key::OPERATION), "invoke_agent");
    assert_eq!(text(&turn, key::AGENT_NAME), "mock");
    assert_eq!(text(&turn, key::CONVERSATION_ID), "s1");
    assert_eq!(text(&turn, key::SESSION_ID), "s1");
    assert_eq!(text(&turn, key::TURN_ID), "turn_1");
    assert_eq!(text(&turn, key::REQUEST_MODEL), "mock-model");
    assert_eq!(text(&turn, key::NATIVE_SESSION_ID), "native-1");
    assert_eq!(attr(&turn, key::INPUT_TOKENS), Some(Value::I64(12)));
    assert_eq!(attr(&turn, key::OUTPUT_TOKENS), Some(Value::I64(34)));
    assert_eq!(attr(&turn, key::CACHE_READ_TOKENS), Some(Value::I64(5)));
    assert_eq!(
        attr(&turn, key::FINISH_REASONS),
        Some(Value::Array(Array::String(vec!["completed".into()])))
    );
    assert_eq!(turn.status, Status::Unset);

    let tool = collected
        .named("execute_tool mock_search")
        .pop()
        .expect("the tool's span");
    assert_eq!(tool.parent_span_id, turn.span_context.span_id());
    assert_eq!(tool.span_context.trace_id(), turn.span_context.trace_id());
    assert_eq!(tool.start_time, SystemTime::from(time(10)));
    assert_eq!(
        tool.end_time,
        SystemTime::from(time(30)),
        "ends with its result"
    );
    assert_eq!(text(&tool, key::OPERATION), "execute_tool");
    assert_eq!(text(&tool, key::TOOL_CALL_ID), "call_1");
    assert_eq!(text(&tool, key::TOOL_TYPE), "function");
    let shell = collected
        .named("execute_tool shell")
        .pop()
        .expect("the command's span");
    assert_eq!(shell.parent_span_id, turn.span_context.span_id());
    assert_eq!(
        (shell.start_time, shell.end_time),
        (SystemTime::from(time(40)), SystemTime::from(time(550)))
    );
    assert_eq!(attr(&shell, key::EXIT_CODE), Some(Value::I64(0)));

    let events: Vec<&str> = turn.events.iter().map(|e| e.name.as_ref()).collect();
    assert_eq!(
        events,
        [
            "sandbox.permission.asked",
            "sandbox.permission.resolved",
            "sandbox.question.asked",
            "sandbox.question.resolved"
        ]
    );
    let resolved = &turn.events[1];
    let waited = resolved
        .attributes
        .iter()
        .find(|kv| kv.key.as_str() == WAIT_DURATION)
        .unwrap();
    assert_eq!(waited.value, Value::F64(0.5));
    assert!(
        resolved.attributes.iter().any(
            |kv| kv.key.as_str() == "sandbox.permission.outcome" && kv.value.as_str() == "once"
        )
    );
    assert_eq!(turn.events[1].timestamp, SystemTime::from(time(541)));

    // No content by default: nothing the user, the agent or a tool wrote.
    let all = format!("{:?}", collected.spans());
    assert!(!all.contains("secret"), "content leaked: {all}");
    assert!(attr(&turn, key::INPUT_MESSAGES).is_none());
}

#[test]
fn content_capture_puts_messages_and_tool_io_in_spans() {
    let (observer, collected) = observer(true);
    let mut feed = Feed {
        observer: &*observer,
        sequence: 0,
    };
    full_turn(&mut feed);
    let turn = collected.named("invoke_agent mock").pop().unwrap();
    let input: serde_json::Value = serde_json::from_str(&text(&turn, key::INPUT_MESSAGES)).unwrap();
    assert_eq!(input[0]["parts"][0]["content"], "hello secret");
    let output: serde_json::Value =
        serde_json::from_str(&text(&turn, key::OUTPUT_MESSAGES)).unwrap();
    assert_eq!(output[0]["parts"][0]["content"], "echo: secret reply");
    let tool = collected.named("execute_tool mock_search").pop().unwrap();
    assert_eq!(
        text(&tool, key::TOOL_ARGUMENTS),
        r#"{"query":"secret query"}"#
    );
    assert_eq!(text(&tool, key::TOOL_RESULT), "secret result");
    let asked = format!("{:?}", turn.events[2]);
    assert!(asked.contains("secret question?"), "{asked}");
}

#[test]
fn the_callers_span_parents_only_its_own_turn() {
    let (observer, collected) = observer(false);
    let parent =
        TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
    // Handed for turn_2 while turn_1 is about to start: turn_1 must not take it.
    observer.parent_turn("turn_2", parent.clone());
    let mut feed = Feed {
        observer: &*observer,
        sequence: 0,
    };
    feed.at(0, started("turn_1"));
    feed.at(5, ended("turn_1", StopReason::Completed));
    observer.parent_turn("turn_2", parent);
    feed.at(10, started("turn_2"));
    feed.at(15, ended("turn_2", StopReason::Completed));
    feed.at(20, started("turn_3"));
    feed.at(25, ended("turn_3", StopReason::Completed));
    let spans = collected.named("invoke_agent mock");
    let by_turn = |turn: &str| {
        spans
            .iter()
            .find(|s| text(s, key::TURN_ID) == turn)
            .unwrap()
    };
    let caller = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
    let second = by_turn("turn_2");
    assert_eq!(second.span_context.trace_id(), caller);
    assert_eq!(
        second.parent_span_id,
        SpanId::from_hex("00f067aa0ba902b7").unwrap()
    );
    assert!(second.parent_span_is_remote);
    for other in ["turn_1", "turn_3"] {
        assert_ne!(by_turn(other).span_context.trace_id(), caller, "{other}");
        assert_eq!(by_turn(other).parent_span_id, SpanId::INVALID, "{other}");
    }
}

#[test]
fn failures_are_errors() {
    let (observer, collected) = observer(false);
    let mut feed = Feed {
        observer: &*observer,
        sequence: 0,
    };
    feed.at(0, started("turn_1"));
    feed.at(
        10,
        EventPayload::ItemCompleted(ItemEvent {
            item: call("itm_2", "call_1", ItemStatus::Completed),
        }),
    );
    feed.at(20, result("call_1", true));
    feed.at(
        30,
        EventPayload::ItemStarted(ItemEvent {
            item: command(ItemStatus::InProgress),
        }),
    );
    feed.at(
        40,
        EventPayload::Error(AgentError::ProcessExited {
            message: "the agent died".into(),
            exit_code: Some(1),
            signal: None,
            stderr_tail: None,
        }),
    );
    feed.at(
        50,
        EventPayload::ItemCompleted(ItemEvent {
            item: command(ItemStatus::Failed),
        }),
    );
    feed.at(60, ended("turn_1", StopReason::Error));
    let turn = collected.named("invoke_agent mock").pop().unwrap();
    assert_eq!(text(&turn, key::ERROR_TYPE), "processExited");
    assert!(matches!(turn.status, Status::Error { .. }));
    assert_eq!(turn.events[0].name, "exception");
    for name in ["execute_tool mock_search", "execute_tool shell"] {
        let tool = collected.named(name).pop().unwrap();
        assert!(matches!(tool.status, Status::Error { .. }), "{name}");
    }
}

#[test]
fn mcp_tools_are_named_by_their_own_name() {
    let (observer, collected) = observer(false);
    let mut feed = Feed {
        observer: &*observer,
        sequence: 0,
    };
    feed.at(0, started("turn_1"));
    let item = Item::new("itm_2", ItemKind::ToolCall, ItemStatus::InProgress).with_content(
        ContentPart::ToolCall {
            call_id: "call_h".into(),
            name: "mcp__host__lookup".into(),
            arguments: json!({}),
            mcp: Some(McpToolRef {
                server: "host".into(),
                tool: "lookup".into(),
            }),
        },
    );
    feed.at(
        5,
        EventPayload::ItemStarted(ItemEvent { item: item.clone() }),
    );
    let done = Item {
        status: ItemStatus::Completed,
        ..item
    }
    .with_content(ContentPart::ToolResult {
        call_id: "call_h".into(),
        output: "found".into(),
        is_error: false,
    });
    feed.at(9, EventPayload::ItemCompleted(ItemEvent { item: done }));
    feed.at(10, ended("turn_1", StopReason::Completed));
    let tool = collected
        .named("execute_tool lookup")
        .pop()
        .expect("named by the MCP tool");
    assert_eq!(text(&tool, key::TOOL_TYPE), "extension");
    assert_eq!(text(&tool, key::MCP_SERVER), "host");
    assert_eq!(text(&tool, key::AGENT_TOOL_NAME), "mcp__host__lookup");
    assert_eq!(tool.end_time, SystemTime::from(time(9)));
}
