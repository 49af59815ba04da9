//! A session's policy in the converter: prompts with a system prompt, taken tools and
//! images; MCP tool calls and permissions; the daemon's turn limit.

use sandbox_universal::{ContentPart, EventPayload, McpToolRef, PermissionKind, StopReason};
use serde_json::{Map, json};

use super::super::{Converter, PromptSettings};
use super::{ROOT, Session, completed, types};
use crate::kernel::Protocol;
use crate::{Image, UserMessage, UserPart};

fn with_policy(mcp: &[&str], max_turns: Option<u32>) -> Session {
    let mut s = Session::new();
    let converter = std::mem::take(&mut s.converter)
        .with_policy(mcp.iter().map(|m| (*m).to_string()).collect(), max_turns);
    s.converter = converter;
    s
}

#[test]
fn prompts_carry_the_system_prompt_taken_tools_and_images_in_order() {
    let mut tools = Map::new();
    tools.insert("bash".into(), json!(false));
    let settings = PromptSettings {
        system: Some("Be brief.".into()),
        tools,
        agent: Some("build".into()),
        ..PromptSettings::default()
    };
    let mut converter = Converter::new("/w").with_prompt(settings);
    converter.set_native_session_id(ROOT);
    let message = UserMessage {
        parts: vec![
            UserPart::Text("what is this?".into()),
            UserPart::Image(Image {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
                path: Some("/w/shot.png".into()),
            }),
            UserPart::Image(Image {
                media_type: "image/jpeg".into(),
                data: "/9j/".into(),
                path: None,
            }),
        ],
    };
    let calls = converter.begin_turn("turn_1", &message);
    let body = calls[0].body.clone().unwrap();
    assert_eq!(calls[0].path, "/session/ses_root/prompt_async");
    assert_eq!(body["system"], "Be brief.");
    assert_eq!(body["tools"], json!({"bash": false}));
    assert_eq!(body["agent"], "build");
    assert_eq!(
        body["parts"],
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "file", "mime": "image/png", "url": "data:image/png;base64,iVBORw0KGgo=",
             "filename": "shot.png"},
            {"type": "file", "mime": "image/jpeg", "url": "data:image/jpeg;base64,/9j/",
             "filename": "image-3.jpeg"},
        ])
    );
    let plain = Converter::new("/w").with_prompt(PromptSettings::default());
    let mut plain = plain;
    plain.set_native_session_id(ROOT);
    let body = plain.begin_turn("t", &"hi".into())[0].body.clone().unwrap();
    assert_eq!(body, json!({"parts": [{"type": "text", "text": "hi"}]}));
}

#[test]
fn mcp_tool_calls_and_permissions_name_their_server_and_tool() {
    let mut s = with_policy(&["ht", "ht_x"], None);
    s.converter.begin_turn("turn_1", &"".into());
    s.message(ROOT, "msg_1", false, None);
    let running = json!({"status": "running", "input": {"text": "hi"}, "time": {"start": 1}});
    s.tool(ROOT, "msg_1", "c1", "ht_x_echo", running);
    let asked = s.feed(
        "permission.asked",
        json!({"id": "per_1", "sessionID": ROOT, "permission": "ht_x_echo", "patterns": ["*"],
            "metadata": {}, "always": ["*"], "tool": {"messageID": "msg_1", "callID": "c1"}}),
    );
    let request = asked
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::PermissionAsked(p) => Some(p.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(request.kind, PermissionKind::McpTool);
    assert_eq!(request.tool.as_deref(), Some("ht_x_echo"));
    assert_eq!(
        request.always_scope.as_deref(),
        Some("opencode:ht_x_echo:*"),
        "always per tool"
    );
    let done = json!({"status": "completed", "input": {"text": "hi"}, "output": "echo:hi",
        "title": "", "metadata": {}, "time": {"start": 1, "end": 2}});
    let events = s.tool(ROOT, "msg_1", "c1", "ht_x_echo", done);
    let items = completed(&events);
    let ContentPart::ToolCall { mcp, name, .. } = &items[0].content[0] else {
        panic!("{items:?}")
    };
    assert_eq!(name, "ht_x_echo");
    assert_eq!(
        mcp,
        &Some(McpToolRef {
            server: "ht_x".into(),
            tool: "echo".into()
        }),
        "the longest server name that fits"
    );
    assert_eq!(
        items[1].content[0],
        ContentPart::ToolResult {
            call_id: "c1".into(),
            output: "echo:hi".into(),
            is_error: false,
        }
    );
    // Not a session server's tool: no MCP reference.
    let done = json!({"status": "completed", "input": {}, "output": "", "title": "",
        "metadata": {}, "time": {"start": 1, "end": 2}});
    let events = s.tool(ROOT, "msg_1", "c2", "other_echo", done);
    assert!(matches!(
        &completed(&events)[0].content[0],
        ContentPart::ToolCall { mcp: None, .. }
    ));
}

#[test]
fn past_max_turns_the_turn_is_aborted_and_ends_with_max_turns() {
    let mut s = with_policy(&[], Some(2));
    s.converter.begin_turn("turn_1", &"".into());
    s.status(ROOT, "busy");
    let feed = |s: &mut Session, kind: &str, props: serde_json::Value| {
        let payload = json!({"id": "evt", "type": kind, "properties": props});
        s.converter.convert(&payload, &s.ids)
    };
    for (i, done) in [(1, true), (2, true)] {
        let id = format!("msg_{i}");
        let info = |completed: bool| {
            let mut info = json!({"id": id, "sessionID": ROOT, "role": "assistant",
                "path": {"cwd": "/w", "root": "/"}, "time": {"created": 1}});
            if completed {
                info["time"]["completed"] = json!(2);
                info["finish"] = json!("tool-calls");
            }
            json!({"sessionID": ROOT, "info": info})
        };
        assert!(
            feed(&mut s, "message.updated", info(false))
                .replies
                .is_empty()
        );
        if done {
            assert!(
                feed(&mut s, "message.updated", info(true))
                    .replies
                    .is_empty()
            );
        }
    }
    let third = json!({"sessionID": ROOT, "info": {"id": "msg_3", "sessionID": ROOT,
        "role": "assistant", "path": {"cwd": "/w", "root": "/"}, "time": {"created": 1}}});
    let converted = feed(&mut s, "message.updated", third.clone());
    let paths: Vec<_> = converted.replies.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/session/ses_root/abort"],
        "the third call is one too many"
    );
    assert!(
        feed(&mut s, "message.updated", third).replies.is_empty(),
        "aborted once"
    );
    s.status(ROOT, "idle");
    let events = s.message(ROOT, "msg_3", true, Some("MessageAbortedError"));
    assert_eq!(types(&events).last(), Some(&"turnEnded"));
    let Some(EventPayload::TurnEnded(ended)) = events.last().map(|e| &e.payload) else {
        unreachable!()
    };
    assert_eq!(ended.stop_reason, StopReason::MaxTurns);
    // The next turn counts afresh.
    s.converter.begin_turn("turn_2", &"".into());
    s.status(ROOT, "busy");
    let converted = feed(
        &mut s,
        "message.updated",
        json!({"sessionID": ROOT, "info": {"id": "msg_4", "sessionID": ROOT,
            "role": "assistant", "path": {"cwd": "/w", "root": "/"}, "time": {"created": 1}}}),
    );
    assert!(converted.replies.is_empty());
}
