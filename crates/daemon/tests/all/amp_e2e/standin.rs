//! The daemon's Amp lifecycle against the STAND-IN (`crates/testkit/standins/amp`), which
//! replays Amp's documented stream on its documented flags and runs the delegate program
//! the way the pinned binary does. It is not Amp: these tests prove the daemon's side.

use sandbox_agents::ProviderEnv;
use sandbox_universal::{
    ContentPart, CreateSessionRequest, EventPayload, ItemKind, ItemStatus, PermissionKind,
    PermissionOutcome, PermissionReply, PermissionRequest, StopReason, UniversalEvent,
};
use serde_json::Value;

use super::harness::*;

async fn standin() -> Amp {
    Amp::start(
        sandbox_testkit::standins::amp_standin(),
        ProviderEnv::default()
            .with("AMP_API_KEY", KEY)
            .with("AMP_URL", "http://127.0.0.1:9"),
    )
    .await
}

/// The stand-in's record of its runs (argv, cwd, thread; never the key).
fn calls(amp: &Amp) -> Vec<Value> {
    amp.files()
        .into_iter()
        .filter(|f| f.ends_with("standin-calls.jsonl"))
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<Value>>()
        })
        .collect()
}

fn reply_text(events: &[UniversalEvent]) -> String {
    completed(events, ItemKind::Message)
        .last()
        .map(|m| m.text())
        .unwrap_or_default()
}

#[tokio::test]
async fn turns_continue_the_thread() {
    let amp = standin().await;
    amp.session(
        "s",
        CreateSessionRequest {
            agent_mode: Some("high".into()),
            ..CreateSessionRequest::default()
        },
    )
    .await;
    let first = amp.turn("s", "say hi").await;
    assert_eq!(stop_reason(&first), StopReason::Completed);
    assert_eq!(
        reply_text(&first),
        "hello from stand-in amp (prompt 1 of this thread)"
    );
    let thread = amp
        .daemon
        .client
        .get_session("s")
        .await
        .unwrap()
        .native_session_id
        .expect("the thread id");
    assert!(thread.starts_with("T-"), "{thread}");
    let second = amp.turn("s", "say hi again").await;

    assert_eq!(
        reply_text(&second),
        "hello from stand-in amp (prompt 2 of this thread)"
    );
    let runs = calls(&amp);
    assert_eq!(runs.len(), 2, "a process per turn");
    let argv = |run: &Value| -> Vec<String> {
        run["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect()
    };
    let first_argv = argv(&runs[0]);
    assert!(!first_argv.iter().any(|a| a == "threads"));
    assert!(
        first_argv
            .windows(2)
            .any(|w| w[0] == "--mode" && w[1] == "high")
    );
    assert_eq!(
        &argv(&runs[1])[..3],
        ["threads", "continue", thread.as_str()]
    );
    assert!(runs.iter().all(|r| r["api_key_set"] == true));
    assert_not_on_disk(&amp.files(), KEY);
    let all = amp.daemon.events("s").await;
    assert_eq!(canonical_text(&first), TEXT_TURN_WHOLE);
    assert_no_unparsed(&all);
    amp.check_capabilities("turns_continue_the_thread", &all)
        .await;
}

/// A text turn: Amp sends whole messages (no deltas).
const TEXT_TURN_WHOLE: &[&str] = &[
    "turnStarted",
    "itemStarted:message",
    "itemCompleted:message",
    "itemStarted:message",
    "itemCompleted:message",
    "turnEnded",
];

fn canonical_text(events: &[UniversalEvent]) -> Vec<String> {
    crate::common::skeleton(events)
}

#[tokio::test]
async fn reasoning_when_asked() {
    let amp = standin().await;
    amp.session("s", CreateSessionRequest::default()).await;
    let turn = amp.turn("s", "THINK about it").await;
    assert_eq!(stop_reason(&turn), StopReason::Completed);
    assert!(
        !completed(&turn, ItemKind::Reasoning).is_empty(),
        "a reasoning item"
    );
    let all = amp.daemon.events("s").await;
    assert_no_unparsed(&all);
    amp.check_capabilities("reasoning_when_asked", &all).await;
}

/// Sends `message` and answers its `n`th permission of the session with `reply`.
async fn asked_turn(
    amp: &Amp,
    message: &str,
    n: usize,
    reply: PermissionReply,
) -> (PermissionRequest, Vec<UniversalEvent>) {
    amp.daemon.permission_turn("s", message, n, reply).await
}

#[tokio::test]
async fn command_permission_once_reject_always() {
    let amp = standin().await;
    let cwd = amp.session("s", CreateSessionRequest::default()).await;
    let output = cwd.join("fake_tool_output.txt");

    let (asked, once) = asked_turn(&amp, "USE_TOOL now", 1, PermissionReply::Once).await;
    assert_eq!(asked.kind, PermissionKind::Command);
    assert!(
        asked
            .command
            .as_deref()
            .unwrap()
            .contains("echo fake-tool-ran")
    );
    let call = completed(&once, ItemKind::ToolCall).pop().unwrap();
    assert_eq!(
        asked.item_id.as_deref(),
        Some(call.item_id.as_str()),
        "the permission points at its call"
    );
    assert_eq!(stop_reason(&once), StopReason::Completed);
    let command = completed(&once, ItemKind::CommandExecution).pop().unwrap();
    let (_, out, exit_code) = command_part(&command);
    assert_eq!(out.map(str::trim), Some("fake-tool-ran"));
    assert_eq!(exit_code, Some(0));
    assert!(output.exists(), "the command ran in the session's cwd");
    std::fs::remove_file(&output).unwrap();

    let (_, rejected) = asked_turn(&amp, "USE_TOOL now", 2, PermissionReply::Reject).await;

    assert!(!output.exists(), "a rejected command does not run");
    // The tool did not run: a failed tool result, not a command.
    assert!(completed(&rejected, ItemKind::CommandExecution).is_empty());
    let result = completed(&rejected, ItemKind::ToolResult).pop().unwrap();
    assert_eq!(result.status, ItemStatus::Failed, "{result:?}");

    let (_, _always) = asked_turn(&amp, "USE_TOOL now", 3, PermissionReply::Always).await;
    assert!(output.exists());
    std::fs::remove_file(&output).unwrap();
    let again = amp.turn("s", "USE_TOOL now").await;
    let resolved = find(&again, |p| match p {
        EventPayload::PermissionResolved(r) => Some(r.clone()),
        _ => None,
    })
    .expect("resolved");
    assert!(resolved.automatic && resolved.outcome == PermissionOutcome::Always);
    assert!(output.exists(), "the daemon answered for the user");
    let all = amp.daemon.events("s").await;
    assert_no_unparsed(&all);
    amp.check_capabilities("command_permission_once_reject_always", &all)
        .await;
}

#[tokio::test]
async fn patch_with_its_diff_and_the_file_on_disk() {
    let amp = standin().await;
    let cwd = amp.session("s", CreateSessionRequest::default()).await;
    let (asked, turn) = asked_turn(&amp, "USE_WRITE now", 1, PermissionReply::Once).await;
    assert_eq!(asked.kind, PermissionKind::FileChange);
    let written = cwd.join("fake_written.txt").display().to_string();
    assert_eq!(asked.paths, std::slice::from_ref(&written));
    assert_eq!(
        std::fs::read_to_string(cwd.join("fake_written.txt")).unwrap(),
        "written by fake model\n"
    );
    let change = completed(&turn, ItemKind::FileChange).pop().unwrap();
    let Some(ContentPart::FileChange { path, diff, .. }) = change.content.first() else {
        panic!("{change:?}")
    };
    assert_eq!(path, &written);
    assert!(diff.as_deref().unwrap().contains("+written by fake model"));
    let all = amp.daemon.events("s").await;
    assert_no_unparsed(&all);
    amp.check_capabilities("patch_with_its_diff_and_the_file_on_disk", &all)
        .await;
}

#[tokio::test]
async fn cancel_kills_the_turn() {
    let amp = standin().await;
    amp.session("s", CreateSessionRequest::default()).await;
    let turn = amp
        .daemon
        .client
        .send_message("s", "SLOW please")
        .await
        .unwrap();
    eventually_async(|| !calls(&amp).is_empty()).await;
    amp.daemon.client.cancel("s").await.unwrap();
    let cancelled = amp.turn_ended("s", &turn.turn_id).await;
    assert_eq!(stop_reason(&cancelled), StopReason::Cancelled);
    assert!(
        !cancelled
            .iter()
            .any(|e| matches!(e.payload, EventPayload::Error(_))),
        "a cancel is not an error"
    );
    let next = amp.turn("s", "say hi").await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    let all = amp.daemon.events("s").await;
    assert_no_unparsed(&all);
    amp.check_capabilities("cancel_kills_the_turn", &all).await;
}

#[tokio::test]
async fn a_crash_or_a_failed_run_is_a_clear_error() {
    let amp = standin().await;
    amp.session("s", CreateSessionRequest::default()).await;
    let crashed = amp.turn("s", "CRASH now").await;
    assert_eq!(stop_reason(&crashed), StopReason::Error);
    let error = find(&crashed, |p| match p {
        EventPayload::Error(e) => Some(serde_json::to_string(e).unwrap()),
        _ => None,
    })
    .unwrap();
    assert!(error.contains("simulated crash of the stand-in"), "{error}");
    let failed = amp.turn("s", "FAIL now").await;
    assert_eq!(stop_reason(&failed), StopReason::Error);
    let error = find(&failed, |p| match p {
        EventPayload::Error(e) => Some(e.message().to_string()),
        _ => None,
    })
    .unwrap();
    assert_eq!(error, "Out of credits (stand-in)");
    let next = amp.turn("s", "say hi").await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    assert_no_unparsed(&amp.daemon.events("s").await);
}

#[tokio::test]
async fn daemon_restart_continues_the_thread() {
    let amp = standin().await;
    amp.session("s", CreateSessionRequest::default()).await;
    amp.turn("s", "say hi").await;
    let amp = amp.restart().await;
    let next = amp.turn("s", "say hi after the restart").await;
    assert_eq!(
        reply_text(&next),
        "hello from stand-in amp (prompt 2 of this thread)"
    );
    let all = amp.daemon.events("s").await;
    assert_no_unparsed(&all);
    amp.check_capabilities("daemon_restart_continues_the_thread", &all)
        .await;
}

async fn eventually_async(done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "waited in vain");
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}
