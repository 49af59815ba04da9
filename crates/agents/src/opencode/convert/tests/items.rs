//! Items: streamed bash output, file changes, plans, early deltas, unknown and
//! server-level events.

use sandbox_universal::{ContentPart, EventPayload, FileChangeKind, ItemKind};
use serde_json::json;

use super::{ROOT, Session, completed, started, types};

#[test]
fn bash_output_is_cumulative_and_streams_as_deltas() {
    let mut s = Session::new();
    let command = json!({"command": "seq 3"});
    let mut deltas = Vec::new();
    for output in ["", "1\n", "1\n2\n", "1\n2\n3\n"] {
        for e in s.tool(
            ROOT,
            "msg_1",
            "c1",
            "bash",
            json!({"status": "running",
            "input": command, "metadata": {"output": output}}),
        ) {
            if let EventPayload::ItemDelta(d) = e.payload {
                deltas.push(d.delta);
            }
        }
    }
    assert_eq!(deltas, ["1\n", "2\n", "3\n"]);
    let events = s.tool(
        ROOT,
        "msg_1",
        "c1",
        "bash",
        json!({"status": "completed",
        "input": command, "output": "1\n2\n3\n", "metadata": {"output": "1\n2\n3\n", "exit": 0}}),
    );
    assert!(
        matches!(&completed(&events)[0].content[0], ContentPart::CommandExecution {
        output: Some(o), exit_code: Some(0), cwd: Some(cwd), .. } if o == "1\n2\n3\n" && cwd == "/w")
    );
    // A late update of a finished part changes nothing.
    assert!(
        s.tool(
            ROOT,
            "msg_1",
            "c1",
            "bash",
            json!({"status": "completed",
        "input": command, "output": "x"})
        )
        .is_empty()
    );
}

#[test]
fn a_write_asked_before_it_runs_carries_the_permission_diff() {
    let mut s = Session::new();
    let diff = "Index: /w/f.txt\n--- /w/f.txt\n+++ /w/f.txt\n@@ -0,0 +1,1 @@\n+hi\n";
    // The permission comes first: the item starts from it.
    let events = s.feed(
        "permission.asked",
        json!({"id": "per_1", "sessionID": ROOT, "permission": "edit",
            "patterns": ["w/f.txt"], "metadata": {"filepath": "/w/f.txt", "diff": diff},
            "always": ["*"], "tool": {"messageID": "msg_1", "callID": "c1"}}),
    );
    assert_eq!(types(&events), ["itemStarted", "permissionAsked"]);
    let item = &started(&events)[0];
    assert_eq!(item.kind, ItemKind::FileChange);
    let EventPayload::PermissionAsked(asked) = &events[1].payload else {
        unreachable!()
    };
    assert_eq!(asked.paths, ["/w/f.txt"]);
    assert_eq!(asked.title, "Edit /w/f.txt");
    assert_eq!(asked.always_scope.as_deref(), Some("opencode:edit:*"));
    let input = json!({"filePath": "/w/f.txt", "content": "hi\n"});
    assert!(
        s.tool(
            ROOT,
            "msg_1",
            "c1",
            "write",
            json!({"status": "running", "input": input})
        )
        .is_empty()
    );
    let events = s.tool(
        ROOT,
        "msg_1",
        "c1",
        "write",
        json!({"status": "completed",
        "input": input, "output": "Wrote file successfully.",
        "metadata": {"filepath": "/w/f.txt", "exists": false}}),
    );
    assert_eq!(types(&events), ["itemCompleted"]);
    let done = &completed(&events)[0];
    assert_eq!(done.item_id, item.item_id);
    assert_eq!(
        done.content,
        [ContentPart::FileChange {
            path: "/w/f.txt".into(),
            change_kind: FileChangeKind::Add,
            diff: Some(diff.into())
        }]
    );
}

#[test]
fn todowrite_is_a_plan() {
    let mut s = Session::new();
    let todos = json!({"todos": [{"content": "a", "status": "in_progress", "priority": "high"}]});
    let events = s.tool(
        ROOT,
        "msg_1",
        "c1",
        "todowrite",
        json!({"status": "completed",
        "input": todos, "output": "[]", "metadata": {"todos": todos["todos"]}}),
    );
    assert_eq!(types(&events), ["itemStarted", "itemCompleted"]);
    assert_eq!(completed(&events)[0].kind, ItemKind::Plan);
}

#[test]
fn deltas_before_their_part_are_kept() {
    let mut s = Session::new();
    s.message(ROOT, "msg_1", false, None);
    assert!(s.delta(ROOT, "msg_1", "prt_t", "he").is_empty());
    let events = s.text(ROOT, "msg_1", "prt_t", "hel", false);
    let deltas: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemDelta(d) => Some(d.delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["he", "l"]);
}

#[test]
fn unknown_events_and_parts_become_unparsed_and_server_events_vanish() {
    let mut s = Session::new();
    for (kind, properties) in [
        ("session.hologram", json!({"sessionID": ROOT})),
        (
            "message.part.updated",
            json!({"sessionID": ROOT, "part": {"type": "hologram",
            "id": "p", "messageID": "m", "sessionID": ROOT}}),
        ),
        (
            "session.status",
            json!({"sessionID": ROOT, "status": {"type": "dreaming"}}),
        ),
        (
            "message.updated",
            json!({"sessionID": ROOT, "info": "not an object"}),
        ),
    ] {
        let events = s.feed(kind, properties);
        assert_eq!(types(&events), ["itemStarted", "itemCompleted"], "{kind}");
        let item = &completed(&events)[0];
        assert_eq!(item.kind, ItemKind::Unparsed);
        let ContentPart::Unparsed { raw, error } = &item.content[0] else {
            unreachable!()
        };
        assert_eq!(raw["type"], kind);
        assert!(error.contains(kind), "{error}");
    }
    for kind in [
        "server.connected",
        "server.heartbeat",
        "plugin.added",
        "catalog.updated",
        "file.watcher.updated",
        "sync",
        "session.updated",
        "session.diff",
        "todo.updated",
        "session.next.text.delta",
        "permission.v2.asked",
    ] {
        assert!(s.feed(kind, json!({"id": "x"})).is_empty(), "{kind}");
    }
    // The user's own message and its text make no items; step parts neither.
    let user = json!({"sessionID": ROOT, "info": {"id": "msg_u", "role": "user"}});
    assert!(s.feed("message.updated", user).is_empty());
    assert!(s.text(ROOT, "msg_u", "prt_u", "say hi", false).is_empty());
    let step = json!({"sessionID": ROOT, "part": {"type": "step-finish", "id": "p2",
        "messageID": "msg_1", "reason": "stop", "tokens": {}, "cost": 0}});
    assert!(s.feed("message.part.updated", step).is_empty());
}
