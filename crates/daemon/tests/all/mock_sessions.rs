//! Full mock-agent sessions over HTTP: turns, tools, cancel, crash, end, paging.
//! Permissions and questions are in `mock_hitl.rs`.

use crate::common;

use common::{
    TestDaemon, assert_contiguous, assert_problem, completed, deltas, first, raw, skeleton, types,
};
use reqwest::Method;
use sandbox_universal::{
    ContentPart, EventPayload, EventSource, FileChangeKind, ItemKind, ItemRole, ItemStatus,
    PermissionOutcome, SessionEndReason, SessionStatus, StopReason,
};

#[tokio::test]
async fn echo_turn_has_the_canonical_skeleton() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let sent = daemon
        .client
        .send_message("s", "hello there")
        .await
        .unwrap();
    assert_eq!(sent.turn_id, "turn_1");
    let events = daemon.wait_turn_ended("s", 1).await;
    assert_contiguous(&events, "s");
    assert_eq!(
        skeleton(&events),
        [
            "sessionStarted",
            "turnStarted",
            "itemStarted:message",
            "itemCompleted:message",
            "itemStarted:message",
            "itemDelta*",
            "itemCompleted:message",
            "turnEnded",
        ]
    );
    let user = &completed(&events, ItemKind::Message)[0];
    assert_eq!(user.role, Some(ItemRole::User));
    assert_eq!(user.text(), "hello there");
    assert_eq!(events[1].source, EventSource::Daemon);
    let reply = &completed(&events, ItemKind::Message)[1];
    assert_eq!(reply.role, Some(ItemRole::Assistant));
    assert_eq!(reply.text(), "echo: hello there");
    let delta_count = types(&events).iter().filter(|t| **t == "itemDelta").count();
    assert!(delta_count >= 3, "{delta_count} deltas");
    assert_eq!(deltas(&events, &reply.item_id), "echo: hello there");
    let ended = first(&events, |p| match p {
        EventPayload::TurnEnded(t) => Some(t.clone()),
        _ => None,
    });
    assert_eq!(ended.turn_id, "turn_1");
    assert_eq!(ended.stop_reason, StopReason::Completed);
    assert!(ended.usage.is_some());

    // A second turn on the same session continues the log.
    daemon.client.send_message("s", "again").await.unwrap();
    let events = daemon.wait_turn_ended("s", 2).await;
    assert_contiguous(&events, "s");
    let info = daemon.client.get_session("s").await.unwrap();
    assert_eq!(info.status, SessionStatus::Idle);
    assert_eq!(info.event_count, events.len() as u64);
}

#[tokio::test]
async fn tool_turn_emits_every_item_kind() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon.client.send_message("s", "run a tool").await.unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    let call = &completed(&events, ItemKind::ToolCall)[0];
    let result = &completed(&events, ItemKind::ToolResult)[0];
    assert_eq!(result.parent_id.as_deref(), Some(call.item_id.as_str()));
    let (
        ContentPart::ToolCall { call_id, name, .. },
        ContentPart::ToolResult {
            call_id: answered,
            is_error,
            ..
        },
    ) = (&call.content[0], &result.content[0])
    else {
        panic!("unexpected content {call:?} {result:?}");
    };
    assert_eq!(call_id, answered);
    assert_eq!(name, "mock_search");
    assert!(!is_error);
    let command = &completed(&events, ItemKind::CommandExecution)[0];
    assert_eq!(
        command.content[0],
        ContentPart::CommandExecution {
            command: "echo mock".into(),
            cwd: Some(
                daemon
                    .data_dir
                    .path()
                    .canonicalize()
                    .unwrap()
                    .display()
                    .to_string()
            ),
            output: Some("mock\n".into()),
            exit_code: Some(0),
        }
    );
    let change = &completed(&events, ItemKind::FileChange)[0];
    let ContentPart::FileChange {
        path,
        change_kind,
        diff,
    } = &change.content[0]
    else {
        panic!("{change:?}");
    };
    assert!(path.ends_with("/mock.txt"));
    assert_eq!(*change_kind, FileChangeKind::Add);
    assert!(diff.as_deref().unwrap().contains("+mock"));
}

#[tokio::test]
async fn busy_sessions_refuse_messages_and_cancel_stops_turns() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon
        .client
        .send_message("s", "slow please")
        .await
        .unwrap();
    let url = format!("{}/sessions/s/messages", daemon.url());
    let busy = raw(
        Method::POST,
        &url,
        None,
        Some("application/json"),
        Some(br#"{"message":"hi"}"#.to_vec()),
    )
    .await;
    assert_problem(&busy, 409, "turn-in-progress");
    assert!(busy.2["detail"].as_str().unwrap().contains("turn_1"));
    daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::ItemDelta(_)))
        .await;
    let cancelled = daemon.client.cancel("s").await.unwrap();
    assert_eq!(cancelled.turn_id, "turn_1");
    let events = daemon.wait_turn_ended("s", 1).await;
    let ended = first(&events, |p| match p {
        EventPayload::TurnEnded(t) => Some(t.clone()),
        _ => None,
    });
    assert_eq!(ended.stop_reason, StopReason::Cancelled);
    let slow = completed(&events, ItemKind::Message).pop().unwrap();
    assert_eq!(slow.status, ItemStatus::Failed);
    assert!(deltas(&events, &slow.item_id).split_whitespace().count() < 100);
    let idle = raw(
        Method::POST,
        &format!("{}/sessions/s/cancel", daemon.url()),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&idle, 409, "no-active-turn");

    // Cancelling while a permission is pending cancels the request too.
    daemon.client.send_message("s", "permission").await.unwrap();
    daemon
        .wait_for("s", |e| {
            matches!(e.payload, EventPayload::PermissionAsked(_))
        })
        .await;
    daemon.client.cancel("s").await.unwrap();
    let events = daemon.wait_turn_ended("s", 2).await;
    let resolved = first(&events, |p| match p {
        EventPayload::PermissionResolved(r) => Some(r.clone()),
        _ => None,
    });
    assert_eq!(resolved.outcome, PermissionOutcome::Cancelled);
    assert!(
        daemon
            .client
            .get_session("s")
            .await
            .unwrap()
            .pending_permissions
            .is_empty()
    );
}

#[tokio::test]
async fn crash_ends_the_session_with_an_error() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon.client.send_message("s", "crash now").await.unwrap();
    let events = daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::SessionEnded(_)))
        .await;
    assert_eq!(
        &types(&events)[events.len() - 3..],
        ["error", "turnEnded", "sessionEnded"]
    );
    let error = first(&events, |p| match p {
        EventPayload::Error(e) => Some(e.clone()),
        _ => None,
    });
    assert_eq!(error.kind(), "processExited");
    let ended = first(&events, |p| match p {
        EventPayload::SessionEnded(s) => Some(s.clone()),
        _ => None,
    });
    assert_eq!(ended.reason, SessionEndReason::Error);
    let turn = first(&events, |p| match p {
        EventPayload::TurnEnded(t) => Some(t.clone()),
        _ => None,
    });
    assert_eq!(turn.stop_reason, StopReason::Error);
    let url = format!("{}/sessions/s/messages", daemon.url());
    let later = raw(
        Method::POST,
        &url,
        None,
        Some("application/json"),
        Some(br#"{"message":"hi"}"#.to_vec()),
    )
    .await;
    assert_problem(&later, 409, "session-ended");
    let info = daemon.client.get_session("s").await.unwrap();
    assert_eq!(info.status, SessionStatus::Ended);
    assert_eq!(info.end_reason, Some(SessionEndReason::Error));
}

#[tokio::test]
async fn ending_a_session_keeps_its_log() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon.client.send_message("s", "slow").await.unwrap();
    let ended = daemon.client.end_session("s").await.unwrap();
    assert_eq!(ended.status, SessionStatus::Ended);
    assert_eq!(ended.end_reason, Some(SessionEndReason::Terminated));
    let events = daemon.events("s").await;
    assert_contiguous(&events, "s");
    let tail = &types(&events)[events.len() - 2..];
    assert_eq!(tail, ["turnEnded", "sessionEnded"]);
    for (method, path, body) in [
        (
            Method::POST,
            "/sessions/s/messages",
            Some(br#"{"message":"hi"}"#.to_vec()),
        ),
        (Method::POST, "/sessions/s/cancel", None),
    ] {
        let response = raw(
            method,
            &format!("{}{path}", daemon.url()),
            None,
            Some("application/json"),
            body,
        )
        .await;
        assert_problem(&response, 409, "session-ended");
    }
    // Ending again is idempotent: the session is answered as it is, nothing is logged.
    let again = daemon.client.end_session("s").await.unwrap();
    assert_eq!(again, ended);
    assert_eq!(daemon.events("s").await, events);
    // The stream of an ended session replays and closes.
    let replay = daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::SessionEnded(_)))
        .await;
    assert_eq!(replay, events);
    let listed = daemon
        .client
        .list_sessions(&Default::default())
        .await
        .unwrap();
    assert_eq!(listed.sessions.len(), 1);
}

#[tokio::test]
async fn unparsed_items_carry_raw_json() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon.client.send_message("s", "unparsed").await.unwrap();
    daemon.wait_turn_ended("s", 1).await;
    let page = daemon
        .client
        .get_events(
            "s",
            &sandbox_client::EventsQuery {
                include_raw: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let unparsed = page
        .events
        .iter()
        .find(|e| matches!(&e.payload, EventPayload::ItemCompleted(i) if i.item.kind == ItemKind::Unparsed))
        .unwrap();
    let EventPayload::ItemCompleted(item) = &unparsed.payload else {
        unreachable!()
    };
    let ContentPart::Unparsed { raw, error } = &item.item.content[0] else {
        panic!()
    };
    assert_eq!(raw["type"], "mock.mystery");
    assert!(error.contains("mock.mystery"));
    assert_eq!(unparsed.raw.as_ref(), Some(raw));
    let plain = daemon.events("s").await;
    assert!(plain.iter().all(|e| e.raw.is_none()));
}

#[tokio::test]
async fn paging_through_the_log() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon.client.send_message("s", "flood 250").await.unwrap();
    let all = daemon.wait_turn_ended("s", 1).await;
    assert!(all.len() > 250);
    let query = |offset, limit| sandbox_client::EventsQuery {
        offset: Some(offset),
        limit: Some(limit),
        include_raw: false,
    };
    let page = daemon.client.get_events("s", &query(0, 10)).await.unwrap();
    assert_eq!(page.events, all[..10]);
    assert!(page.has_more);
    let page = daemon
        .client
        .get_events("s", &query(100, 1000))
        .await
        .unwrap();
    assert_eq!(page.events, all[100..]);
    assert!(!page.has_more);
    let default = daemon
        .client
        .get_events("s", &Default::default())
        .await
        .unwrap();
    assert_eq!(default.events.len(), 100);
    assert!(default.has_more);
}

/// Asserts `GET /sessions/{id}` and the listing give the session's `updatedAt` as the time
/// of its last event (its `createdAt` before it has one), and answers it.
pub(crate) async fn assert_updated_at(
    daemon: &TestDaemon,
    id: &str,
) -> chrono::DateTime<chrono::Utc> {
    let info = daemon.client.get_session(id).await.unwrap();
    let events = common::all_events(&daemon.client, id).await;
    let last = match info.event_count {
        0 => info.created_at,
        n => events[n as usize - 1].time,
    };
    assert_eq!(info.updated_at, last, "{id}: {info:?}");
    assert!(info.updated_at >= info.created_at);
    let listed = daemon.client.list_all_sessions().await.unwrap();
    let listed = listed.sessions.iter().find(|s| s.session_id == id).unwrap();
    assert_eq!(listed.updated_at, info.updated_at, "{id}: listed");
    info.updated_at
}

#[tokio::test]
async fn updated_at_is_the_time_of_the_last_event() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let created = assert_updated_at(&daemon, "s").await;
    daemon.turn("s", "hello").await;
    let after_turn = assert_updated_at(&daemon, "s").await;
    assert!(after_turn > created, "{after_turn} > {created}");
    daemon.client.end_session("s").await.unwrap();
    let ended = assert_updated_at(&daemon, "s").await;
    assert!(ended > after_turn, "{ended} > {after_turn}");
}
