//! Codex's scenarios (`app-server` JSON-RPC, the daemon's `default` mode: `approvalPolicy:
//! untrusted`), on a classic model or on the default one (code mode: `exec_command` and
//! `apply_patch` run from the model's JavaScript; the app-server reports them with the
//! same items), and their checks on the native transcript.

use sandbox_universal::PermissionReply;
use serde_json::Value;

use super::prompts::{FAIL, FLAKY, QUESTION, REFUSE, SLOW, TEXT, THINK, TOOL, WRITE};
use super::{Run, Spec, ensure, failed_calls};
use crate::provider::script::{
    AFTER_TOOL_TEXT, REFUSAL_MESSAGE, REPLY_TEXT, TOOL_OUTPUT_FILE, WRITTEN_CONTENT, WRITTEN_FILE,
};

pub(super) const SCENARIOS: &[Spec] = &[
    Spec::new("text", "a plain streamed text turn", TEXT),
    Spec::new(
        "command-approval",
        "exec_command needs approval; accepted; the command runs",
        TOOL,
    ),
    Spec::new(
        "command-decline",
        "exec_command needs approval; declined; the command does not run",
        TOOL,
    )
    .answer(PermissionReply::Reject),
    Spec::new(
        "apply-patch",
        "apply_patch (freeform) needs approval; accepted; the file is written",
        WRITE,
    ),
    Spec::new(
        "question",
        "request_user_input with two questions, answered",
        QUESTION,
    ),
    Spec::new("think", "reasoning summary deltas before the text", THINK),
    Spec::new(
        "cancel",
        "a slow reply interrupted with turn/interrupt, then a new turn",
        SLOW,
    )
    .cancelling(),
    Spec::new(
        "fail",
        "the provider answers HTTP 500; the turn fails",
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

/// Whether `msg` is a server→client request with this method.
fn is_request(msg: &Value, method: &str) -> bool {
    msg["method"] == method && msg.get("id").is_some()
}

fn notifications<'a>(run: &'a Run, method: &'a str) -> impl Iterator<Item = &'a Value> {
    run.out()
        .filter(move |m| m["method"] == method && m.get("id").is_none())
}

fn completed_items<'a>(run: &'a Run, kind: &'a str) -> Vec<&'a Value> {
    notifications(run, "item/completed")
        .map(|m| &m["params"]["item"])
        .filter(|i| i["type"] == kind)
        .collect()
}

fn turn_statuses(run: &Run) -> Vec<String> {
    notifications(run, "turn/completed")
        .map(|m| {
            m["params"]["turn"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn last_agent_text(run: &Run) -> Option<&str> {
    completed_items(run, "agentMessage")
        .last()
        .and_then(|i| i["text"].as_str())
}

fn server_request<'a>(run: &'a Run, method: &str) -> Option<&'a Value> {
    run.out().find(|m| is_request(m, method))
}

pub(super) fn check(name: &str, run: &Run) -> std::result::Result<(), String> {
    ensure(
        notifications(run, "thread/started").next().is_some(),
        "no thread/started",
    )?;
    let statuses = turn_statuses(run);
    let expected: &[&str] = match name {
        "cancel" => &["interrupted", "completed"],
        "fail" | "refuse" => &["failed"],
        _ => &["completed"],
    };
    ensure(
        statuses == expected,
        format!("turn statuses {statuses:?}, expected {expected:?}"),
    )?;
    match name {
        "text" => {
            ensure(
                notifications(run, "item/agentMessage/delta").count() > 1,
                "no agentMessage deltas",
            )?;
            ensure(
                last_agent_text(run) == Some(REPLY_TEXT),
                format!("agent text {:?}", last_agent_text(run)),
            )
        }
        "command-approval" | "command-decline" => {
            server_request(run, "item/commandExecution/requestApproval")
                .ok_or("no command approval request")?;
            let item = *completed_items(run, "commandExecution")
                .first()
                .ok_or("no completed commandExecution")?;
            let ran = run.work_file(TOOL_OUTPUT_FILE).is_some();
            if name == "command-approval" {
                ensure(
                    item["status"] == "completed" && item["exitCode"] == 0,
                    format!("command item {item}"),
                )?;
                ensure(ran, "approved command did not run")?;
            } else {
                ensure(
                    item["status"] == "declined",
                    format!("declined command item {item}"),
                )?;
                ensure(!ran, "declined command ran anyway")?;
            }
            ensure(
                last_agent_text(run) == Some(AFTER_TOOL_TEXT),
                "no final text after the command",
            )
        }
        "apply-patch" => {
            server_request(run, "item/fileChange/requestApproval")
                .ok_or("no file change approval request")?;
            let item = *completed_items(run, "fileChange")
                .first()
                .ok_or("no completed fileChange")?;
            ensure(
                item["status"] == "completed",
                format!("fileChange item {item}"),
            )?;
            ensure(
                run.work_file(WRITTEN_FILE).as_deref() == Some(WRITTEN_CONTENT),
                "patch not applied",
            )?;
            ensure(
                last_agent_text(run) == Some(AFTER_TOOL_TEXT),
                "no final text after the patch",
            )
        }
        "question" => {
            let request =
                server_request(run, "item/tool/requestUserInput").ok_or("no requestUserInput")?;
            ensure(
                request["params"]["questions"].as_array().map(Vec::len) == Some(2),
                "expected two questions",
            )?;
            let output = run
                .model_requests()
                .last()
                .and_then(|r| r.body["input"].as_array()?.last().cloned())
                .ok_or("no follow-up model request")?;
            ensure(
                output["type"] == "function_call_output",
                format!("last input item {output}"),
            )?;
            ensure(
                output["output"]
                    .as_str()
                    .is_some_and(|o| o.contains("Blue")),
                "answers not sent to the model",
            )?;
            ensure(
                last_agent_text(run) == Some(AFTER_TOOL_TEXT),
                "no final text after the answers",
            )
        }
        "think" => {
            ensure(
                notifications(run, "item/reasoning/summaryTextDelta").count() > 1,
                "no reasoning deltas",
            )?;
            ensure(
                !completed_items(run, "reasoning").is_empty(),
                "no completed reasoning item",
            )?;
            ensure(last_agent_text(run) == Some(REPLY_TEXT), "no final text")
        }
        "cancel" => {
            ensure(
                run.sent().any(|m| m["method"] == "turn/interrupt"),
                "turn/interrupt not sent",
            )?;
            ensure(
                last_agent_text(run) == Some(REPLY_TEXT),
                "the turn after the interrupt failed",
            )
        }
        "fail" => {
            let error = notifications(run, "error")
                .last()
                .ok_or("no error notification")?;
            ensure(error["params"]["willRetry"] == false, "Codex still retries")?;
            // The daemon keeps Codex's own retries of a failing provider (they help with
            // real outages, and are bounded by Codex's defaults).
            let requests = run.model_requests().len();
            ensure(
                (1..=30).contains(&requests),
                format!("{requests} model requests for one failing turn"),
            )
        }
        "flaky" => {
            // Codex retries a failed request on its own back-off (~0.2 s), silently:
            // no `error` notification, nothing in the turn.
            ensure(
                failed_calls(run) == (1, 2),
                format!("(failed, all) model calls {:?}", failed_calls(run)),
            )?;
            ensure(
                notifications(run, "error").next().is_none(),
                "Codex announced the request retry",
            )?;
            ensure(last_agent_text(run) == Some(REPLY_TEXT), "no final text")
        }
        "refuse" => {
            let error = notifications(run, "error")
                .last()
                .ok_or("no error notification")?;
            ensure(error["params"]["willRetry"] == false, "Codex still retries")?;
            ensure(
                error["params"]["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(REFUSAL_MESSAGE)),
                format!("error {error}"),
            )?;
            let turn = notifications(run, "turn/completed")
                .last()
                .ok_or("no turn/completed")?;
            ensure(
                turn["params"]["turn"]["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(REFUSAL_MESSAGE)),
                format!("turn {turn}"),
            )?;
            ensure(
                failed_calls(run) == (1, 1),
                format!("(failed, all) model calls {:?}", failed_calls(run)),
            )
        }
        other => Err(format!("no check for {other}")),
    }
}
