//! Requests the daemon asks itself while serving a host tool call: a `hostTool`
//! permission, an `ask_user` question, a client tool call (`toolCallRequested`). They are
//! logged like the agent's own and resolved exactly once — by the client's answer, or
//! cancelled with the turn by the one lifecycle rule — and whoever waits for one (the MCP
//! call) is woken with the outcome. Answers are handed over only once they are durable.

use std::collections::HashMap;
use std::sync::Mutex;

use sandbox_universal::{
    EventPayload, PermissionReply, PermissionRequest, QuestionRequest, SessionStatus,
    ToolCallOutcome, ToolCallRejectRequest, ToolCallRequest, ToolCallResolved,
    ToolCallResultRequest,
};
use serde_json::Value;
use tokio::sync::oneshot;

use super::SessionError;
use super::core::{CoreSignal, EventMeta, SessionCore};

/// How a request the daemon asked was resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum DaemonAnswer {
    /// A permission reply.
    Permission(PermissionReply),
    /// A question's answers (`None`: rejected).
    Question(Option<Vec<Vec<String>>>),
    /// A client tool call's result.
    ToolResult(ToolCallResultRequest),
    /// A client tool call rejected.
    ToolRejected(ToolCallRejectRequest),
    /// The turn or the session ended first.
    Cancelled,
}

/// The requests the daemon asked and waits for, by id.
#[derive(Debug, Default)]
pub(super) struct Waiters {
    waiting: Mutex<HashMap<String, oneshot::Sender<DaemonAnswer>>>,
    /// The turn a host tool with `endsTurn` ends, and the tool-call item whose completion
    /// ends it (`None`: end it as soon as the call returned).
    tool_stop: Mutex<Option<(String, Option<String>)>>,
}

impl Waiters {
    fn add(&self, id: &str) -> oneshot::Receiver<DaemonAnswer> {
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.to_string(), tx);
        rx
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<DaemonAnswer>>> {
        self.waiting.lock().expect("waiters lock")
    }

    /// Wakes whoever waits for `id`; false when nobody does (the agent asked it).
    pub(super) fn answer(&self, id: &str, answer: DaemonAnswer) -> bool {
        match self.lock().remove(id) {
            Some(waiter) => {
                let _ = waiter.send(answer);
                true
            }
            None => false,
        }
    }

    /// Whether the daemon asked `id`.
    pub(super) fn owns(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// The turn and item of a pending tool stop.
    fn tool_stop(&self) -> std::sync::MutexGuard<'_, Option<(String, Option<String>)>> {
        self.tool_stop.lock().expect("tool stop lock")
    }
}

/// A request the daemon asked: its id and the answer to come.
#[derive(Debug)]
pub struct Asked {
    /// The permission, question or call id.
    pub id: String,
    /// Resolves once the answer is durable (or the turn ended).
    pub answer: oneshot::Receiver<DaemonAnswer>,
}

impl SessionCore {
    /// Asks a permission of the daemon's own (a host tool with `needsApproval`) in the
    /// running turn; one whose `alwaysScope` was approved with `always` is approved at
    /// once (logged as an automatic resolution).
    pub fn ask_permission(&self, mut request: PermissionRequest) -> Result<Asked, SessionError> {
        let mut live = self.lock();
        self.ensure_turn(&live.state)?;
        request.permission_id = self.next_daemon_id("perm");
        let id = request.permission_id.clone();
        let answer = self.waiters.add(&id);
        if live.state.remembers(&request) {
            self.answer_itself(&mut live, request, PermissionReply::Always, None);
            self.waiters
                .answer(&id, DaemonAnswer::Permission(PermissionReply::Always));
        } else {
            self.append(
                &mut live,
                EventPayload::PermissionAsked(request),
                EventMeta::daemon(false),
            );
        }
        Ok(Asked { id, answer })
    }

    /// Asks questions of the daemon's own (`ask_user`) in the running turn.
    pub fn ask_question(&self, mut request: QuestionRequest) -> Result<Asked, SessionError> {
        let mut live = self.lock();
        self.ensure_turn(&live.state)?;
        request.question_id = self.next_daemon_id("q");
        let id = request.question_id.clone();
        let answer = self.waiters.add(&id);
        self.append(
            &mut live,
            EventPayload::QuestionAsked(request),
            EventMeta::daemon(false),
        );
        Ok(Asked { id, answer })
    }

    /// Logs `toolCallRequested` for a client host tool called in the running turn.
    pub fn request_tool_call(
        &self,
        tool: &str,
        input: Value,
        item_id: Option<String>,
    ) -> Result<Asked, SessionError> {
        let mut live = self.lock();
        self.ensure_turn(&live.state)?;
        let id = self.next_daemon_id("call");
        let answer = self.waiters.add(&id);
        self.append(
            &mut live,
            EventPayload::ToolCallRequested(ToolCallRequest {
                call_id: id.clone(),
                item_id,
                tool: tool.to_string(),
                input,
            }),
            EventMeta::daemon(false),
        );
        Ok(Asked { id, answer })
    }

    /// Logs the client's answer to a pending host tool call (`toolCallResolved`); answers
    /// its sequence. The waiting call is woken by [`SessionCore::deliver`] once durable.
    pub fn resolve_tool_call(&self, id: &str, answered: bool) -> Result<u64, SessionError> {
        let mut live = self.lock();
        let state = &live.state;
        if state.status() == SessionStatus::Ended {
            return Err(SessionError::Ended(self.session_id.clone()));
        }
        if !state.pending_tool_calls.iter().any(|c| c.call_id == id) {
            return Err(if state.resolved_tool_calls.contains(id) {
                SessionError::ToolCallAnswered(id.to_string())
            } else {
                SessionError::ToolCallNotFound {
                    session: self.session_id.clone(),
                    id: id.to_string(),
                }
            });
        }
        self.append(
            &mut live,
            EventPayload::ToolCallResolved(ToolCallResolved {
                call_id: id.to_string(),
                outcome: if answered {
                    ToolCallOutcome::Answered
                } else {
                    ToolCallOutcome::Rejected
                },
            }),
            EventMeta::daemon(false),
        );
        Ok(live.state.sequence)
    }

    /// Hands a durable answer to whoever waits for request `id`; false when the daemon did
    /// not ask it (the agent did).
    pub fn deliver(&self, id: &str, answer: DaemonAnswer) -> bool {
        self.waiters.answer(id, answer)
    }

    /// Whether the daemon itself asked request `id` (so its answer goes to the daemon, not
    /// the agent).
    pub fn asked_by_daemon(&self, id: &str) -> bool {
        self.waiters.owns(id)
    }

    /// The open tool-call item of the agent's that calls host tool `tool` and no earlier
    /// call claimed, oldest first.
    pub fn claim_tool_item(&self, tool: &str, claimed: &mut Vec<String>) -> Option<String> {
        let live = self.lock();
        // Only open items can be claimed again: forget the others (bounded by what is open).
        claimed.retain(|id| live.state.open_items.iter().any(|i| &i.item_id == id));
        let found = live.state.open_items.iter().find_map(|item| {
            item.content.iter().find_map(|part| match part {
                sandbox_universal::ContentPart::ToolCall { mcp: Some(mcp), .. }
                    if mcp.server == sandbox_universal::HOST_MCP_SERVER
                        && mcp.tool == tool
                        && !claimed.contains(&item.item_id) =>
                {
                    Some(item.item_id.clone())
                }
                _ => None,
            })
        })?;
        claimed.push(found.clone());
        Some(found)
    }

    /// Ends `turn` with `stopReason: toolStop` once the agent has the host tool's result:
    /// when tool-call item `item` completes (or [`SessionCore::end_turn_for_tool`]).
    pub fn stop_turn_after(&self, turn: &str, item: Option<String>) {
        *self.waiters.tool_stop() = Some((turn.to_string(), item));
    }

    /// Ends `turn` now if a host tool is stopping it.
    pub fn end_turn_for_tool(&self, turn: &str) {
        if self.tool_stopping(turn) {
            self.signal(CoreSignal::EndTurn(turn.to_string()));
        }
    }

    /// Whether `turn` is ending because a host tool stopped it (no more host tool calls
    /// are taken in it).
    pub fn tool_stopping(&self, turn: &str) -> bool {
        self.waiters
            .tool_stop()
            .as_ref()
            .is_some_and(|(stopping, _)| stopping == turn)
    }

    /// Called for every item the agent completes: ends the turn a tool stop waits for.
    pub(super) fn item_completed(&self, item_id: &str) {
        let turn = match self.waiters.tool_stop().as_ref() {
            Some((turn, Some(item))) if item == item_id => turn.clone(),
            _ => return,
        };
        self.signal(CoreSignal::EndTurn(turn));
    }

    /// The stop reason a turn ends with: `toolStop` for the turn a host tool stopped
    /// (unless it failed). Clears the tool stop.
    pub(super) fn take_tool_stop(
        &self,
        turn: &str,
        reason: sandbox_universal::StopReason,
    ) -> sandbox_universal::StopReason {
        use sandbox_universal::StopReason;
        let mut stop = self.waiters.tool_stop();
        if stop.as_ref().is_none_or(|(stopping, _)| stopping != turn) {
            return reason;
        }
        *stop = None;
        match reason {
            StopReason::Error => StopReason::Error,
            _ => StopReason::ToolStop,
        }
    }

    /// Forgets a tool stop (a new turn begins).
    pub(super) fn clear_tool_stop(&self) {
        *self.waiters.tool_stop() = None;
    }

    /// Wakes every waiter whose request the lifecycle just cancelled.
    pub(super) fn cancel_waiters(&self, ids: impl IntoIterator<Item = String>) {
        for id in ids {
            self.waiters.answer(&id, DaemonAnswer::Cancelled);
        }
    }

    fn ensure_turn(&self, state: &super::state::CoreState) -> Result<(), SessionError> {
        if state.status() == SessionStatus::Ended {
            return Err(SessionError::Ended(self.session_id.clone()));
        }
        if state.current_turn.is_none() {
            return Err(SessionError::NotRunning(self.session_id.clone()));
        }
        Ok(())
    }

    fn next_daemon_id(&self, prefix: &str) -> String {
        sandbox_agents::EventConsumer::next_id(self, prefix)
    }
}
