//! Turns: the two idles of a cancel, child sessions, errors, a lost server.

use sandbox_universal::{
    AgentError, EventPayload, ItemKind, ItemStatus, PermissionReply, StopReason,
};
use serde_json::json;

use super::{ROOT, Session, completed, started, types};
use crate::kernel::{Gone, Protocol};
use crate::process::ExitInfo;

#[test]
fn a_cancel_ends_once_after_the_failed_message_between_two_idles() {
    let mut s = Session::new();
    s.converter.begin_turn("turn_1", &"".into());
    s.status(ROOT, "busy");
    s.message(ROOT, "msg_1", false, None);
    s.text(ROOT, "msg_1", "prt_t", "", false);
    s.delta(ROOT, "msg_1", "prt_t", "this ");
    let pending = s.bash_permission("per_1", "c1", "ls", &["ls *"]);
    let calls = s.converter.cancel();
    let paths: Vec<_> = calls.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/session/ses_root/abort", "/permission/per_1/reply"]
    );
    assert_eq!(calls[1].body, Some(json!({"reply": "reject"})));
    assert!(
        s.converter
            .permission_reply(&pending.permission_id, PermissionReply::Once)
            .is_err(),
        "rejected natively; the daemon cancels it with the turn"
    );
    let abort = json!({"sessionID": ROOT, "error": {"name": "MessageAbortedError",
        "data": {"message": "Aborted"}}});
    assert!(
        s.feed("session.error", abort).is_empty(),
        "our abort is no error"
    );
    assert!(
        s.status(ROOT, "idle").is_empty(),
        "the message is not final yet"
    );
    assert!(
        s.feed("session.idle", json!({"sessionID": ROOT}))
            .is_empty()
    );
    let events = s.text(ROOT, "msg_1", "prt_t", "this ", true);
    let text = &completed(&events)[0];
    assert_eq!(
        (text.status, text.text().as_str()),
        (ItemStatus::Failed, "this ")
    );
    let events = s.message(ROOT, "msg_1", true, Some("MessageAbortedError"));
    assert_eq!(types(&events), ["itemCompleted", "turnEnded"], "{events:?}");
    let EventPayload::TurnEnded(ended) = &events[1].payload else {
        unreachable!()
    };
    assert_eq!(ended.stop_reason, StopReason::Cancelled);
    let tool = &completed(&events)[0];
    assert_eq!(
        (tool.kind, tool.status),
        (ItemKind::CommandExecution, ItemStatus::Failed),
        "the refused call fails with its message"
    );
    // The second idle ends nothing; nor does it end the next turn before it runs.
    assert!(s.status(ROOT, "idle").is_empty());
    s.converter.begin_turn("turn_2", &"".into());
    assert!(
        s.feed("session.idle", json!({"sessionID": ROOT}))
            .is_empty()
    );
    assert_eq!(s.converter.current_turn(), Some("turn_2"));
    s.status(ROOT, "busy");
    let events = s.status(ROOT, "idle");
    assert!(matches!(&events[..], [e] if matches!(&e.payload,
        EventPayload::TurnEnded(t) if t.turn_id == "turn_2" && t.stop_reason == StopReason::Completed)));
}

#[test]
fn child_sessions_report_under_their_task_and_their_idle_does_not_end_the_turn() {
    let mut s = Session::new();
    s.converter.begin_turn("turn_1", &"".into());
    s.status(ROOT, "busy");
    s.message(ROOT, "msg_1", false, None);
    let input = json!({"prompt": "say hi", "description": "child", "subagent_type": "general"});
    let events = s.tool(
        ROOT,
        "msg_1",
        "c1",
        "task",
        json!({"status": "running", "input": input}),
    );
    let task = started(&events)[0].item_id.clone();
    assert!(!s.converter.owns("ses_child"));
    s.feed(
        "session.created",
        json!({"sessionID": "ses_child", "info": {"id": "ses_child", "parentID": ROOT}}),
    );
    assert!(s.converter.owns("ses_child"));
    s.tool(
        ROOT,
        "msg_1",
        "c1",
        "task",
        json!({"status": "running", "input": input,
        "metadata": {"sessionId": "ses_child", "parentSessionId": ROOT}}),
    );
    s.status("ses_child", "busy");
    s.message("ses_child", "msg_c", false, None);
    let events = s.text("ses_child", "msg_c", "prt_c", "", false);
    assert_eq!(started(&events)[0].parent_id.as_ref(), Some(&task));
    let events = s.tool(
        "ses_child",
        "msg_c",
        "c1",
        "read",
        json!({"status": "completed",
        "input": {"filePath": "/w/a"}, "output": "text"}),
    );
    let items = completed(&events);
    assert_eq!(
        items[0].parent_id.as_ref(),
        Some(&task),
        "the same call id, another session"
    );
    assert_eq!(items[1].parent_id.as_ref(), Some(&items[0].item_id));
    s.text("ses_child", "msg_c", "prt_c", "hi", true);
    assert!(s.status("ses_child", "idle").is_empty());
    assert_eq!(s.converter.current_turn(), Some("turn_1"));
    s.tool(
        ROOT,
        "msg_1",
        "c1",
        "task",
        json!({"status": "completed", "input": input,
        "output": "<task id=\"ses_child\" state=\"completed\">hi</task>"}),
    );
    s.message(ROOT, "msg_1", true, None);
    let events = s.status(ROOT, "idle");
    let EventPayload::TurnEnded(ended) = &events[0].payload else {
        panic!("{events:?}")
    };
    let usage = ended.usage.clone().unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (3, 2),
        "the child's are its own"
    );
    assert_eq!(usage.cached_input_tokens, Some(1));
    assert_eq!(usage.total_cost_usd, Some(0.5));
}

#[test]
fn errors_map_to_universal_kinds_once_per_turn() {
    let mut s = Session::new();
    s.converter.begin_turn("turn_1", &"".into());
    s.status(ROOT, "busy");
    let auth = json!({"sessionID": ROOT, "error": {"name": "APIError",
        "data": {"message": "bad key", "statusCode": 401}}});
    let events = s.feed("session.error", auth);
    assert!(matches!(
        &events[0].payload,
        EventPayload::Error(AgentError::TokenError { .. })
    ));
    let mut info = json!({"id": "msg_1", "role": "assistant", "time": {"created": 1, "completed": 2},
        "error": {"name": "APIError", "data": {"message": "bad key", "statusCode": 401}}});
    info["sessionID"] = json!(ROOT);
    let events = s.feed("message.updated", json!({"sessionID": ROOT, "info": info}));
    assert!(events.is_empty(), "reported once: {events:?}");
    let events = s.status(ROOT, "idle");
    assert!(matches!(&events[0].payload,
        EventPayload::TurnEnded(t) if t.stop_reason == StopReason::Error));
    let overflow = json!({"sessionID": ROOT, "error": {"name": "ContextOverflowError",
        "data": {"message": "too long"}}});
    let events = s.feed("session.error", overflow);
    assert_eq!(
        events[0].payload,
        EventPayload::Error(AgentError::AgentReported {
            message: "too long".into(),
            code: Some("ContextOverflowError".into())
        })
    );
}

#[test]
fn a_lost_server_reports_and_ends_the_turn_and_leaves_items_to_the_core() {
    let mut s = Session::new();
    s.converter.begin_turn("turn_1", &"".into());
    s.status(ROOT, "busy");
    s.message(ROOT, "msg_1", false, None);
    s.text(ROOT, "msg_1", "prt_t", "par", false);
    let exit = ExitInfo {
        code: None,
        signal: Some(9),
        stderr_tail: "killed".into(),
    };
    let events = s.converter.gone(&Gone {
        why: "opencode serve exited (signal 9)".into(),
        exit,
    });
    assert_eq!(types(&events), ["error", "turnEnded"]);
    assert!(events.iter().all(|e| e.synthetic));
    assert!(matches!(
        &events[0].payload,
        EventPayload::Error(AgentError::ProcessExited {
            signal: Some(9),
            ..
        })
    ));
    assert_eq!(s.converter.current_turn(), None);
    // Later events of the dead turn end nothing.
    assert!(s.status(ROOT, "idle").is_empty());
}
