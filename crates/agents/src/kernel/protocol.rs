//! The one contract every agent's protocol implements, in the same words for every agent:
//! a turn begins, native messages are converted, the client cancels or answers, the
//! agent goes away. A protocol is pure state: it never does I/O and never emits. The
//! session runners ([`super::child`], [`super::per_turn`], the OpenCode server pool) do the
//! I/O, hand it every native message, emit what it returns and send the native messages
//! it asks for; the converter tests and the test kit's recorder run the same runners.
//!
//! The protocol reports facts — items started and completed, requests asked, the turn
//! ended with a reason, the process gone with an error. It never closes what it leaves
//! open when the agent goes away: the daemon's core fails open items, cancels pending
//! requests and ends the turn, once (`session/lifecycle.rs`).

use sandbox_universal::{AgentError, PermissionReply};
use serde_json::Value;

use crate::process::ExitInfo;
use crate::{AgentEvent, QuestionAnswer, SessionIds};

/// What one native message turned into.
#[derive(Debug)]
pub struct Converted<O> {
    /// Universal events, in order.
    pub events: Vec<AgentEvent>,
    /// Native messages to send back at once (answers the daemon gives without a client).
    pub replies: Vec<O>,
}

impl<O> Default for Converted<O> {
    fn default() -> Self {
        Self {
            events: Vec::new(),
            replies: Vec::new(),
        }
    }
}

impl<O> Converted<O> {
    /// Only events, no replies.
    pub fn events(events: Vec<AgentEvent>) -> Self {
        Self {
            events,
            replies: Vec::new(),
        }
    }
}

/// How the agent's process or server went away.
#[derive(Debug, Clone)]
pub struct Gone {
    /// How the process ended, when there was one to wait for.
    pub exit: ExitInfo,
    /// What the loss means for the session, in words (for the `error` event).
    pub why: String,
}

/// One agent's protocol: its conversion state and the native messages of each command.
/// `Out` is what the agent is sent: a JSON line (stdio agents, [`super::Outgoing`]) or an
/// HTTP call (agents that run as servers).
pub trait Protocol: Send + 'static {
    /// A native message to the agent.
    type Out: Send + 'static;

    /// The daemon started turn `turn_id` with the user's `message`: the native messages
    /// that carry it to the agent, in order. The last may be a request whose answer goes
    /// to [`Protocol::turn_delivered`].
    fn begin_turn(&mut self, turn_id: &str, message: &crate::UserMessage) -> Vec<Self::Out>;

    /// The agent has the message (`answer`: the answer to the request that carried it,
    /// when it was one). From now on the agent going away ends the turn.
    fn turn_delivered(&mut self, answer: Option<&Value>) {
        let _ = answer;
    }

    /// The message never reached the agent: the turn is forgotten (the daemon ends it).
    fn turn_undelivered(&mut self);

    /// The running turn's id.
    fn current_turn(&self) -> Option<&str>;

    /// Converts one native message the agent sent. Anything not understood becomes an
    /// `unparsed` item carrying the message.
    fn convert(&mut self, native: &Value, ids: &dyn SessionIds) -> Converted<Self::Out>;

    /// The client cancelled the running turn: what to send (nothing when no turn runs).
    /// The turn then ends `cancelled`, by the agent or by its going away.
    fn cancel(&mut self) -> Vec<Self::Out>;

    /// The client answered the permission request `permission_id`: what to send (nothing
    /// when the agent no longer waits for it and that is harmless).
    fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<Vec<Self::Out>, AgentError>;

    /// The client answered or rejected the question `question_id`: what to send.
    fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<Vec<Self::Out>, AgentError>;

    /// The agent's process or server went away unasked. Returns the facts: an `error`
    /// (unless the running turn was being cancelled) and `turnEnded` for the running turn
    /// that the agent had (`error`, or `cancelled`). Forgets everything open; never
    /// completes items or resolves requests itself (the core does).
    fn gone(&mut self, gone: &Gone) -> Vec<AgentEvent>;

    /// Whether the agent has what a turn needs. `false` while it is still setting up
    /// something the session asked for (Codex: the session's MCP servers starting, whose
    /// tools a turn begun earlier would not have); the runner waits, bounded, before it
    /// hands the agent a turn.
    fn ready_for_turn(&self) -> bool {
        true
    }
}

/// The facts of an agent gone while `turn` ran (if one did): an `error` with `error`
/// unless the turn was being cancelled, then `turnEnded` (`cancelled` or `error`).
pub fn gone_facts(turn: Option<String>, cancelling: bool, error: AgentError) -> Vec<AgentEvent> {
    use sandbox_universal::{EventPayload, StopReason, TurnEnded};
    let mut events = Vec::new();
    if !cancelling {
        events.push(AgentEvent::synthetic(EventPayload::Error(error)));
    }
    if let Some(turn_id) = turn {
        events.push(AgentEvent::synthetic(EventPayload::TurnEnded(TurnEnded {
            turn_id,
            stop_reason: if cancelling {
                StopReason::Cancelled
            } else {
                StopReason::Error
            },
            usage: None,
            changes: None,
        })));
    }
    events
}
