//! Protocol cases the recorded transcripts do not cover, through the protocol's own
//! methods as the runner calls them. The messages are shaped after the pinned
//! app-server's schema; the real-CLI cases are the recordings replayed in
//! `tests/converters/codex.rs` and the daemon's `codex_e2e` and scenario table.

use sandbox_universal::{
    AgentError, ContentPart, EventPayload, ItemKind, PermissionKind, PermissionMode,
    PermissionReply, StopReason,
};
use serde_json::{Value, json};

use super::Converter;
use super::hitl::DECLINED;
use crate::codex::launch::TurnSettings;
use crate::kernel::{Converted, Gone, LineProtocol, Outgoing, Protocol};
use crate::process::ExitInfo;
use crate::{AgentEvent, CollectingSink, EventSink, QuestionAnswer};

fn sink() -> EventSink {
    CollectingSink::new().1
}

/// A converter of a session in `mode` working in `/w`.
fn converter(mode: PermissionMode) -> Converter {
    Converter::new(TurnSettings::in_mode(mode, "/w"))
}

fn note(
    converter: &mut Converter,
    ids: &EventSink,
    method: &str,
    params: Value,
) -> Vec<AgentEvent> {
    converter
        .convert(&json!({"method": method, "params": params}), ids)
        .events
}

/// Codex asks request `id` of the client.
fn ask(
    converter: &mut Converter,
    ids: &EventSink,
    id: Value,
    method: &str,
    params: &Value,
) -> Converted<Outgoing> {
    converter.convert(&json!({"id": id, "method": method, "params": params}), ids)
}

fn line(value: Value) -> Vec<Outgoing> {
    vec![Outgoing::Line(value)]
}

fn gone(exit: ExitInfo) -> Gone {
    Gone {
        why: exit.describe(),
        exit,
    }
}

fn types(events: &[AgentEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(|e| e.payload.event_type().as_str())
        .collect()
}

fn usage(input: u64, output: u64) -> Value {
    json!({"turnId": "t-old", "tokenUsage": {"total": {
        "inputTokens": input, "cachedInputTokens": 0, "outputTokens": output,
        "reasoningOutputTokens": 0, "totalTokens": input + output}, "last": {}}})
}

#[test]
fn unknown_notifications_become_unparsed_and_ignored_ones_vanish() {
    let ids = sink();
    let mut converter = converter(PermissionMode::Default);
    let events = note(&mut converter, &ids, "thread/hologram", json!({"x": 1}));
    assert_eq!(types(&events), ["itemStarted", "itemCompleted"]);
    let EventPayload::ItemCompleted(done) = &events[1].payload else {
        unreachable!()
    };
    assert_eq!(done.item.kind, ItemKind::Unparsed);
    let ContentPart::Unparsed { raw, error } = &done.item.content[0] else {
        unreachable!()
    };
    assert_eq!(raw["method"], "thread/hologram");
    assert!(error.contains("thread/hologram"));
    assert!(
        note(
            &mut converter,
            &ids,
            "turn/diff/updated",
            json!({"diff": ""})
        )
        .is_empty()
    );
    // A known notification with malformed params is unparsed too.
    let events = note(
        &mut converter,
        &ids,
        "item/started",
        json!({"item": {"type": "x"}}),
    );
    assert_eq!(types(&events), ["itemStarted", "itemCompleted"]);
}

#[test]
fn usage_after_a_resume_counts_only_the_new_turn() {
    let ids = sink();
    let mut converter = converter(PermissionMode::Default);
    drop(converter.begin_turn("turn_5", &"hi".into()));
    // Totals restated by `thread/resume` (earlier turn) become the baseline.
    note(
        &mut converter,
        &ids,
        "thread/tokenUsage/updated",
        usage(100, 40),
    );
    note(
        &mut converter,
        &ids,
        "turn/started",
        json!({"turn": {"id": "t-new"}}),
    );
    let mut update = usage(112, 47);
    update["turnId"] = json!("t-new");
    note(&mut converter, &ids, "thread/tokenUsage/updated", update);
    let events = note(
        &mut converter,
        &ids,
        "turn/completed",
        json!({"turn": {"id": "t-new", "status": "completed", "items": []}}),
    );
    let EventPayload::TurnEnded(ended) = &events[0].payload else {
        panic!("{events:?}")
    };
    assert_eq!(ended.turn_id, "turn_5");
    let usage = ended.usage.clone().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (12, 7));
}

#[test]
fn a_dead_process_reports_and_ends_the_turn_and_leaves_items_to_the_core() {
    let ids = sink();
    let mut converter = converter(PermissionMode::Default);
    drop(converter.begin_turn("turn_1", &"hi".into()));
    converter.turn_delivered(Some(&json!({"turn": {"id": "t1"}})));
    note(
        &mut converter,
        &ids,
        "item/started",
        json!({"item": {"type": "agentMessage", "id": "m1", "text": ""}}),
    );
    let events = converter.gone(&gone(ExitInfo {
        code: None,
        signal: Some(9),
        stderr_tail: "boom".into(),
    }));
    assert_eq!(types(&events), ["error", "turnEnded"]);
    assert!(events.iter().all(|e| e.synthetic));
    assert!(matches!(
        &events[0].payload,
        EventPayload::Error(AgentError::ProcessExited { signal: Some(9), stderr_tail: Some(t), .. }) if t == "boom"
    ));
    let EventPayload::TurnEnded(ended) = &events[1].payload else {
        unreachable!()
    };
    assert_eq!(ended.stop_reason, StopReason::Error);
    assert_eq!(converter.current_turn(), None);
    // Idle: only the error.
    let events = converter.gone(&gone(ExitInfo::default()));
    assert_eq!(types(&events), ["error"]);
}

#[test]
fn a_turn_codex_never_accepted_survives_its_process_and_a_cancelled_one_ends_cancelled() {
    let mut converter = converter(PermissionMode::Default);
    drop(converter.begin_turn("turn_1", &"hi".into()));
    assert_eq!(
        types(&converter.gone(&gone(ExitInfo::default()))),
        ["error"]
    );
    assert_eq!(converter.current_turn(), Some("turn_1"), "delivered again");
    converter.turn_delivered(None);
    // Codex had not named its turn: nothing to interrupt; the watchdog kills the process.
    assert!(converter.cancel().is_empty());
    let events = converter.gone(&gone(ExitInfo::default()));
    let [event] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert!(matches!(&event.payload,
        EventPayload::TurnEnded(ended) if ended.stop_reason == StopReason::Cancelled));
}

#[test]
fn turns_start_on_the_thread_with_the_settings_and_are_interrupted_by_codex_turn_id() {
    let ids = sink();
    let mut converter = converter(PermissionMode::Plan);
    assert!(converter.cancel().is_empty(), "no turn, nothing to cancel");
    converter.set_thread("th");
    assert_eq!(
        converter.begin_turn("turn_1", &"hi".into()),
        [Outgoing::Request {
            method: "turn/start",
            params: json!({"threadId": "th", "input": [{"type": "text", "text": "hi"}],
                "approvalPolicy": "never", "sandboxPolicy": {"type": "readOnly"}}),
        }]
    );
    note(
        &mut converter,
        &ids,
        "turn/started",
        json!({"turn": {"id": "t1"}}),
    );
    assert_eq!(
        converter.cancel(),
        [Outgoing::Request {
            method: "turn/interrupt",
            params: json!({"threadId": "th", "turnId": "t1"}),
        }]
    );
    let events = note(
        &mut converter,
        &ids,
        "turn/completed",
        json!({"turn": {"id": "t1", "status": "interrupted", "items": []}}),
    );
    assert!(matches!(&events[0].payload,
        EventPayload::TurnEnded(ended) if ended.stop_reason == StopReason::Cancelled));
    assert_eq!(converter.current_turn(), None);
}

#[test]
fn requests_are_json_rpc_and_a_refusal_names_the_method() {
    let mut converter = converter(PermissionMode::Default);
    let (key, line) = converter.frame(3, "turn/start", json!({"x": 1}));
    assert_eq!(
        line,
        json!({"id": 3, "method": "turn/start", "params": {"x": 1}})
    );
    let refused = json!({"id": 3, "error": {"code": -32600, "message": "no such thread"}});
    let (answered, result) = converter.answer(&refused).unwrap();
    assert_eq!(answered, key);
    assert_eq!(
        result.unwrap_err(),
        AgentError::AgentReported {
            message: "codex rejected `turn/start`: no such thread".into(),
            code: Some("-32600".into()),
        }
    );
    assert_eq!(
        converter.answer(&json!({"id": 4, "result": {"ok": true}})),
        Some(("4".into(), Ok(json!({"ok": true}))))
    );
    // Codex's own requests and notifications are converted, not answers.
    assert_eq!(converter.answer(&json!({"id": 5, "method": "x"})), None);
    assert_eq!(converter.answer(&json!({"method": "x"})), None);
}

fn patch_item(path: &str) -> Value {
    json!({"item": {"type": "fileChange", "id": "p1", "status": "inProgress",
        "changes": [{"path": path, "kind": {"type": "update", "move_path": null}, "diff": "@@"}]}})
}

#[test]
fn accept_edits_approves_patches_inside_the_working_directory_only() {
    let ids = sink();
    let mut converter = converter(PermissionMode::AcceptEdits);
    let params = json!({"threadId": "t", "turnId": "u", "itemId": "p1", "startedAtMs": 0});
    note(
        &mut converter,
        &ids,
        "item/started",
        patch_item("/w/src/a.rs"),
    );
    let inside = ask(
        &mut converter,
        &ids,
        json!(7),
        "item/fileChange/requestApproval",
        &params,
    );
    assert!(inside.events.is_empty());
    assert_eq!(
        inside.replies,
        line(json!({"id": 7, "result": {"decision": "accept"}}))
    );

    note(
        &mut converter,
        &ids,
        "item/completed",
        json!({"item": {"type": "fileChange", "id": "p1", "status": "completed", "changes": []}}),
    );
    note(
        &mut converter,
        &ids,
        "item/started",
        patch_item("/etc/passwd"),
    );
    let outside = ask(
        &mut converter,
        &ids,
        json!(8),
        "item/fileChange/requestApproval",
        &params,
    );
    assert!(outside.replies.is_empty());
    let EventPayload::PermissionAsked(asked) = &outside.events[0].payload else {
        panic!("{outside:?}")
    };
    assert_eq!(asked.kind, PermissionKind::FileChange);
    assert_eq!(asked.paths, ["/etc/passwd"]);
    assert_eq!(
        converter
            .reply_permission(&asked.permission_id, PermissionReply::Always)
            .unwrap(),
        line(json!({"id": 8, "result": {"decision": "acceptForSession"}}))
    );
}

#[test]
fn permission_profiles_are_granted_for_the_turn_or_the_session() {
    let ids = sink();
    let mut converter = converter(PermissionMode::Default);
    let requested = json!({"network": {"enabled": true}});
    let params = json!({"threadId": "t", "turnId": "u", "itemId": "c1", "cwd": "/w",
        "startedAtMs": 0, "reason": "needs the network", "permissions": requested});
    let ask = |converter: &mut Converter, id: i64| {
        let outcome = ask(
            converter,
            &ids,
            json!(id),
            "item/permissions/requestApproval",
            &params,
        );
        let EventPayload::PermissionAsked(asked) = &outcome.events[0].payload else {
            panic!("{outcome:?}")
        };
        assert_eq!(asked.kind, PermissionKind::Network);
        assert_eq!(asked.title, "needs the network");
        asked.permission_id.clone()
    };
    let once = ask(&mut converter, 1);
    assert_eq!(
        converter
            .reply_permission(&once, PermissionReply::Once)
            .unwrap(),
        line(json!({"id": 1, "result": {"permissions": requested, "scope": "turn"}}))
    );
    let always = ask(&mut converter, 2);
    assert_eq!(
        converter
            .reply_permission(&always, PermissionReply::Always)
            .unwrap()[0]
            .line()
            .unwrap()["result"]["scope"],
        "session"
    );
    let rejected = ask(&mut converter, 3);
    assert_eq!(
        converter
            .reply_permission(&rejected, PermissionReply::Reject)
            .unwrap(),
        line(json!({"id": 3, "result": {"permissions": {}}}))
    );
    assert!(
        converter
            .reply_permission(&rejected, PermissionReply::Once)
            .is_err()
    );
}

#[test]
fn unsupported_server_requests_get_an_error_and_an_unparsed_item() {
    let ids = sink();
    let mut converter = converter(PermissionMode::Default);
    let outcome = ask(
        &mut converter,
        &ids,
        json!("x"),
        "item/tool/call",
        &json!({}),
    );
    assert_eq!(outcome.replies[0].line().unwrap()["error"]["code"], -32601);
    assert_eq!(types(&outcome.events), ["itemStarted", "itemCompleted"]);
}

#[test]
fn rejected_questions_answer_nothing_and_codex_can_withdraw_requests() {
    let ids = sink();
    let mut converter = converter(PermissionMode::Default);
    let params = json!({"threadId": "t", "turnId": "u", "itemId": "c", "isBlocking": true,
        "questions": [{"id": "name", "header": "", "question": "Your name?", "options": null}]});
    let outcome = ask(
        &mut converter,
        &ids,
        json!(4),
        "item/tool/requestUserInput",
        &params,
    );
    assert_eq!(
        types(&outcome.events),
        ["itemStarted", "itemCompleted", "questionAsked"],
        "the request_user_input call becomes a tool call item"
    );
    let EventPayload::ItemCompleted(call) = &outcome.events[1].payload else {
        panic!()
    };
    assert_eq!(call.item.kind, sandbox_universal::ItemKind::ToolCall);
    assert_eq!(call.item.native_item_id.as_deref(), Some("c"));
    let EventPayload::QuestionAsked(asked) = &outcome.events[2].payload else {
        panic!()
    };
    assert_eq!(asked.item_id.as_deref(), Some(call.item.item_id.as_str()));
    assert!(asked.questions[0].allow_custom, "no options: free-form");
    assert_eq!(asked.questions[0].header, None);
    assert_eq!(
        converter
            .reply_question(&asked.question_id, QuestionAnswer::Rejected)
            .unwrap(),
        line(json!({"id": 4, "result": {"answers": {"name": {"answers": [DECLINED]}}}})),
        "a rejection is a refusal the model can read"
    );
    // Codex settles a request by itself: the reply has nobody to go to.
    let outcome = ask(
        &mut converter,
        &ids,
        json!(5),
        "item/tool/requestUserInput",
        &params,
    );
    let EventPayload::QuestionAsked(asked) = &outcome.events[2].payload else {
        panic!()
    };
    note(
        &mut converter,
        &ids,
        "serverRequest/resolved",
        json!({"threadId": "t", "requestId": 5}),
    );
    assert!(
        converter
            .reply_question(
                &asked.question_id,
                QuestionAnswer::Answered(vec![vec!["Ann".into()]])
            )
            .is_err()
    );
}

#[test]
fn mcp_calls_become_tool_call_and_result_and_plans_become_plan_items() {
    let ids = sink();
    let mut converter = converter(PermissionMode::Default);
    let call = |status: &str, result: Value| {
        json!({"item": {"type": "mcpToolCall", "id": "m", "server": "docs", "tool": "search",
            "status": status, "arguments": {"q": "x"}, "result": result, "error": null}})
    };
    note(
        &mut converter,
        &ids,
        "item/started",
        call("inProgress", Value::Null),
    );
    let events = note(
        &mut converter,
        &ids,
        "item/completed",
        call("completed", json!({"content": "found it"})),
    );
    assert_eq!(
        types(&events),
        ["itemCompleted", "itemStarted", "itemCompleted"]
    );
    let EventPayload::ItemCompleted(result) = &events[2].payload else {
        unreachable!()
    };
    assert_eq!(result.item.kind, ItemKind::ToolResult);
    let EventPayload::ItemCompleted(tool) = &events[0].payload else {
        unreachable!()
    };
    assert_eq!(
        result.item.parent_id.as_deref(),
        Some(tool.item.item_id.as_str())
    );
    assert!(matches!(&tool.item.content[0],
        ContentPart::ToolCall { name, .. } if name == "mcp__docs__search"));
    assert!(matches!(&result.item.content[0],
        ContentPart::ToolResult { output, is_error: false, .. } if output == "found it"));

    let events = note(
        &mut converter,
        &ids,
        "turn/plan/updated",
        json!({"turnId": "u", "explanation": null, "plan": [
            {"step": "read", "status": "completed"}, {"step": "write", "status": "inProgress"}]}),
    );
    let EventPayload::ItemCompleted(plan) = &events[1].payload else {
        unreachable!()
    };
    let ContentPart::Plan { entries, .. } = &plan.item.content[0] else {
        unreachable!()
    };
    assert_eq!(entries.len(), 2);
}

#[test]
fn errors_map_to_universal_kinds() {
    let ids = sink();
    let mut converter = converter(PermissionMode::Default);
    let error = |info: Value| {
        json!({"threadId": "t", "turnId": "u", "willRetry": false,
            "error": {"message": "nope", "codexErrorInfo": info}})
    };
    let kind = |events: Vec<AgentEvent>| match &events[0].payload {
        EventPayload::Error(e) => e.kind(),
        other => panic!("{other:?}"),
    };
    let mut one = |info| kind(note(&mut converter, &ids, "error", error(info)));
    assert_eq!(one(json!("unauthorized")), "tokenError");
    assert_eq!(
        one(json!({"responseStreamConnectionFailed": {"httpStatusCode": 401}})),
        "tokenError"
    );
    assert_eq!(
        one(json!({"httpConnectionFailed": {"httpStatusCode": 502}})),
        "providerError"
    );
    assert_eq!(one(json!("contextWindowExceeded")), "agentReported");
    let retrying = note(
        &mut converter,
        &ids,
        "error",
        json!({"willRetry": true, "error": {"message": "Reconnecting... 1/5"}}),
    );
    assert_eq!(types(&retrying), ["itemStarted", "itemCompleted"]);
}
