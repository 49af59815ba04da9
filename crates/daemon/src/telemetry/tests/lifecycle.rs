//! Spans that must end whatever happens: a session that ends or is let go with a turn
//! open, more tools open than a turn keeps, a cancel.

use super::*;

#[test]
fn open_spans_end_when_the_session_ends_or_is_let_go() {
    let (observer, collected) = observer(false);
    let mut feed = Feed {
        observer: &*observer,
        sequence: 0,
    };
    feed.at(
        0,
        EventPayload::SessionStarted(SessionStarted {
            agent: AgentId::Mock,
            model: Some("later-model".into()),
            agent_mode: None,
            permission_mode: None,
            cwd: None,
            agent_version: None,
        }),
    );
    feed.at(1, started("turn_1"));
    feed.at(
        2,
        EventPayload::ItemStarted(ItemEvent {
            item: call("itm_2", "call_1", ItemStatus::InProgress),
        }),
    );
    feed.at(
        3,
        EventPayload::SessionEnded(SessionEnded {
            reason: SessionEndReason::Error,
            exit_code: None,
            stderr_tail: None,
        }),
    );
    let turn = collected
        .named("invoke_agent mock")
        .pop()
        .expect("ended with the session");
    assert_eq!(text(&turn, key::ERROR_TYPE), "sessionEnded");
    assert_eq!(text(&turn, key::REQUEST_MODEL), "later-model");
    assert_eq!(collected.named("execute_tool mock_search").len(), 1);
    // Nothing after the session's end.
    feed.at(4, started("turn_2"));
    drop(observer);
    assert_eq!(collected.spans().len(), 2);

    let (observer, collected) = observer_unloaded();
    drop(observer);
    let turn = collected
        .named("invoke_agent mock")
        .pop()
        .expect("ended when let go");
    assert_eq!(text(&turn, key::ERROR_TYPE), "unloaded");
}

/// A session let go with a turn open.
fn observer_unloaded() -> (Box<dyn EventObserver>, Collected) {
    let (observer, collected) = observer(false);
    Feed {
        observer: &*observer,
        sequence: 0,
    }
    .at(0, started("turn_1"));
    assert!(collected.spans().is_empty());
    (observer, collected)
}

#[test]
fn a_turn_keeps_a_bounded_number_of_tools_open() {
    let (observer, collected) = observer(false);
    let mut feed = Feed {
        observer: &*observer,
        sequence: 0,
    };
    feed.at(0, started("turn_1"));
    for i in 0..MAX_OPEN_TOOLS + 50 {
        let item = call(
            &format!("itm_{i}"),
            &format!("call_{i}"),
            ItemStatus::Completed,
        );
        feed.at(1, EventPayload::ItemCompleted(ItemEvent { item }));
    }
    feed.at(2, ended("turn_1", StopReason::Cancelled));
    let tools = collected.named("execute_tool mock_search");
    assert_eq!(tools.len(), MAX_OPEN_TOOLS);
    // Cut short by the turn's end: failed, at the turn's end.
    assert!(tools.iter().all(
        |t| matches!(t.status, Status::Error { .. }) && t.end_time == SystemTime::from(time(2))
    ));
}

#[test]
fn a_cancel_is_no_error_unless_an_error_cut_the_turn() {
    let (observer, collected) = observer(false);
    let mut feed = Feed {
        observer: &*observer,
        sequence: 0,
    };
    feed.at(0, started("turn_1"));
    feed.at(1, ended("turn_1", StopReason::Cancelled));
    feed.at(2, started("turn_2"));
    feed.at(
        3,
        EventPayload::Error(AgentError::ProcessExited {
            message: "the daemon is shutting down".into(),
            exit_code: None,
            signal: None,
            stderr_tail: None,
        }),
    );
    feed.at(4, ended("turn_2", StopReason::Cancelled));
    let spans = collected.named("invoke_agent mock");
    let by_turn = |turn: &str| {
        spans
            .iter()
            .find(|s| text(s, key::TURN_ID) == turn)
            .unwrap()
    };
    assert_eq!(by_turn("turn_1").status, Status::Unset);
    assert!(attr(by_turn("turn_1"), key::ERROR_TYPE).is_none());
    assert!(matches!(by_turn("turn_2").status, Status::Error { .. }));
    assert_eq!(text(by_turn("turn_2"), key::ERROR_TYPE), "processExited");
}
