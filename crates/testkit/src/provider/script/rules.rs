//! The default rule table: which keyword does what, in every agent's dialect.

use std::time::Duration;

use serde_json::{Value, json};

use super::*;

/// The default rule table. Edit here to teach the fake model a new trick.
pub(super) fn default_rules() -> Vec<Rule> {
    let rule = |keyword: &str, effect| Rule {
        keyword: keyword.to_owned(),
        effect,
    };
    let written_path = format!("{{cwd}}/{WRITTEN_FILE}");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {WRITTEN_FILE}\n+{}\n*** End Patch\n",
        WRITTEN_CONTENT.trim_end()
    );
    vec![
        rule(
            "USE_TOOL",
            Effect::CallTool(vec![
                ToolTemplate::json(
                    "Bash",
                    json!({"command": TOOL_COMMAND, "description": "Write and print a marker file"}),
                ),
                ToolTemplate::json("exec_command", json!({"cmd": TOOL_COMMAND})),
                ToolTemplate::json(
                    "bash",
                    json!({"command": TOOL_COMMAND, "description": "Write and print a marker file"}),
                ),
            ]),
        ),
        rule(
            "USE_WRITE",
            Effect::CallTool(vec![
                ToolTemplate::json(
                    "Write",
                    json!({"file_path": written_path, "content": WRITTEN_CONTENT}),
                ),
                ToolTemplate::freeform("apply_patch", &patch),
                ToolTemplate::json(
                    "write",
                    json!({"filePath": written_path, "path": written_path, "content": WRITTEN_CONTENT}),
                ),
            ]),
        ),
        rule("ASK_QUESTION", Effect::CallTool(question_tools())),
        // Leave plan mode with a plan, as a real model does in Claude Code: write the
        // plan to the plan file the prompt names, then call ExitPlanMode (which reads
        // that file). The CLI offers ExitPlanMode only after the model loads it with
        // ToolSearch; the chain calls it as soon as a request offers it.
        rule(
            "EXIT_PLAN",
            Effect::CallChain(vec![
                vec![ToolTemplate::json(
                    "Write",
                    json!({"file_path": calls::PLAN_FILE, "content": PLAN_TEXT}),
                )],
                vec![
                    ToolTemplate::json("ExitPlanMode", json!({})),
                    ToolTemplate::json(
                        "ToolSearch",
                        json!({"query": EXIT_PLAN_SEARCH, "max_results": 1}),
                    ),
                ],
            ]),
        ),
        // An MCP tool named in the prompt (`USE_MCP ht/echo`), under any agent's name for
        // it, searched for first where the agent defers it (see `mcp::mcp_candidates`).
        rule("USE_MCP", Effect::CallMcp(json!({"text": MCP_TEXT}))),
        // A harmless shell call after every tool result, forever: a turn limit ends it.
        rule(
            "LOOP_TOOLS",
            Effect::CallForever(vec![
                ToolTemplate::json(
                    "Bash",
                    json!({"command": LOOP_COMMAND, "description": "One more loop step"}),
                ),
                ToolTemplate::json("exec_command", json!({"cmd": LOOP_COMMAND})),
                ToolTemplate::json(
                    "bash",
                    json!({"command": LOOP_COMMAND, "description": "One more loop step"}),
                ),
            ]),
        ),
        rule("THINK", Effect::Think(THINKING_TEXT.to_owned())),
        // Long enough that a loaded machine still cancels it mid-stream: a cancelled reply
        // is cut short, so the length costs nothing when the cancel works.
        rule("SLOW", Effect::Pace(Duration::from_secs(10))),
        // HTTP 500 that agents give up on quickly: the Anthropic SDK (Claude Code) obeys
        // `x-should-retry: false`; OpenCode still retries five times but `retry-after-ms: 0`
        // removes its back-off; Codex and Pi need retries off in their config (see `offline`).
        rule(
            "FAIL",
            Effect::Fail(Failure {
                should_retry: Some(false),
                retry_after_ms: Some(0),
                openai: Some(OpenAiError {
                    status: 500,
                    error_type: "server_error".to_owned(),
                    code: Some("server_error".to_owned()),
                }),
                ..Failure::new(500, "api_error", "fake provider failure (FAIL keyword)")
            }),
        ),
        // HTTP 400: the request itself is refused, so no client retries it.
        rule(
            "REFUSE",
            Effect::Fail(Failure {
                should_retry: Some(false),
                ..Failure::new(400, "invalid_request_error", REFUSAL_MESSAGE)
            }),
        ),
        // A transient overload, once per prompt: Anthropic's 529 `overloaded_error`
        // (OpenAI's 503) with headers that let the SDKs retry at once; the retry gets
        // the normal reply.
        rule(
            "FLAKY",
            Effect::FailOnce(Failure {
                should_retry: Some(true),
                retry_after_ms: Some(FLAKY_RETRY_AFTER_MS),
                openai: Some(OpenAiError {
                    status: 503,
                    error_type: "server_error".to_owned(),
                    code: None,
                }),
                ..Failure::new(529, "overloaded_error", FLAKY_MESSAGE)
            }),
        ),
    ]
}

/// The two questions asked by `ASK_QUESTION`, one single-select and one multi-select,
/// in the question tool of each agent.
fn question_tools() -> Vec<ToolTemplate> {
    let color = (
        "Which color should the widget be?",
        "Color",
        ["Red", "Blue"],
    );
    let extras = (
        "Which extras do you want?",
        "Extras",
        ["Tests", "Docs", "Benchmarks"],
    );
    let options = |labels: &[&str]| -> Value {
        labels
            .iter()
            .map(|l| json!({"label": l, "description": format!("Choose {l}")}))
            .collect()
    };
    vec![
        ToolTemplate::json(
            "AskUserQuestion",
            json!({"questions": [
                {"question": color.0, "header": color.1, "options": options(&color.2), "multiSelect": false},
                {"question": extras.0, "header": extras.1, "options": options(&extras.2), "multiSelect": true},
            ]}),
        ),
        ToolTemplate::json(
            "request_user_input",
            json!({"questions": [
                {"id": "color", "header": color.1, "question": color.0, "options": options(&color.2)},
                {"id": "extras", "header": extras.1, "question": extras.0, "options": options(&extras.2)},
            ]}),
        ),
        ToolTemplate::json(
            "question",
            json!({"questions": [
                {"question": color.0, "header": color.1, "options": options(&color.2), "multiple": false},
                {"question": extras.0, "header": extras.1, "options": options(&extras.2), "multiple": true},
            ]}),
        ),
        // The daemon's own question tool, on its host tool MCP server, for agents
        // without one (Pi).
        ToolTemplate::json(
            "mcp__host__ask_user",
            json!({"questions": [
                {"question": color.0, "header": color.1, "options": options(&color.2), "multiSelect": false},
                {"question": extras.0, "header": extras.1, "options": options(&extras.2), "multiSelect": true},
            ]}),
        ),
    ]
}
