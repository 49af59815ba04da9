//! Unit tests of the parts the fixtures do not reach: one `turnEnded` per prompt, usage
//! over several model calls, failed tools and exit codes, diffs, dialogs, errors.

use sandbox_universal::{
    AgentError, ContentPart, EventPayload, FileChangeKind, ItemKind, ItemStatus, PermissionKind,
    PermissionReply, StopReason,
};
use serde_json::{Value, json};

use super::Converter;
use super::tools::{command_outcome, edits_diff, numbered_diff};
use super::turn::agent_error;
use crate::kernel::{Outgoing, Protocol};
use crate::{AgentEvent, CollectingSink, QuestionAnswer};

fn lines(outgoing: Vec<Outgoing>) -> Vec<Value> {
    outgoing
        .into_iter()
        .map(|o| o.line().expect("a line").clone())
        .collect()
}

fn run(converter: &mut Converter, lines: &[Value]) -> Vec<AgentEvent> {
    let (_, ids) = CollectingSink::new();
    lines
        .iter()
        .flat_map(|l| converter.convert(l, &ids).events)
        .collect()
}

fn assistant(stop: &str, input: u64, output: u64) -> Value {
    json!({"role": "assistant", "content": [], "stopReason": stop,
        "usage": {"input": input, "output": output, "cacheRead": 1, "cacheWrite": 2,
                  "totalTokens": 0, "cost": {"total": 0.5}}})
}

fn turn_ends(events: &[AgentEvent]) -> Vec<(StopReason, Option<sandbox_universal::Usage>)> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::TurnEnded(t) => Some((t.stop_reason, t.usage.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn one_turn_end_per_prompt_with_the_usage_of_every_model_call() {
    let mut converter = Converter::new("/w");
    converter.begin_turn("t1", &"".into());
    let first = assistant("toolUse", 10, 3);
    let second = assistant("stop", 20, 4);
    let events = run(
        &mut converter,
        &[
            json!({"type": "agent_start"}),
            json!({"type": "turn_end", "message": first, "toolResults": []}),
            json!({"type": "turn_end", "message": second, "toolResults": []}),
            json!({"type": "agent_end", "messages": [{"role": "user", "content": "hi"}, first, second]}),
            // A late duplicate ends nothing.
            json!({"type": "agent_end", "messages": []}),
        ],
    );
    let ends = turn_ends(&events);
    assert_eq!(ends.len(), 1);
    let (stop, usage) = &ends[0];
    assert_eq!(*stop, StopReason::Completed);
    let usage = usage.clone().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (30, 7));
    assert_eq!(usage.cached_input_tokens, Some(2));
    assert_eq!(usage.cache_write_tokens, Some(4));
    assert_eq!(usage.total_cost_usd, Some(1.0));
}

#[test]
fn stop_reasons_map_and_a_cancel_wins() {
    for (native, expected) in [
        ("stop", StopReason::Completed),
        ("length", StopReason::MaxTokens),
        ("error", StopReason::Error),
        ("aborted", StopReason::Cancelled),
    ] {
        let mut converter = Converter::new("/w");
        converter.begin_turn("t", &"".into());
        let end = json!({"type": "agent_end", "messages": [assistant(native, 1, 1)]});
        assert_eq!(
            turn_ends(&run(&mut converter, &[end]))[0].0,
            expected,
            "{native}"
        );
    }
    let mut converter = Converter::new("/w");
    converter.begin_turn("t", &"".into());
    assert_eq!(lines(converter.cancel()), [json!({"type": "abort"})]);
    let end = json!({"type": "agent_end", "messages": [assistant("error", 1, 1)]});
    let events = run(&mut converter, &[end]);
    assert_eq!(turn_ends(&events)[0].0, StopReason::Cancelled);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.payload, EventPayload::Error(_)))
    );
}

#[test]
fn a_rejected_prompt_ends_the_turn_and_other_failures_are_errors() {
    let mut converter = Converter::new("/w");
    converter.begin_turn("t", &"".into());
    let events = run(
        &mut converter,
        &[
            json!({"type": "response", "command": "set_model", "success": false, "error": "Model not found"}),
            json!({"type": "response", "command": "prompt", "success": false, "error": "No API key for fake/m"}),
        ],
    );
    let errors: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Error(e) => Some(e.kind()),
            _ => None,
        })
        .collect();
    assert_eq!(errors, ["agentReported", "tokenError"]);
    assert_eq!(turn_ends(&events)[0].0, StopReason::Error);
}

#[test]
fn provider_errors_carry_their_status() {
    assert_eq!(
        agent_error("401 {\"error\":{\"message\":\"invalid x-api-key\"}}"),
        AgentError::TokenError {
            message: "invalid x-api-key".into()
        }
    );
    assert_eq!(
        agent_error("529 overloaded"),
        AgentError::ProviderError {
            message: "529 overloaded".into(),
            status: Some(529)
        }
    );
    assert!(matches!(
        agent_error("fetch failed"),
        AgentError::AgentReported { .. }
    ));
}

#[test]
fn a_failed_command_keeps_its_exit_code_and_a_failed_edit_is_a_tool_result() {
    assert_eq!(
        command_outcome("boom\n\nCommand exited with code 2", true),
        ("boom".into(), Some(2))
    );
    assert_eq!(
        command_outcome("Command exited with code 1", true),
        (String::new(), Some(1))
    );
    assert_eq!(
        command_outcome("x\n\nCommand aborted", true),
        ("x\n\nCommand aborted".into(), None)
    );
    assert_eq!(
        command_outcome("(no output)", false),
        (String::new(), Some(0))
    );

    let mut converter = Converter::new("/w");
    converter.begin_turn("t", &"".into());
    let events = run(
        &mut converter,
        &[
            json!({"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash", "args": {"command": "false"}}),
            json!({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "bash",
                "result": {"content": [{"type": "text", "text": "Command exited with code 1"}], "details": {}}, "isError": true}),
            json!({"type": "tool_execution_start", "toolCallId": "c2", "toolName": "edit", "args": {"path": "a.txt", "edits": []}}),
            json!({"type": "tool_execution_end", "toolCallId": "c2", "toolName": "edit",
                "result": {"content": [{"type": "text", "text": "Could not find the text"}], "details": {}}, "isError": true}),
        ],
    );
    let completed: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) => Some(i.item.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(completed[0].kind, ItemKind::CommandExecution);
    assert_eq!(completed[0].status, ItemStatus::Failed);
    assert!(matches!(
        completed[0].content[0],
        ContentPart::CommandExecution {
            exit_code: Some(1),
            ..
        }
    ));
    assert_eq!(completed[1].kind, ItemKind::ToolResult);
    assert_eq!(completed[1].status, ItemStatus::Failed);
}

#[test]
fn an_edit_diff_is_rebuilt_from_pis_numbered_diff_or_the_edits() {
    let numbered = "  1 a\n- 2 b\n+ 2 B\n  3 c\n    ...\n 10 j\n+11 k";
    assert_eq!(
        numbered_diff("/w/f.txt", numbered).unwrap(),
        "--- a/w/f.txt\n+++ b/w/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -10,1 +10,2 @@\n j\n+k\n"
    );
    assert_eq!(numbered_diff("/w/f", "not a diff"), None);
    let args = json!({"path": "f", "edits": [{"oldText": "a", "newText": "b"}]});
    assert_eq!(
        edits_diff("/w/f", &args).unwrap(),
        "--- a/w/f\n+++ b/w/f\n@@\n-a\n+b\n"
    );

    let mut converter = Converter::new("/w");
    converter.begin_turn("t", &"".into());
    let events = run(
        &mut converter,
        &[
            json!({"type": "tool_execution_start", "toolCallId": "c", "toolName": "edit",
                "args": {"path": "src/f.txt", "oldText": "b", "newText": "B"}}),
            json!({"type": "tool_execution_end", "toolCallId": "c", "toolName": "edit",
                "result": {"content": [{"type": "text", "text": "ok"}],
                           "details": {"diff": "- 2 b\n+ 2 B", "firstChangedLine": 2}}, "isError": false}),
        ],
    );
    let EventPayload::ItemCompleted(done) = &events.last().unwrap().payload else {
        panic!("{events:?}")
    };
    assert!(matches!(&done.item.content[0],
        ContentPart::FileChange { path, change_kind: FileChangeKind::Update, diff: Some(d) }
            if path == "/w/src/f.txt" && d.ends_with("@@ -2,1 +2,1 @@\n-b\n+B\n")));
}

#[test]
fn an_aborted_message_fails_its_open_items_with_the_text_so_far() {
    let mut converter = Converter::new("/w");
    converter.begin_turn("t", &"".into());
    let update = |event: Value| json!({"type": "message_update", "assistantMessageEvent": event});
    let events = run(
        &mut converter,
        &[
            update(json!({"type": "thinking_start", "contentIndex": 0})),
            update(json!({"type": "thinking_delta", "contentIndex": 0, "delta": "hm"})),
            update(json!({"type": "toolcall_start", "contentIndex": 1,
                "partial": {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"},
                    {"type": "toolCall", "id": "c", "name": "read", "arguments": {}}]}})),
            json!({"type": "message_end", "message": {"role": "assistant", "stopReason": "aborted",
                "content": [{"type": "thinking", "thinking": "hm"}]}}),
        ],
    );
    let completed: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) => Some((i.item.kind, i.item.status, i.item.text())),
            _ => None,
        })
        .collect();
    assert_eq!(
        completed,
        [
            (ItemKind::Reasoning, ItemStatus::Failed, "hm".to_string()),
            (ItemKind::ToolCall, ItemStatus::Failed, String::new()),
        ]
    );
}

#[test]
fn a_message_that_did_not_stream_still_makes_its_items() {
    let mut converter = Converter::new("/w");
    converter.begin_turn("t", &"".into());
    let events = run(
        &mut converter,
        &[
            json!({"type": "message_end", "message": {"role": "assistant", "stopReason": "toolUse",
            "content": [{"type": "text", "text": "hi"},
                        {"type": "toolCall", "id": "c", "name": "ls", "arguments": {"path": "."}}]}}),
        ],
    );
    let kinds: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) => Some(i.item.kind),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [ItemKind::Message, ItemKind::ToolCall]);
}

#[test]
fn dialogs_become_requests_and_answers_become_ui_responses() {
    let mut converter = Converter::new("/w");
    converter.begin_turn("t", &"".into());
    let events = run(
        &mut converter,
        &[
            json!({"type": "message_update", "assistantMessageEvent": {"type": "toolcall_end", "contentIndex": 0,
                "toolCall": {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "rm -rf x"}}}}),
            json!({"type": "tool_execution_start", "toolCallId": "c", "toolName": "bash", "args": {"command": "rm -rf x"}}),
            json!({"type": "extension_ui_request", "id": "u1", "method": "confirm",
                "title": "Dangerous command", "message": "rm -rf x"}),
            json!({"type": "extension_ui_request", "id": "u2", "method": "select",
                "title": "Which?", "options": ["A", "B"]}),
            json!({"type": "extension_ui_request", "id": "u3", "method": "setStatus", "statusKey": "k"}),
        ],
    );
    let command_item = events
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::ItemStarted(i) if i.item.kind == ItemKind::CommandExecution => {
                Some(i.item.item_id.clone())
            }
            _ => None,
        })
        .unwrap();
    let permission = events
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::PermissionAsked(p) => Some(p.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(permission.kind, PermissionKind::Command);
    assert_eq!(permission.command.as_deref(), Some("rm -rf x"));
    assert_eq!(permission.item_id, Some(command_item));
    assert_eq!(permission.always_scope.as_deref(), Some("pi:bash:rm"));
    let question = events
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::QuestionAsked(q) => Some(q.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(question.questions[0].options.len(), 2);
    assert!(!question.questions[0].allow_custom);

    assert_eq!(
        converter
            .permission_reply(&permission.permission_id, PermissionReply::Always)
            .unwrap(),
        json!({"type": "extension_ui_response", "id": "u1", "confirmed": true})
    );
    assert!(
        converter
            .permission_reply(&permission.permission_id, PermissionReply::Once)
            .is_err(),
        "answered once"
    );
    assert_eq!(
        converter
            .question_reply(
                &question.question_id,
                QuestionAnswer::Answered(vec![vec!["B".into()]])
            )
            .unwrap(),
        json!({"type": "extension_ui_response", "id": "u2", "value": "B"})
    );

    // A cancel also closes the dialogs Pi still waits on.
    run(
        &mut converter,
        &[json!({"type": "extension_ui_request", "id": "u4", "method": "input", "title": "Name?"})],
    );
    assert_eq!(
        lines(converter.cancel()),
        [
            json!({"type": "abort"}),
            json!({"type": "extension_ui_response", "id": "u4", "cancelled": true})
        ]
    );
}

#[test]
fn unknown_lines_are_unparsed() {
    let mut converter = Converter::new("/w");
    let events = run(&mut converter, &[json!({"type": "agent_settled"})]);
    assert!(matches!(&events[0].payload,
        EventPayload::ItemStarted(i) if i.item.kind == ItemKind::Unparsed));
}

#[test]
fn a_model_call_past_max_turns_aborts_the_run_and_ends_the_turn_max_turns() {
    let (_, ids) = CollectingSink::new();
    let mut converter = Converter::new("/w").with_max_turns(Some(2));
    let image = crate::UserMessage {
        parts: vec![
            crate::UserPart::Text("look".into()),
            crate::UserPart::Image(crate::Image {
                media_type: "image/png".into(),
                data: "iVBORw0K".into(),
                path: None,
            }),
        ],
    };
    let prompt = lines(converter.begin_turn("t", &image));
    assert_eq!(
        prompt[0]["images"],
        json!([{"type": "image", "data": "iVBORw0K", "mimeType": "image/png"}])
    );
    assert_eq!(prompt[0]["message"], "look");
    let start = json!({"type": "turn_start"});
    for _ in 0..2 {
        assert!(converter.convert(&start, &ids).replies.is_empty());
    }
    let over = lines(converter.convert(&start, &ids).replies);
    assert_eq!(over[0], json!({"type": "abort"}));
    assert!(
        converter.convert(&start, &ids).replies.is_empty(),
        "aborted once"
    );
    let end = json!({"type": "agent_end", "messages": [assistant("aborted", 1, 1)]});
    let events = run(&mut converter, &[end]);
    assert_eq!(turn_ends(&events)[0].0, StopReason::MaxTurns);
    // The next prompt counts afresh and ends as it ends.
    converter.begin_turn("t2", &"again".into());
    assert!(converter.convert(&start, &ids).replies.is_empty());
    let end = json!({"type": "agent_end", "messages": [assistant("stop", 1, 1)]});
    assert_eq!(
        turn_ends(&run(&mut converter, &[end]))[0].0,
        StopReason::Completed
    );
}

#[test]
fn bridged_mcp_tools_name_their_server_and_ask_as_mcp_tools() {
    let mut converter = Converter::new("/w").with_mcp_servers(vec!["ht".into(), "ht__x".into()]);
    converter.begin_turn("t", &"".into());
    let call = |id: &str, name: &str| json!({"type": "toolCall", "id": id, "name": name, "arguments": {"text": "hi"}});
    let events = run(
        &mut converter,
        &[
            json!({"type": "message_update", "assistantMessageEvent": {"type": "toolcall_start", "contentIndex": 0,
                "partial": {"role": "assistant", "content": [call("c1", "mcp__ht__x__echo")]}}}),
            json!({"type": "message_update", "assistantMessageEvent": {"type": "toolcall_end", "contentIndex": 0,
                "toolCall": call("c1", "mcp__ht__x__echo")}}),
            json!({"type": "message_end", "message": {"role": "assistant", "stopReason": "toolUse",
                "content": [call("c1", "mcp__ht__x__echo"), call("c2", "mcp__ht__echo"),
                            call("c3", "mcp__other__echo")]}}),
            json!({"type": "tool_execution_start", "toolCallId": "c2", "toolName": "mcp__ht__echo",
                "args": {"text": "hi"}}),
            json!({"type": "extension_ui_request", "id": "u1", "method": "confirm",
                "title": crate::pi::launch::PERMISSION_MARKER, "message": "{}"}),
        ],
    );
    let refs: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemStarted(i) | EventPayload::ItemCompleted(i) => {
                match &i.item.content[..] {
                    [ContentPart::ToolCall { name, mcp, .. }] => Some((
                        name.clone(),
                        mcp.as_ref().map(|m| format!("{}/{}", m.server, m.tool)),
                    )),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect();
    let found = |name: &str| -> Option<String> {
        refs.iter()
            .find(|(n, _)| n == name)
            .expect("a tool call item")
            .1
            .clone()
    };
    assert!(
        refs.iter()
            .filter(|(n, _)| n == "mcp__ht__x__echo")
            .all(|(_, m)| m.as_deref() == Some("ht__x/echo")),
        "streamed, started and completed: {refs:?}"
    );
    assert_eq!(found("mcp__ht__echo").as_deref(), Some("ht/echo"));
    assert_eq!(found("mcp__other__echo"), None, "not a session server");
    let permission = events
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::PermissionAsked(p) => Some(p.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(permission.kind, PermissionKind::McpTool);
    assert_eq!(permission.title, "Use echo (ht)");
    assert_eq!(permission.tool.as_deref(), Some("mcp__ht__echo"));
    assert_eq!(permission.input, Some(json!({"text": "hi"})));
    assert_eq!(permission.always_scope.as_deref(), Some("pi:mcp__ht__echo"));
}
