//! The session policy's share of the protocol: `maxTurns` counted in model responses,
//! MCP tool approvals, images in the turn's input.

use sandbox_universal::{
    ContentPart, EventPayload, McpToolRef, PermissionKind, PermissionMode, PermissionReply,
    StopReason,
};
use serde_json::{Value, json};

use super::Converter;
use crate::codex::launch::TurnSettings;
use crate::kernel::{Outgoing, Protocol};
use crate::{AgentEvent, CollectingSink, EventSink, Image, UserMessage, UserPart};

fn note(converter: &mut Converter, ids: &EventSink, method: &str, params: Value) -> Vec<Outgoing> {
    converter
        .convert(&json!({"method": method, "params": params}), ids)
        .replies
}

fn events(converter: &mut Converter, ids: &EventSink, raw: Value) -> Vec<AgentEvent> {
    converter.convert(&raw, ids).events
}

fn item(kind: &str, id: &str) -> Value {
    json!({"item": {"type": kind, "id": id, "text": "", "summary": [], "content": [],
        "command": "ls", "cwd": "/w", "status": "inProgress"}})
}

/// A session with `maxTurns: 2` running a turn Codex named `t1`.
fn limited() -> (Converter, EventSink) {
    let ids = CollectingSink::new().1;
    let mut converter =
        Converter::new(TurnSettings::in_mode(PermissionMode::Bypass, "/w")).with_max_turns(Some(2));
    converter.set_thread("th");
    converter.begin_turn("turn_1", &"loop".into());
    note(
        &mut converter,
        &ids,
        "turn/started",
        json!({"turn": {"id": "t1"}}),
    );
    (converter, ids)
}

#[test]
fn the_response_past_max_turns_interrupts_the_turn_which_ends_with_max_turns() {
    let (mut converter, ids) = limited();
    let usage = json!({"turnId": "t1", "tokenUsage": {"total": {}, "last": {}}});
    assert!(
        note(
            &mut converter,
            &ids,
            "item/started",
            item("userMessage", "u")
        )
        .is_empty()
    );
    for response in 0..2 {
        // A response: reasoning and a command, then its usage.
        for (kind, id) in [("reasoning", "r"), ("commandExecution", "c")] {
            let id = format!("{id}{response}");
            assert!(note(&mut converter, &ids, "item/started", item(kind, &id)).is_empty());
        }
        assert!(
            note(
                &mut converter,
                &ids,
                "thread/tokenUsage/updated",
                usage.clone()
            )
            .is_empty()
        );
    }
    let interrupt = note(
        &mut converter,
        &ids,
        "item/started",
        item("commandExecution", "c2"),
    );
    assert_eq!(
        interrupt,
        [Outgoing::Line(
            json!({"id": "maxTurns:turn_1", "method": "turn/interrupt",
            "params": {"threadId": "th", "turnId": "t1"}})
        )]
    );
    assert!(
        note(
            &mut converter,
            &ids,
            "item/started",
            item("agentMessage", "m2")
        )
        .is_empty(),
        "the interrupt is sent once"
    );
    // Its answer is nobody's: the runner drops it.
    let ended = events(
        &mut converter,
        &ids,
        json!({"method": "turn/completed",
               "params": {"turn": {"id": "t1", "status": "interrupted", "items": []}}}),
    );
    assert!(ended.iter().any(|e| matches!(&e.payload,
        EventPayload::TurnEnded(t) if t.stop_reason == StopReason::MaxTurns)));
    // The next turn counts again.
    converter.begin_turn("turn_2", &"again".into());
    note(
        &mut converter,
        &ids,
        "turn/started",
        json!({"turn": {"id": "t2"}}),
    );
    assert!(
        note(
            &mut converter,
            &ids,
            "item/started",
            item("agentMessage", "m3")
        )
        .is_empty()
    );
    let ended = events(
        &mut converter,
        &ids,
        json!({"method": "turn/completed",
               "params": {"turn": {"id": "t2", "status": "completed", "items": []}}}),
    );
    assert!(ended.iter().any(|e| matches!(&e.payload,
        EventPayload::TurnEnded(t) if t.stop_reason == StopReason::Completed)));
}

fn approval(tool: &str) -> Value {
    json!({"threadId": "th", "turnId": "t1", "serverName": "st", "mode": "form",
        "message": format!("Allow the st MCP server to run tool \"{tool}\"?"),
        "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {"codex_approval_kind": "mcp_tool_call", "persist": ["session", "always"],
                  "tool_name": tool, "tool_params": {"text": "hi"}}})
}

#[test]
fn mcp_tool_approvals_are_permissions_of_kind_mcp_tool() {
    let (mut converter, ids) = limited();
    let call = json!({"method": "item/started", "params": {"item": {"type": "mcpToolCall",
        "id": "m", "server": "st", "tool": "echo", "status": "inProgress",
        "arguments": {"text": "hi"}}}});
    let started = events(&mut converter, &ids, call);
    let EventPayload::ItemStarted(call) = &started[0].payload else {
        unreachable!()
    };
    assert!(
        matches!(&call.item.content[0], ContentPart::ToolCall { name, mcp: Some(m), .. }
        if name == "mcp__st__echo"
            && *m == McpToolRef { server: "st".into(), tool: "echo".into() })
    );

    let mut replies = Vec::new();
    for (id, reply) in [
        (7, PermissionReply::Once),
        (8, PermissionReply::Always),
        (9, PermissionReply::Reject),
    ] {
        let asked = events(
            &mut converter,
            &ids,
            json!({"id": id, "method": "mcpServer/elicitation/request", "params": approval("echo")}),
        );
        let EventPayload::PermissionAsked(request) = &asked[0].payload else {
            panic!("{asked:?}")
        };
        assert_eq!(request.kind, PermissionKind::McpTool);
        assert_eq!(request.tool.as_deref(), Some("mcp__st__echo"));
        assert_eq!(request.always_scope.as_deref(), Some("codex:mcp:st/echo"));
        assert_eq!(request.item_id.as_ref(), Some(&call.item.item_id));
        assert_eq!(request.input, Some(json!({"text": "hi"})));
        replies.extend(
            converter
                .reply_permission(&request.permission_id, reply)
                .unwrap(),
        );
    }
    assert_eq!(
        replies,
        [
            Outgoing::Line(json!({"id": 7, "result": {"action": "accept", "content": {}}})),
            Outgoing::Line(
                json!({"id": 8, "result": {"action": "accept", "content": {},
                "_meta": {"persist": "session"}}})
            ),
            Outgoing::Line(json!({"id": 9, "result": {"action": "decline"}})),
        ]
    );

    // A server's own elicitation is declined: the daemon has no form to show.
    let form = json!({"id": 10, "method": "mcpServer/elicitation/request", "params": {
        "threadId": "th", "serverName": "st", "mode": "form", "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {}}}});
    let converted = converter.convert(&form, &ids);
    assert_eq!(
        converted.replies,
        [Outgoing::Line(
            json!({"id": 10, "result": {"action": "decline"}})
        )]
    );
    assert!(!converted.events.is_empty());
}

#[test]
fn images_go_in_the_turn_input_as_data_urls_in_order() {
    let mut converter = Converter::new(TurnSettings::in_mode(PermissionMode::Default, "/w"));
    converter.set_thread("th");
    let message = UserMessage {
        parts: vec![
            UserPart::Text("what is this?".into()),
            UserPart::Image(Image {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
                path: None,
            }),
        ],
    };
    let [Outgoing::Request { params, .. }] = &converter.begin_turn("turn_1", &message)[..] else {
        unreachable!()
    };
    assert_eq!(
        params["input"],
        json!([{"type": "text", "text": "what is this?"},
               {"type": "image", "url": "data:image/png;base64,iVBORw0KGgo="}])
    );
}

#[test]
fn a_turn_waits_for_the_sessions_mcp_servers_of_each_app_server() {
    let ids = CollectingSink::new().1;
    let mut converter = Converter::new(TurnSettings::in_mode(PermissionMode::Default, "/w"))
        .with_mcp_servers(["st".to_string(), "ht".to_string()]);
    assert!(!converter.ready_for_turn(), "nothing reported yet");
    let status =
        |name: &str, status: &str| json!({"threadId": "th", "name": name, "status": status});
    let method = "mcpServer/startupStatus/updated";
    note(&mut converter, &ids, method, status("st", "starting"));
    note(&mut converter, &ids, method, status("st", "ready"));
    assert!(!converter.ready_for_turn(), "ht still starting");
    note(&mut converter, &ids, method, status("ht", "failed"));
    assert!(
        converter.ready_for_turn(),
        "started or failed: the turn goes ahead"
    );
    drop(converter.gone(&crate::kernel::Gone {
        exit: crate::process::ExitInfo::default(),
        why: "gone".into(),
    }));
    assert!(
        !converter.ready_for_turn(),
        "a new app-server starts them again"
    );
    let plain = Converter::new(TurnSettings::in_mode(PermissionMode::Default, "/w"));
    assert!(plain.ready_for_turn());
}
