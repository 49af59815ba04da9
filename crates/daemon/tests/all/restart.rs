//! Sessions survive a daemon restart: the log, ids, `always` approvals, ended sessions,
//! and a turn interrupted by the shutdown.

use crate::common;

use std::collections::HashSet;

use common::{TestDaemon, assert_contiguous};
use sandbox_universal::{
    EventPayload, PermissionReply, SessionEndReason, SessionStatus, StopReason, UniversalEvent,
};

fn item_ids(events: &[UniversalEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemStarted(i) => Some(i.item.item_id.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn sessions_survive_a_restart() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("live").await;
    daemon.mock_session("done").await;
    daemon.client.end_session("done").await.unwrap();

    // An `always` approval before the restart.
    daemon
        .client
        .send_message("live", "permission")
        .await
        .unwrap();
    let asked = daemon
        .wait_for("live", |e| {
            matches!(e.payload, EventPayload::PermissionAsked(_))
        })
        .await;
    let EventPayload::PermissionAsked(request) = &asked.last().unwrap().payload else {
        unreachable!()
    };
    daemon
        .client
        .reply_permission("live", &request.permission_id, PermissionReply::Always)
        .await
        .unwrap();
    daemon.wait_turn_ended("live", 1).await;
    // A turn running when the daemon stops.
    daemon.client.send_message("live", "slow").await.unwrap();
    daemon
        .wait_for("live", |e| matches!(e.payload, EventPayload::ItemDelta(_)))
        .await;
    let before = daemon.events("live").await;

    let daemon = daemon.restart().await;
    let after = daemon.events("live").await;
    assert_contiguous(&after, "live");
    assert_eq!(
        after[..before.len()],
        before[..],
        "history is kept as it was"
    );
    let interrupted: Vec<&str> = after[before.len()..]
        .iter()
        .map(|e| e.payload.event_type().as_str())
        .filter(|t| *t != "itemCompleted" && *t != "itemDelta")
        .collect();
    assert_eq!(
        interrupted,
        ["error", "turnEnded"],
        "the interrupted turn is closed"
    );
    // (Deltas of the slow turn may still have been stored after `before` was read.)
    let error = after[before.len()..]
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::Error(error) => Some(error),
            _ => None,
        })
        .expect("the interruption is explained");
    assert!(error.message().contains("shutting down"), "{error}");
    let EventPayload::TurnEnded(ended) = &after.last().unwrap().payload else {
        unreachable!()
    };
    // The mock treats the shutdown as a cancel; a killed agent process ends it with `error`.
    assert!(matches!(
        ended.stop_reason,
        StopReason::Cancelled | StopReason::Error
    ));
    let info = daemon.client.get_session("live").await.unwrap();
    assert_eq!(info.status, SessionStatus::Idle);

    // The session goes on: new ids do not collide, and `always` is still remembered.
    daemon
        .client
        .send_message("live", "permission again")
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("live", 3).await;
    assert_contiguous(&events, "live");
    let ids = item_ids(&events);
    assert_eq!(
        ids.len(),
        ids.iter().collect::<HashSet<_>>().len(),
        "item ids are unique: {ids:?}"
    );
    let last_turn: Vec<&UniversalEvent> = events
        .iter()
        .rev()
        .take_while(|e| !matches!(e.payload, EventPayload::TurnStarted(_)))
        .collect();
    assert!(
        last_turn
            .iter()
            .any(|e| matches!(&e.payload, EventPayload::PermissionResolved(r) if r.automatic))
    );
    assert!(
        !last_turn
            .iter()
            .any(|e| matches!(e.payload, EventPayload::PermissionAsked(_)))
    );

    // Ended sessions stay ended and readable.
    let done = daemon.client.get_session("done").await.unwrap();
    assert_eq!(done.status, SessionStatus::Ended);
    assert_eq!(done.end_reason, Some(SessionEndReason::Terminated));
    let error = daemon.client.send_message("done", "hi").await.unwrap_err();
    assert_eq!(error.problem().unwrap().status, 409);
    assert_eq!(
        daemon
            .client
            .list_sessions(&Default::default())
            .await
            .unwrap()
            .sessions
            .len(),
        2
    );
}

#[tokio::test]
async fn sse_resumes_across_a_restart() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon.client.send_message("s", "hello").await.unwrap();
    let first = daemon.wait_turn_ended("s", 1).await;
    let daemon = daemon.restart().await;
    daemon.client.send_message("s", "again").await.unwrap();
    let mut stream = daemon
        .client
        .stream_events("s", Some(first.len() as u64), false)
        .await
        .unwrap();
    use futures::StreamExt;
    let next = stream.next().await.unwrap().unwrap();
    assert_eq!(next.sequence, first.len() as u64 + 1);
    assert!(matches!(next.payload, EventPayload::TurnStarted(_)));
}

#[tokio::test]
async fn a_failed_start_leaves_nothing_on_disk() {
    let daemon = TestDaemon::start().await;
    let request = sandbox_universal::CreateSessionRequest {
        agent: "mock".into(),
        token: Some("bad".into()),
        validate_token: Some(true),
        ..Default::default()
    };
    let refused = daemon.client.create_session("s", &request).await;
    assert!(
        matches!(&refused, Err(sandbox_client::ClientError::Problem(p)) if p.status == 422),
        "{refused:?}"
    );
    assert!(!daemon.data_dir.path().join("sessions/s").exists());
    let daemon = daemon.restart().await;
    assert!(
        daemon
            .client
            .list_sessions(&Default::default())
            .await
            .unwrap()
            .sessions
            .is_empty()
    );
}

#[tokio::test]
async fn updated_at_survives_a_restart() {
    use crate::mock_sessions::assert_updated_at;
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon.turn("s", "hello").await;
    let before = assert_updated_at(&daemon, "s").await;

    // Read from the store (the session is not loaded), then once loaded again.
    let daemon = daemon.restart().await;
    assert_eq!(assert_updated_at(&daemon, "s").await, before);
    daemon.turn("s", "again").await;
    let after = assert_updated_at(&daemon, "s").await;
    assert!(after > before, "{after} > {before}");
}
