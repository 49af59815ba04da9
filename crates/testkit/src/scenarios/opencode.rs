//! OpenCode's scenarios (`opencode serve` run by the daemon's server pool: one session
//! created with the rules of its permission mode, its events routed from `/global/event`)
//! and their checks on the native transcript: the daemon's HTTP calls and their answers
//! (`via: "http"`) and the session's events (bare payloads, as the pool routes them).

use sandbox_universal::{PermissionMode, PermissionReply};
use serde_json::{Value, json};

use super::prompts::{FAIL, FLAKY, QUESTION, REFUSE, SLOW, TEXT, THINK, TOOL};
use super::{Run, Spec, ensure, failed_calls};
use crate::provider::script::{
    AFTER_TOOL_TEXT, FLAKY_MESSAGE, REFUSAL_MESSAGE, REPLY_TEXT, TOOL_OUTPUT_FILE,
};

pub(super) const SCENARIOS: &[Spec] = &[
    Spec::new(
        "text",
        "a plain streamed text turn (plus the title side request)",
        TEXT,
    ),
    Spec::new(
        "tool",
        "bash call in a bypass-mode session: runs without asking",
        TOOL,
    )
    .mode(PermissionMode::Bypass),
    Spec::new(
        "permission",
        "bash asks (default mode): permission.asked, replied once, the command runs",
        TOOL,
    ),
    Spec::new(
        "permission-reject",
        "bash asks (default mode): permission.asked, rejected, the command does not run",
        TOOL,
    )
    .answer(PermissionReply::Reject),
    Spec::new(
        "question",
        "the question tool (allowed in default mode) with two questions (one multiple), answered",
        QUESTION,
    ),
    Spec::new("think", "reasoning deltas before the text", THINK),
    Spec::new(
        "cancel",
        "a slow reply aborted after its first delta, then a new turn",
        SLOW,
    )
    .cancelling(),
    Spec::new(
        "fail",
        "the provider answers HTTP 500; OpenCode retries without delay, then errors",
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

/// The session's events of one type (the runner taps each event's payload).
fn events<'a>(run: &'a Run, kind: &'a str) -> impl Iterator<Item = &'a Value> {
    run.out().filter(move |e| e["type"] == kind)
}

/// Final states of parts of one type (the last `message.part.updated` per part id).
fn parts<'a>(run: &'a Run, kind: &str) -> Vec<&'a Value> {
    let mut latest: Vec<&Value> = Vec::new();
    for part in events(run, "message.part.updated")
        .map(|e| &e["properties"]["part"])
        .filter(|p| p["type"] == kind)
    {
        match latest.iter_mut().find(|p| p["id"] == part["id"]) {
            Some(slot) => *slot = part,
            None => latest.push(part),
        }
    }
    latest
}

fn last_text(run: &Run) -> Option<&str> {
    parts(run, "text")
        .into_iter()
        .rev()
        .find(|p| p["synthetic"] != true)
        .and_then(|p| p["text"].as_str())
}

fn tool_state<'a>(run: &'a Run, tool: &str) -> Option<&'a Value> {
    parts(run, "tool")
        .into_iter()
        .find(|p| p["tool"] == tool)
        .map(|p| &p["state"])
}

pub(super) fn check(name: &str, run: &Run) -> std::result::Result<(), String> {
    ensure(
        events(run, "session.idle").next().is_some(),
        "no session.idle",
    )?;
    let asked = events(run, "permission.asked").count();
    match name {
        "text" => {
            ensure(
                events(run, "message.part.delta").count() > 1,
                "no message.part.delta",
            )?;
            ensure(
                last_text(run) == Some(REPLY_TEXT),
                format!("text {:?}", last_text(run)),
            )
        }
        "tool" | "permission" | "permission-reject" => {
            ensure(
                asked == usize::from(name != "tool"),
                format!("{asked} permission.asked events"),
            )?;
            let state = tool_state(run, "bash").ok_or("no bash tool part")?;
            let ran = run.work_file(TOOL_OUTPUT_FILE).is_some();
            if name == "permission-reject" {
                ensure(
                    state["status"] == "error",
                    format!("rejected bash state {state}"),
                )?;
                ensure(!ran, "rejected command ran anyway")?;
                ensure(
                    events(run, "permission.replied").next().is_some(),
                    "no permission.replied",
                )
            } else {
                ensure(
                    state["status"] == "completed",
                    format!("bash state {state}"),
                )?;
                ensure(
                    state["output"]
                        .as_str()
                        .is_some_and(|o| o.contains("fake-tool-ran")),
                    "no tool output",
                )?;
                ensure(ran, "command did not run")?;
                ensure(
                    last_text(run) == Some(AFTER_TOOL_TEXT),
                    "no final text after the tool",
                )
            }
        }
        "question" => {
            let asked = events(run, "question.asked")
                .next()
                .ok_or("no question.asked")?;
            let questions = asked["properties"]["questions"]
                .as_array()
                .ok_or("no questions")?;
            ensure(
                questions.len() == 2 && questions.iter().any(|q| q["multiple"] == true),
                "bad questions",
            )?;
            let state = tool_state(run, "question").ok_or("no question tool part")?;
            ensure(
                state["status"] == "completed",
                format!("question state {state}"),
            )?;
            ensure(
                state["metadata"]["answers"] == json!([["Blue"], ["Tests", "Docs"]]),
                format!("answers {state}"),
            )?;
            ensure(
                last_text(run) == Some(AFTER_TOOL_TEXT),
                "no final text after the answers",
            )
        }
        "think" => {
            ensure(!parts(run, "reasoning").is_empty(), "no reasoning part")?;
            ensure(last_text(run) == Some(REPLY_TEXT), "no final text")
        }
        "cancel" => {
            ensure(
                run.sent()
                    .filter_map(|m| m["path"].as_str())
                    .any(|p| p.split('?').next().is_some_and(|r| r.ends_with("/abort"))),
                "abort not sent",
            )?;
            ensure(
                last_text(run) == Some(REPLY_TEXT),
                "the turn after the abort failed",
            )
        }
        "fail" => {
            let error = events(run, "session.error")
                .next()
                .ok_or("no session.error")?;
            ensure(
                error["properties"]["error"]["data"]["statusCode"] == 500,
                format!("error {error}"),
            )
        }
        "flaky" => {
            // OpenCode's retry loop announces the retry and waits `retry-after-ms`.
            let retry = events(run, "session.status")
                .map(|e| &e["properties"]["status"])
                .find(|s| s["type"] == "retry")
                .ok_or("no session.status retry")?;
            ensure(
                retry["attempt"] == 1 && retry["message"] == FLAKY_MESSAGE,
                format!("retry status {retry}"),
            )?;
            ensure(
                events(run, "session.error").next().is_none(),
                "session.error after the retry",
            )?;
            ensure(last_text(run) == Some(REPLY_TEXT), "no final text")?;
            // Plus the title side request, which offers no tools and never fails.
            let (failed, all) = failed_calls(run);
            ensure(
                failed == 1 && (2..=3).contains(&all),
                format!("{failed} of {all} calls failed"),
            )
        }
        "refuse" => {
            let error = events(run, "session.error")
                .next()
                .ok_or("no session.error")?;
            let data = &error["properties"]["error"]["data"];
            ensure(
                data["statusCode"] == 400
                    && data["message"] == REFUSAL_MESSAGE
                    && data["isRetryable"] == false,
                format!("error {error}"),
            )?;
            ensure(
                !events(run, "session.status")
                    .any(|e| e["properties"]["status"]["type"] == "retry"),
                "a 400 was retried",
            )?;
            ensure(failed_calls(run).0 == 1, "the refusal was sent again")
        }
        other => Err(format!("no check for {other}")),
    }
}
