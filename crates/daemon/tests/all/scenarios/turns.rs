//! Plain turns: text and deltas, reasoning, cancel, three-turn memory, the live listings,
//! `validateToken`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_client::ClientError;
use sandbox_universal::{
    AgentError, AgentId, CreateSessionRequest, EventPayload, ItemKind, ProblemDetails, StopReason,
};

use super::Proved;
use super::ctx::{Ctx, items, reply_text, stop_reason};
use super::subject::{Ask, BAD_TOKEN, DAEMON_TOKEN, OPENAI_KEY, Runs, SESSION_TOKEN, environ};

/// A message: a streamed reply, usage, the session's start; no secret of the daemon's in
/// the agent's environment.
pub async fn text(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("text").await;
    let message = ctx.prompt(Ask::Text, "text");
    let events = ctx.turn(&s.id, &message).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let reply = reply_text(&events);
    assert!(ctx.subject.is_reply(&reply, &message), "text: {reply:?}");
    let mut proved = vec!["textMessages"];
    let message_items = items(&events, ItemKind::Message);
    let reply_id = &message_items.last().unwrap().item_id;
    let deltas = events
        .iter()
        .filter(|e| matches!(&e.payload, EventPayload::ItemDelta(d) if &d.item_id == reply_id))
        .count();
    if deltas >= 2 {
        proved.push("streamingDeltas");
    }
    if let EventPayload::TurnEnded(ended) = &events.last().unwrap().payload
        && let Some(usage) = &ended.usage
    {
        assert!(usage.input_tokens > 0, "text: {usage:?}");
        proved.push("usage");
    }
    let all = ctx.events(&s.id).await;
    let EventPayload::SessionStarted(started) = &all[0].payload else {
        panic!("text: sessionStarted first, got {:?}", all[0].payload)
    };
    assert_eq!(started.agent, ctx.subject.agent);
    if ctx.subject.runs == Runs::RealCli {
        let pinned = super::subject::testkit_agent(ctx.subject.agent).version();
        assert_eq!(
            started.agent_version.as_deref(),
            Some(pinned),
            "text: the version"
        );
    }
    let starts = all
        .iter()
        .filter(|e| matches!(e.payload, EventPayload::SessionStarted(_)))
        .count();
    assert_eq!(starts, 1, "text: one sessionStarted");
    // Secrets reach only the process that needs them.
    let data = ctx.daemon.data_dir.path();
    for pid in ctx.subject.processes(&s.cwd, data, None) {
        for entry in environ(pid) {
            assert!(
                !entry.contains(DAEMON_TOKEN),
                "text: the daemon's token reached the agent"
            );
            if ctx.subject.agent == AgentId::Claude {
                assert!(
                    !entry.contains(OPENAI_KEY),
                    "text: the OpenAI key reached Claude"
                );
            }
        }
    }
    proved
}

/// THINK: a reasoning item carrying the model's thinking, then the reply.
pub async fn reasoning(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("reasoning").await;
    let events = ctx.turn(&s.id, &ctx.prompt(Ask::Think, "reasoning")).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert!(!reply_text(&events).is_empty(), "reasoning: a reply");
    let thoughts = items(&events, ItemKind::Reasoning);
    if thoughts.is_empty() {
        return vec![];
    }
    assert_eq!(thoughts[0].text(), ctx.subject.thinking());
    vec!["reasoning"]
}

/// SLOW, cancelled mid-reply: the turn ends `cancelled` within seconds; the next works.
pub async fn cancel(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("cancel").await;
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx.send(&s.id, &ctx.prompt(Ask::Slow, "cancel")).await;
    if ctx.subject.runs == Runs::StandIn {
        // Whole messages only: wait until the turn's process is running.
        let started = Instant::now();
        while ctx
            .subject
            .processes(&s.cwd, ctx.daemon.data_dir.path(), None)
            .is_empty()
        {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "cancel: no process"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    } else {
        ctx.next(&s.id, after, |p| {
            matches!(p, EventPayload::ItemDelta(_)).then_some(())
        })
        .await;
    }
    // No clock: a cancel that did not stop the reply would let it finish `completed`.
    ctx.daemon.client.cancel(&s.id).await.unwrap();
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Cancelled);
    let next = ctx
        .turn(&s.id, &ctx.prompt(Ask::Text, "after cancel"))
        .await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    vec!["cancel"]
}

/// Three turns; the third model call carries the first message.
pub async fn memory(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("memory").await;
    let first = "remember the word KIWI (memory)";
    let third = "which word did I ask you to remember? (memory)";
    let data = ctx.daemon.data_dir.path();
    let mut serving = None;
    for message in [first, "a second turn (memory)", third] {
        let events = ctx.turn(&s.id, message).await;
        assert_eq!(
            stop_reason(&events),
            StopReason::Completed,
            "memory: {message}"
        );
        // An agent that keeps a process keeps the same one across turns. OpenCode's
        // shared servers are every row's (rows start and end theirs meanwhile): one of
        // them, the session's, must stay.
        if ctx.subject.runs == Runs::RealCli {
            let now = ctx.subject.processes(&s.cwd, data, None);
            assert!(!now.is_empty(), "memory: no agent process");
            let first = serving.get_or_insert(now.clone());
            if ctx.subject.agent == sandbox_universal::AgentId::Opencode {
                assert!(
                    first.iter().any(|pid| now.contains(pid)),
                    "memory: no server survived: {first:?} then {now:?}"
                );
            } else {
                assert_eq!(*first, now, "memory: a new process");
            }
        }
    }
    if ctx.subject.runs != Runs::Mock {
        assert!(
            ctx.subject
                .remembers(ctx.daemon.data_dir.path(), third, "KIWI"),
            "memory: the third turn lacks the first"
        );
    }
    vec!["multiTurn"]
}

/// A create request the daemon must refuse; returns the problem.
async fn refused(ctx: &Ctx, id: &str, request: CreateSessionRequest) -> ProblemDetails {
    match ctx.daemon.client.create_session(id, &request).await {
        Err(ClientError::Problem(problem)) => *problem,
        other => panic!("{id}: expected a problem, got {other:?}"),
    }
}

/// Models, variants and modes listed live: a listed one is used (and reaches the model
/// call), an unknown one is refused.
pub async fn listing(ctx: Arc<Ctx>) -> Proved {
    let agent = ctx.subject.agent.to_string();
    let client = &ctx.daemon.client;
    let models = client.agent_models(&agent).await.unwrap();
    let modes = client.agent_modes(&agent).await.unwrap();
    let mut proved = Vec::new();
    let (mut request, _) = ctx.request("listing");
    if let Some(model) = models
        .models
        .iter()
        .find(|m| Some(m.id.as_str()) == ctx.subject.model)
        .or_else(|| {
            // A model of its own (not the default, which may be an alias such as
            // Claude's `default`), with variants when one has them.
            let own = |m: &&sandbox_universal::ModelInfo| {
                Some(&m.id) != models.default_model.as_ref() && m.id != "default"
            };
            let mut own = models.models.iter().filter(own);
            own.clone()
                .find(|m| !m.variants.is_empty())
                .or_else(|| own.next())
        })
        .or(models.models.first())
    {
        proved.push("models");
        request.model = Some(model.id.clone());
        if let Some(variant) = model.variants.first() {
            proved.push("variants");
            request.variant = Some(variant.clone());
            let (mut unknown, _) = ctx.request("listing-no-variant");
            unknown.model = Some(model.id.clone());
            unknown.variant = Some("no-such-variant".into());
            let problem = refused(&ctx, "listing-no-variant", unknown).await;
            assert!(problem.status == 400, "listing: {problem:?}");
        }
    }
    // Claude Code and Codex take full model ids their listing leaves out: only the others
    // can refuse a model up front.
    if !matches!(ctx.subject.agent, AgentId::Claude | AgentId::Codex) {
        let (mut unknown, _) = ctx.request("listing-no-model");
        unknown.model = Some("no-such-provider/no-such-model".into());
        let problem = refused(&ctx, "listing-no-model", unknown).await;
        assert_eq!(problem.status, 400, "listing: {problem:?}");
    }
    if let Some(mode) = modes
        .modes
        .iter()
        .find(|m| Some(&m.id) != modes.default_mode.as_ref())
        .or(modes.modes.first())
    {
        proved.push("agentModes");
        request.agent_mode = Some(mode.id.clone());
        let (mut unknown, _) = ctx.request("listing-no-mode");
        unknown.agent_mode = Some("no-such-mode".into());
        let problem = refused(&ctx, "listing-no-mode", unknown).await;
        assert_eq!(problem.status, 400, "listing: {problem:?}");
    }
    let created = client.create_session("listing", &request).await.unwrap();
    assert!(created.healthy);
    let message = ctx.prompt(Ask::Text, "listing");
    let events = ctx.turn("listing", &message).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    if let (Runs::RealCli, Some(model)) = (ctx.subject.runs, &request.model) {
        let name = model.rsplit('/').next().unwrap();
        let calls = ctx.subject.calls_with(&message);
        assert!(
            calls
                .iter()
                .any(|c| c.body["model"].as_str().is_some_and(|m| m.contains(name))),
            "listing: the model call does not use `{model}`"
        );
    }
    proved
}

/// Without `validateToken`, a key the provider refuses shows in the first turn: a
/// `tokenError` ends it. Claude Code retries a refused key ten times over about two and a
/// half minutes (what an OAuth login needs to refresh itself), each retry a `retrying`
/// status naming HTTP 401: the first one is enough to see, then the turn is cancelled.
async fn unchecked_bad_token(ctx: &Ctx) {
    let s = ctx
        .session_with("token-unchecked", |r| CreateSessionRequest {
            token: Some(BAD_TOKEN.into()),
            ..r
        })
        .await;
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx
        .send(&s.id, &ctx.prompt(Ask::Text, "unchecked token"))
        .await;
    if ctx.subject.agent == AgentId::Claude {
        let retry = ctx
            .next(&s.id, after, |p| match p {
                EventPayload::ItemCompleted(i) if i.item.kind == ItemKind::Status => {
                    Some(i.item.clone())
                }
                _ => None,
            })
            .await;
        let shown = serde_json::to_string(&retry.content).unwrap();
        assert!(shown.contains("401"), "validate-token: {shown}");
        ctx.daemon.client.cancel(&s.id).await.unwrap();
        let events = ctx.ended(&s.id, &turn).await;
        assert_eq!(stop_reason(&events), StopReason::Cancelled);
        return;
    }
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Error, "validate-token");
    let refused = events.iter().any(|e| {
        matches!(
            &e.payload,
            EventPayload::Error(AgentError::TokenError { .. })
        )
    });
    assert!(refused, "validate-token: the refused key is a tokenError");
}

/// `validateToken`: a bad key is refused with a `tokenError` and a session's own token
/// is the one the agent uses; an agent that cannot check a key refuses the field.
pub async fn validate_token(ctx: Arc<Ctx>) -> Proved {
    let agents = ctx.daemon.client.list_agents().await.unwrap();
    let claims = agents
        .agents
        .iter()
        .find(|a| a.id == ctx.subject.agent)
        .unwrap()
        .capabilities
        .validate_token;
    let bad = if ctx.subject.runs == Runs::Mock {
        "bad-token"
    } else {
        BAD_TOKEN
    };
    let (request, _) = ctx.request("token-bad");
    let request = CreateSessionRequest {
        token: Some(bad.into()),
        validate_token: Some(true),
        ..request
    };
    let problem = refused(&ctx, "token-bad", request).await;
    assert_eq!(problem.status, 422, "validate-token: {problem:?}");
    if !claims {
        assert!(
            problem.detail.contains("validateToken"),
            "validate-token: the refusal names the field: {problem:?}"
        );
        return vec![];
    }
    assert!(
        matches!(problem.agent_error, Some(AgentError::TokenError { .. })),
        "validate-token: {problem:?}"
    );
    if ctx.subject.runs == Runs::RealCli {
        unchecked_bad_token(&ctx).await;
    }
    let good = if ctx.subject.runs == Runs::Mock {
        "good-token"
    } else {
        SESSION_TOKEN
    };
    let s = ctx
        .session_with("token-good", |r| CreateSessionRequest {
            token: Some(good.into()),
            validate_token: Some(true),
            ..r
        })
        .await;
    let message = ctx.prompt(Ask::Text, "token");
    let events = ctx.turn(&s.id, &message).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    if ctx.subject.runs == Runs::RealCli {
        // The provider's key 2 is SESSION_TOKEN (see `Subject::new`).
        let calls = ctx.subject.calls_with(&message);
        assert!(
            !calls.is_empty() && calls.iter().all(|c| c.key == Some(2)),
            "validate-token: the session's token was not the key used: {:?}",
            calls.iter().map(|c| c.key).collect::<Vec<_>>()
        );
    }
    vec!["validateToken"]
}
