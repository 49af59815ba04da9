//! An OpenCode session on the kernel's shared-server runner, on the real binary, below the daemon: universal
//! events of a text turn and of a tool turn whose permission is answered once, zero
//! `unparsed`, and the permission mode's rules applied to the OpenCode session.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_agents::opencode::convert::Converter;
use sandbox_agents::opencode::driver::create_session;
use sandbox_agents::opencode::launch;
use sandbox_agents::opencode::pool::ServerPool;
use sandbox_agents::{AgentEvent, AgentSession, CollectingSink, ProviderEnv};
use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::provider::FakeProvider;
use sandbox_universal::{EventPayload, ItemKind, PermissionMode, PermissionReply, StopReason};

async fn wait_for(
    collected: &Arc<CollectingSink>,
    what: &str,
    done: impl Fn(&[AgentEvent]) -> bool,
) -> Vec<AgentEvent> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let events = collected.events();
        if done(&events) {
            return events;
        }
        assert!(Instant::now() < deadline, "no {what}: {events:#?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn turns_ended(events: &[AgentEvent]) -> Vec<StopReason> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::TurnEnded(t) => Some(t.stop_reason),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_session_converts_a_text_turn_and_a_tool_turn_with_a_permission() {
    sandbox_testkit::isolate!();
    let Some(binary) = agents::require(Agent::OpenCode) else {
        return;
    };
    let provider = FakeProvider::builder().start().await.unwrap();
    let env = ProviderEnv::default()
        .with("ANTHROPIC_API_KEY", "sk-session-test")
        .with("ANTHROPIC_BASE_URL", provider.base_url());
    let root = tempfile::tempdir().unwrap();
    let cwd = root.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let pool = ServerPool::new(binary, root.path().join("servers"));
    let (collected, sink) = CollectingSink::new();
    let mut session = create_session(
        pool.lease(launch::providers(&env, None, None)),
        launch::permission_rules(PermissionMode::Default),
        Converter::new(cwd.display().to_string()),
        sink,
        None,
    )
    .await
    .unwrap();

    session
        .send_message("turn_1", &"say hi".into())
        .await
        .unwrap();
    let events = wait_for(&collected, "first turnEnded", |e| turns_ended(e).len() == 1).await;
    assert_eq!(turns_ended(&events), [StopReason::Completed]);
    let deltas = events
        .iter()
        .filter(|e| matches!(e.payload, EventPayload::ItemDelta(_)))
        .count();
    assert!(deltas >= 2, "{deltas} deltas");

    session
        .send_message("turn_2", &"USE_TOOL now".into())
        .await
        .unwrap();
    let events = wait_for(&collected, "a permission", |e| {
        e.iter()
            .any(|e| matches!(e.payload, EventPayload::PermissionAsked(_)))
    })
    .await;
    let asked = events
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::PermissionAsked(p) => Some(p.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        asked
            .command
            .as_deref()
            .unwrap_or_default()
            .contains("fake-tool-ran")
    );
    session
        .reply_permission(&asked.permission_id, PermissionReply::Once)
        .await
        .unwrap();
    let events = wait_for(&collected, "second turnEnded", |e| {
        turns_ended(e).len() == 2
    })
    .await;
    assert_eq!(turns_ended(&events)[1], StopReason::Completed);
    assert!(
        cwd.join("fake_tool_output.txt").exists(),
        "the command ran in the cwd"
    );
    assert!(events.iter().any(|e| matches!(&e.payload,
        EventPayload::ItemCompleted(i) if i.item.kind == ItemKind::CommandExecution)));
    assert!(
        !events.iter().any(|e| matches!(&e.payload,
            EventPayload::ItemStarted(i) if i.item.kind == ItemKind::Unparsed)),
        "unparsed items"
    );
    // Read-only tools never asked: the only permission was the command's.
    let asked_count = events
        .iter()
        .filter(|e| matches!(e.payload, EventPayload::PermissionAsked(_)))
        .count();
    assert_eq!(asked_count, 1);
    session.shutdown().await;
    assert_eq!(
        pool.servers(),
        0,
        "the last session's shutdown stops the server"
    );
}
