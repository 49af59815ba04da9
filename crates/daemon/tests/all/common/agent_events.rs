//! What the real-agent tests share: reading a session's events (turns, items, stop
//! reasons), and killing an agent's process.

use sandbox_universal::{ContentPart, EventPayload, Item, ItemKind, StopReason, UniversalEvent};

/// The events from `turnStarted` of `turn_id` to its `turnEnded`.
pub fn turn_events(events: &[UniversalEvent], turn_id: &str) -> Vec<UniversalEvent> {
    let start = events
        .iter()
        .position(|e| matches!(&e.payload, EventPayload::TurnStarted(t) if t.turn_id == turn_id))
        .expect("turnStarted");
    let end = events
        .iter()
        .position(|e| matches!(&e.payload, EventPayload::TurnEnded(t) if t.turn_id == turn_id))
        .expect("turnEnded");
    events[start..=end].to_vec()
}

pub fn find<T>(events: &[UniversalEvent], pick: impl Fn(&EventPayload) -> Option<T>) -> Option<T> {
    events.iter().find_map(|e| pick(&e.payload))
}

pub fn stop_reason(events: &[UniversalEvent]) -> StopReason {
    find(events, |p| match p {
        EventPayload::TurnEnded(t) => Some(t.stop_reason),
        _ => None,
    })
    .expect("turnEnded")
}

pub fn assert_no_unparsed(events: &[UniversalEvent]) {
    let unparsed: Vec<_> = events
        .iter()
        .filter(|e| matches!(&e.payload, EventPayload::ItemCompleted(i) if i.item.kind == ItemKind::Unparsed))
        .collect();
    assert!(unparsed.is_empty(), "unparsed events: {unparsed:#?}");
}

pub fn command_part(item: &Item) -> (&str, Option<&str>, Option<i32>) {
    match &item.content[0] {
        ContentPart::CommandExecution {
            command,
            output,
            exit_code,
            ..
        } => (command.as_str(), output.as_deref(), *exit_code),
        other => panic!("not a command: {other:?}"),
    }
}

pub fn kill_9(pid: i32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}
