//! The converter, event by event: what each universal event becomes, and the rules a UI
//! message stream must keep (a part exists before its input, an input before an approval
//! or an output, nothing after an output, every part closed by the end).

use sandbox_universal::{
    AgentError, ContentPart, EventPayload, EventSource, FileChangeKind, Item, ItemDelta, ItemEvent,
    ItemKind, ItemRole, ItemStatus, PermissionKind, PermissionOutcome, PermissionRequest,
    PermissionResolved, Question, QuestionOutcome, QuestionRequest, QuestionResolved, StopReason,
    ToolCallOutcome, ToolCallRequest, ToolCallResolved, TurnEnded, TurnStarted, UniversalEvent,
    Usage,
};
use serde_json::{Value, json};

use super::*;

const TURN: &str = "turn_1";

fn event(payload: EventPayload) -> UniversalEvent {
    UniversalEvent {
        sequence: 1,
        time: chrono::Utc::now(),
        session_id: "s".into(),
        native_session_id: None,
        source: EventSource::Agent,
        synthetic: false,
        payload,
        raw: None,
    }
}

fn started(turn: &str) -> EventPayload {
    EventPayload::TurnStarted(TurnStarted {
        turn_id: turn.into(),
    })
}

fn ended(reason: StopReason) -> EventPayload {
    EventPayload::TurnEnded(TurnEnded {
        turn_id: TURN.into(),
        stop_reason: reason,
        usage: Some(Usage {
            input_tokens: 3,
            output_tokens: 5,
            ..Usage::default()
        }),
        changes: None,
    })
}

fn item_started(item: &Item) -> EventPayload {
    EventPayload::ItemStarted(ItemEvent {
        item: Item {
            status: ItemStatus::InProgress,
            ..item.clone()
        },
    })
}

fn item_completed(item: &Item) -> EventPayload {
    EventPayload::ItemCompleted(ItemEvent { item: item.clone() })
}

fn delta(id: &str, text: &str) -> EventPayload {
    EventPayload::ItemDelta(ItemDelta {
        item_id: id.into(),
        delta: text.into(),
    })
}

fn message(id: &str, role: ItemRole, text: &str) -> Item {
    Item::new(id, ItemKind::Message, ItemStatus::Completed)
        .with_role(role)
        .with_content(ContentPart::Text { text: text.into() })
}

fn command(id: &str, status: ItemStatus, output: Option<&str>, exit: Option<i32>) -> Item {
    Item::new(id, ItemKind::CommandExecution, status).with_content(ContentPart::CommandExecution {
        command: "echo hi".into(),
        cwd: Some("/w".into()),
        output: output.map(Into::into),
        exit_code: exit,
    })
}

fn permission(id: &str, item: Option<&str>) -> PermissionRequest {
    PermissionRequest {
        permission_id: id.into(),
        kind: PermissionKind::Command,
        title: "Run `echo hi`".into(),
        item_id: item.map(Into::into),
        tool: Some("shell".into()),
        command: Some("echo hi".into()),
        paths: Vec::new(),
        plan: None,
        input: Some(json!({"command": "echo hi"})),
        always_scope: None,
        mcp: None,
    }
}

fn resolved(id: &str, outcome: PermissionOutcome) -> EventPayload {
    EventPayload::PermissionResolved(PermissionResolved {
        permission_id: id.into(),
        outcome,
        automatic: false,
        request: None,
    })
}

/// The chunks of a turn made of `payloads` (its `turnStarted` first), as JSON.
fn run(payloads: Vec<EventPayload>) -> Vec<Value> {
    let mut converter = TurnConverter::new(TURN);
    let mut all = vec![started(TURN)];
    all.extend(payloads);
    all.into_iter()
        .flat_map(|p| converter.convert(&event(p)))
        .map(|c| serde_json::to_value(c).unwrap())
        .collect()
}

/// The `type`s of some chunks.
fn types(chunks: &[Value]) -> Vec<&str> {
    chunks.iter().map(|c| c["type"].as_str().unwrap()).collect()
}

#[test]
fn a_text_turn_streams_its_deltas_and_finishes_with_its_metadata() {
    let assistant = message("itm_2", ItemRole::Assistant, "hello");
    let chunks = run(vec![
        item_started(&message("itm_1", ItemRole::User, "hi")),
        item_completed(&message("itm_1", ItemRole::User, "hi")),
        item_started(&message("itm_2", ItemRole::Assistant, "")),
        delta("itm_2", "hel"),
        delta("itm_2", "lo"),
        item_completed(&assistant),
        ended(StopReason::Completed),
    ]);
    assert_eq!(
        chunks,
        vec![
            json!({"type": "start", "messageId": "msg_turn_1", "messageMetadata": {"turnId": TURN}}),
            json!({"type": "start-step"}),
            json!({"type": "text-start", "id": "itm_2"}),
            json!({"type": "text-delta", "id": "itm_2", "delta": "hel"}),
            json!({"type": "text-delta", "id": "itm_2", "delta": "lo"}),
            json!({"type": "text-end", "id": "itm_2"}),
            json!({"type": "finish-step"}),
            json!({"type": "finish", "finishReason": "stop", "messageMetadata": {
                "turnId": TURN, "stopReason": "completed",
                "usage": {"inputTokens": 3, "outputTokens": 5}
            }}),
        ]
    );
}

#[test]
fn an_item_completed_without_deltas_sends_its_text_once() {
    let chunks = run(vec![
        item_completed(&message("itm_2", ItemRole::Assistant, "all at once")),
        item_completed(&message("itm_2", ItemRole::Assistant, "all at once")),
    ]);
    assert_eq!(
        chunks[2..],
        [
            json!({"type": "text-start", "id": "itm_2"}),
            json!({"type": "text-delta", "id": "itm_2", "delta": "all at once"}),
            json!({"type": "text-end", "id": "itm_2"}),
        ]
    );
    // Deltas, then a final text that goes further: only the rest is sent.
    let chunks = run(vec![
        item_started(&message("itm_2", ItemRole::Assistant, "")),
        delta("itm_2", "ab"),
        item_completed(&message("itm_2", ItemRole::Assistant, "abc")),
    ]);
    assert_eq!(
        chunks[4],
        json!({"type": "text-delta", "id": "itm_2", "delta": "c"})
    );
}

#[test]
fn reasoning_is_a_reasoning_part() {
    let thought = Item::new("itm_3", ItemKind::Reasoning, ItemStatus::Completed)
        .with_content(ContentPart::Reasoning { text: "hm".into() });
    let chunks = run(vec![
        item_started(&Item::new(
            "itm_3",
            ItemKind::Reasoning,
            ItemStatus::InProgress,
        )),
        delta("itm_3", "hm"),
        item_completed(&thought),
    ]);
    assert_eq!(
        types(&chunks[2..]),
        ["reasoning-start", "reasoning-delta", "reasoning-end"]
    );
    assert_eq!(chunks[3]["delta"], "hm");
}

#[test]
fn a_tool_call_and_its_result_are_one_dynamic_provider_executed_part() {
    let call = Item::new("itm_4", ItemKind::ToolCall, ItemStatus::Completed).with_content(
        ContentPart::ToolCall {
            call_id: "c1".into(),
            name: "search".into(),
            arguments: json!({"q": "x"}),
            mcp: None,
        },
    );
    let result = Item::new("itm_5", ItemKind::ToolResult, ItemStatus::Completed).with_content(
        ContentPart::ToolResult {
            call_id: "c1".into(),
            output: "found".into(),
            is_error: false,
        },
    );
    let chunks = run(vec![
        item_started(&call),
        item_completed(&call),
        item_started(&result),
        item_completed(&result),
    ]);
    assert_eq!(
        chunks[2..],
        [
            json!({"type": "tool-input-start", "toolCallId": "itm_4", "toolName": "search", "providerExecuted": true, "dynamic": true}),
            json!({"type": "tool-input-available", "toolCallId": "itm_4", "toolName": "search", "input": {"q": "x"}, "providerExecuted": true, "dynamic": true}),
            json!({"type": "tool-output-available", "toolCallId": "itm_4", "output": "found", "providerExecuted": true, "dynamic": true}),
        ]
    );
    // A failed result is the call's error.
    let failed = Item {
        status: ItemStatus::Failed,
        content: vec![ContentPart::ToolResult {
            call_id: "c1".into(),
            output: "boom".into(),
            is_error: true,
        }],
        ..result
    };
    let chunks = run(vec![item_completed(&call), item_completed(&failed)]);
    assert_eq!(chunks.last().unwrap()["type"], "tool-output-error");
    assert_eq!(chunks.last().unwrap()["errorText"], "boom");
}

#[test]
fn an_approved_command_asks_on_its_own_part_then_outputs_its_exit_code() {
    let running = command("itm_6", ItemStatus::InProgress, None, None);
    let done = command("itm_6", ItemStatus::Completed, Some("hi\n"), Some(0));
    let chunks = run(vec![
        item_started(&running),
        EventPayload::PermissionAsked(permission("perm_1", Some("itm_6"))),
        resolved("perm_1", PermissionOutcome::Once),
        delta("itm_6", "hi\n"),
        item_completed(&done),
    ]);
    assert_eq!(
        types(&chunks[2..]),
        [
            "tool-input-start",
            "tool-input-available",
            "tool-approval-request",
            "tool-approval-response",
            "tool-output-available"
        ]
    );
    assert_eq!(chunks[2]["toolName"], COMMAND_TOOL);
    assert_eq!(
        chunks[3]["input"],
        json!({"command": "echo hi", "cwd": "/w"})
    );
    let request = &chunks[4];
    assert_eq!(request["approvalId"], "perm_1");
    assert_eq!(request["toolCallId"], "itm_6");
    assert_eq!(request["reason"], "Run `echo hi`");
    assert_eq!(request["approvalDescriptor"]["permissionId"], "perm_1");
    assert!(request.get("isAutomatic").is_none());
    assert_eq!(
        chunks[5],
        json!({"type": "tool-approval-response", "approvalId": "perm_1", "approved": true, "reason": "once"})
    );
    assert_eq!(
        chunks[6]["output"],
        json!({"exitCode": 0, "output": "hi\n"})
    );
}

#[test]
fn a_rejected_permission_denies_the_part_and_nothing_follows() {
    let running = command("itm_6", ItemStatus::InProgress, None, None);
    let failed = command("itm_6", ItemStatus::Failed, Some("denied"), None);
    let chunks = run(vec![
        item_started(&running),
        EventPayload::PermissionAsked(permission("perm_1", Some("itm_6"))),
        resolved("perm_1", PermissionOutcome::Reject),
        item_completed(&failed),
        ended(StopReason::Completed),
    ]);
    assert_eq!(
        types(&chunks[4..]),
        [
            "tool-approval-request",
            "tool-approval-response",
            "tool-output-denied",
            "finish-step",
            "finish"
        ]
    );
    assert_eq!(chunks[5]["approved"], false);
    assert_eq!(chunks[6]["toolCallId"], "itm_6");
}

#[test]
fn a_permission_without_an_item_gets_a_part_of_its_own() {
    let chunks = run(vec![
        EventPayload::PermissionAsked(permission("perm_2", None)),
        resolved("perm_2", PermissionOutcome::Always),
    ]);
    assert_eq!(
        types(&chunks[2..]),
        [
            "tool-input-start",
            "tool-input-available",
            "tool-approval-request",
            "tool-approval-response",
            "tool-output-available"
        ]
    );
    assert_eq!(chunks[2]["toolCallId"], "perm_2");
    assert_eq!(chunks[2]["toolName"], "shell");
    assert_eq!(chunks[3]["input"], json!({"command": "echo hi"}));
    assert_eq!(chunks[4]["toolCallId"], "perm_2");
    assert_eq!(chunks[6]["output"], json!({"outcome": "always"}));
    // A request the daemon resolved by itself: asked and answered at once, automatically.
    let chunks = run(vec![EventPayload::PermissionResolved(PermissionResolved {
        permission_id: "perm_3".into(),
        outcome: PermissionOutcome::Reject,
        automatic: true,
        request: Some(permission("perm_3", None)),
    })]);
    assert_eq!(
        types(&chunks[2..]),
        [
            "tool-input-start",
            "tool-input-available",
            "tool-approval-request",
            "tool-approval-response",
            "tool-output-denied"
        ]
    );
    assert_eq!(chunks[4]["isAutomatic"], true);
}

#[test]
fn a_question_is_a_data_part_replaced_by_its_resolution() {
    let request = QuestionRequest {
        question_id: "q_1".into(),
        questions: vec![Question {
            question: "Color?".into(),
            header: None,
            options: Vec::new(),
            multi_select: false,
            allow_custom: true,
        }],
        item_id: None,
    };
    let chunks = run(vec![
        EventPayload::QuestionAsked(request),
        EventPayload::QuestionResolved(QuestionResolved {
            question_id: "q_1".into(),
            outcome: QuestionOutcome::Answered,
            answers: Some(vec![vec!["Red".into()]]),
        }),
    ]);
    assert_eq!(chunks[2]["type"], "data-question");
    assert_eq!(chunks[2]["id"], "q_1");
    assert_eq!(chunks[2]["data"]["status"], "pending");
    assert_eq!(chunks[2]["data"]["questions"][0]["question"], "Color?");
    assert_eq!(chunks[3]["type"], "data-question");
    assert_eq!(chunks[3]["id"], "q_1");
    assert_eq!(chunks[3]["data"]["status"], "answered");
    assert_eq!(chunks[3]["data"]["answers"], json!([["Red"]]));
    assert_eq!(
        chunks[3]["data"]["questions"], chunks[2]["data"]["questions"],
        "the resolution keeps the questions (the part's data is replaced)"
    );
}

#[test]
fn a_cancelled_turn_closes_what_is_open_and_aborts() {
    let chunks = run(vec![
        item_started(&message("itm_2", ItemRole::Assistant, "")),
        delta("itm_2", "par"),
        item_started(&command("itm_3", ItemStatus::InProgress, None, None)),
        ended(StopReason::Cancelled),
        item_started(&message("itm_9", ItemRole::Assistant, "late")),
    ]);
    assert_eq!(
        types(&chunks[2..]),
        [
            "text-start",
            "text-delta",
            "tool-input-start",
            "tool-input-available",
            "text-end",
            "tool-output-error",
            "finish-step",
            "message-metadata",
            "abort"
        ]
    );
    assert_eq!(chunks[9]["messageMetadata"]["stopReason"], "cancelled");
    assert_eq!(chunks[10], json!({"type": "abort", "reason": "cancelled"}));
}

#[test]
fn only_the_turns_own_events_count() {
    let mut converter = TurnConverter::new(TURN);
    let before = converter.convert(&event(item_started(&message(
        "itm_0",
        ItemRole::Assistant,
        "earlier",
    ))));
    assert!(before.is_empty(), "nothing before the turn's start");
    assert!(converter.convert(&event(started("turn_2"))).is_empty());
    assert_eq!(converter.convert(&event(started(TURN))).len(), 2);
    let other_end = EventPayload::TurnEnded(TurnEnded {
        turn_id: "turn_2".into(),
        stop_reason: StopReason::Completed,
        usage: None,
        changes: None,
    });
    assert!(converter.convert(&event(other_end)).is_empty());
    assert!(!converter.is_done());
    let unknown = EventPayload::Unknown(sandbox_universal::UnknownEvent {
        reason: sandbox_universal::UnknownReason::Unreadable,
        schema_version: 99,
        stored_type: "future".into(),
        stored: json!({"x": 1}),
        error: None,
    });
    assert!(converter.convert(&event(unknown)).is_empty(), "skipped");
    let last = converter.convert(&event(ended(StopReason::Completed)));
    assert!(matches!(last.last(), Some(UiChunk::Finish { .. })));
    assert!(converter.is_done());
    assert!(
        converter
            .convert(&event(delta("itm_2", "after")))
            .is_empty()
    );
}

#[test]
fn host_tool_calls_file_changes_and_errors() {
    let change = Item::new("itm_7", ItemKind::FileChange, ItemStatus::Completed).with_content(
        ContentPart::FileChange {
            path: "/w/a.txt".into(),
            change_kind: FileChangeKind::Add,
            diff: Some("+a\n".into()),
        },
    );
    let chunks = run(vec![
        EventPayload::ToolCallRequested(ToolCallRequest {
            call_id: "call_1".into(),
            item_id: None,
            tool: "lookup".into(),
            input: json!({"id": 7}),
        }),
        EventPayload::ToolCallResolved(ToolCallResolved {
            call_id: "call_1".into(),
            outcome: ToolCallOutcome::Rejected,
        }),
        item_started(&change),
        item_completed(&change),
        EventPayload::Error(AgentError::protocol("bad line")),
        ended(StopReason::Error),
    ]);
    assert_eq!(
        chunks[2],
        json!({"type": "tool-input-start", "toolCallId": "call_1", "toolName": "lookup", "dynamic": true}),
        "the client runs a host tool: not providerExecuted"
    );
    assert_eq!(chunks[3]["input"], json!({"id": 7}));
    assert_eq!(chunks[4]["type"], "tool-output-error");
    assert_eq!(chunks[5]["toolName"], FILE_CHANGE_TOOL);
    assert_eq!(chunks[5]["title"], "/w/a.txt");
    let changes = json!({"changes": [{"path": "/w/a.txt", "changeKind": "add", "diff": "+a\n"}]});
    assert_eq!(chunks[6]["input"], changes);
    assert_eq!(chunks[7]["output"], changes);
    assert_eq!(chunks[8]["type"], "error");
    assert!(
        chunks[8]["errorText"]
            .as_str()
            .unwrap()
            .contains("bad line")
    );
    assert_eq!(chunks[10]["finishReason"], "error");
}

#[test]
fn finish_reasons() {
    let cases = [
        (StopReason::Completed, "stop"),
        (StopReason::MaxTokens, "length"),
        (StopReason::ToolStop, "tool-calls"),
        (StopReason::Error, "error"),
        (StopReason::MaxTurns, "other"),
        (StopReason::MaxBudget, "other"),
    ];
    for (reason, expected) in cases {
        assert_eq!(json!(finish_reason(reason)), json!(expected), "{reason:?}");
    }
}

#[test]
fn frames_are_sse_data_lines() {
    let chunk = UiChunk::TextDelta {
        id: "a".into(),
        delta: "line\nbreak".into(),
    };
    assert_eq!(
        chunk.frame(),
        "data: {\"type\":\"text-delta\",\"id\":\"a\",\"delta\":\"line\\nbreak\"}\n\n"
    );
    assert_eq!(DONE_FRAME, "data: [DONE]\n\n");
}
