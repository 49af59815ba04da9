//! Servers through the daemon: sessions with the same credentials share one server and
//! never see each other's events; sessions with their own token get servers of their own
//! and only their key reaches the provider.

use std::time::{Duration, Instant};

use sandbox_universal::{AgentId, CreateSessionRequest, EventPayload, ItemKind, StopReason};

use crate::common::agent_events::assert_no_unparsed;
use crate::common::raw_events;
use crate::scenarios::ctx::{Ctx, items, stop_reason};
use crate::scenarios::subject::{Ask, KEY, OPENAI_KEY, SESSION_TOKEN, SESSION_TOKEN_2, environ};

/// Every `opencode serve` of the daemon.
fn servers(ctx: &Ctx) -> Vec<i32> {
    let data = ctx.daemon.data_dir.path();
    ctx.subject.processes(data, data, None)
}

/// Waits (up to 10 s) until `done` holds.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "waited in vain for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// OpenCode serves many sessions from one server: two sessions with the same
/// credentials share it, each log holds only its own session's native events, and the
/// server stops with its last session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_share_a_server_and_never_mix() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Opencode).await else {
        return;
    };
    let (a, b) = tokio::join!(ctx.session("a"), ctx.session("b"));
    assert_eq!(
        servers(&ctx).len(),
        1,
        "one server for one set of credentials"
    );
    let (hi, think) = (ctx.prompt(Ask::Text, "a"), ctx.prompt(Ask::Think, "b"));
    let (one, two) = tokio::join!(ctx.turn(&a.id, &hi), ctx.turn(&b.id, &think));
    assert_eq!(stop_reason(&one), StopReason::Completed);
    assert_eq!(stop_reason(&two), StopReason::Completed);
    assert!(
        items(&one, ItemKind::Reasoning).is_empty(),
        "b's reasoning in a"
    );
    assert!(
        !items(&two, ItemKind::Reasoning).is_empty(),
        "b's reasoning"
    );
    let (a_native, b_native) = (ctx.native_id(&a).await, ctx.native_id(&b).await);
    assert_ne!(a_native, b_native);
    for (s, own, other) in [(&a, &a_native, &b_native), (&b, &b_native, &a_native)] {
        let all = raw_events(&ctx.daemon.client, &s.id).await;
        assert_no_unparsed(&all);
        let mut named = Vec::new();
        for event in &all {
            if let Some(raw) = &event.raw {
                session_ids(raw, &mut named);
            }
        }
        assert!(!named.is_empty(), "no raw event names its session");
        assert!(
            named.iter().all(|id| id == own),
            "an event of {other} in {own}'s log"
        );
        let turns = all
            .iter()
            .filter(|e| matches!(e.payload, EventPayload::TurnEnded(_)))
            .count();
        assert_eq!(turns, 1);
    }
    ctx.daemon.client.end_session(&a.id).await.unwrap();
    assert_eq!(servers(&ctx).len(), 1, "b still uses it");
    ctx.daemon.client.end_session(&b.id).await.unwrap();
    eventually("the server to stop", || servers(&ctx).is_empty()).await;
}

/// A session's own token gets OpenCode servers of their own (a server holds one set of
/// keys): only that key reaches the provider from its sessions, and no key is in a
/// server's environment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_get_their_own_servers_and_keys() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Opencode).await else {
        return;
    };
    let with_token = |token: &'static str| {
        move |r| CreateSessionRequest {
            token: Some(token.into()),
            ..r
        }
    };
    let (shared, one, two) = tokio::join!(
        ctx.session("shared"),
        ctx.session_with("one", with_token(SESSION_TOKEN)),
        ctx.session_with("two", with_token(SESSION_TOKEN_2)),
    );
    let pids = servers(&ctx);
    assert_eq!(pids.len(), 3, "a server per token");
    let message = ctx.prompt(Ask::Text, "tokens");
    tokio::join!(
        ctx.turn(&shared.id, &message),
        ctx.turn(&one.id, &message),
        ctx.turn(&two.id, &message),
    );
    // The provider's keys: 0 is the daemon's, 2 and 3 the tokens (see `Subject::new`).
    for (s, key) in [(&shared, 0), (&one, 2), (&two, 3)] {
        let calls = ctx.model_calls(s).await;
        assert!(!calls.is_empty(), "{} made no model call", s.id);
        for call in calls {
            assert_eq!(call.key, Some(key), "{} sent another session's key", s.id);
        }
    }
    for pid in pids {
        for entry in environ(pid) {
            for secret in [KEY, OPENAI_KEY, SESSION_TOKEN, SESSION_TOKEN_2] {
                assert!(!entry.contains(secret), "a key in a server's environment");
            }
        }
    }
}

/// Every `sessionID` the native event names.
fn session_ids(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                match value.as_str() {
                    Some(id) if key == "sessionID" => out.push(id.to_string()),
                    _ => session_ids(value, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| session_ids(v, out)),
        _ => {}
    }
}
