//! Pi's scenarios (`--mode rpc`, the daemon's permission extension in `default` mode) and
//! their checks on the native transcript.

use sandbox_universal::PermissionMode;
use serde_json::Value;

use super::prompts::{FAIL, FLAKY, REFUSE, SLOW, TEXT, THINK, TOOL, WRITE};
use super::{Run, Spec, ensure, failed_calls};
use crate::provider::script::{
    AFTER_TOOL_TEXT, REFUSAL_MESSAGE, REPLY_TEXT, TOOL_OUTPUT_FILE, WRITTEN_CONTENT, WRITTEN_FILE,
};

pub(super) const SCENARIOS: &[Spec] = &[
    Spec::new("text", "a plain streamed text turn", TEXT),
    Spec::new(
        "tool",
        "bash call in a bypass-mode session (no permission extension): runs without asking",
        TOOL,
    )
    .mode(PermissionMode::Bypass),
    Spec::new(
        "write",
        "write call in a bypass-mode session: creates the file",
        WRITE,
    )
    .mode(PermissionMode::Bypass),
    Spec::new("think", "thinking deltas before the text", THINK),
    Spec::new(
        "cancel",
        "a slow reply aborted after its first delta, then a new prompt",
        SLOW,
    )
    .cancelling(),
    Spec::new(
        "fail",
        "the provider answers HTTP 500; the prompt ends with an error message",
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

fn assistant_messages(run: &Run) -> Vec<&Value> {
    run.out()
        .filter(|m| m["type"] == "message_end" && m["message"]["role"] == "assistant")
        .map(|m| &m["message"])
        .collect()
}

fn last_text(run: &Run) -> Option<&str> {
    assistant_messages(run).last().and_then(|m| {
        m["content"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == "text")
    })?["text"]
        .as_str()
}

fn has_event(run: &Run, kind: &str) -> bool {
    run.out()
        .any(|m| m["assistantMessageEvent"]["type"] == kind)
}

pub(super) fn check(name: &str, run: &Run) -> std::result::Result<(), String> {
    let ends = run.out().filter(|m| m["type"] == "agent_end").count();
    ensure(
        ends == if name == "cancel" { 2 } else { 1 },
        format!("{ends} agent_end events"),
    )?;
    ensure(
        run.out()
            .any(|m| m["type"] == "response" && m["success"] == true),
        "prompt not accepted",
    )?;
    match name {
        "text" => {
            ensure(has_event(run, "text_delta"), "no text_delta")?;
            ensure(
                last_text(run) == Some(REPLY_TEXT),
                format!("text {:?}", last_text(run)),
            )
        }
        "tool" | "write" => {
            let end = run
                .out()
                .find(|m| m["type"] == "tool_execution_end")
                .ok_or("no tool_execution_end")?;
            ensure(end["isError"] == false, format!("tool failed: {end}"))?;
            if name == "tool" {
                ensure(end["toolName"] == "bash", "not a bash call")?;
                ensure(
                    run.work_file(TOOL_OUTPUT_FILE).is_some(),
                    "command did not run",
                )?;
            } else {
                ensure(end["toolName"] == "write", "not a write call")?;
                ensure(
                    run.work_file(WRITTEN_FILE).as_deref() == Some(WRITTEN_CONTENT),
                    "file not written",
                )?;
            }
            ensure(
                last_text(run) == Some(AFTER_TOOL_TEXT),
                "no final text after the tool",
            )
        }
        "think" => {
            ensure(has_event(run, "thinking_delta"), "no thinking_delta")?;
            ensure(last_text(run) == Some(REPLY_TEXT), "no final text")
        }
        "cancel" => {
            ensure(run.sent().any(|m| m["type"] == "abort"), "abort not sent")?;
            let first = assistant_messages(run)
                .first()
                .copied()
                .ok_or("no assistant message")?;
            ensure(
                first["stopReason"] == "aborted",
                format!("aborted message {first}"),
            )?;
            ensure(
                last_text(run) == Some(REPLY_TEXT),
                "the prompt after the abort failed",
            )
        }
        "fail" => {
            let message = *assistant_messages(run)
                .last()
                .ok_or("no assistant message")?;
            ensure(
                message["stopReason"] == "error",
                format!("failed message {message}"),
            )?;
            ensure(
                message["errorMessage"]
                    .as_str()
                    .is_some_and(|e| e.contains("500")),
                "no HTTP status in error",
            )?;
            ensure(
                run.model_requests().len() == 1,
                "Pi retried the failed request",
            )
        }
        "flaky" => {
            // Pi's agent-level retry is off (`retry.enabled: false`), but the Anthropic
            // SDK under it still retries (its default two retries, obeying
            // `x-should-retry` and `retry-after-ms`): silently, in one assistant message.
            ensure(
                failed_calls(run) == (1, 2),
                format!("(failed, all) model calls {:?}", failed_calls(run)),
            )?;
            ensure(
                !run.out().any(|m| m["type"] == "auto_retry_start"),
                "Pi's agent-level retry ran",
            )?;
            ensure(
                assistant_messages(run).len() == 1,
                "more than one assistant message",
            )?;
            ensure(last_text(run) == Some(REPLY_TEXT), "no final text")
        }
        "refuse" => {
            let message = *assistant_messages(run)
                .last()
                .ok_or("no assistant message")?;
            ensure(
                message["stopReason"] == "error",
                format!("refused message {message}"),
            )?;
            ensure(
                message["errorMessage"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("400") && e.contains(REFUSAL_MESSAGE)),
                format!("error message {}", message["errorMessage"]),
            )?;
            ensure(
                failed_calls(run) == (1, 1),
                format!("(failed, all) model calls {:?}", failed_calls(run)),
            )
        }
        other => Err(format!("no check for {other}")),
    }
}
