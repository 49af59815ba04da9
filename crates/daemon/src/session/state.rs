//! A session's state as derived from its events, and rebuilding it by replaying a log.

use std::collections::HashSet;

use sandbox_universal::{
    EventPayload, PermissionOutcome, PermissionRequest, QuestionRequest, SessionEndReason,
    SessionStatus, UniversalEvent,
};

/// Everything the daemon tracks about a session, derived from its events.
#[derive(Debug, Default)]
pub(crate) struct CoreState {
    pub(crate) status: Option<SessionStatus>,
    pub(crate) current_turn: Option<String>,
    pub(crate) turn_counter: u64,
    pub(crate) native_session_id: Option<String>,
    pub(crate) pending_permissions: Vec<PermissionRequest>,
    pub(crate) pending_questions: Vec<QuestionRequest>,
    pub(crate) resolved_permissions: HashSet<String>,
    pub(crate) resolved_questions: HashSet<String>,
    pub(crate) always_scopes: HashSet<String>,
    pub(crate) end_reason: Option<SessionEndReason>,
}

impl CoreState {
    /// Rebuilds the state from a session's events, and returns the largest numeric suffix of
    /// any id in them (so new ids continue past it).
    pub(crate) fn replay<'a>(events: impl IntoIterator<Item = &'a UniversalEvent>) -> (Self, u64) {
        let mut state = Self::default();
        let mut max_id = 0;
        let mut asked: Vec<PermissionRequest> = Vec::new();
        for event in events {
            if let Some(id) = &event.native_session_id {
                state.native_session_id = Some(id.clone());
            }
            for id in ids_of(&event.payload) {
                max_id = max_id.max(numeric_suffix(id));
            }
            match &event.payload {
                EventPayload::TurnStarted(turn) => {
                    state.turn_counter = state.turn_counter.max(numeric_suffix(&turn.turn_id));
                    state.current_turn = Some(turn.turn_id.clone());
                    state.status = Some(SessionStatus::Running);
                }
                EventPayload::TurnEnded(_) => {
                    state.current_turn = None;
                    state.status = Some(SessionStatus::Idle);
                }
                EventPayload::PermissionAsked(request) => {
                    asked.push(request.clone());
                    state.pending_permissions.push(request.clone());
                }
                EventPayload::PermissionResolved(resolved) => {
                    state
                        .pending_permissions
                        .retain(|p| p.permission_id != resolved.permission_id);
                    state
                        .resolved_permissions
                        .insert(resolved.permission_id.clone());
                    if resolved.outcome == PermissionOutcome::Always {
                        let scope = resolved
                            .request
                            .as_ref()
                            .or_else(|| {
                                asked
                                    .iter()
                                    .find(|p| p.permission_id == resolved.permission_id)
                            })
                            .and_then(|p| p.always_scope.clone());
                        state.always_scopes.extend(scope);
                    }
                }
                EventPayload::QuestionAsked(request) => {
                    state.pending_questions.push(request.clone())
                }
                EventPayload::QuestionResolved(resolved) => {
                    state
                        .pending_questions
                        .retain(|q| q.question_id != resolved.question_id);
                    state
                        .resolved_questions
                        .insert(resolved.question_id.clone());
                }
                EventPayload::SessionEnded(ended) => {
                    state.status = Some(SessionStatus::Ended);
                    state.end_reason = Some(ended.reason);
                    state.current_turn = None;
                }
                _ => {}
            }
        }
        (state, max_id)
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

    #[test]
    fn suffixes() {
        assert_eq!(numeric_suffix("itm_12"), 12);
        assert_eq!(numeric_suffix("mock_call_7"), 7);
        assert_eq!(numeric_suffix("odd"), 0);
    }
}
