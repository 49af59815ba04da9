//! Sessions of a real agent CLI moved over the daemon's HTTP API (export → import into
//! another daemon, handover), and what the agent then sent its provider, read as an
//! Anthropic Messages request (Claude Code's, and Pi's on its default Anthropic model).

use std::path::PathBuf;

use sandbox_testkit::provider::script::TOOL_OUTPUT_FILE;
use sandbox_universal::{
    AgentId, CreateSessionRequest, HandoverRequest, PermissionReply, StopReason,
};
use serde_json::Value;

use crate::common::TestDaemon;
use crate::scenarios::ctx::{Ctx, check_turn, reply_text, stop_reason};

/// Exports session `id` of `ctx`'s daemon and imports it as `moved` into a second daemon
/// (the same settings, its own data dir) working in another directory; answers that
/// daemon and the new directory.
pub async fn move_to_another_daemon(ctx: &Ctx, id: &str, moved: &str) -> (TestDaemon, PathBuf) {
    let bundle = ctx
        .daemon
        .client
        .export_session_text(id, false)
        .await
        .unwrap_or_else(|e| panic!("{id}: export: {e}"));
    let other = TestDaemon::start_with(ctx.subject.options.clone()).await;
    let cwd = other.data_dir.path().join("elsewhere").join(moved);
    std::fs::create_dir_all(&cwd).unwrap();
    let cwd = cwd.canonicalize().unwrap();
    let info = other
        .client
        .import_session(moved, bundle.to_vec(), Some(&cwd.display().to_string()))
        .await
        .unwrap_or_else(|e| panic!("{moved}: import: {e}"));
    assert_eq!(info.cwd, cwd.display().to_string());
    (other, cwd)
}

/// Hands session `id` over to `agent`.
pub async fn hand_over(daemon: &TestDaemon, id: &str, agent: &str) {
    let request = HandoverRequest {
        agent: agent.into(),
        model: None,
        agent_mode: None,
    };
    let info = daemon
        .client
        .handover(id, &request)
        .await
        .unwrap_or_else(|e| panic!("{id}: handover to {agent}: {e}"));
    assert_eq!(info.agent.to_string(), agent);
}

/// The content blocks of a Messages request, each with its message's role (a string
/// content as one text block).
pub fn blocks(body: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default().to_string();
        match &message["content"] {
            Value::String(text) => {
                out.push((role, serde_json::json!({"type": "text", "text": text})))
            }
            Value::Array(blocks) => out.extend(blocks.iter().map(|b| (role.clone(), b.clone()))),
            _ => {}
        }
    }
    out
}

/// Whether a `role` message of the request has a text block containing `text`.
pub fn says(body: &Value, role: &str, text: &str) -> bool {
    blocks(body).iter().any(|(r, block)| {
        r == role
            && block["type"] == "text"
            && block["text"].as_str().is_some_and(|t| t.contains(text))
    })
}

/// The output the request's history gives for an assistant `tool_use` of `tool` whose
/// input `matches`: the text of the user `tool_result` answering it.
pub fn tool_output(body: &Value, tool: &str, matches: impl Fn(&Value) -> bool) -> Option<String> {
    let blocks = blocks(body);
    let call = blocks.iter().find(|(role, block)| {
        role == "assistant"
            && block["type"] == "tool_use"
            && block["name"] == tool
            && matches(&block["input"])
    })?;
    let id = &call.1["id"];
    blocks.iter().find_map(|(role, block)| {
        (role == "user" && block["type"] == "tool_result" && block["tool_use_id"] == *id).then(
            || match &block["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            },
        )
    })
}

/// The request's messages, as a failure shows them (at most 6000 characters).
pub fn shown(body: &Value) -> String {
    let text = body["messages"].to_string();
    match text.char_indices().nth(6000) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// Whether the string `key` of a tool input contains `part`.
fn has(input: &Value, key: &str, part: &str) -> bool {
    input[key].as_str().is_some_and(|v| v.contains(part))
}

/// Export → import into another daemon (fresh state dir, another cwd) → the next message:
/// the agent (its shell tool named `shell`) answers, and its request carries the earlier
/// turn: the user's word and the command it ran with the command's output, and the new
/// directory. `old_cwd_dropped`: whether the old directory must be gone from the request
/// (Claude itself tells the model the directory changed, naming both).
pub async fn a_session_moves_and_goes_on(agent: AgentId, shell: &str, old_cwd_dropped: bool) {
    let Some(ctx) = Ctx::start(agent).await else {
        return;
    };
    let s = ctx.session("travel").await;
    let (events, _) = ctx
        .turn_answering(
            &s.id,
            "remember TRAVELKIWI then USE_TOOL (travel)",
            PermissionReply::Once,
        )
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert!(ctx.on_disk(&s, TOOL_OUTPUT_FILE), "the command did not run");

    let (other, cwd) = move_to_another_daemon(&ctx, &s.id, "moved").await;
    let later = "LATERKIWI what was the word?";
    let events = other.turn("moved", later).await;
    check_turn("moved", &events);
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert!(
        ctx.subject.is_reply(&reply_text(&events), later),
        "{}",
        reply_text(&events)
    );
    let calls = ctx.subject.calls_with("LATERKIWI");
    let body = &calls.last().expect("a model call for the new message").body;
    assert!(
        says(body, "user", "TRAVELKIWI"),
        "the earlier turn is not replayed: {}",
        shown(body)
    );
    let output = tool_output(body, shell, |input| has(input, "command", "fake-tool-ran"));
    assert!(
        output.is_some_and(|o| o.contains("fake-tool-ran")),
        "the command and its output are not replayed: {}",
        shown(body)
    );
    let text = body.to_string();
    assert!(
        text.contains(&cwd.display().to_string()),
        "the new cwd is not sent"
    );
    if old_cwd_dropped {
        assert!(
            !text.contains(&s.cwd.display().to_string()),
            "the old cwd is still sent: {}",
            shown(body)
        );
    }
}

/// A mock session's turn (a tool call, a command, a file change, a reply) handed over to
/// `agent` (its shell tool named `shell`) → the next message: the agent answers, and its
/// request carries the user's text, the reply, the command (as a call of its shell tool)
/// with its output, the mock's tool call with its result, and the file change as text.
pub async fn another_agents_conversation_goes_on(agent: AgentId, shell: &str) {
    let Some(ctx) = Ctx::start(agent).await else {
        return;
    };
    let (request, _) = ctx.request("handed");
    let request = CreateSessionRequest {
        agent: "mock".into(),
        ..request
    };
    let created = ctx
        .daemon
        .client
        .create_session("handed", &request)
        .await
        .expect("a mock session");
    assert!(created.healthy, "{created:?}");
    let events = ctx.turn("handed", "remember MOCKLYNX tool").await;
    assert_eq!(stop_reason(&events), StopReason::Completed);

    hand_over(&ctx.daemon, "handed", &agent.to_string()).await;
    let later = "LATERLYNX what was the word?";
    let events = ctx.turn("handed", later).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert!(
        ctx.subject.is_reply(&reply_text(&events), later),
        "{}",
        reply_text(&events)
    );
    let calls = ctx.subject.calls_with("LATERLYNX");
    let body = &calls
        .first()
        .expect("a model call for the new message")
        .body;
    assert!(
        says(body, "user", "remember MOCKLYNX tool"),
        "the user's text: {}",
        shown(body)
    );
    assert!(
        says(body, "assistant", "echo: remember MOCKLYNX tool"),
        "the reply: {}",
        shown(body)
    );
    let command = tool_output(body, shell, |input| input["command"] == "echo mock");
    assert_eq!(
        command.as_deref().map(str::trim),
        Some("mock"),
        "the command: {}",
        shown(body)
    );
    let search = tool_output(body, "mock_search", |input| has(input, "query", "MOCKLYNX"));
    assert_eq!(
        search.as_deref(),
        Some("mock search found 1 result"),
        "the tool call: {}",
        shown(body)
    );
    assert!(
        says(body, "assistant", "mock.txt]"),
        "the file change: {}",
        shown(body)
    );
}
