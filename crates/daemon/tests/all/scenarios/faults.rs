//! Faults: the provider refuses or fails once, the agent is killed between turns and in
//! the middle of one, the daemon restarts mid-session.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_universal::{AgentError, EventPayload, ItemKind, StopReason};

use super::Proved;
use super::ctx::{Ctx, Session, items, stop_reason};
use super::subject::{Ask, Runs, SESSION_TOKEN_2, SESSION_TOKEN_3};
use crate::common::agent_events::kill_9;

/// REFUSE: the provider answers 400 in its own error shape; the turn ends `error`, its
/// message reaches the client, and the next turn works.
pub async fn refusal(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("refusal").await;
    let events = ctx.turn(&s.id, &ctx.prompt(Ask::Refuse, "refusal")).await;
    assert_eq!(stop_reason(&events), StopReason::Error, "refusal");
    // An `error` event carries the provider's own words (not raw JSON around them).
    let told = events.iter().any(|e| match &e.payload {
        EventPayload::Error(error) => {
            let shown = serde_json::to_value(error).unwrap();
            let message = shown["message"].as_str().unwrap_or_default();
            message.contains(ctx.subject.refusal()) && !message.trim_start().starts_with('{')
        }
        _ => false,
    });
    assert!(
        told,
        "refusal: the provider's message never reached the client"
    );
    let next = ctx
        .turn(&s.id, &ctx.prompt(Ask::Text, "after refusal"))
        .await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    vec![]
}

/// FLAKY: the provider fails once (529 or 503), then answers: the turn completes with the
/// reply, and where the agent reports its retries each is a `status` item.
pub async fn transient(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("transient").await;
    let prompt = ctx.prompt(Ask::Flaky, "transient");
    let events = ctx.turn(&s.id, &prompt).await;
    assert_eq!(stop_reason(&events), StopReason::Completed, "transient");
    assert!(
        ctx.subject
            .is_reply(&super::ctx::reply_text(&events), &prompt),
        "transient: the reply"
    );
    let calls = ctx.subject.calls_with(&prompt);
    let failed = calls
        .iter()
        .filter(|c| c.reply.starts_with("error"))
        .count();
    assert_eq!(failed, 1, "transient: one failed call: {calls:?}");
    let statuses = items(&events, ItemKind::Status);
    if ctx.subject.retry_visible {
        assert!(!statuses.is_empty(), "transient: the retry is not shown");
    }
    vec![]
}

/// The token that gives the session agent processes of its own (OpenCode shares servers
/// between sessions without one).
fn own_token(ctx: &Ctx, token: &'static str) -> Option<&'static str> {
    (ctx.subject.agent == sandbox_universal::AgentId::Opencode).then_some(token)
}

/// Kills the session's agent processes; returns them.
pub(super) fn kill(ctx: &Ctx, s: &Session, token: Option<&str>) -> Vec<i32> {
    let pids = ctx
        .subject
        .processes(&s.cwd, ctx.daemon.data_dir.path(), token);
    assert!(!pids.is_empty(), "{}: no agent process to kill", s.id);
    for pid in &pids {
        kill_9(*pid);
    }
    pids
}

/// A session, with its own token where processes are shared.
async fn own_session(ctx: &Ctx, id: &str, token: Option<&'static str>) -> Session {
    ctx.session_with(id, |r| sandbox_universal::CreateSessionRequest {
        token: token.map(str::to_string),
        ..r
    })
    .await
}

/// kill -9 of the agent between turns: the session reports it, and the next turn resumes
/// the conversation in a new process.
pub async fn kill_between_turns(ctx: Arc<Ctx>) -> Proved {
    let token = own_token(&ctx, SESSION_TOKEN_2);
    let s = own_session(&ctx, "kill-between", token).await;
    let first = ctx
        .turn(&s.id, "remember the word PAPAYA (kill-between)")
        .await;
    assert_eq!(stop_reason(&first), StopReason::Completed);
    let after = ctx.last_sequence(&s.id).await;
    let killed = kill(&ctx, &s, token);
    let reported = ctx
        .next(&s.id, after, |p| match p {
            EventPayload::Error(error) => Some(error.clone()),
            _ => None,
        })
        .await;
    if let AgentError::ProcessExited { signal, .. } = &reported {
        assert_eq!(*signal, Some(9), "kill-between: {reported:?}");
    }
    let later = "which word after the kill? (kill-between)";
    let events = ctx.turn(&s.id, later).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let now = ctx
        .subject
        .processes(&s.cwd, ctx.daemon.data_dir.path(), token);
    assert!(
        now.iter().all(|p| !killed.contains(p)),
        "kill-between: a new process"
    );
    assert!(
        ctx.subject
            .remembers(ctx.daemon.data_dir.path(), later, "PAPAYA"),
        "kill-between: the conversation was lost"
    );
    vec!["resume"]
}

/// kill -9 of the agent in the middle of a reply: the turn ends `error`; the next turn
/// resumes the conversation.
pub async fn kill_mid_turn(ctx: Arc<Ctx>) -> Proved {
    let token = own_token(&ctx, SESSION_TOKEN_3);
    let s = own_session(&ctx, "kill-mid", token).await;
    let first = ctx.turn(&s.id, "remember the word MANGO (kill-mid)").await;
    assert_eq!(stop_reason(&first), StopReason::Completed);
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx.send(&s.id, &ctx.prompt(Ask::Slow, "kill-mid")).await;
    if ctx.subject.runs == Runs::StandIn {
        let started = Instant::now();
        while ctx
            .subject
            .processes(&s.cwd, ctx.daemon.data_dir.path(), token)
            .is_empty()
        {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "kill-mid: no process"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    } else {
        ctx.next(&s.id, after, |p| {
            matches!(p, EventPayload::ItemDelta(_)).then_some(())
        })
        .await;
    }
    kill(&ctx, &s, token);
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Error, "kill-mid");
    let later = "which word after the crash? (kill-mid)";
    let events = ctx.turn(&s.id, later).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert!(
        ctx.subject
            .remembers(ctx.daemon.data_dir.path(), later, "MANGO"),
        "kill-mid: the conversation was lost"
    );
    vec!["resume"]
}

/// The daemon restarts between two turns of a session: the log continues and the next
/// turn resumes the conversation.
pub async fn restart(ctx: Ctx) -> (Ctx, Proved) {
    let s = ctx.session("restart").await;
    let first = ctx.turn(&s.id, "remember the word HERON (restart)").await;
    assert_eq!(stop_reason(&first), StopReason::Completed);
    let before = ctx.events(&s.id).await.len();
    let Ctx { subject, daemon } = ctx;
    let ctx = Ctx {
        daemon: daemon.restart().await,
        subject,
    };
    assert_eq!(
        ctx.events(&s.id).await.len(),
        before,
        "restart: the log survived"
    );
    let later = "which word after the restart? (restart)";
    let events = ctx.turn(&s.id, later).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert!(
        ctx.subject
            .remembers(ctx.daemon.data_dir.path(), later, "HERON"),
        "restart: the conversation was lost"
    );
    (ctx, vec!["resume"])
}
