//! Full mock-agent sessions over HTTP: turns, tools, permissions, questions, cancel,
//! crash, end.

mod common;

use common::{TestDaemon, assert_contiguous, assert_problem, raw, skeleton, types};
use reqwest::Method;
use sandbox_universal::{
    ContentPart, EventPayload, EventSource, FileChangeKind, ItemKind, ItemRole, ItemStatus,
    PermissionOutcome, PermissionReply, QuestionOutcome, SessionEndReason, SessionStatus,
    StopReason, UniversalEvent,
};
use serde_json::json;

fn deltas(events: &[UniversalEvent], item_id: &str) -> String {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemDelta(d) if d.item_id == item_id => Some(d.delta.as_str()),
            _ => None,
        })
        .collect()
}

fn completed(events: &[UniversalEvent], kind: ItemKind) -> Vec<sandbox_universal::Item> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) if i.item.kind == kind => Some(i.item.clone()),
            _ => None,
        })
        .collect()
}

fn first<T>(events: &[UniversalEvent], pick: impl Fn(&EventPayload) -> Option<T>) -> T {
    events
        .iter()
        .find_map(|e| pick(&e.payload))
        .expect("event present")
}

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

async fn permission_turn(daemon: &TestDaemon, turn: usize) -> Vec<UniversalEvent> {
    daemon
        .client
        .send_message("s", "needs permission")
        .await
        .unwrap();
    let seen = std::sync::atomic::AtomicUsize::new(0);
    daemon
        .wait_for("s", |e| {
            matches!(
                e.payload,
                EventPayload::PermissionAsked(_) | EventPayload::PermissionResolved(_)
            ) && seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 >= turn
        })
        .await
}

#[tokio::test]
async fn permission_once_reject_and_always() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;

    // once: the command runs.
    let events = permission_turn(&daemon, 1).await;
    let asked = first(&events, |p| match p {
        EventPayload::PermissionAsked(r) => Some(r.clone()),
        _ => None,
    });
    assert_eq!(asked.command.as_deref(), Some("echo permitted"));
    let info = daemon.client.get_session("s").await.unwrap();
    assert_eq!(info.pending_permissions, vec![asked.clone()]);
    assert_eq!(info.status, SessionStatus::Running);
    daemon
        .client
        .reply_permission("s", &asked.permission_id, PermissionReply::Once)
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    let command = completed(&events, ItemKind::CommandExecution)
        .pop()
        .unwrap();
    assert_eq!(command.status, ItemStatus::Completed);
    assert_eq!(command.item_id, asked.item_id.clone().unwrap());
    // Answering twice is a conflict; unknown ids are 404.
    let again = daemon
        .client
        .reply_permission("s", &asked.permission_id, PermissionReply::Once)
        .await
        .unwrap_err();
    assert_eq!(again.problem().unwrap().status, 409);
    let url = format!("{}/sessions/s/permissions/perm_404/reply", daemon.url());
    let unknown = raw(
        Method::POST,
        &url,
        None,
        Some("application/json"),
        Some(br#"{"reply":"once"}"#.to_vec()),
    )
    .await;
    assert_problem(&unknown, 404, "permission-not-found");
    let bad = raw(
        Method::POST,
        &url,
        None,
        Some("application/json"),
        Some(br#"{"reply":"sometimes"}"#.to_vec()),
    )
    .await;
    assert_problem(&bad, 422, "invalid-body");

    // reject: the command fails.
    let events = permission_turn(&daemon, 3).await;
    let asked = match &events.last().unwrap().payload {
        EventPayload::PermissionAsked(r) => r.clone(),
        other => panic!("{other:?}"),
    };
    daemon
        .client
        .reply_permission("s", &asked.permission_id, PermissionReply::Reject)
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 2).await;
    let command = completed(&events, ItemKind::CommandExecution)
        .pop()
        .unwrap();
    assert_eq!(command.status, ItemStatus::Failed);

    // always: approved, and the next request resolves by itself.
    let events = permission_turn(&daemon, 5).await;
    let asked = match &events.last().unwrap().payload {
        EventPayload::PermissionAsked(r) => r.clone(),
        other => panic!("{other:?}"),
    };
    daemon
        .client
        .reply_permission("s", &asked.permission_id, PermissionReply::Always)
        .await
        .unwrap();
    daemon.wait_turn_ended("s", 3).await;
    daemon
        .client
        .send_message("s", "needs permission again")
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 4).await;
    let last_turn: Vec<_> = events
        .iter()
        .rev()
        .take_while(|e| e.payload.event_type().as_str() != "turnStarted")
        .collect();
    assert!(
        !last_turn
            .iter()
            .any(|e| matches!(e.payload, EventPayload::PermissionAsked(_)))
    );
    let auto = last_turn
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::PermissionResolved(r) => Some((e, r.clone())),
            _ => None,
        })
        .expect("an automatic resolution");
    assert!(auto.1.automatic && auto.0.synthetic);
    assert_eq!(auto.1.outcome, PermissionOutcome::Always);
    assert_eq!(
        auto.1.request.as_ref().unwrap().command.as_deref(),
        Some("echo permitted")
    );
    let command = completed(&events, ItemKind::CommandExecution)
        .pop()
        .unwrap();
    assert_eq!(command.status, ItemStatus::Completed);
    let resolved: Vec<PermissionOutcome> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::PermissionResolved(r) => Some(r.outcome),
            _ => None,
        })
        .collect();
    assert_eq!(
        resolved,
        [
            PermissionOutcome::Once,
            PermissionOutcome::Reject,
            PermissionOutcome::Always,
            PermissionOutcome::Always
        ]
    );
}

#[tokio::test]
async fn questions_answered_rejected_and_validated() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon
        .client
        .send_message("s", "a question please")
        .await
        .unwrap();
    let events = daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::QuestionAsked(_)))
        .await;
    let EventPayload::QuestionAsked(asked) = &events.last().unwrap().payload else {
        unreachable!()
    };
    assert_eq!(asked.questions.len(), 2);
    assert!(!asked.questions[0].multi_select && asked.questions[1].multi_select);
    let id = asked.question_id.clone();
    let url = format!("{}/sessions/s/questions/{id}/reply", daemon.url());
    for (answers, why) in [
        (json!([["Red"]]), "one answer array for two questions"),
        (
            json!([["Red", "Blue"], ["Cheese"]]),
            "two answers to a single-select",
        ),
        (json!([["Purple"], ["Cheese"]]), "not an option"),
    ] {
        let response = raw(
            Method::POST,
            &url,
            None,
            Some("application/json"),
            Some(serde_json::to_vec(&json!({"answers": answers})).unwrap()),
        )
        .await;
        assert_problem(&response, 400, "invalid-answers");
        let _ = why;
    }
    assert_eq!(
        daemon
            .client
            .get_session("s")
            .await
            .unwrap()
            .pending_questions
            .len(),
        1
    );
    let answers = vec![
        vec!["Green".to_string()],
        vec!["Cheese".into(), "Olives".into()],
    ];
    daemon
        .client
        .reply_question("s", &id, answers.clone())
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    let resolved = first(&events, |p| match p {
        EventPayload::QuestionResolved(r) => Some(r.clone()),
        _ => None,
    });
    assert_eq!(resolved.outcome, QuestionOutcome::Answered);
    assert_eq!(resolved.answers, Some(answers));
    let messages = completed(&events, ItemKind::Message);
    assert!(
        messages
            .iter()
            .any(|m| m.text() == "You answered: Color = Green; Toppings = Cheese, Olives")
    );
    let twice = daemon.client.reject_question("s", &id).await.unwrap_err();
    assert_eq!(twice.problem().unwrap().status, 409);

    // Rejecting (with an empty body, too).
    daemon
        .client
        .send_message("s", "question again")
        .await
        .unwrap();
    let events = daemon
        .wait_for(
            "s",
            |e| matches!(&e.payload, EventPayload::QuestionAsked(q) if q.question_id != id),
        )
        .await;
    let EventPayload::QuestionAsked(asked) = &events.last().unwrap().payload else {
        unreachable!()
    };
    let url = format!(
        "{}/sessions/s/questions/{}/reject",
        daemon.url(),
        asked.question_id
    );
    let response = raw(Method::POST, &url, None, None, None).await;
    assert_eq!(response.0, 204);
    let events = daemon.wait_turn_ended("s", 2).await;
    let outcomes: Vec<QuestionOutcome> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::QuestionResolved(r) => Some(r.outcome),
            _ => None,
        })
        .collect();
    assert_eq!(
        outcomes,
        [QuestionOutcome::Answered, QuestionOutcome::Rejected]
    );
    let unknown = raw(
        Method::POST,
        &format!("{}/sessions/s/questions/q_9/reject", daemon.url()),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&unknown, 404, "question-not-found");
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
    assert_problem(&later, 410, "session-ended");
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
        (Method::DELETE, "/sessions/s", None),
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
        assert_problem(&response, 410, "session-ended");
    }
    // The stream of an ended session replays and closes.
    let replay = daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::SessionEnded(_)))
        .await;
    assert_eq!(replay, events);
    let listed = daemon.client.list_sessions().await.unwrap();
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
