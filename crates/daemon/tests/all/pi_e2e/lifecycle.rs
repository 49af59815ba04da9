//! Lifecycle: cancel during a slow reply, kill -9 then resume with the history, a daemon
//! restart then resume, two concurrent sessions kept apart (one with its own token).

use sandbox_testkit::provider::script::REPLY_TEXT;
use sandbox_universal::{CreateSessionRequest, EventPayload, ItemKind, ItemStatus, StopReason};

use super::harness::*;

#[tokio::test]
async fn cancel_during_a_slow_reply() {
    sandbox_testkit::isolate!();
    let Some(pi) = Pi::start().await else {
        return;
    };
    pi.session("s", CreateSessionRequest::default()).await;
    let turn = pi
        .daemon
        .client
        .send_message("s", "SLOW please")
        .await
        .unwrap();
    pi.daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::ItemDelta(_)))
        .await;
    pi.daemon.client.cancel("s").await.unwrap();
    let cancelled = pi.turn_ended("s", &turn.turn_id).await;
    assert_eq!(stop_reason(&cancelled), StopReason::Cancelled);
    let message = completed(&cancelled, ItemKind::Message).pop().unwrap();
    assert_eq!(
        message.status,
        ItemStatus::Failed,
        "a cancelled partial message"
    );
    let next = pi.turn("s", "say hi").await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    let all = pi.daemon.events("s").await;
    assert_no_unparsed(&all);
    pi.check_capabilities("cancel_during_a_slow_reply", &all)
        .await;
}

#[tokio::test]
async fn kill_9_then_resume_with_history() {
    sandbox_testkit::isolate!();
    let Some(pi) = Pi::start().await else {
        return;
    };
    let cwd = pi.session("s", CreateSessionRequest::default()).await;
    pi.turn("s", "remember the word PELICAN").await;
    let killed = pi.processes(&cwd);
    assert_eq!(killed.len(), 1);
    kill_9(killed[0]);
    pi.daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::Error(_)))
        .await;
    let next = pi.turn("s", "what was the word").await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    assert_ne!(pi.processes(&cwd), killed, "a new process");
    let call = pi.calls_with("what was the word").pop().unwrap();
    assert!(call.body.to_string().contains("PELICAN"), "history kept");
    let all = pi.daemon.events("s").await;
    assert_no_unparsed(&all);
    pi.check_capabilities("kill_9_then_resume_with_history", &all)
        .await;
}

#[tokio::test]
async fn daemon_restart_then_resume_with_history() {
    sandbox_testkit::isolate!();
    let Some(pi) = Pi::start().await else {
        return;
    };
    pi.session("s", CreateSessionRequest::default()).await;
    pi.turn("s", "remember the word HERON").await;
    let pi = pi.restart().await;
    let next = pi.turn("s", "which word after the restart").await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    let call = pi.calls_with("which word after the restart").pop().unwrap();
    assert!(call.body.to_string().contains("HERON"), "history kept");
    assert_no_unparsed(&pi.daemon.events("s").await);
}

#[tokio::test]
async fn two_concurrent_sessions_are_kept_apart() {
    sandbox_testkit::isolate!();
    let Some(pi) = Pi::start().await else {
        return;
    };
    tokio::join!(
        pi.session("a", CreateSessionRequest::default()),
        pi.session(
            "b",
            CreateSessionRequest {
                token: Some(TOKEN.into()),
                ..CreateSessionRequest::default()
            }
        ),
    );
    let (a, b) = tokio::join!(pi.turn("a", "ALPHA say hi"), pi.turn("b", "BRAVO say hi"));
    assert_eq!(stop_reason(&a), StopReason::Completed);
    assert_eq!(stop_reason(&b), StopReason::Completed);
    assert_eq!(
        completed(&a, ItemKind::Message).pop().unwrap().text(),
        REPLY_TEXT
    );
    for call in pi.calls_with("ALPHA") {
        assert!(
            !call.body.to_string().contains("BRAVO"),
            "one session's prompt in the other's call"
        );
        assert_eq!(call.key, Some(0), "the daemon's key");
    }
    let bravo = pi.calls_with("BRAVO");
    assert!(!bravo.is_empty());
    assert!(
        bravo.iter().all(|c| c.key == Some(1)),
        "the session's own token"
    );
    assert_ne!(
        pi.daemon
            .client
            .get_session("a")
            .await
            .unwrap()
            .native_session_id,
        pi.daemon
            .client
            .get_session("b")
            .await
            .unwrap()
            .native_session_id
    );
    assert_no_unparsed(&pi.daemon.events("a").await);
    assert_no_unparsed(&pi.daemon.events("b").await);
}
