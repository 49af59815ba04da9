//! A Claude Code session that goes on on another daemon through a shared PostgreSQL
//! store, on the real pinned CLI offline (the scenario table's `export-import` and
//! `handover` rows prove the rest of portable sessions for every agent).

use sandbox_universal::{AgentId, CreateSessionRequest, StopReason};

use crate::common::{TestDaemon, assert_contiguous};
use crate::scenarios::ctx::stop_reason;
use crate::scenarios::subject::Subject;

/// With a shared PostgreSQL store (`SANDBOX_TEST_STORE=postgres`): daemon A runs a Claude
/// turn and is gone (stopped, its heartbeat older than the lease); daemon B — its own data
/// dir, so none of A's files — continues the session, and Claude's next request carries
/// the earlier turn: the transcript travelled through the store. The store is reached
/// through its Unix socket, which the test's loopback-only network namespace leaves open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_shared_store_another_daemon_continues_the_conversation() {
    sandbox_testkit::isolate!();
    let Some(url) = crate::common::store_access::shared_store_over_socket().await else {
        return;
    };
    let Some(subject) = Subject::new(AgentId::Claude).await else {
        return;
    };
    let options = crate::common::Options {
        store: Some(sandbox_daemon::store::StoreConfig::Postgres(url)),
        ..subject.options.clone()
    };
    // The workspace outlives daemon A, as a shared volume would.
    let workspace = tempfile::tempdir().unwrap();
    let cwd = workspace
        .path()
        .canonicalize()
        .unwrap()
        .display()
        .to_string();
    let a = TestDaemon::start_with(options.clone()).await;
    let request = CreateSessionRequest {
        agent: "claude".into(),
        cwd: Some(cwd),
        ..CreateSessionRequest::default()
    };
    a.client.create_session("shared", &request).await.unwrap();
    let first = a
        .turn("shared", "remember the word ALBATROSS (shared)")
        .await;
    assert_eq!(stop_reason(&first), StopReason::Completed);
    crate::portable_api::wait_for_native_state(&a, "ALBATROSS").await;
    let a_id = std::fs::read_to_string(a.data_dir.path().join("daemon-id")).unwrap();
    let _gone = a.stop().await;
    let b = TestDaemon::start_with(options).await;
    b.execute_sql(&format!(
        "UPDATE daemons SET heartbeat_ms = 0 WHERE daemon_id = '{}'",
        a_id.trim()
    ))
    .await;
    let later = "which word did I ask you to remember? (shared)";
    let events = b.turn("shared", later).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert!(
        subject.remembers(b.data_dir.path(), later, "ALBATROSS"),
        "daemon B's Claude lost the conversation"
    );
    assert_contiguous(&b.events("shared").await, "shared");
}
