//! The turn: when the root session's prompt loop runs and ends (busy, retries, idle),
//! errors, assistant messages (completion, usage, stop reason), and a lost server.

use sandbox_universal::{AgentError, EventPayload, ItemStatus, StopReason, TurnEnded, Usage};
use serde_json::Value;

use super::{Converter, Message, event, status_item};
use crate::opencode::native::{MessageError, MessageUpdated, SessionError, SessionStatus, Status};
use crate::{AgentEvent, SessionIds};

impl Converter {
    pub(super) fn status(
        &mut self,
        ids: &dyn SessionIds,
        status: SessionStatus,
        raw: &Value,
    ) -> Result<Vec<AgentEvent>, String> {
        let session = status.session_id.as_deref();
        let root = self.is_root(session);
        let events = match status.status {
            Status::Idle if root => self.idle(raw),
            Status::Idle => Vec::new(),
            Status::Busy | Status::Retry { .. } if root => {
                if let Some(turn) = &mut self.turn {
                    turn.live = true;
                    turn.idle = false;
                }
                self.retry_item(ids, &status.status, session, raw)
            }
            Status::Busy | Status::Retry { .. } => {
                self.retry_item(ids, &status.status, session, raw)
            }
            Status::Unknown => return Err("unknown session status".into()),
        };
        Ok(events)
    }

    fn retry_item(
        &self,
        ids: &dyn SessionIds,
        status: &Status,
        session: Option<&str>,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let Status::Retry {
            attempt, message, ..
        } = status
        else {
            return Vec::new();
        };
        let detail = format!("attempt {attempt}: {message}");
        status_item(ids, "retrying", Some(detail), self.parent_of(session), raw)
    }

    pub(super) fn idle(&mut self, raw: &Value) -> Vec<AgentEvent> {
        match &mut self.turn {
            // The abort of a loop that never showed up also ends the turn.
            Some(turn) if turn.live || turn.cancelling => turn.idle = true,
            _ => return Vec::new(),
        }
        self.maybe_end(raw)
    }

    pub(super) fn session_error(&mut self, error: SessionError, raw: &Value) -> Vec<AgentEvent> {
        let root = self.is_root(error.session_id.as_deref());
        let error = error.error.unwrap_or_default();
        if root && let Some(turn) = &mut self.turn {
            turn.live = true;
            if error.is_abort() {
                turn.aborted = true;
            } else {
                turn.failed = true;
                if std::mem::replace(&mut turn.error_reported, true) {
                    return Vec::new();
                }
            }
        }
        if error.is_abort() {
            // Our own cancel (or another client's abort): the stop reason says it.
            return Vec::new();
        }
        vec![event(EventPayload::Error(agent_error(&error)), raw)]
    }

    pub(super) fn message_updated(
        &mut self,
        updated: MessageUpdated,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let info = updated.info;
        let session = updated.session_id.or(info.session_id.clone());
        let root = self.is_root(session.as_deref());
        let generation = self.generation;
        let entry = self.messages.entry(info.id.clone());
        let known = matches!(entry, std::collections::hash_map::Entry::Occupied(_));
        let message = entry.or_insert_with(|| Message {
            generation,
            ..Message::default()
        });
        let was_finished = message.finished;
        *message = Message {
            assistant: info.is_assistant(),
            // A user message is final as sent (and may be forgotten like a finished one).
            finished: info.is_finished() || !info.is_assistant(),
            generation: message.generation,
            tokens: info.tokens,
            cost: info.cost,
            finish: info.finish.clone(),
            error: info.error.clone(),
            cwd: info.path.as_ref().map(|p| p.cwd.clone()),
        };
        if !info.is_assistant() {
            return Vec::new();
        }
        let mut events = Vec::new();
        if root && let Some(turn) = &mut self.turn {
            if !known {
                turn.live = true;
                turn.messages.push(info.id.clone());
                if self.limit.step() {
                    self.over_limit = true;
                }
            }
            match &info.error {
                Some(error) if error.is_abort() => turn.aborted = true,
                Some(error) => {
                    turn.failed = true;
                    if !std::mem::replace(&mut turn.error_reported, true) {
                        events.push(event(EventPayload::Error(agent_error(error)), raw));
                    }
                }
                None => {}
            }
        }
        if info.is_finished() && !was_finished {
            let status = if info.error.is_some() || self.cutting() {
                ItemStatus::Failed
            } else {
                ItemStatus::Completed
            };
            events.extend(self.close_message(&info.id, status, raw));
            if root {
                events.extend(self.maybe_end(raw));
            }
        }
        events
    }

    /// Whether text ending now was cut short (cancel or error).
    pub(super) fn cutting(&self) -> bool {
        self.turn
            .as_ref()
            .is_some_and(|t| t.cancelling || t.aborted || t.failed)
    }

    pub(super) fn maybe_end(&mut self, raw: &Value) -> Vec<AgentEvent> {
        let Some(turn) = &self.turn else {
            return Vec::new();
        };
        let open = turn
            .messages
            .iter()
            .any(|id| !self.messages.get(id).is_some_and(|m| m.finished));
        if !turn.idle || open {
            return Vec::new();
        }
        let Some(turn) = self.turn.take() else {
            return Vec::new();
        };
        let last_finish = turn
            .messages
            .last()
            .and_then(|id| self.messages.get(id))
            .and_then(|m| m.finish.as_deref());
        let stop_reason = if self.limit.tripped() {
            StopReason::MaxTurns
        } else if turn.cancelling || turn.aborted {
            StopReason::Cancelled
        } else if turn.failed {
            StopReason::Error
        } else if last_finish == Some("length") {
            StopReason::MaxTokens
        } else {
            StopReason::Completed
        };
        let status = if stop_reason == StopReason::Completed {
            ItemStatus::Completed
        } else {
            ItemStatus::Failed
        };
        let mut events = self.close_all(status);
        // The daemon resolves what is still pending (cancelled) with the turn.
        self.permissions.clear();
        self.questions.clear();
        self.early.clear();
        let usage = self.usage(&turn.messages);
        events.push(event(
            EventPayload::TurnEnded(TurnEnded {
                turn_id: turn.id,
                stop_reason,
                usage,
                changes: None,
            }),
            raw,
        ));
        events
    }

    /// The sum of the final token counts of the turn's assistant messages (those of child
    /// sessions stay theirs).
    fn usage(&self, messages: &[String]) -> Option<Usage> {
        let mut usage: Option<Usage> = None;
        for message in messages.iter().filter_map(|id| self.messages.get(id)) {
            let total = usage.get_or_insert_with(|| Usage {
                cached_input_tokens: Some(0),
                cache_write_tokens: Some(0),
                reasoning_tokens: Some(0),
                total_cost_usd: Some(0.0),
                ..Usage::default()
            });
            let tokens = message.tokens.unwrap_or_default();
            let add = |slot: &mut Option<u64>, n: f64| *slot = Some(slot.unwrap_or(0) + count(n));
            total.input_tokens += count(tokens.input);
            total.output_tokens += count(tokens.output);
            add(&mut total.cached_input_tokens, tokens.cache.read);
            add(&mut total.cache_write_tokens, tokens.cache.write);
            add(&mut total.reasoning_tokens, tokens.reasoning);
            total.total_cost_usd =
                Some(total.total_cost_usd.unwrap_or(0.0) + message.cost.unwrap_or(0.0));
        }
        usage
    }
}

/// OpenCode counts tokens as JSON numbers.
fn count(n: f64) -> u64 {
    if n.is_finite() && n > 0.0 {
        n.round() as u64
    } else {
        0
    }
}

/// Maps OpenCode's error names to the universal error kinds.
fn agent_error(error: &MessageError) -> AgentError {
    let message = error.message();
    match error.name.as_str() {
        "ProviderAuthError" => AgentError::TokenError { message },
        "APIError" => match error.status_code() {
            Some(401 | 403) => AgentError::TokenError { message },
            status => AgentError::ProviderError { message, status },
        },
        "" => AgentError::AgentReported {
            message: "OpenCode reported an error without details".into(),
            code: None,
        },
        name => AgentError::AgentReported {
            message,
            code: Some(name.to_string()),
        },
    }
}
