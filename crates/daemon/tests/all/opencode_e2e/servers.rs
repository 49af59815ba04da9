//! Servers through the daemon: sessions with the same credentials share one server and
//! never see each other's events; sessions with their own token get servers of their own
//! and only their key reaches the provider; a killed server is replaced at the next
//! message, and a daemon restart continues the conversation.

use sandbox_testkit::provider::script::{REPLY_TEXT, THINKING_TEXT};
use sandbox_universal::{CreateSessionRequest, EventPayload, ItemKind, StopReason};

use super::harness::*;
use crate::common::raw_events;

#[tokio::test]
async fn two_sessions_share_a_server_and_never_mix() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    tokio::join!(
        oc.session("a", CreateSessionRequest::default()),
        oc.session("b", CreateSessionRequest::default()),
    );
    assert_eq!(
        oc.servers().len(),
        1,
        "one server for one set of credentials"
    );
    let (a, b) = tokio::join!(oc.turn("a", "say hi"), oc.turn("b", "THINK about it"));
    assert_eq!(stop_reason(&a), StopReason::Completed);
    assert_eq!(stop_reason(&b), StopReason::Completed);
    assert!(
        completed(&a, ItemKind::Reasoning).is_empty(),
        "b's reasoning in a"
    );
    assert_eq!(completed(&b, ItemKind::Reasoning)[0].text(), THINKING_TEXT);
    let a_all = raw_events(&oc.daemon.client, "a").await;
    let b_all = raw_events(&oc.daemon.client, "b").await;
    let (a_native, b_native) = (oc.native_id("a").await, oc.native_id("b").await);
    assert_ne!(a_native, b_native);
    for (all, own, other) in [
        (&a_all, &a_native, &b_native),
        (&b_all, &b_native, &a_native),
    ] {
        assert_no_unparsed(all);
        let mut named = Vec::new();
        for event in all {
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
    // The server stops with its last session.
    oc.daemon.client.end_session("a").await.unwrap();
    assert_eq!(oc.servers().len(), 1, "b still uses it");
    oc.daemon.client.end_session("b").await.unwrap();
    eventually("the server to stop", || oc.servers().is_empty()).await;
}

#[tokio::test]
async fn tokens_get_their_own_servers_and_keys() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    let with_token = |token: &str| CreateSessionRequest {
        token: Some(token.into()),
        ..CreateSessionRequest::default()
    };
    tokio::join!(
        oc.session("shared", CreateSessionRequest::default()),
        oc.session("one", with_token(TOKENS[0])),
        oc.session("two", with_token(TOKENS[1])),
    );
    let servers = oc.servers();
    assert_eq!(servers.len(), 3, "a server per token");
    tokio::join!(
        oc.turn("shared", "say hi"),
        oc.turn("one", "say hi"),
        oc.turn("two", "say hi"),
    );
    for (id, key) in [("shared", 0), ("one", 1), ("two", 2)] {
        let requests = oc.model_requests(id).await;
        assert!(!requests.is_empty(), "{id} made no model call");
        for request in requests {
            assert_eq!(request.key, Some(key), "{id} sent another session's key");
        }
    }
    for pid in servers {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let environ = String::from_utf8_lossy(&environ);
        for secret in [KEY, TOKENS[0], TOKENS[1]] {
            assert!(!environ.contains(secret), "a key in a server's environment");
        }
    }
}

#[tokio::test]
async fn killed_server_then_next_message_works() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    oc.session("s", CreateSessionRequest::default()).await;
    oc.turn("s", "say hi").await;
    let killed = oc.servers();
    assert_eq!(killed.len(), 1);
    kill_9(killed[0]);
    let events = oc
        .daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::Error(_)))
        .await;
    let EventPayload::Error(error) = &events.last().unwrap().payload else {
        unreachable!()
    };
    assert_eq!(error.kind(), "processExited", "{error:?}");
    let next = oc.turn("s", "say hi again").await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    assert_ne!(oc.servers(), killed, "a new server");
    let call = oc
        .model_requests("s")
        .await
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("say hi again"))
        .unwrap();
    assert!(call.body.to_string().contains(REPLY_TEXT), "history kept");
    assert_no_unparsed(&oc.daemon.events("s").await);
}

#[tokio::test]
async fn daemon_restart_then_the_conversation_continues() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    oc.session("s", CreateSessionRequest::default()).await;
    oc.turn("s", "say hi").await;
    let native = oc.native_id("s").await;
    let oc = oc.restart().await;
    eventually("the old server to stop", || oc.servers().is_empty()).await;
    let next = oc.turn("s", "say hi after the restart").await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    assert_eq!(oc.native_id("s").await, native, "the same OpenCode session");
    let call = oc
        .model_requests("s")
        .await
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("after the restart"))
        .unwrap();
    assert!(call.body.to_string().contains(REPLY_TEXT), "history kept");
    let all = oc.daemon.events("s").await;
    assert_no_unparsed(&all);
    oc.check_capabilities("daemon_restart_then_the_conversation_continues", &all)
        .await;
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
