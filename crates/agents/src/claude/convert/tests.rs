//! Converter behaviour the recorded fixtures cannot show: crashes, unknown lines,
//! control requests the daemon does not serve, plan approval, withdrawn requests.

use sandbox_universal::{
    AgentError, ContentPart, EventPayload, ItemKind, PermissionKind, PermissionReply, StopReason,
};
use serde_json::json;

use super::{Converter, PendingKind, permission_response};
use crate::kernel::{Gone, Protocol};
use crate::process::ExitInfo;
use crate::{AgentEvent, CollectingSink, EventSink};

fn gone(exit: ExitInfo) -> Gone {
    Gone {
        why: exit.describe(),
        exit,
    }
}

fn sink() -> EventSink {
    CollectingSink::new().1
}

fn payloads(events: &[AgentEvent]) -> Vec<&EventPayload> {
    events.iter().map(|e| &e.payload).collect()
}

#[test]
fn a_crash_mid_turn_reports_and_ends_the_turn_and_leaves_items_to_the_core() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    converter.begin_turn("turn_1", &"".into());
    converter.turn_delivered(None);
    let start = json!({"type": "stream_event", "api_message_id": "m1", "event":
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}});
    assert_eq!(converter.convert(&start, &ids).events.len(), 1);
    let exit = ExitInfo {
        code: None,
        signal: Some(9),
        stderr_tail: "killed".into(),
    };
    let events = converter.gone(&gone(exit));
    let payloads = payloads(&events);
    assert_eq!(payloads.len(), 2, "{payloads:?}");
    assert!(matches!(
        payloads[0],
        EventPayload::Error(AgentError::ProcessExited {
            signal: Some(9),
            ..
        })
    ));
    assert!(
        matches!(payloads[1], EventPayload::TurnEnded(t) if t.stop_reason == StopReason::Error && t.turn_id == "turn_1")
    );
    assert_eq!(converter.current_turn(), None);
}

#[test]
fn an_exit_after_a_cancel_ends_the_turn_cancelled_without_error() {
    let mut converter = Converter::new("/w");
    converter.begin_turn("turn_1", &"".into());
    converter.turn_delivered(None);
    assert_eq!(converter.cancel().len(), 1, "an interrupt");
    let events = converter.gone(&gone(ExitInfo::default()));
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(
        matches!(&events[0].payload, EventPayload::TurnEnded(t) if t.stop_reason == StopReason::Cancelled)
    );
    let mut idle = Converter::new("/w");
    assert!(idle.cancel().is_empty(), "nothing to interrupt");
    let events = idle.gone(&gone(ExitInfo::default()));
    assert!(
        matches!(&events[..], [e] if matches!(e.payload, EventPayload::Error(_))),
        "an idle crash is still reported"
    );
}

#[test]
fn unknown_lines_become_unparsed_items_with_the_raw_json() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    for raw in [
        json!({"type": "brand_new_line", "x": 1}),
        json!({"type": "system", "subtype": "brand_new_subtype"}),
        json!({"type": "assistant", "message": {"id": "m", "content": [{"type": "mystery_block"}]}}),
    ] {
        let events = converter.convert(&raw, &ids).events;
        assert_eq!(events.len(), 2, "{raw}");
        match &events[1].payload {
            EventPayload::ItemCompleted(i) => {
                assert_eq!(i.item.kind, ItemKind::Unparsed);
                assert!(
                    matches!(&i.item.content[0], ContentPart::Unparsed { raw: r, .. } if *r == raw)
                );
            }
            other => panic!("{other:?}"),
        }
    }
    let ignored = [
        json!({"type": "system", "subtype": "status", "status": "requesting"}),
        json!({"type": "rate_limit_event", "rate_limit_info": {}}),
        json!({"type": "system", "subtype": "hook_started"}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]}}),
    ];
    for raw in ignored {
        assert!(converter.convert(&raw, &ids).events.is_empty(), "{raw}");
    }
}

#[test]
fn unsupported_control_requests_are_answered_with_an_error() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    let raw = json!({"type": "control_request", "request_id": "r9",
        "request": {"subtype": "hook_callback", "callback_id": "c"}});
    let out = converter.convert(&raw, &ids);
    assert_eq!(out.replies.len(), 1);
    assert_eq!(
        out.replies[0].line().expect("a line")["response"]["subtype"],
        "error"
    );
    assert_eq!(
        out.replies[0].line().expect("a line")["response"]["request_id"],
        "r9"
    );
}

#[test]
fn exit_plan_mode_is_a_plan_approval_and_a_rejection_keeps_planning() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    converter.begin_turn("turn_1", &"".into());
    let raw = json!({"type": "control_request", "request_id": "r1", "request": {
        "subtype": "can_use_tool", "tool_name": "ExitPlanMode",
        "input": {"plan": "1. add tests\n2. ship"}, "tool_use_id": "toolu_1"}});
    let events = converter.convert(&raw, &ids).events;
    let EventPayload::PermissionAsked(asked) = &events[0].payload else {
        panic!("{events:?}")
    };
    assert_eq!(asked.kind, PermissionKind::PlanApproval);
    assert_eq!(asked.plan.as_deref(), Some("1. add tests\n2. ship"));
    assert_eq!(asked.always_scope, None);
    let pending = converter.take_pending(&asked.permission_id).unwrap();
    assert_eq!(pending.kind, PendingKind::PlanApproval);
    let reject = permission_response(&pending, PermissionReply::Reject);
    assert_eq!(reject["response"]["response"]["behavior"], "deny");
    assert!(
        reject["response"]["response"]["message"]
            .as_str()
            .unwrap()
            .contains("plan")
    );
    let accept = permission_response(&pending, PermissionReply::Always);
    assert_eq!(accept["response"]["response"]["behavior"], "allow");
    assert_eq!(
        accept["response"]["response"]["updatedInput"]["plan"],
        "1. add tests\n2. ship"
    );
}

/// The `status` items a list of events carries, as `(label, detail)`.
fn statuses(events: &[AgentEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) => match &i.item.content[0] {
                ContentPart::Status { label, detail } => {
                    Some((label.clone(), detail.clone().unwrap_or_default()))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn the_permission_mode_is_tracked_and_a_change_is_reported() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    // A resumed CLI restoring plan mode reports it before `init`: nothing changed.
    let restored = json!({"type": "system", "subtype": "status", "status": null,
        "permissionMode": "plan", "session_id": "s"});
    assert!(converter.convert(&restored, &ids).events.is_empty());
    assert_eq!(converter.permission_mode(), Some("plan"));
    let init = |mode: &str| json!({"type": "system", "subtype": "init", "session_id": "s", "permissionMode": mode});
    assert!(converter.convert(&init("plan"), &ids).events.is_empty());
    assert_eq!(converter.permission_mode(), Some("plan"));
    // Lines of an approved plan (pinned CLI 2.1.330).
    let left = json!({"type": "system", "subtype": "status", "status": null,
        "permissionMode": "default", "session_id": "s"});
    let events = converter.convert(&left, &ids).events;
    assert_eq!(
        statuses(&events),
        [("permissionMode".to_string(), "default".to_string())]
    );
    assert_eq!(converter.permission_mode(), Some("default"));
    assert!(
        converter.convert(&left, &ids).events.is_empty(),
        "no change"
    );
    assert!(converter.convert(&init("default"), &ids).events.is_empty());
}

#[test]
fn notices_and_refusals_of_the_cli_are_status_items() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    // What plan mode prints when its command classifier cannot run (pinned CLI).
    let notice = json!({"type": "system", "subtype": "informational", "level": "warning",
        "content": "Auto mode can't check actions in this session.",
        "tag": "auto_mode_no_server_check"});
    let refused = json!({"type": "system", "subtype": "permission_denied", "tool_name": "Bash",
        "tool_use_id": "toolu_1", "decision_reason_type": "classifier",
        "message": "Auto mode is unavailable, so Bash was not run."});
    let mut events = converter.convert(&notice, &ids).events;
    events.extend(converter.convert(&refused, &ids).events);
    assert_eq!(
        statuses(&events),
        [
            (
                "warning".to_string(),
                "Auto mode can't check actions in this session.".to_string()
            ),
            (
                "permissionDenied".to_string(),
                "Bash: Auto mode is unavailable, so Bash was not run.".to_string()
            )
        ]
    );
    assert!(events.iter().all(|e| e.raw.is_some()));
}

#[test]
fn a_withdrawn_request_is_forgotten() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    converter.begin_turn("turn_1", &"".into());
    let raw = json!({"type": "control_request", "request_id": "r2", "request": {
        "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}}});
    let events = converter.convert(&raw, &ids).events;
    let EventPayload::PermissionAsked(asked) = &events[0].payload else {
        panic!()
    };
    let id = asked.permission_id.clone();
    let cancel = json!({"type": "control_cancel_request", "request_id": "r2"});
    assert!(converter.convert(&cancel, &ids).events.is_empty());
    assert!(converter.take_pending(&id).is_none());
}

#[test]
fn authentication_failures_are_token_errors() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    converter.begin_turn("turn_1", &"".into());
    let raw = json!({"type": "assistant", "error": "authentication_failed", "api_error_status": 401,
        "message": {"id": "x", "content": [{"type": "text", "text": "Invalid API key"}]}});
    let events = converter.convert(&raw, &ids).events;
    assert!(
        matches!(&events[0].payload, EventPayload::Error(AgentError::TokenError { message }) if message == "Invalid API key")
    );
    let result = json!({"type": "result", "subtype": "success", "is_error": true, "result": "Invalid API key"});
    let events = converter.convert(&result, &ids).events;
    assert_eq!(events.len(), 1, "no second error for the same failure");
    assert!(
        matches!(&events[0].payload, EventPayload::TurnEnded(t) if t.stop_reason == StopReason::Error)
    );
}

#[test]
fn an_exit_before_the_message_was_written_leaves_the_turn_to_the_driver() {
    let mut converter = Converter::new("/w");
    converter.begin_turn("turn_1", &"".into());
    let events = converter.gone(&gone(ExitInfo::default()));
    assert!(
        events
            .iter()
            .all(|e| !matches!(e.payload, EventPayload::TurnEnded(_))),
        "{events:?}"
    );
    assert_eq!(converter.current_turn(), Some("turn_1"));
}

#[test]
fn an_api_retry_is_a_retrying_status_item() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    converter.begin_turn("turn_1", &"".into());
    // Pinned CLI 2.1.330, after the fake provider's `FLAKY` 529.
    let retry = json!({"type": "system", "subtype": "api_retry", "attempt": 1,
        "max_retries": 10, "retry_delay_ms": 541, "error_status": 529, "error": "overloaded",
        "session_id": "00000000-0000-4000-8000-000000000001",
        "uuid": "7b656c55-b811-4c34-8fc3-1a6a2602f8ec"});
    let events = converter.convert(&retry, &ids).events;
    assert_eq!(
        statuses(&events),
        [(
            "retrying".to_string(),
            "attempt 1/10 in 541ms: overloaded (HTTP 529)".to_string()
        )]
    );
    assert!(events.iter().all(|e| e.raw.as_ref() == Some(&retry)));
    assert!(
        !events.iter().any(|e| matches!(
            e.payload,
            EventPayload::Error(_) | EventPayload::TurnEnded(_)
        )),
        "a retry neither fails nor ends the turn"
    );
    // A connection failure has no status; missing parts are left out.
    let lost = json!({"type": "system", "subtype": "api_retry", "attempt": 2, "max_retries": 10,
        "retry_delay_ms": 1100, "error_status": null, "error": "connection_error"});
    assert_eq!(
        statuses(&converter.convert(&lost, &ids).events)[0].1,
        "attempt 2/10 in 1100ms: connection_error"
    );
}

#[test]
fn a_refused_request_ends_the_turn_with_the_providers_message() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    converter.begin_turn("turn_1", &"".into());
    // Pinned CLI 2.1.330 after the fake provider's `REFUSE` 400 (usage trimmed).
    let refusal = "API Error: 400 fake provider refuses this request (REFUSE keyword)";
    let assistant = json!({"type": "assistant", "message": {"id": "b5fd5885-05a4-4df9-81f8-8acfcf3fe4cd",
        "model": "<synthetic>", "role": "assistant", "stop_reason": "stop_sequence",
        "stop_sequence": "", "type": "message", "content": [{"type": "text", "text": refusal}]},
        "parent_tool_use_id": null, "session_id": "s", "error": "unknown",
        "is_api_error_message": true, "api_error_status": 400,
        "api_error_type": "invalid_request_error"});
    let events = converter.convert(&assistant, &ids).events;
    assert!(
        matches!(&payloads(&events)[..], [EventPayload::Error(AgentError::ProviderError { message, status: Some(400) })] if message == refusal),
        "{events:?}"
    );
    let result = json!({"type": "result", "subtype": "success", "is_error": true,
        "api_error_status": 400, "terminal_reason": "api_error", "stop_reason": "stop_sequence",
        "result": refusal, "num_turns": 1, "total_cost_usd": 0});
    let events = converter.convert(&result, &ids).events;
    assert!(
        matches!(&payloads(&events)[..], [EventPayload::TurnEnded(t)] if t.stop_reason == StopReason::Error),
        "one error per failure, then the turn ends: {events:?}"
    );
}

#[test]
fn plan_mode_refuses_a_file_edit_itself_and_says_so() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    converter.begin_turn("turn_1", &"".into());
    let init =
        json!({"type": "system", "subtype": "init", "session_id": "s", "permissionMode": "plan"});
    converter.convert(&init, &ids);
    // The request the pinned CLI (2.1.330) sends for a Write in plan mode.
    let write = json!({"type": "control_request", "request_id": "r1", "request": {
        "subtype": "can_use_tool", "tool_name": "Write", "display_name": "Write",
        "decision_reason_type": "mode", "description": "fake_written.txt",
        "input": {"file_path": "/w/fake_written.txt", "content": "x\n"},
        "tool_use_id": "toolu_1"}});
    let out = converter.convert(&write, &ids);
    assert_eq!(out.replies.len(), 1, "answered at once");
    let answer = &out.replies[0].line().expect("a line")["response"];
    assert_eq!(answer["request_id"], "r1");
    assert_eq!(answer["response"]["behavior"], "deny");
    assert!(
        answer["response"]["message"]
            .as_str()
            .unwrap()
            .contains("Plan mode")
    );
    let [EventPayload::PermissionResolved(resolved)] = payloads(&out.events)[..] else {
        panic!("{:?}", out.events)
    };
    assert!(resolved.automatic);
    assert_eq!(
        resolved.outcome,
        sandbox_universal::PermissionOutcome::Reject
    );
    let request = resolved.request.as_ref().expect("the request is shown");
    assert_eq!(request.kind, PermissionKind::FileChange);
    assert_eq!(request.paths, ["/w/fake_written.txt"]);
    // Out of plan mode the same request is the client's to answer.
    let left = json!({"type": "system", "subtype": "status", "status": null,
        "permissionMode": "default", "session_id": "s"});
    converter.convert(&left, &ids);
    let again = json!({"type": "control_request", "request_id": "r2", "request": {
        "subtype": "can_use_tool", "tool_name": "Write",
        "input": {"file_path": "/w/fake_written.txt", "content": "x\n"},
        "tool_use_id": "toolu_2"}});
    let out = converter.convert(&again, &ids);
    assert!(out.replies.is_empty());
    assert!(matches!(
        out.events[0].payload,
        EventPayload::PermissionAsked(_)
    ));
}

fn mcp_policy(tools: serde_json::Value) -> sandbox_universal::SessionPolicy {
    serde_json::from_value(json!({
        "mcpServers": {
            "st": {"type": "stdio", "command": "python3"},
            "my_ht": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
        },
        "tools": tools,
    }))
    .unwrap()
}

fn can_use(id: &str, tool: &str, server: &str) -> serde_json::Value {
    json!({"type": "control_request", "request_id": id, "request": {
        "subtype": "can_use_tool", "tool_name": tool, "input": {"text": "hi"},
        "mcp_server": {"name": server, "source": "dynamic"}, "display_name": "Echo",
        "tool_use_id": format!("toolu_{id}")}})
}

#[test]
fn mcp_tool_calls_name_their_server_and_ask_as_mcp_tools() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    converter.set_policy(&mcp_policy(json!({})));
    converter.begin_turn("turn_1", &"".into());
    converter.turn_delivered(None);
    let call = json!({"type": "assistant", "message": {"id": "m1", "content": [
        {"type": "tool_use", "id": "toolu_r1", "name": "mcp__my_ht__echo", "input": {"text": "hi"}}]}});
    let events = converter.convert(&call, &ids).events;
    let EventPayload::ItemCompleted(done) = &events.last().unwrap().payload else {
        panic!("{events:?}")
    };
    let ContentPart::ToolCall { mcp, name, .. } = &done.item.content[0] else {
        panic!("{done:?}")
    };
    assert_eq!(name, "mcp__my_ht__echo");
    let mcp = mcp.as_ref().expect("the MCP tool");
    assert_eq!((mcp.server.as_str(), mcp.tool.as_str()), ("my_ht", "echo"));
    let out = converter.convert(&can_use("r1", "mcp__my_ht__echo", "my_ht"), &ids);
    assert!(out.replies.is_empty(), "the host is asked");
    let EventPayload::PermissionAsked(asked) = &out.events[0].payload else {
        panic!("{:?}", out.events)
    };
    assert_eq!(asked.kind, PermissionKind::McpTool);
    assert_eq!(asked.tool.as_deref(), Some("mcp__my_ht__echo"));
    assert_eq!(asked.title, "Use Echo (my_ht)");
    assert_eq!(
        asked.always_scope.as_deref(),
        Some("claude:mcp__my_ht__echo"),
        "always covers this tool"
    );
    let pending = converter.take_pending(&asked.permission_id).unwrap();
    let always = permission_response(&pending, PermissionReply::Always);
    assert_eq!(
        always["response"]["response"]["updatedPermissions"][0]["rules"][0]["toolName"],
        "mcp__my_ht__echo"
    );
}

#[test]
fn an_mcp_tool_outside_the_allow_list_is_refused_when_it_asks() {
    let ids = sink();
    let mut converter = Converter::new("/w");
    converter.set_policy(&mcp_policy(json!({"allow": ["read", "mcp:st/echo"]})));
    converter.begin_turn("turn_1", &"".into());
    converter.turn_delivered(None);
    let out = converter.convert(&can_use("r1", "mcp__st__delete", "st"), &ids);
    assert_eq!(out.replies.len(), 1);
    let crate::kernel::Outgoing::Line(reply) = &out.replies[0] else {
        panic!("{:?}", out.replies)
    };
    assert_eq!(reply["response"]["response"]["behavior"], "deny");
    assert!(matches!(
        &out.events[..],
        [e] if matches!(&e.payload, EventPayload::PermissionResolved(r) if r.automatic)
    ));
    let allowed = converter.convert(&can_use("r2", "mcp__st__echo", "st"), &ids);
    assert!(allowed.replies.is_empty(), "a permitted tool asks the host");
    // In bypass mode nothing else asks: a permitted tool is allowed at once.
    let status =
        json!({"type": "system", "subtype": "status", "permissionMode": "bypassPermissions"});
    converter.convert(&status, &ids);
    let bypass = converter.convert(&can_use("r3", "mcp__st__echo", "st"), &ids);
    let crate::kernel::Outgoing::Line(reply) = &bypass.replies[0] else {
        panic!("{:?}", bypass.replies)
    };
    assert_eq!(reply["response"]["response"]["behavior"], "allow");
    assert!(bypass.events.is_empty());
}

#[test]
fn images_go_as_base64_blocks_in_order() {
    use crate::{Image, UserMessage, UserPart};
    let mut converter = Converter::new("/w");
    let message = UserMessage {
        parts: vec![
            UserPart::Text("look".into()),
            UserPart::Image(Image {
                media_type: "image/png".into(),
                data: "AAAA".into(),
                path: None,
            }),
        ],
    };
    let out = converter.begin_turn("turn_1", &message);
    let crate::kernel::Outgoing::Line(line) = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(
        line["message"]["content"],
        json!([{"type": "text", "text": "look"},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}])
    );
}
