//! OpenCode scenarios: `opencode serve` launched and driven as the daemon does (one session
//! created with the rules of its permission mode, events from `/global/event`).

use sandbox_agents::opencode::launch::permission_rules;
use sandbox_universal::PermissionMode;
use serde_json::{Value, json};

use super::{Ctx, Run, START_LIMIT, TURN_LIMIT, choose, ensure, failed_calls};
use crate::drivers::Result;
use crate::drivers::opencode::{self, OpenCode};
use crate::offline;
use crate::provider::script::{
    AFTER_TOOL_TEXT, FLAKY_MESSAGE, REFUSAL_MESSAGE, REPLY_TEXT, TOOL_OUTPUT_FILE,
};

pub(super) const SCENARIOS: &[(&str, &str)] = &[
    (
        "text",
        "a plain streamed text turn (plus the title side request)",
    ),
    (
        "tool",
        "bash call in a bypass-mode session: runs without asking",
    ),
    (
        "permission",
        "bash asks (default mode): permission.asked, replied once, the command runs",
    ),
    (
        "permission-reject",
        "bash asks (default mode): permission.asked, rejected, the command does not run",
    ),
    (
        "question",
        "the question tool (allowed in default mode) with two questions (one multiple), answered",
    ),
    ("think", "reasoning deltas before the text"),
    (
        "cancel",
        "a slow reply aborted after its first delta, then a new turn",
    ),
    (
        "fail",
        "the provider answers HTTP 500; OpenCode retries without delay, then errors",
    ),
    (
        "flaky",
        "the provider fails the first call once (529/503, retry headers); the retry completes",
    ),
    (
        "refuse",
        "the provider refuses with HTTP 400 invalid_request_error; the turn ends with its message",
    ),
];

fn prompt(name: &str) -> &'static str {
    match name {
        "tool" | "permission" | "permission-reject" => "USE_TOOL now",
        "question" => "ASK_QUESTION please",
        "think" => "THINK about it",
        "cancel" => "SLOW please",
        "fail" => "FAIL now",
        "flaky" => "FLAKY now",
        "refuse" => "REFUSE now",
        _ => "say hi",
    }
}

/// The permission mode a scenario's session is created in: `tool` lets the command run
/// without asking (`bypass`); the others keep the daemon's default rules (bash asks, the
/// question tool is allowed).
fn mode(name: &str) -> PermissionMode {
    if name == "tool" {
        PermissionMode::Bypass
    } else {
        PermissionMode::Default
    }
}

pub(super) async fn drive(name: &str, ctx: &Ctx) -> Result<()> {
    let serve = offline::opencode::launch(&ctx.exe, &ctx.sandbox, &ctx.provider_url)?;
    let directory = ctx.sandbox.work.display().to_string();
    let mut server = OpenCode::start(
        &serve,
        &directory,
        permission_rules(mode(name)),
        ctx.transcript.clone(),
        START_LIMIT,
    )
    .await?;
    let session = server.session_id.clone();
    let mut aborted = false;
    server
        .turn(prompt(name), TURN_LIMIT, |event| {
            match event["type"].as_str() {
                Some("permission.asked") => {
                    let reply = if name == "permission-reject" {
                        "reject"
                    } else {
                        "once"
                    };
                    vec![opencode::permission_reply(&directory, event, reply)]
                }
                Some("question.asked") => {
                    vec![opencode::question_reply(&directory, event, choose)]
                }
                Some("message.part.delta") if name == "cancel" && !aborted => {
                    aborted = true;
                    vec![opencode::abort(&directory, &session)]
                }
                _ => Vec::new(),
            }
        })
        .await?;
    if name == "cancel" {
        server.turn("say hi", TURN_LIMIT, |_| Vec::new()).await?;
    }
    server.close().await;
    Ok(())
}

/// The payloads of the recorded `/global/event` envelopes of one type.
fn events<'a>(run: &'a Run, kind: &'a str) -> impl Iterator<Item = &'a Value> {
    run.out()
        .map(opencode::payload)
        .filter(move |e| e["type"] == kind)
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
        events(run, "server.connected").next().is_some(),
        "no server.connected",
    )?;
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
