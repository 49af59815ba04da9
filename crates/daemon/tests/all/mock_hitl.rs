//! Human in the loop with the mock agent over HTTP: permissions (once, reject, always)
//! and questions (answered, rejected, validated).

use crate::common;

use common::{TestDaemon, assert_problem, completed, first, raw};
use reqwest::Method;
use sandbox_universal::{
    EventPayload, ItemKind, ItemStatus, PermissionOutcome, PermissionReply, QuestionOutcome,
    SessionStatus, UniversalEvent,
};
use serde_json::json;

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
