//! Claude Code's scenarios (stream-json, permission prompts as `can_use_tool` control
//! requests) and their checks on the native transcript.

use sandbox_universal::PermissionReply;
use serde_json::Value;

use super::prompts::{FAIL, FLAKY, QUESTION, REFUSE, SLOW, TEXT, THINK, TOOL};
use super::{Run, Spec, ensure, failed_calls};
use crate::provider::script::{
    AFTER_TOOL_TEXT, REFUSAL_MESSAGE, REPLY_TEXT, SLOW_TEXT, TOOL_OUTPUT_FILE,
};

pub(super) const SCENARIOS: &[Spec] = &[
    Spec::new("text", "a plain streamed text turn", TEXT),
    Spec::new(
        "tool-allow",
        "Bash call, permission allowed over stdio, tool runs",
        TOOL,
    ),
    Spec::new(
        "tool-deny",
        "Bash call, permission denied with the daemon's message, tool does not run",
        TOOL,
    )
    .answer(PermissionReply::Reject),
    Spec::new(
        "question",
        "AskUserQuestion with two questions (one multi-select), answered",
        QUESTION,
    ),
    Spec::new("think", "thinking deltas before the text", THINK),
    Spec::new(
        "cancel",
        "a slow reply interrupted after its first delta, then a new turn",
        SLOW,
    )
    .cancelling(),
    Spec::new(
        "fail",
        "the provider answers HTTP 500; the turn ends with an API error",
        FAIL,
    ),
    Spec::new(
        "flaky",
        "the provider fails the first call once (529/503, retry headers); the retry completes",
        FLAKY,
    ),
    Spec::new(
        "refuse",
        "the provider refuses with HTTP 400 invalid_request_error; the turn ends with its message",
        REFUSE,
    ),
];

/// What the daemon's denial tells the model (`claude::convert::hitl`).
const DENIED: &str = "denied permission";

/// The `can_use_tool` request inside a line, if it is one.
fn permission_request(msg: &Value) -> Option<&Value> {
    (msg["type"] == "control_request" && msg["request"]["subtype"] == "can_use_tool")
        .then(|| &msg["request"])
}

fn results(run: &Run) -> Vec<&Value> {
    run.out().filter(|m| m["type"] == "result").collect()
}

fn tool_results(run: &Run) -> Vec<&Value> {
    run.out()
        .filter(|m| m["type"] == "user")
        .filter_map(|m| m["message"]["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

fn permission_for(run: &Run, tool: &str) -> Option<Value> {
    run.out().find_map(|m| {
        permission_request(m)
            .filter(|r| r["tool_name"] == tool)
            .cloned()
    })
}

fn has_delta(run: &Run, kind: &str) -> bool {
    run.out()
        .any(|m| m["type"] == "stream_event" && m["event"]["delta"]["type"] == kind)
}

fn final_text(run: &Run) -> Option<&str> {
    results(run).last().and_then(|r| r["result"].as_str())
}

pub(super) fn check(name: &str, run: &Run) -> std::result::Result<(), String> {
    ensure(
        run.out()
            .any(|m| m["type"] == "system" && m["subtype"] == "init"),
        "no system/init line",
    )?;
    let results = results(run);
    let result = *results.last().ok_or("no result line")?;
    match name {
        "text" => {
            ensure(has_delta(run, "text_delta"), "no text_delta stream_event")?;
            ensure(
                final_text(run) == Some(REPLY_TEXT),
                format!("result text {:?}", final_text(run)),
            )
        }
        "tool-allow" => {
            let request = permission_for(run, "Bash").ok_or("no can_use_tool request for Bash")?;
            ensure(
                request["input"]["command"].is_string(),
                "Bash input has no command",
            )?;
            let result_block = tool_results(run)
                .into_iter()
                .next()
                .ok_or("no tool_result")?;
            ensure(
                result_block["is_error"] != true,
                format!("tool failed: {result_block}"),
            )?;
            ensure(
                run.work_file(TOOL_OUTPUT_FILE).as_deref() == Some("fake-tool-ran\n"),
                "tool did not run",
            )?;
            ensure(
                final_text(run) == Some(AFTER_TOOL_TEXT),
                "no final text after the tool",
            )
        }
        "tool-deny" => {
            permission_for(run, "Bash").ok_or("no can_use_tool request for Bash")?;
            let result_block = tool_results(run)
                .into_iter()
                .next()
                .ok_or("no tool_result")?;
            ensure(
                result_block["is_error"] == true,
                "denied tool_result is not an error",
            )?;
            ensure(
                result_block["content"].to_string().contains(DENIED),
                "the denial's message not passed on",
            )?;
            ensure(
                run.work_file(TOOL_OUTPUT_FILE).is_none(),
                "denied tool ran anyway",
            )?;
            ensure(
                final_text(run) == Some(AFTER_TOOL_TEXT),
                "no final text after the denial",
            )
        }
        "question" => {
            let request = permission_for(run, "AskUserQuestion")
                .ok_or("no can_use_tool for AskUserQuestion")?;
            let questions = request["input"]["questions"]
                .as_array()
                .ok_or("no questions")?;
            ensure(questions.len() == 2, "expected two questions")?;
            ensure(
                questions.iter().any(|q| q["multiSelect"] == true),
                "no multi-select question",
            )?;
            let block = tool_results(run)
                .into_iter()
                .next()
                .ok_or("no tool_result")?;
            let answer = block["content"].as_str().unwrap_or_default();
            let expected = [
                "\"Which color should the widget be?\"=\"Blue\"",
                "\"Which extras do you want?\"=\"Tests, Docs\"",
            ];
            ensure(
                expected.iter().all(|e| answer.contains(e)),
                format!("answers missing: {answer}"),
            )?;
            ensure(
                final_text(run) == Some(AFTER_TOOL_TEXT),
                "no final text after the answers",
            )
        }
        "think" => {
            ensure(
                has_delta(run, "thinking_delta"),
                "no thinking_delta stream_event",
            )?;
            let thought = run.out().any(|m| {
                m["type"] == "assistant"
                    && m["message"]["content"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|b| b["type"] == "thinking"))
            });
            ensure(thought, "no assistant message with a thinking block")?;
            ensure(final_text(run) == Some(REPLY_TEXT), "no final text")
        }
        "cancel" => {
            ensure(
                run.sent().any(|m| m["request"]["subtype"] == "interrupt"),
                "interrupt not sent",
            )?;
            ensure(
                results.len() == 2,
                format!("expected two results, got {}", results.len()),
            )?;
            ensure(results[0]["result"] != SLOW_TEXT, "slow reply was not cut")?;
            ensure(
                final_text(run) == Some(REPLY_TEXT),
                "the turn after the interrupt failed",
            )
        }
        "fail" => {
            ensure(
                result["is_error"] == true,
                "failed turn not marked is_error",
            )?;
            ensure(
                result["api_error_status"] == 500,
                format!("api_error_status {}", result["api_error_status"]),
            )?;
            ensure(
                run.model_requests().len() == 1,
                "Claude retried the failed request",
            )
        }
        "flaky" => {
            // Claude Code's own retry loop announces the retry; its delay is its own
            // back-off (~0.5–0.7 s), not the provider's `retry-after-ms`.
            let retry = run
                .out()
                .find(|m| m["type"] == "system" && m["subtype"] == "api_retry")
                .ok_or("no system/api_retry line")?;
            ensure(
                retry["attempt"] == 1 && retry["error_status"] == 529,
                format!("api_retry {retry}"),
            )?;
            ensure(result["is_error"] == false, "the retried turn failed")?;
            ensure(final_text(run) == Some(REPLY_TEXT), "no final text")?;
            ensure(
                failed_calls(run) == (1, 2),
                format!("(failed, all) model calls {:?}", failed_calls(run)),
            )
        }
        "refuse" => {
            ensure(result["is_error"] == true, "refused turn not is_error")?;
            ensure(
                result["api_error_status"] == 400,
                format!("api_error_status {}", result["api_error_status"]),
            )?;
            ensure(
                final_text(run).is_some_and(|t| t.contains(REFUSAL_MESSAGE)),
                format!("result text {:?}", final_text(run)),
            )?;
            let error = run
                .out()
                .find(|m| m["type"] == "assistant" && m["is_api_error_message"] == true)
                .ok_or("no synthetic API error assistant message")?;
            ensure(
                error["message"]["content"]
                    .to_string()
                    .contains(REFUSAL_MESSAGE),
                "the refusal is not in the error message",
            )?;
            ensure(
                !run.out().any(|m| m["subtype"] == "api_retry"),
                "a 400 was announced as a retry",
            )?;
            // Claude Code silently re-sends a refused request with fewer features
            // (thinking display, deferred tools): several calls, all refused.
            let (failed, all) = failed_calls(run);
            ensure(
                failed == all && all >= 1,
                format!("{failed} of {all} calls refused"),
            )
        }
        other => Err(format!("no check for {other}")),
    }
}
