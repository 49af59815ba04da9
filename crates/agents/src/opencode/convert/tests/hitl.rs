//! Permissions and questions: `always` scopes, replies made elsewhere, question routes.

use sandbox_universal::{
    ContentPart, EventPayload, ItemKind, ItemStatus, PermissionKind, PermissionOutcome,
    PermissionReply,
};
use serde_json::json;

use super::super::hitl::{kind_of, wildcard};
use super::{ROOT, Session, completed, started, types};
use crate::QuestionAnswer;
use crate::kernel::Protocol;

#[test]
fn always_is_sent_once_and_covered_requests_get_the_approved_scope() {
    let mut s = Session::new();
    s.converter.begin_turn("turn_1", &"".into());
    let first = s.bash_permission("per_1", "c1", "echo a && cat b", &["echo *", "cat *"]);
    let scope = "opencode:bash:echo *, cat *";
    assert_eq!(first.always_scope.as_deref(), Some(scope));
    let call = s
        .converter
        .permission_reply(&first.permission_id, PermissionReply::Always)
        .unwrap();
    assert_eq!(call.path, "/permission/per_1/reply");
    assert_eq!(
        call.body,
        Some(json!({"reply": "once"})),
        "never `always` natively"
    );
    assert_eq!(call.directory, "/w");
    assert_eq!(
        call.path_with_directory(),
        "/permission/per_1/reply?directory=/w"
    );
    // OpenCode's echo of our own reply resolves nothing (the daemon did).
    let echo = s.feed(
        "permission.replied",
        json!({"sessionID": ROOT, "requestID": "per_1", "reply": "once"}),
    );
    assert!(echo.is_empty());

    // `echo hello` is covered by `echo *`: the same scope, so the daemon approves it
    // itself, and its automatic `always` is sent as `once` too.
    let covered = s.bash_permission("per_2", "c2", "echo hello", &["echo *"]);
    assert_eq!(covered.always_scope.as_deref(), Some(scope));
    let call = s
        .converter
        .permission_reply(&covered.permission_id, PermissionReply::Always)
        .unwrap();
    assert_eq!(call.body, Some(json!({"reply": "once"})));
    // `rm x` is not covered: its own scope, asked again.
    let other = s.bash_permission("per_3", "c3", "echo ok && rm x", &["echo *", "rm *"]);
    assert_eq!(
        other.always_scope.as_deref(),
        Some("opencode:bash:echo *, rm *")
    );
    let call = s
        .converter
        .permission_reply(&other.permission_id, PermissionReply::Reject)
        .unwrap();
    assert_eq!(call.body, Some(json!({"reply": "reject"})));
    assert!(
        s.converter
            .permission_reply(&other.permission_id, PermissionReply::Once)
            .is_err(),
        "answered once only"
    );
}

#[test]
fn a_reply_made_elsewhere_resolves_the_request() {
    let mut s = Session::new();
    let asked = s.bash_permission("per_9", "c9", "ls", &["ls *"]);
    let events = s.feed(
        "permission.replied",
        json!({"sessionID": ROOT, "requestID": "per_9", "reply": "reject"}),
    );
    assert!(matches!(&events[..], [e] if matches!(&e.payload,
        EventPayload::PermissionResolved(r) if r.permission_id == asked.permission_id
            && r.outcome == PermissionOutcome::Reject && !r.automatic)));
    assert!(
        s.converter
            .permission_reply(&asked.permission_id, PermissionReply::Once)
            .is_err()
    );
}

#[test]
fn questions_are_answered_or_rejected_on_their_routes() {
    let mut s = Session::new();
    let ask = |s: &mut Session, id: &str, call: &str| {
        s.tool(
            ROOT,
            "msg_1",
            call,
            "question",
            json!({"status": "pending", "input": {}, "raw": ""}),
        );
        let events = s.feed(
            "question.asked",
            json!({"id": id, "sessionID": ROOT, "questions": [
                {"question": "Color?", "header": "Color", "multiple": false, "custom": false,
                 "options": [{"label": "Red", "description": "r"}]}],
                "tool": {"messageID": "msg_1", "callID": call}}),
        );
        assert_eq!(types(&events), ["itemStarted", "questionAsked"]);
        let EventPayload::QuestionAsked(q) = &events[1].payload else {
            unreachable!()
        };
        assert_eq!(q.item_id.as_ref(), Some(&started(&events)[0].item_id));
        assert!(!q.questions[0].allow_custom);
        q.question_id.clone()
    };
    let first = ask(&mut s, "que_1", "c1");
    let answer = QuestionAnswer::Answered(vec![vec!["Red".into()]]);
    let call = s.converter.question_reply(&first, answer).unwrap();
    assert_eq!(call.path, "/question/que_1/reply");
    assert_eq!(call.body, Some(json!({"answers": [["Red"]]})));
    let second = ask(&mut s, "que_2", "c2");
    let call = s
        .converter
        .question_reply(&second, QuestionAnswer::Rejected)
        .unwrap();
    assert_eq!(
        (call.path.as_str(), call.body),
        ("/question/que_2/reject", None)
    );
    assert!(
        s.converter
            .question_reply(&second, QuestionAnswer::Rejected)
            .is_err()
    );
    // The tool fails with the dismissal the model reads.
    let events = s.tool(
        ROOT,
        "msg_1",
        "c2",
        "question",
        json!({"status": "error",
        "input": {"questions": []}, "error": "The user dismissed this question"}),
    );
    let items = completed(&events);
    assert_eq!(
        (items[0].kind, items[0].status),
        (ItemKind::ToolCall, ItemStatus::Failed)
    );
    assert!(matches!(
        &items[1].content[0],
        ContentPart::ToolResult { is_error: true, .. }
    ));
}

#[test]
fn wildcards_follow_opencode() {
    assert!(wildcard("echo *", "echo fake-tool-ran > x"));
    assert!(wildcard("echo *", "echo"));
    assert!(!wildcard("echo *", "cat x"));
    assert!(wildcard("*", "src/a.rs"));
    assert!(wildcard("git log?", "git log1"));
    assert!(!wildcard("cat *", "catalog"));
}

#[test]
fn kinds_follow_the_permission() {
    assert_eq!(kind_of("bash", Some("bash")), PermissionKind::Command);
    assert_eq!(kind_of("edit", Some("write")), PermissionKind::FileChange);
    assert_eq!(
        kind_of("external_directory", Some("write")),
        PermissionKind::FileChange
    );
    assert_eq!(
        kind_of("external_directory", Some("read")),
        PermissionKind::FileRead
    );
    assert_eq!(kind_of("webfetch", None), PermissionKind::Network);
    assert_eq!(kind_of("doom_loop", None), PermissionKind::Tool);
}
