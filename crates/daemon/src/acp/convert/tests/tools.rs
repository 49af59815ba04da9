//! Tool calls, tool results, commands and file changes.

use sandbox_universal::{FileChangeKind, McpToolRef};
use serde_json::{Value, json};

use super::*;

#[test]
fn tool_kinds_come_from_the_name() {
    let cases = [
        ("Read", acp::ToolKind::Read),
        ("view_image", acp::ToolKind::Read),
        ("cat", acp::ToolKind::Read),
        ("Glob", acp::ToolKind::Search),
        ("grep", acp::ToolKind::Search),
        ("LS", acp::ToolKind::Search),
        ("find", acp::ToolKind::Search),
        ("Edit", acp::ToolKind::Edit),
        ("MultiEdit", acp::ToolKind::Edit),
        ("write", acp::ToolKind::Edit),
        ("apply_patch", acp::ToolKind::Edit),
        ("rm", acp::ToolKind::Delete),
        ("delete", acp::ToolKind::Delete),
        ("mv", acp::ToolKind::Move),
        ("Bash", acp::ToolKind::Execute),
        ("shell", acp::ToolKind::Execute),
        ("exec_command", acp::ToolKind::Execute),
        ("WebFetch", acp::ToolKind::Fetch),
        ("web_search", acp::ToolKind::Fetch),
        ("fetch", acp::ToolKind::Fetch),
        ("TodoWrite", acp::ToolKind::Think),
        ("think", acp::ToolKind::Think),
        ("update_plan", acp::ToolKind::Think),
        ("ExitPlanMode", acp::ToolKind::SwitchMode),
        ("mcp__files__read_file", acp::ToolKind::Read),
        ("Task", acp::ToolKind::Other),
        ("lookup", acp::ToolKind::Other),
    ];
    for (name, kind) in cases {
        assert_eq!(tool_kind(name), kind, "{name}");
    }
}

fn call(id: &str, name: &str, arguments: Value) -> Item {
    Item::new(id, ItemKind::ToolCall, ItemStatus::Completed)
        .with_role(ItemRole::Assistant)
        .with_content(ContentPart::ToolCall {
            call_id: format!("native-{id}"),
            name: name.into(),
            arguments,
            mcp: None,
        })
}

fn result(id: &str, parent: Option<&str>, output: &str, is_error: bool) -> Item {
    let status = if is_error {
        ItemStatus::Failed
    } else {
        ItemStatus::Completed
    };
    let item = Item::new(id, ItemKind::ToolResult, status)
        .with_role(ItemRole::Tool)
        .with_content(ContentPart::ToolResult {
            call_id: "native".into(),
            output: output.into(),
            is_error,
        });
    match parent {
        Some(parent) => item.with_parent(parent),
        None => item,
    }
}

fn shown_call(id: &str, title: &str, kind: acp::ToolKind, input: Value) -> acp::SessionUpdate {
    acp::SessionUpdate::ToolCall(
        acp::ToolCall::new(id.to_string(), title)
            .name(title.to_string())
            .kind(kind)
            .status(acp::ToolCallStatus::InProgress)
            .raw_input(input),
    )
}

#[test]
fn a_call_shows_once_and_its_result_completes_it() {
    let mut converter = UpdateConverter::new(false);
    let read = call("t1", "Read", json!({"path": "a.txt"}));
    let output = result("r1", Some("t1"), "file text", false);
    let events = [
        started(&read),
        completed(&read),
        started(&output),
        completed(&output),
    ];
    assert_eq!(
        run(&mut converter, &events),
        [
            shown_call("t1", "Read", acp::ToolKind::Read, json!({"path": "a.txt"})),
            update(
                "t1",
                acp::ToolCallUpdateFields::new()
                    .status(acp::ToolCallStatus::Completed)
                    .content(vec![text("file text")])
                    .raw_output(json!("file text"))
            ),
        ]
    );
    assert_eq!(run(&mut converter, &[turn_ended()]), []);
}

#[test]
fn a_call_without_result_completes_with_the_turn() {
    let mut converter = UpdateConverter::new(false);
    let search = call("t1", "web_search", json!({"query": "acp"}));
    let shown = run(&mut converter, &[started(&search), completed(&search)]);
    assert_eq!(
        shown,
        [shown_call(
            "t1",
            "web_search",
            acp::ToolKind::Fetch,
            json!({"query": "acp"})
        )]
    );
    let completion = acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::Completed);
    assert_eq!(
        run(&mut converter, &[turn_ended()]),
        [update("t1", completion)]
    );
    assert_eq!(run(&mut converter, &[turn_ended()]), []);
}

#[test]
fn a_failed_call_fails_at_once() {
    let mut converter = UpdateConverter::new(false);
    let mut failed = call("t1", "Bash", json!({"command": "ls"}));
    failed.status = ItemStatus::Failed;
    let updates = run(
        &mut converter,
        &[started(&failed), completed(&failed), turn_ended()],
    );
    assert_eq!(
        updates,
        [
            shown_call(
                "t1",
                "Bash",
                acp::ToolKind::Execute,
                json!({"command": "ls"})
            ),
            update(
                "t1",
                acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::Failed)
            ),
        ]
    );
}

#[test]
fn mcp_calls_are_titled_server_and_tool_and_late_input_is_sent() {
    let mut converter = UpdateConverter::new(false);
    let mcp = |arguments: Value| {
        Item::new("t1", ItemKind::ToolCall, ItemStatus::Completed).with_content(
            ContentPart::ToolCall {
                call_id: "c".into(),
                name: "mcp__files__read_file".into(),
                arguments,
                mcp: Some(McpToolRef {
                    server: "files".into(),
                    tool: "read_file".into(),
                }),
            },
        )
    };
    let events = [
        started(&mcp(json!({}))),
        completed(&mcp(json!({"path": "x"}))),
    ];
    assert_eq!(
        run(&mut converter, &events),
        [
            acp::SessionUpdate::ToolCall(
                acp::ToolCall::new("t1".to_string(), "files: read_file")
                    .name("mcp__files__read_file".to_string())
                    .kind(acp::ToolKind::Read)
                    .status(acp::ToolCallStatus::InProgress)
                    .raw_input(json!({}))
            ),
            update(
                "t1",
                acp::ToolCallUpdateFields::new().raw_input(json!({"path": "x"}))
            ),
        ]
    );
}

#[test]
fn a_result_without_a_known_call_is_a_call_of_its_own() {
    let mut converter = UpdateConverter::new(false);
    let output = result("r1", Some("unknown"), "denied", true);
    assert_eq!(
        run(&mut converter, &[started(&output), completed(&output)]),
        [acp::SessionUpdate::ToolCall(
            acp::ToolCall::new("r1".to_string(), "Tool result")
                .kind(acp::ToolKind::Other)
                .status(acp::ToolCallStatus::Failed)
                .content(vec![text("denied")])
                .raw_output(json!("denied"))
        )]
    );
}

fn command(id: &str, output: Option<&str>, exit_code: Option<i32>, status: ItemStatus) -> Item {
    Item::new(id, ItemKind::CommandExecution, status).with_content(ContentPart::CommandExecution {
        command: "ls -la".into(),
        cwd: Some("/work".into()),
        output: output.map(Into::into),
        exit_code,
    })
}

#[test]
fn command_output_streams_whole_and_exit_zero_completes() {
    let mut converter = UpdateConverter::new(false);
    let events = [
        started(&command("c1", None, None, ItemStatus::InProgress)),
        delta("c1", "a\n"),
        delta("c1", "b\n"),
        completed(&command("c1", None, Some(0), ItemStatus::Completed)),
    ];
    let content = |output: &str| acp::ToolCallUpdateFields::new().content(vec![text(output)]);
    assert_eq!(
        run(&mut converter, &events),
        [
            acp::SessionUpdate::ToolCall(
                acp::ToolCall::new("c1".to_string(), "ls -la")
                    .kind(acp::ToolKind::Execute)
                    .status(acp::ToolCallStatus::InProgress)
                    .raw_input(json!({"command": "ls -la", "cwd": "/work"}))
            ),
            update("c1", content("a\n")),
            update("c1", content("a\nb\n")),
            update(
                "c1",
                acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::Completed)
            ),
        ]
    );
}

#[test]
fn command_with_a_non_zero_exit_fails_with_its_final_output() {
    let mut converter = UpdateConverter::new(false);
    let events = [
        started(&command("c1", None, None, ItemStatus::InProgress)),
        delta("c1", "partial"),
        completed(&command(
            "c1",
            Some("No such file\n"),
            Some(2),
            ItemStatus::Completed,
        )),
    ];
    let updates = run(&mut converter, &events);
    assert_eq!(
        updates[2..],
        [update(
            "c1",
            acp::ToolCallUpdateFields::new()
                .status(acp::ToolCallStatus::Failed)
                .content(vec![text("No such file\n")])
        )]
    );
}

#[test]
fn a_command_of_a_known_call_updates_that_call() {
    let mut converter = UpdateConverter::new(false);
    let bash = call("t1", "Bash", json!({"command": "ls -la"}));
    let ran = command("c1", Some("x\n"), Some(0), ItemStatus::Completed).with_parent("t1");
    let events = [
        started(&bash),
        completed(&bash),
        started(&ran),
        completed(&ran),
        turn_ended(),
    ];
    assert_eq!(
        run(&mut converter, &events),
        [
            shown_call(
                "t1",
                "Bash",
                acp::ToolKind::Execute,
                json!({"command": "ls -la"})
            ),
            update(
                "t1",
                acp::ToolCallUpdateFields::new()
                    .title("ls -la".to_string())
                    .content(vec![text("x\n")])
            ),
            update(
                "t1",
                acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::Completed)
            ),
        ]
    );
}

fn change(path: &str, change_kind: FileChangeKind, diff: Option<&str>) -> ContentPart {
    ContentPart::FileChange {
        path: path.into(),
        change_kind,
        diff: diff.map(Into::into),
    }
}

#[test]
fn a_file_change_shows_its_diff_and_completes() {
    let mut converter = UpdateConverter::new(false);
    let diff = "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,2 +1,2 @@\n fn main() {\n-    old();\n+    new();\n";
    let edit = Item::new("f1", ItemKind::FileChange, ItemStatus::Completed).with_content(change(
        "src/main.rs",
        FileChangeKind::Update,
        Some(diff),
    ));
    let expected_diff = acp::Diff::new("src/main.rs", "fn main() {\n    new();")
        .old_text("fn main() {\n    old();".to_string());
    assert_eq!(
        run(&mut converter, &[started(&edit), completed(&edit)]),
        [
            acp::SessionUpdate::ToolCall(
                acp::ToolCall::new("f1".to_string(), "Edit src/main.rs")
                    .kind(acp::ToolKind::Edit)
                    .status(acp::ToolCallStatus::InProgress)
                    .locations(vec![acp::ToolCallLocation::new("src/main.rs")])
                    .content(vec![acp::ToolCallContent::Diff(expected_diff)])
            ),
            update(
                "f1",
                acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::Completed)
            ),
        ]
    );
}

#[test]
fn deletes_added_content_and_several_files() {
    let mut converter = UpdateConverter::new(false);
    let delete = Item::new("f1", ItemKind::FileChange, ItemStatus::Failed).with_content(change(
        "old.txt",
        FileChangeKind::Delete,
        None,
    ));
    let updates = run(&mut converter, &[completed(&delete)]);
    assert_eq!(
        updates,
        [acp::SessionUpdate::ToolCall(
            acp::ToolCall::new("f1".to_string(), "Delete old.txt")
                .kind(acp::ToolKind::Delete)
                .status(acp::ToolCallStatus::Failed)
                .locations(vec![acp::ToolCallLocation::new("old.txt")])
                .content(vec![text("Deleted old.txt")])
        )]
    );
    // An added file whose "diff" is its content (Codex), next to a removed one.
    let several = Item::new("f2", ItemKind::FileChange, ItemStatus::Completed)
        .with_content(change("new.txt", FileChangeKind::Add, Some("hello\n")))
        .with_content(change("gone.txt", FileChangeKind::Delete, None));
    let updates = run(&mut converter, &[started(&several)]);
    let acp::SessionUpdate::ToolCall(shown) = &updates[0] else {
        panic!("expected a tool call: {updates:?}");
    };
    assert_eq!(shown.title, "Edit new.txt, gone.txt");
    assert_eq!(shown.kind, acp::ToolKind::Edit);
    assert_eq!(
        shown.content,
        [
            acp::ToolCallContent::Diff(acp::Diff::new("new.txt", "hello\n")),
            text("Deleted gone.txt"),
        ]
    );
}

#[test]
fn tool_calls_on_the_wire() {
    let mut converter = UpdateConverter::new(false);
    let updates = run(
        &mut converter,
        &[
            started(&command("c1", None, None, ItemStatus::InProgress)),
            completed(&command("c1", Some("ok"), Some(0), ItemStatus::Completed)),
        ],
    );
    let [call, done] = <[_; 2]>::try_from(updates).unwrap();
    let call = wire(call);
    assert_eq!(call["update"]["sessionUpdate"], "tool_call");
    assert_eq!(call["update"]["toolCallId"], "c1");
    assert_eq!(call["update"]["kind"], "execute");
    assert_eq!(call["update"]["status"], "in_progress");
    assert_eq!(call["update"]["rawInput"]["command"], "ls -la");
    let done = wire(done);
    assert_eq!(done["update"]["sessionUpdate"], "tool_call_update");
    assert_eq!(done["update"]["status"], "completed");
    assert_eq!(
        done["update"]["content"],
        json!([{"type": "content", "content": {"type": "text", "text": "ok"}}])
    );
}
