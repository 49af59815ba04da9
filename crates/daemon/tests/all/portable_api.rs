//! Portable sessions with the mock agent over HTTP: export, import into another daemon
//! (another data dir and cwd), handover, and every bad bundle. The mock remembers its
//! conversation in its private state (`recall`), so a resumed conversation shows.

use crate::common;

use common::{TestDaemon, assert_contiguous, assert_problem, completed, raw};
use reqwest::Method;
use sandbox_universal::{
    AgentId, EventPayload, HandoverRequest, ItemKind, SessionBundle, SessionStatus,
};
use serde_json::Value;

/// The last assistant message of a turn's events.
fn reply(events: &[sandbox_universal::UniversalEvent]) -> String {
    completed(events, ItemKind::Message)
        .iter()
        .rev()
        .find(|item| item.role == Some(sandbox_universal::ItemRole::Assistant))
        .map(|item| item.text())
        .unwrap_or_default()
}

/// The assistant message of a turn that starts with `recalled:`.
fn recalled(events: &[sandbox_universal::UniversalEvent]) -> String {
    completed(events, ItemKind::Message)
        .iter()
        .map(|item| item.text())
        .find(|text| text.starts_with("recalled:"))
        .unwrap_or_default()
}

/// A mock session `id` with two turns (one with tools); its exported bundle's text.
async fn exported(daemon: &TestDaemon, id: &str) -> bytes::Bytes {
    daemon.mock_session(id).await;
    daemon.turn(id, "remember HERON").await;
    daemon.turn(id, "tool time").await;
    daemon.client.export_session_text(id, false).await.unwrap()
}

async fn import(daemon: &TestDaemon, id: &str, body: Vec<u8>) -> (u16, String, Value) {
    raw(
        Method::POST,
        &format!("{}/sessions/{id}/import", daemon.url()),
        daemon.token.as_deref(),
        Some("application/json"),
        Some(body),
    )
    .await
}

#[tokio::test]
async fn a_session_moves_to_another_daemon_and_another_cwd_and_goes_on() {
    let a = TestDaemon::start().await;
    let text = exported(&a, "s").await;
    let bundle: SessionBundle = serde_json::from_slice(&text).unwrap();
    assert_eq!(bundle.format, sandbox_universal::BUNDLE_FORMAT);
    assert_eq!(bundle.session.agent, AgentId::Mock);
    assert_eq!(bundle.event_count, bundle.events.len() as u64);
    assert_contiguous(&bundle.events, "s");
    let native = bundle.native.as_ref().expect("the mock's memory travels");
    assert_eq!(native.files.len(), 1);
    assert!(native.files[0].content.contains("HERON"));
    let original = a.events("s").await;
    assert_eq!(bundle.events, original);

    let b = TestDaemon::start().await;
    let cwd = b.data_dir.path().join("elsewhere");
    std::fs::create_dir_all(&cwd).unwrap();
    let cwd = cwd.canonicalize().unwrap().display().to_string();
    let info = b
        .client
        .import_session("moved", text.to_vec(), Some(&cwd))
        .await
        .unwrap();
    assert_eq!(info.session_id, "moved");
    assert_eq!(info.cwd, cwd);
    assert_eq!(info.event_count, original.len() as u64);
    assert_eq!(info.status, SessionStatus::Idle);
    let imported = b.events("moved").await;
    assert_eq!(imported.len(), original.len());
    for (moved, was) in imported.iter().zip(&original) {
        assert_eq!(moved.session_id, "moved");
        assert_eq!(
            (moved.sequence, &moved.payload),
            (was.sequence, &was.payload)
        );
    }

    // The next message resumes the conversation; the log goes on from where it was.
    let events = b.turn("moved", "recall please").await;
    assert_eq!(events[0].sequence, original.len() as u64 + 1);
    let memory = recalled(&events);
    assert!(
        memory.contains("remember HERON") && memory.contains("tool time"),
        "{memory}"
    );
    assert_contiguous(&b.events("moved").await, "moved");

    // And it survives a restart of the importing daemon.
    let b = b.restart().await;
    let events = b.turn("moved", "recall again").await;
    assert!(recalled(&events).contains("recall please"));
}

#[tokio::test]
async fn bad_bundles_are_refused_and_leave_nothing_behind() {
    let a = TestDaemon::start().await;
    let text = exported(&a, "s").await;
    let bundle: Value = serde_json::from_slice(&text).unwrap();
    let b = TestDaemon::start().await;
    let edited = |edit: &dyn Fn(&mut Value)| {
        let mut bundle = bundle.clone();
        edit(&mut bundle);
        serde_json::to_vec(&bundle).unwrap()
    };

    let newer = edited(&|b| b["format"] = 2.into());
    let answer = import(&b, "x", newer).await;
    assert_problem(&answer, 422, "invalid-bundle");
    assert!(
        answer.2["detail"].as_str().unwrap().contains("newer"),
        "{}",
        answer.2
    );

    // Flipped, so the event really changes (its keys keep their order when re-written).
    let tampered = edited(&|b| {
        let synthetic = b["events"][1]["synthetic"].as_bool().unwrap_or(false);
        b["events"][1]["synthetic"] = (!synthetic).into();
    });
    let answer = import(&b, "x", tampered).await;
    assert_problem(&answer, 422, "invalid-bundle");
    assert!(
        answer.2["detail"].as_str().unwrap().contains("checksum"),
        "{}",
        answer.2
    );

    let native = edited(&|b| b["native"]["files"][0]["content"] = "[]".into());
    let answer = import(&b, "x", native).await;
    assert_problem(&answer, 422, "invalid-bundle");
    assert!(
        answer.2["detail"].as_str().unwrap().contains("mock-memory"),
        "{}",
        answer.2
    );

    let counted = edited(&|b| b["eventCount"] = 3.into());
    assert_problem(&import(&b, "x", counted).await, 422, "invalid-bundle");
    let torn = text[..text.len() / 2].to_vec();
    assert_problem(&import(&b, "x", torn).await, 422, "invalid-bundle");
    assert_problem(
        &import(&b, "x", b"[]".to_vec()).await,
        422,
        "invalid-bundle",
    );

    let nowhere = raw(
        Method::POST,
        &format!("{}/sessions/x/import?cwd=/no/such/dir", b.url()),
        None,
        Some("application/json"),
        Some(text.to_vec()),
    )
    .await;
    assert_problem(&nowhere, 400, "invalid-session-config");
    let text_plain = raw(
        Method::POST,
        &format!("{}/sessions/x/import", b.url()),
        None,
        Some("text/plain"),
        Some(text.to_vec()),
    )
    .await;
    assert_eq!(text_plain.0, 415, "{}", text_plain.2);

    // Nothing of the refused imports exists; the id is free, then taken.
    assert!(
        b.client
            .list_all_sessions()
            .await
            .unwrap()
            .sessions
            .is_empty()
    );
    assert_eq!(import(&b, "x", text.to_vec()).await.0, 201);
    assert_problem(&import(&b, "x", text.to_vec()).await, 409, "session-exists");
    assert_problem(&import(&a, "s", text.to_vec()).await, 409, "session-exists");
}

#[tokio::test]
async fn export_waits_for_no_turn_and_unknown_sessions_are_404() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let turn = daemon.client.send_message("s", "slow").await.unwrap();
    let running = raw(
        Method::GET,
        &format!("{}/sessions/s/export", daemon.url()),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&running, 409, "turn-in-progress");
    daemon.turn_ended("s", &turn.turn_id).await;
    assert!(daemon.client.export_session("s").await.is_ok());
    let missing = raw(
        Method::GET,
        &format!("{}/sessions/nope/export", daemon.url()),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&missing, 404, "session-not-found");
    // An ended session still exports (its log and native state are all there).
    daemon.client.end_session("s").await.unwrap();
    let bundle = daemon.client.export_session("s").await.unwrap();
    assert!(matches!(
        bundle.events.last().unwrap().payload,
        EventPayload::SessionEnded(_)
    ));
}

#[tokio::test]
async fn a_handover_gives_the_new_agent_the_conversation_and_is_logged() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon.turn("s", "remember OTTER").await;
    let before = daemon.events("s").await.len() as u64;
    let request = HandoverRequest {
        agent: "mock".into(),
        model: Some("mock-1".into()),
        agent_mode: None,
    };
    let info = daemon.client.handover("s", &request).await.unwrap();
    assert_eq!(info.agent, AgentId::Mock);
    assert_eq!(info.model.as_deref(), Some("mock-1"));
    let events = daemon.events("s").await;
    let handed = events.last().unwrap();
    assert_eq!(handed.sequence, before + 1);
    let EventPayload::SessionHandedOver(handed) = &handed.payload else {
        panic!("{handed:?}")
    };
    assert_eq!(handed.turns, 1);
    assert_eq!(handed.model.as_deref(), Some("mock-1"));
    let events = daemon.turn("s", "recall").await;
    assert_eq!(events[0].sequence, before + 2);
    assert!(recalled(&events).contains("remember OTTER"), "{events:?}");
    assert_eq!(reply(&events), "echo: recall");
    // The handed-over session comes back as it is now after a restart.
    let daemon = daemon.restart().await;
    let info = daemon.client.get_session("s").await.unwrap();
    assert_eq!(info.model.as_deref(), Some("mock-1"));
    let events = daemon.turn("s", "recall").await;
    assert!(recalled(&events).contains("remember OTTER"));
}

#[tokio::test]
async fn a_handover_is_refused_mid_turn_after_the_end_and_for_unknown_agents() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let url = format!("{}/sessions/s/handover", daemon.url());
    let post = |body: &'static str| {
        let url = url.clone();
        async move {
            raw(
                Method::POST,
                &url,
                None,
                Some("application/json"),
                Some(body.as_bytes().to_vec()),
            )
            .await
        }
    };
    assert_problem(&post(r#"{"agent":"hal9000"}"#).await, 422, "invalid-body");
    assert_problem(
        &post(r#"{"agent":"mock","extra":1}"#).await,
        422,
        "invalid-body",
    );
    assert_problem(
        &post(r#"{"agent":"mock","agentMode":"warp"}"#).await,
        400,
        "invalid-session-config",
    );
    let turn = daemon.client.send_message("s", "slow").await.unwrap();
    assert_problem(&post(r#"{"agent":"mock"}"#).await, 409, "turn-in-progress");
    daemon.turn_ended("s", &turn.turn_id).await;
    daemon.client.end_session("s").await.unwrap();
    assert_problem(&post(r#"{"agent":"mock"}"#).await, 409, "session-ended");
    let missing = raw(
        Method::POST,
        &format!("{}/sessions/nope/handover", daemon.url()),
        None,
        Some("application/json"),
        Some(br#"{"agent":"mock"}"#.to_vec()),
    )
    .await;
    assert_problem(&missing, 404, "session-not-found");
}

/// With a shared PostgreSQL store (`SANDBOX_TEST_STORE=postgres`): daemon A is gone, and
/// daemon B — another data dir, none of A's files — continues A's session after the lease,
/// with the agent's memory, which travelled through the store.
#[tokio::test]
async fn on_a_shared_store_the_native_state_travels_to_the_daemon_that_takes_over() {
    let Some(store @ sandbox_daemon::store::StoreConfig::Postgres(_)) = common::test_store().await
    else {
        eprintln!("a shared store needs PostgreSQL: runs with SANDBOX_TEST_STORE=postgres");
        return;
    };
    let options = common::Options {
        store: Some(store),
        ..common::Options::default()
    };
    let a = TestDaemon::start_with(options.clone()).await;
    a.mock_session("s").await;
    a.turn("s", "remember KESTREL").await;
    wait_for_native_state(&a, "KESTREL").await;
    let a_id = std::fs::read_to_string(a.data_dir.path().join("daemon-id")).unwrap();
    let stopped = a.stop().await;
    let b = TestDaemon::start_with(options).await;
    // A's heartbeat is older than the lease (as if it had died long enough ago).
    b.execute_sql(&format!(
        "UPDATE daemons SET heartbeat_ms = 0 WHERE daemon_id = '{}'",
        a_id.trim()
    ))
    .await;
    let events = b.turn("s", "recall").await;
    assert!(recalled(&events).contains("remember KESTREL"), "{events:?}");
    assert_contiguous(&b.events("s").await, "s");
    // A's data dir (and the workspace in it) lived until now; B used none of A's files.
    assert!(!b.data_dir.path().starts_with(stopped.data_dir.path()));
}

/// Waits until the store holds a native state for the session containing `word`.
pub async fn wait_for_native_state(daemon: &TestDaemon, word: &str) {
    for _ in 0..200 {
        let rows = daemon.query_sql("SELECT body FROM native_states").await;
        if rows.iter().flatten().any(|body| body.contains(word)) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("no native state with {word} was saved");
}
