//! Converter cases the recorded transcripts do not cover. The messages are shaped after
//! the pinned app-server's schema; the real-CLI cases are in `tests/codex_golden.rs` and
//! the daemon's `codex_e2e.rs`.

use sandbox_universal::{
    AgentError, ContentPart, EventPayload, ItemKind, ItemStatus, PermissionKind, PermissionReply,
    StopReason,
};
use serde_json::{Value, json};

use super::Converter;
use super::hitl::DECLINED;
use crate::process::ExitInfo;
use crate::{AgentEvent, CollectingSink, EventSink, QuestionAnswer};

fn sink() -> EventSink {
    CollectingSink::new().1
}

fn note(
    converter: &mut Converter,
    ids: &EventSink,
    method: &str,
    params: Value,
) -> Vec<AgentEvent> {
    let raw = json!({"method": method, "params": params});
    converter.notification(ids, method, &params, &raw)
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
    let mut converter = Converter::new("/w", false);
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
    let mut converter = Converter::new("/w", false);
    converter.begin_turn("turn_5");
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
fn a_dead_process_fails_open_items_and_the_turn() {
    let ids = sink();
    let mut converter = Converter::new("/w", false);
    converter.begin_turn("turn_1");
    note(
        &mut converter,
        &ids,
        "item/started",
        json!({"item": {"type": "agentMessage", "id": "m1", "text": ""}}),
    );
    let events = converter.process_exited(&ExitInfo {
        code: None,
        signal: Some(9),
        stderr_tail: "boom".into(),
    });
    assert_eq!(types(&events), ["itemCompleted", "error", "turnEnded"]);
    assert!(events.iter().all(|e| e.synthetic));
    let EventPayload::ItemCompleted(item) = &events[0].payload else {
        unreachable!()
    };
    assert_eq!(item.item.status, ItemStatus::Failed);
    assert!(matches!(
        &events[1].payload,
        EventPayload::Error(AgentError::ProcessExited { signal: Some(9), stderr_tail: Some(t), .. }) if t == "boom"
    ));
    let EventPayload::TurnEnded(ended) = &events[2].payload else {
        unreachable!()
    };
    assert_eq!(ended.stop_reason, StopReason::Error);
    // Idle: only the error.
    let events = converter.process_exited(&ExitInfo::default());
    assert_eq!(types(&events), ["error"]);
}

fn patch_item(path: &str) -> Value {
    json!({"item": {"type": "fileChange", "id": "p1", "status": "inProgress",
        "changes": [{"path": path, "kind": {"type": "update", "move_path": null}, "diff": "@@"}]}})
}

#[test]
fn accept_edits_approves_patches_inside_the_working_directory_only() {
    let ids = sink();
    let mut converter = Converter::new("/w", true);
    let params = json!({"threadId": "t", "turnId": "u", "itemId": "p1", "startedAtMs": 0});
    note(
        &mut converter,
        &ids,
        "item/started",
        patch_item("/w/src/a.rs"),
    );
    let raw = json!({"id": 7});
    let inside = converter.server_request(
        &ids,
        &json!(7),
        "item/fileChange/requestApproval",
        &params,
        &raw,
    );
    assert!(inside.events.is_empty());
    assert_eq!(
        inside.reply,
        Some(json!({"id": 7, "result": {"decision": "accept"}}))
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
    let outside = converter.server_request(
        &ids,
        &json!(8),
        "item/fileChange/requestApproval",
        &params,
        &raw,
    );
    assert!(outside.reply.is_none());
    let EventPayload::PermissionAsked(asked) = &outside.events[0].payload else {
        panic!("{outside:?}")
    };
    assert_eq!(asked.kind, PermissionKind::FileChange);
    assert_eq!(asked.paths, ["/etc/passwd"]);
    assert_eq!(
        converter
            .permission_reply(&asked.permission_id, PermissionReply::Always)
            .unwrap(),
        json!({"id": 8, "result": {"decision": "acceptForSession"}})
    );
}

#[test]
fn permission_profiles_are_granted_for_the_turn_or_the_session() {
    let ids = sink();
    let mut converter = Converter::new("/w", false);
    let requested = json!({"network": {"enabled": true}});
    let params = json!({"threadId": "t", "turnId": "u", "itemId": "c1", "cwd": "/w",
        "startedAtMs": 0, "reason": "needs the network", "permissions": requested});
    let raw = json!({});
    let ask = |converter: &mut Converter, id: i64| {
        let outcome = converter.server_request(
            &ids,
            &json!(id),
            "item/permissions/requestApproval",
            &params,
            &raw,
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
            .permission_reply(&once, PermissionReply::Once)
            .unwrap(),
        json!({"id": 1, "result": {"permissions": requested, "scope": "turn"}})
    );
    let always = ask(&mut converter, 2);
    assert_eq!(
        converter
            .permission_reply(&always, PermissionReply::Always)
            .unwrap()["result"]["scope"],
        "session"
    );
    let rejected = ask(&mut converter, 3);
    assert_eq!(
        converter
            .permission_reply(&rejected, PermissionReply::Reject)
            .unwrap(),
        json!({"id": 3, "result": {"permissions": {}}})
    );
    assert!(
        converter
            .permission_reply(&rejected, PermissionReply::Once)
            .is_err()
    );
}

#[test]
fn unsupported_server_requests_get_an_error_and_an_unparsed_item() {
    let ids = sink();
    let mut converter = Converter::new("/w", false);
    let raw = json!({"id": "x", "method": "item/tool/call", "params": {}});
    let outcome = converter.server_request(&ids, &json!("x"), "item/tool/call", &json!({}), &raw);
    assert_eq!(outcome.reply.unwrap()["error"]["code"], -32601);
    assert_eq!(types(&outcome.events), ["itemStarted", "itemCompleted"]);
}

#[test]
fn rejected_questions_answer_nothing_and_codex_can_withdraw_requests() {
    let ids = sink();
    let mut converter = Converter::new("/w", false);
    let params = json!({"threadId": "t", "turnId": "u", "itemId": "c", "isBlocking": true,
        "questions": [{"id": "name", "header": "", "question": "Your name?", "options": null}]});
    let outcome = converter.server_request(
        &ids,
        &json!(4),
        "item/tool/requestUserInput",
        &params,
        &json!({}),
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
            .question_reply(&asked.question_id, QuestionAnswer::Rejected)
            .unwrap(),
        json!({"id": 4, "result": {"answers": {"name": {"answers": [DECLINED]}}}}),
        "a rejection is a refusal the model can read"
    );
    // Codex settles a request by itself: the reply has nobody to go to.
    let outcome = converter.server_request(
        &ids,
        &json!(5),
        "item/tool/requestUserInput",
        &params,
        &json!({}),
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
            .question_reply(
                &asked.question_id,
                QuestionAnswer::Answered(vec![vec!["Ann".into()]])
            )
            .is_err()
    );
}

#[test]
fn mcp_calls_become_tool_call_and_result_and_plans_become_plan_items() {
    let ids = sink();
    let mut converter = Converter::new("/w", false);
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
    let mut converter = Converter::new("/w", false);
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
