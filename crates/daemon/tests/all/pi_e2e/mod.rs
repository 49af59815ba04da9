//! What only Pi does, with the real pinned `pi --mode rpc` offline against the test kit's
//! provider, set up as the scenario table sets it up ([`Ctx::start`]); everything every
//! agent does is in the table (`scenarios::pi`).

mod mcp;

use sandbox_universal::{AgentId, CreateSessionRequest, StopReason};

use crate::scenarios::ctx::{Ctx, stop_reason};
use crate::scenarios::subject::{Ask, SESSION_TOKEN};

/// Two Pi sessions at once, one with its own token: each has its own Pi session, its
/// calls carry only its own prompts, and each uses its own key (the daemon's, or the
/// session's token).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_concurrent_sessions_are_kept_apart() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Pi).await else {
        return;
    };
    let (a, b) = tokio::join!(
        ctx.session("alpha"),
        ctx.session_with("bravo", |r| CreateSessionRequest {
            token: Some(SESSION_TOKEN.into()),
            ..r
        }),
    );
    let (alpha, bravo) = (
        ctx.prompt(Ask::Text, "ALPHA"),
        ctx.prompt(Ask::Text, "BRAVO"),
    );
    let (one, two) = tokio::join!(ctx.turn(&a.id, &alpha), ctx.turn(&b.id, &bravo));
    assert_eq!(stop_reason(&one), StopReason::Completed);
    assert_eq!(stop_reason(&two), StopReason::Completed);
    // The provider's keys: 0 is the daemon's, 2 is SESSION_TOKEN (see `Subject::new`).
    for (mine, theirs, key) in [(&alpha, &bravo, 0), (&bravo, &alpha, 2)] {
        let calls = ctx.subject.calls_with(mine);
        assert!(!calls.is_empty(), "no call for {mine}");
        for call in calls {
            assert!(
                !call.body.to_string().contains(theirs.as_str()),
                "{theirs} in the call for {mine}"
            );
            assert_eq!(call.key, Some(key), "the wrong key for {mine}");
        }
    }
    let native = |id: &str| {
        let client = &ctx.daemon.client;
        let id = id.to_string();
        async move { client.get_session(&id).await.unwrap().native_session_id }
    };
    assert_ne!(native(&a.id).await, native(&b.id).await);
}

/// The variant is Pi's thinking level: on a model with a thinking budget, `low` and
/// `high` reach the model call as budgets, the higher level the larger one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_thinking_level_reaches_the_model_call() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Pi).await else {
        return;
    };
    let models = ctx.daemon.client.agent_models("pi").await.unwrap();
    let model = models
        .models
        .iter()
        .find(|m| {
            m.id.starts_with("anthropic/")
                && ["low", "high"]
                    .iter()
                    .all(|level| m.variants.iter().any(|v| v == level))
        })
        .expect("a reasoning model");
    let budget = async |level: &str| {
        let s = ctx
            .session_with(&format!("thinking-{level}"), |r| CreateSessionRequest {
                model: Some(model.id.clone()),
                variant: Some(level.into()),
                ..r
            })
            .await;
        let message = ctx.prompt(Ask::Think, &s.id);
        let events = ctx.turn(&s.id, &message).await;
        assert_eq!(stop_reason(&events), StopReason::Completed);
        let calls = ctx.subject.calls_with(&message);
        let thinking = calls.last().expect("the model call").body["thinking"].clone();
        thinking["budget_tokens"]
            .as_u64()
            .unwrap_or_else(|| panic!("{level}: no thinking budget: {thinking}"))
    };
    let (low, high): (u64, u64) = tokio::join!(budget("low"), budget("high"));
    assert!(low > 0 && high > low, "budgets: low {low}, high {high}");
}
