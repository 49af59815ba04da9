//! The script's decisions, one request view at a time.

use serde_json::json;

use super::*;
use crate::provider::view::OfferedTool;

fn view(last: LastTurn, tools: &[(&str, Option<&[&str]>)]) -> RequestView {
    RequestView {
        last,
        tools: tools
            .iter()
            .map(|(name, props)| OfferedTool {
                name: (*name).to_owned(),
                freeform: *name == "apply_patch",
                properties: props.map(|p| p.iter().map(|s| (*s).to_owned()).collect()),
                ..OfferedTool::default()
            })
            .collect(),
        cwd: Some("/w".to_owned()),
        plan_file: None,
    }
}

#[test]
fn side_request_without_tools_gets_text() {
    let plan = Script::default().plan(&view(LastTurn::User("USE_TOOL FAIL".into()), &[]));
    assert_eq!(plan.text.as_deref(), Some(REPLY_TEXT));
    assert!(plan.tool.is_none() && plan.failure.is_none());
}

#[test]
fn tool_is_picked_in_the_offered_dialect_and_filtered_by_schema() {
    let plan = Script::default().plan(&view(
        LastTurn::User("please USE_WRITE".into()),
        &[("read", None), ("write", Some(&["path", "content"]))],
    ));
    let tool = plan.tool.expect("tool");
    assert_eq!(tool.name, "write");
    assert_eq!(
        tool.input,
        ToolInput::Json(json!({"path": "/w/fake_written.txt", "content": WRITTEN_CONTENT}))
    );
}

#[test]
fn freeform_patch_for_codex() {
    let plan = Script::default().plan(&view(
        LastTurn::User("USE_WRITE".into()),
        &[("exec_command", None), ("apply_patch", None)],
    ));
    let tool = plan.tool.expect("tool");
    assert!(
        tool.input_text()
            .starts_with("*** Begin Patch\n*** Add File: fake_written.txt")
    );
}

fn after(prompt: &str, called: &[&str]) -> LastTurn {
    LastTurn::ToolResult {
        prompt: Some(prompt.to_owned()),
        called: called.iter().map(|c| (*c).to_owned()).collect(),
        output: "ok".to_owned(),
    }
}

#[test]
fn after_tool_result_the_model_finishes() {
    let script = Script::default();
    let plan = script.plan(&view(after("USE_TOOL", &["Bash"]), &[("Bash", None)]));
    assert_eq!(plan.text.as_deref(), Some(AFTER_TOOL_TEXT));
    assert!(plan.tool.is_none());
    // Candidates listed after the one called are never chained, nor other rules.
    let plan = script.plan(&view(
        after("USE_WRITE USE_TOOL THINK", &["apply_patch"]),
        &[("apply_patch", None), ("write", None), ("Bash", None)],
    ));
    assert_eq!(plan.label, "text (after tool)");
    assert!(plan.thinking.is_none());
    let orphan = LastTurn::ToolResult {
        prompt: None,
        called: Vec::new(),
        output: String::new(),
    };
    let plan = script.plan(&view(orphan, &[("Bash", None)]));
    assert_eq!(plan.text.as_deref(), Some(AFTER_TOOL_TEXT));
}

#[test]
fn exit_plan_writes_the_plan_searches_then_calls_the_revealed_tool() {
    let script = Script::default();
    let write = ("Write", Some(&["file_path", "content"][..]));
    let search = ("ToolSearch", Some(&["query", "max_results"][..]));
    let exit = ("ExitPlanMode", Some(&["allowedPrompts"][..]));
    let planning = |last: LastTurn, tools: &[(&str, Option<&[&str]>)]| {
        let mut view = view(last, tools);
        view.plan_file = Some("/h/plans/p.md".to_owned());
        script.plan(&view)
    };
    let first = planning(LastTurn::User("EXIT_PLAN".into()), &[write, search]);
    assert_eq!(first.label, "tool:Write");
    assert_eq!(
        first.tool.unwrap().input,
        ToolInput::Json(json!({"file_path": "/h/plans/p.md", "content": PLAN_TEXT}))
    );
    let second = planning(after("EXIT_PLAN", &["Write"]), &[write, search]);
    assert_eq!(second.label, "tool:ToolSearch (chained)");
    assert_eq!(
        second.tool.unwrap().input,
        ToolInput::Json(json!({"query": EXIT_PLAN_SEARCH, "max_results": 1}))
    );
    // The search did not reveal the tool: the model gives up with text.
    let unrevealed = planning(
        after("EXIT_PLAN", &["Write", "ToolSearch"]),
        &[write, search],
    );
    assert_eq!(unrevealed.text.as_deref(), Some(AFTER_TOOL_TEXT));
    let revealed = [write, search, exit];
    let third = planning(after("EXIT_PLAN", &["Write", "ToolSearch"]), &revealed);
    assert_eq!(third.label, "tool:ExitPlanMode (chained)");
    assert_eq!(third.tool.unwrap().input, ToolInput::Json(json!({})));
    let done = planning(
        after("EXIT_PLAN", &["Write", "ToolSearch", "ExitPlanMode"]),
        &revealed,
    );
    assert_eq!(done.text.as_deref(), Some(AFTER_TOOL_TEXT));
    // Already loaded (a later turn): the plan, then ExitPlanMode, then text.
    let again = planning(after("EXIT_PLAN", &["Write"]), &revealed);
    assert_eq!(again.label, "tool:ExitPlanMode (chained)");
    // Outside plan mode no plan file is named: no write.
    let plain = script.plan(&view(LastTurn::User("EXIT_PLAN".into()), &[write, search]));
    assert_eq!(plain.label, "tool:ToolSearch");
}

#[test]
fn unoffered_tool_falls_back_to_text_and_modifiers_combine() {
    let plan = Script::default().plan(&view(
        LastTurn::User("THINK SLOW ASK_QUESTION".into()),
        &[("Bash", None)],
    ));
    assert!(plan.tool.is_none());
    assert_eq!(plan.thinking.as_deref(), Some(THINKING_TEXT));
    assert_eq!(plan.text.as_deref(), Some(SLOW_TEXT));
    assert_eq!(plan.pace, Some(Duration::from_secs(10)));
}

#[test]
fn fail_and_custom_rules() {
    let script = Script::default().with_rule("HELLO", Effect::Say("custom".into()));
    let plan = script.plan(&view(LastTurn::User("HELLO".into()), &[("Bash", None)]));
    assert_eq!(plan.text.as_deref(), Some("custom"));
    let plan = script.plan(&view(LastTurn::User("FAIL".into()), &[("Bash", None)]));
    assert_eq!(plan.failure.map(|f| f.status), Some(500));
}

#[test]
fn refuse_is_a_400_invalid_request_in_every_dialect() {
    let plan = Script::default().plan(&view(
        LastTurn::User("REFUSE THINK".into()),
        &[("Bash", None)],
    ));
    assert_eq!(plan.label, "error:400");
    assert_eq!(plan.label_for_openai(), "error:400");
    let failure = plan.failure.expect("failure");
    assert_eq!(
        (failure.status, failure.error_type.as_str()),
        (400, "invalid_request_error")
    );
    assert_eq!(failure.message, REFUSAL_MESSAGE);
    assert_ne!(failure.should_retry, Some(true));
    assert_eq!(failure.retry_after_ms, None);
    let openai = failure.openai_error();
    assert_eq!(
        (openai.status, openai.error_type.as_str(), openai.code),
        (400, "invalid_request_error", None)
    );
}

#[test]
fn flaky_fails_once_per_prompt_then_replies_normally() {
    let script = Script::default();
    let memory = Memory::default();
    let tools = [("Bash", None)];
    let first = script.plan_with(&view(LastTurn::User("FLAKY THINK".into()), &tools), &memory);
    assert_eq!(first.label, "error:529 (once)");
    assert_eq!(first.label_for_openai(), "error:503 (once)");
    let failure = first.failure.expect("failure");
    assert_eq!(failure.error_type, "overloaded_error");
    assert_eq!(failure.should_retry, Some(true));
    assert_eq!(failure.retry_after_ms, Some(FLAKY_RETRY_AFTER_MS));
    assert_eq!(failure.openai_error().status, 503);
    // The retry of the same prompt gets the reply, other rules included.
    let retry = script.plan_with(&view(LastTurn::User("FLAKY THINK".into()), &tools), &memory);
    assert!(retry.failure.is_none());
    assert_eq!(retry.label, "thinking+text");
    assert_eq!(retry.thinking.as_deref(), Some(THINKING_TEXT));
    // Another prompt fails once of its own; side requests never fail.
    let other = script.plan_with(&view(LastTurn::User("FLAKY again".into()), &tools), &memory);
    assert!(other.failure.is_some());
    let side = script.plan_with(&view(LastTurn::User("FLAKY more".into()), &[]), &memory);
    assert!(side.failure.is_none());
    // A fresh memory (another provider) fails it again; plain `plan` always does.
    let fresh = Memory::default();
    let again = script.plan_with(&view(LastTurn::User("FLAKY THINK".into()), &tools), &fresh);
    assert!(again.failure.is_some());
}
