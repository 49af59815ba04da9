//! The lifecycle the core owns: whenever a turn or the session ends — by the agent, a
//! cancel, a crash, the client, or a restore after the daemon died — the core resolves every
//! pending permission and question as cancelled and completes every open item as failed,
//! then logs `turnEnded` (and `sessionEnded`). Drivers report facts; they never need to
//! close the daemon's bookkeeping themselves.
//!
//! Invariants (per session): every turn that starts ends; every `itemStarted` gets an
//! `itemCompleted`; every permission or question is resolved exactly once; `sessionEnded`
//! is the last event.

use std::sync::atomic::Ordering;

use sandbox_universal::{
    AgentError, ChangeCounts, EventPayload, SessionEndReason, SessionEnded, SessionStatus,
    StopReason, TurnEnded,
};

use super::core::{CoreSignal, EventMeta, Live, SessionCore};
use crate::log::LogHooks;
use crate::store::StoreError;

impl SessionCore {
    /// Resolves pending requests as cancelled, fails open items, then logs `turnEnded`.
    pub(super) fn close_turn(&self, live: &mut Live, ended: TurnEnded, meta: EventMeta) {
        live.ending = None;
        self.close_open_work(live);
        self.append(live, EventPayload::TurnEnded(ended), meta);
        self.signal(CoreSignal::TurnEnded);
    }

    /// Resolves pending requests as cancelled and completes open items as failed (the
    /// one rule: `sandbox_universal::lifecycle`).
    fn close_open_work(&self, live: &mut Live) {
        let closing = sandbox_universal::lifecycle::close_open_work(
            &live.state.open_items,
            &live.state.pending_permissions,
            &live.state.pending_questions,
            &live.state.pending_tool_calls,
        );
        let mut cancelled = Vec::new();
        for payload in closing {
            match &payload {
                EventPayload::ItemCompleted(done) => {
                    live.force_closed.insert(done.item.item_id.clone());
                }
                EventPayload::PermissionResolved(p) => cancelled.push(p.permission_id.clone()),
                EventPayload::QuestionResolved(q) => cancelled.push(q.question_id.clone()),
                EventPayload::ToolCallResolved(c) => cancelled.push(c.call_id.clone()),
                _ => {}
            }
            self.append(live, payload, EventMeta::daemon(true));
        }
        // Whoever waits for a request the daemon asked itself learns it was cancelled.
        self.cancel_waiters(cancelled);
    }

    /// The agent ended the running turn: it is closed now or, when the workspace's
    /// changes are tracked, once the actor has looked at the workspace
    /// ([`SessionCore::finish_turn`]), so that `turnEnded` carries the counts. Until then
    /// the turn takes no cancel, and a daemon-side end logs the agent's end as it was.
    pub(super) fn agent_ended_turn(&self, live: &mut Live, ended: TurnEnded, meta: EventMeta) {
        if self.defer_turn_ends.load(Ordering::SeqCst) {
            let turn_id = ended.turn_id.clone();
            live.ending = Some((ended, meta));
            self.signal(CoreSignal::TurnEnding(turn_id));
        } else {
            self.close_turn(live, ended, meta);
        }
    }

    /// Makes the agent's turn ends wait for a look at the workspace (see
    /// [`SessionCore::agent_ended_turn`]).
    pub fn defer_turn_ends(&self, defer: bool) {
        self.defer_turn_ends.store(defer, Ordering::SeqCst);
    }

    /// Closes the turn the agent ended, with what it changed in the workspace (when
    /// known). Nothing when the turn was closed meanwhile.
    pub fn finish_turn(&self, turn_id: &str, changes: Option<ChangeCounts>) {
        let mut live = self.lock();
        let ending = live.ending.take();
        match ending {
            Some((ended, meta))
                if ended.turn_id == turn_id
                    && live.state.current_turn.as_deref() == Some(turn_id) =>
            {
                self.close_turn(&mut live, TurnEnded { changes, ..ended }, meta);
            }
            other => live.ending = other,
        }
    }

    /// How the daemon ends `turn_id` itself: as the agent ended it, when it did and its
    /// end awaits the look at the workspace; else with `stop`.
    fn ending_or(
        &self,
        live: &mut Live,
        turn_id: &str,
        stop: StopReason,
    ) -> (TurnEnded, EventMeta) {
        match live.ending.take() {
            Some((ended, meta)) if ended.turn_id == turn_id => (ended, meta),
            _ => (turn_ended(turn_id, stop), daemon()),
        }
    }

    /// Ends the running turn with an error when the agent could not take the message.
    pub fn fail_turn(&self, turn_id: &str) {
        let mut live = self.lock();
        if live.state.current_turn.as_deref() == Some(turn_id) {
            let (ended, meta) = self.ending_or(&mut live, turn_id, StopReason::Error);
            self.close_turn(&mut live, ended, meta);
        }
    }

    /// Ends whatever turn is running with stop reason `error` (the daemon is stopping).
    /// Returns whether a turn was running.
    pub fn fail_running_turn(&self) -> bool {
        let mut live = self.lock();
        let Some(turn_id) = live.state.current_turn.clone() else {
            return false;
        };
        let (ended, meta) = self.ending_or(&mut live, &turn_id, StopReason::Error);
        self.close_turn(&mut live, ended, meta);
        true
    }

    /// Closes what a dead daemon left open (the session is being reopened and no agent is
    /// attached): logs `error` with `message`, then closes the turn, its requests and items.
    /// Returns whether anything was open.
    pub fn recover_interrupted(&self, message: &str) -> bool {
        let mut live = self.lock();
        if live.state.status() == SessionStatus::Ended || !live.state.has_open_work() {
            return false;
        }
        self.append(
            &mut live,
            EventPayload::Error(AgentError::ProcessExited {
                message: message.to_string(),
                exit_code: None,
                signal: None,
                stderr_tail: None,
            }),
            EventMeta::daemon(false),
        );
        match live.state.current_turn.clone() {
            Some(turn_id) => {
                self.close_turn(&mut live, turn_ended(&turn_id, StopReason::Error), daemon())
            }
            None => self.close_open_work(&mut live),
        }
        true
    }

    /// Ends the session (idempotent): closes a running turn and logs `sessionEnded`.
    /// Returns false when it had already ended.
    pub fn end(&self, ended: SessionEnded, meta: EventMeta) -> bool {
        let mut live = self.lock();
        self.end_locked(&mut live, ended, meta)
    }

    pub(super) fn end_locked(&self, live: &mut Live, ended: SessionEnded, meta: EventMeta) -> bool {
        if live.state.status() == SessionStatus::Ended {
            return false;
        }
        match live.state.current_turn.clone() {
            Some(turn_id) => {
                let stop = match ended.reason {
                    SessionEndReason::Terminated => StopReason::Cancelled,
                    _ => StopReason::Error,
                };
                let (turn_end, turn_meta) = self.ending_or(live, &turn_id, stop);
                self.close_turn(live, turn_end, turn_meta);
            }
            None => self.close_open_work(live),
        }
        self.append(live, EventPayload::SessionEnded(ended), meta);
        // The agent's later events are dropped: it need not wait for the store any more.
        self.interrupt();
        true
    }
}

fn daemon() -> EventMeta {
    EventMeta::daemon(true)
}

fn turn_ended(turn_id: &str, stop_reason: StopReason) -> TurnEnded {
    TurnEnded {
        turn_id: turn_id.to_string(),
        stop_reason,
        usage: None,
        changes: None,
    }
}

impl LogHooks for SessionCore {
    fn store_failed(&self, error: &StoreError) {
        self.record_error(AgentError::StoreError {
            message: format!(
                "{error}; this session's events stay readable and are written, with no gap, once the store can write again"
            ),
        });
    }

    fn ownership_lost(&self) {
        self.record_error(AgentError::StoreError {
            message: "another sandbox-daemon took this session over; this daemon stopped its agent"
                .into(),
        });
        self.signal(CoreSignal::Stop);
    }
}
