//! The one state reducer: everything the daemon tracks about a session, derived from its
//! events by [`CoreState::apply`], live (every appended event) and when a session is
//! reopened (a stored snapshot plus the events after it).
//!
//! Contract (stable: stored as the session's state snapshot): [`CoreState`] serialises as
//! JSON with schema version [`STATE_VERSION`]. A snapshot this build cannot read is
//! ignored and the state is rebuilt from the events.

use std::collections::{BTreeSet, HashSet};

use chrono::{DateTime, Utc};
use sandbox_universal::{
    EventPayload, Item, PermissionOutcome, PermissionRequest, QuestionRequest, SessionEndReason,
    SessionStatus, ToolCallRequest, UniversalEvent,
};
use serde::{Deserialize, Serialize};

use crate::store::StateSnapshot;

/// Schema version of the stored state snapshot.
pub const STATE_VERSION: u32 = 1;

/// Everything the daemon tracks about a session.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CoreState {
    /// The last sequence applied.
    pub(crate) sequence: u64,
    /// Idle (`None` before the first event), running or ended.
    pub(crate) status: Option<SessionStatus>,
    /// The running turn.
    pub(crate) current_turn: Option<String>,
    /// The largest turn number so far.
    pub(crate) turn_counter: u64,
    /// The agent's own session id.
    pub(crate) native_session_id: Option<String>,
    /// Items started and not completed, oldest first, as they started.
    pub(crate) open_items: Vec<Item>,
    /// Permission requests waiting for a reply.
    pub(crate) pending_permissions: Vec<PermissionRequest>,
    /// Question requests waiting for a reply.
    pub(crate) pending_questions: Vec<QuestionRequest>,
    /// Permission requests already resolved.
    pub(crate) resolved_permissions: HashSet<String>,
    /// Question requests already resolved.
    pub(crate) resolved_questions: HashSet<String>,
    /// Host tool calls waiting for the client's answer.
    #[serde(default)]
    pub(crate) pending_tool_calls: Vec<ToolCallRequest>,
    /// Host tool calls already resolved.
    #[serde(default)]
    pub(crate) resolved_tool_calls: HashSet<String>,
    /// Scopes approved with `always`.
    pub(crate) always_scopes: BTreeSet<String>,
    /// Why it ended.
    pub(crate) end_reason: Option<SessionEndReason>,
    /// When it ended.
    pub(crate) ended_at: Option<DateTime<Utc>>,
    /// The largest numeric suffix of any id in the log (new ids continue past it).
    pub(crate) max_id: u64,
}

impl CoreState {
    /// Applies one event. Answers whether anything beyond the sequence changed (worth a
    /// new snapshot).
    pub(crate) fn apply(&mut self, event: &UniversalEvent) -> bool {
        self.sequence = self.sequence.max(event.sequence);
        let mut changed = false;
        if let Some(id) = &event.native_session_id
            && self.native_session_id.as_ref() != Some(id)
        {
            self.native_session_id = Some(id.clone());
            changed = true;
        }
        for id in ids_of(&event.payload) {
            let n = numeric_suffix(id);
            if n > self.max_id {
                self.max_id = n;
                changed = true;
            }
        }
        changed |= match &event.payload {
            EventPayload::SessionStarted(_) => {
                self.status.get_or_insert(SessionStatus::Idle);
                true
            }
            // The new agent's session id is the event's (none when it has none).
            EventPayload::SessionHandedOver(_) => {
                self.native_session_id = event.native_session_id.clone();
                true
            }
            EventPayload::TurnStarted(turn) => {
                self.turn_counter = self.turn_counter.max(numeric_suffix(&turn.turn_id));
                self.current_turn = Some(turn.turn_id.clone());
                self.status = Some(SessionStatus::Running);
                true
            }
            EventPayload::TurnEnded(_) => {
                self.current_turn = None;
                if self.status != Some(SessionStatus::Ended) {
                    self.status = Some(SessionStatus::Idle);
                }
                true
            }
            EventPayload::ItemStarted(started) => {
                self.open_items
                    .retain(|i| i.item_id != started.item.item_id);
                self.open_items.push(started.item.clone());
                true
            }
            EventPayload::ItemCompleted(completed) => {
                let before = self.open_items.len();
                self.open_items
                    .retain(|i| i.item_id != completed.item.item_id);
                before != self.open_items.len()
            }
            EventPayload::PermissionAsked(request) => {
                self.pending_permissions.push(request.clone());
                true
            }
            EventPayload::PermissionResolved(resolved) => {
                let request = self
                    .pending_permissions
                    .iter()
                    .position(|p| p.permission_id == resolved.permission_id)
                    .map(|i| self.pending_permissions.remove(i));
                self.resolved_permissions
                    .insert(resolved.permission_id.clone());
                if resolved.outcome == PermissionOutcome::Always
                    && let Some(scope) = resolved
                        .request
                        .as_ref()
                        .or(request.as_ref())
                        .and_then(|p| p.always_scope.clone())
                {
                    self.always_scopes.insert(scope);
                }
                true
            }
            EventPayload::QuestionAsked(request) => {
                self.pending_questions.push(request.clone());
                true
            }
            EventPayload::QuestionResolved(resolved) => {
                self.pending_questions
                    .retain(|q| q.question_id != resolved.question_id);
                self.resolved_questions.insert(resolved.question_id.clone());
                true
            }
            EventPayload::ToolCallRequested(request) => {
                self.pending_tool_calls.push(request.clone());
                true
            }
            EventPayload::ToolCallResolved(resolved) => {
                self.pending_tool_calls
                    .retain(|c| c.call_id != resolved.call_id);
                self.resolved_tool_calls.insert(resolved.call_id.clone());
                true
            }
            EventPayload::SessionEnded(ended) => {
                self.status = Some(SessionStatus::Ended);
                self.end_reason = Some(ended.reason);
                self.ended_at = Some(event.time);
                self.current_turn = None;
                true
            }
            EventPayload::ItemDelta(_) | EventPayload::Error(_) | EventPayload::Unknown(_) => false,
        };
        changed
    }

    /// Whether `request`'s scope was approved with `always` earlier in the session.
    pub(crate) fn remembers(&self, request: &PermissionRequest) -> bool {
        request
            .always_scope
            .as_ref()
            .is_some_and(|scope| self.always_scopes.contains(scope))
    }

    /// Idle, running or ended.
    pub(crate) fn status(&self) -> SessionStatus {
        self.status.unwrap_or(SessionStatus::Idle)
    }

    /// Whether anything is left open: a running turn, open items or pending requests.
    pub(crate) fn has_open_work(&self) -> bool {
        self.current_turn.is_some()
            || !self.open_items.is_empty()
            || !self.pending_permissions.is_empty()
            || !self.pending_questions.is_empty()
            || !self.pending_tool_calls.is_empty()
    }

    /// The state as a snapshot to store.
    pub(crate) fn snapshot(&self) -> StateSnapshot {
        StateSnapshot {
            sequence: self.sequence,
            status: self.status(),
            ended_ms: self.ended_at.map(|t| t.timestamp_millis()),
            version: STATE_VERSION,
            json: serde_json::to_string(self).expect("the session state serialises"),
        }
    }

    /// Reads a stored snapshot; `None` when this build cannot read it.
    pub(crate) fn from_snapshot(version: u32, json: &str) -> Option<Self> {
        if version > STATE_VERSION {
            return None;
        }
        serde_json::from_str(json).ok()
    }
}

/// The daemon-assigned ids an event carries.
fn ids_of(payload: &EventPayload) -> Vec<&str> {
    match payload {
        EventPayload::ItemStarted(e) | EventPayload::ItemCompleted(e) => {
            let mut ids = vec![e.item.item_id.as_str()];
            ids.extend(e.item.parent_id.as_deref());
            ids
        }
        EventPayload::ItemDelta(d) => vec![d.item_id.as_str()],
        EventPayload::PermissionAsked(p) => vec![p.permission_id.as_str()],
        EventPayload::PermissionResolved(p) => vec![p.permission_id.as_str()],
        EventPayload::QuestionAsked(q) => vec![q.question_id.as_str()],
        EventPayload::QuestionResolved(q) => vec![q.question_id.as_str()],
        _ => Vec::new(),
    }
}

/// `itm_12` → 12; ids without a numeric suffix count as 0.
fn numeric_suffix(id: &str) -> u64 {
    id.rsplit('_')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandbox_universal::{
        EventSource, ItemEvent, ItemKind, ItemStatus, PermissionKind, PermissionResolved,
        TurnEnded, TurnStarted,
    };

    fn event(sequence: u64, payload: EventPayload) -> UniversalEvent {
        UniversalEvent {
            sequence,
            time: Utc::now(),
            session_id: "s".into(),
            native_session_id: None,
            source: EventSource::Daemon,
            synthetic: false,
            payload,
            raw: None,
        }
    }

    fn permission(id: &str, scope: &str) -> PermissionRequest {
        PermissionRequest {
            permission_id: id.into(),
            kind: PermissionKind::Command,
            title: "run".into(),
            item_id: None,
            tool: None,
            command: None,
            paths: Vec::new(),
            plan: None,
            input: None,
            always_scope: Some(scope.into()),
            mcp: None,
        }
    }

    #[test]
    fn suffixes() {
        assert_eq!(numeric_suffix("itm_12"), 12);
        assert_eq!(numeric_suffix("mock_call_7"), 7);
        assert_eq!(numeric_suffix("odd"), 0);
    }

    #[test]
    fn the_reducer_tracks_turns_items_requests_and_scopes() {
        let item = Item::new("itm_4", ItemKind::ToolCall, ItemStatus::InProgress);
        let events = [
            event(
                1,
                EventPayload::TurnStarted(TurnStarted {
                    turn_id: "turn_3".into(),
                }),
            ),
            event(
                2,
                EventPayload::ItemStarted(ItemEvent { item: item.clone() }),
            ),
            event(
                3,
                EventPayload::PermissionAsked(permission("perm_5", "Bash")),
            ),
            event(
                4,
                EventPayload::PermissionResolved(PermissionResolved {
                    permission_id: "perm_5".into(),
                    outcome: PermissionOutcome::Always,
                    automatic: false,
                    request: None,
                }),
            ),
        ];
        let mut state = CoreState::default();
        for e in &events {
            assert!(state.apply(e));
        }
        assert_eq!(state.status(), SessionStatus::Running);
        assert_eq!(state.turn_counter, 3);
        assert_eq!(state.open_items, vec![item.clone()]);
        assert!(state.pending_permissions.is_empty());
        assert!(state.always_scopes.contains("Bash"));
        assert_eq!(state.max_id, 5);
        assert!(state.has_open_work());

        let snapshot = state.snapshot();
        assert_eq!(snapshot.status, SessionStatus::Running);
        let restored = CoreState::from_snapshot(snapshot.version, &snapshot.json).unwrap();
        assert_eq!(restored, state);
        assert!(CoreState::from_snapshot(STATE_VERSION + 1, &snapshot.json).is_none());

        state.apply(&event(
            5,
            EventPayload::ItemCompleted(ItemEvent {
                item: Item {
                    status: ItemStatus::Completed,
                    ..item
                },
            }),
        ));
        state.apply(&event(
            6,
            EventPayload::TurnEnded(TurnEnded {
                turn_id: "turn_3".into(),
                stop_reason: sandbox_universal::StopReason::Completed,
                usage: None,
                changes: None,
            }),
        ));
        assert!(!state.has_open_work());
        assert_eq!(state.status(), SessionStatus::Idle);
        assert_eq!(state.sequence, 6);
    }
}
