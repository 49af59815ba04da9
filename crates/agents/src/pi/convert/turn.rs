//! The turn: a prompt's run ends at `agent_end` (usage summed over its assistant messages,
//! stop reason and error from the last one), a prompt Pi rejects, command failures,
//! retries and compaction as `status` items, extension errors, and an exited process.

use sandbox_universal::{AgentError, EventPayload, ItemEvent, ItemStatus, StopReason, TurnEnded};
use serde_json::Value;

use super::{Converter, event, status_item};
use crate::pi::native::{
    self, AgentEnd, AgentMessage, AutoRetryStart, CompactionEnd, ExtensionError, Response,
};
use crate::{AgentEvent, SessionIds};

impl Converter {
    /// `response`: successes are the driver's; a failure is an `error`, and a rejected
    /// `prompt` (before its run started) ends the turn.
    pub(super) fn response(&mut self, response: Response, raw: &Value) -> Vec<AgentEvent> {
        if response.success {
            return Vec::new();
        }
        let message = response
            .error
            .unwrap_or_else(|| format!("Pi refused `{}`", response.command));
        let error = match response.command.as_str() {
            "parse" => AgentError::protocol(format!("Pi could not read a command: {message}")),
            _ => agent_error(&message),
        };
        let mut events = vec![event(EventPayload::Error(error), raw)];
        if response.command == "prompt" && self.turn.as_ref().is_some_and(|t| !t.running) {
            events.extend(self.end_turn(StopReason::Error, None, raw));
        }
        events
    }

    /// `agent_end`: the prompt's run is over.
    pub(super) fn agent_end(&mut self, end: AgentEnd, raw: &Value) -> Vec<AgentEvent> {
        let assistant: Vec<&AgentMessage> =
            end.messages.iter().filter(|m| m.is_assistant()).collect();
        let last = assistant.last();
        let cancelling = self.turn.as_ref().is_some_and(|t| t.cancelling);
        let stop_reason = match last.and_then(|m| m.stop_reason) {
            _ if cancelling => self.limit.stop_reason(StopReason::Cancelled),
            Some(native::StopReason::Aborted) => StopReason::Cancelled,
            Some(native::StopReason::Error) => StopReason::Error,
            Some(native::StopReason::Length) => StopReason::MaxTokens,
            _ => StopReason::Completed,
        };
        let mut events = Vec::new();
        if stop_reason == StopReason::Error {
            let message = last
                .and_then(|m| m.error_message.clone())
                .unwrap_or_else(|| "Pi reported an error without details".into());
            events.push(event(EventPayload::Error(agent_error(&message)), raw));
        }
        let usage = usage(&assistant);
        events.extend(self.end_turn(stop_reason, usage, raw));
        events
    }

    /// Ends the turn, if one runs: what is still open completes (`failed` unless the turn
    /// completed), pending dialogs are forgotten (the daemon cancels them with the turn).
    fn end_turn(
        &mut self,
        stop_reason: StopReason,
        usage: Option<sandbox_universal::Usage>,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let status = if stop_reason == StopReason::Completed {
            ItemStatus::Completed
        } else {
            ItemStatus::Failed
        };
        let mut events = self.close_all(status);
        self.pending.clear();
        self.calls.clear();
        if let Some(turn) = self.turn.take() {
            events.push(event(
                EventPayload::TurnEnded(TurnEnded {
                    turn_id: turn.id,
                    stop_reason,
                    usage,
                    changes: None,
                }),
                raw,
            ));
        }
        events
    }

    /// Completes every open item, as synthetic events.
    pub(super) fn close_all(&mut self, status: ItemStatus) -> Vec<AgentEvent> {
        let blocks = std::mem::take(&mut self.blocks).into_iter().map(|b| b.item);
        let running = std::mem::take(&mut self.running)
            .into_iter()
            .filter_map(|r| r.item);
        self.seen.clear();
        blocks
            .chain(running)
            .map(|mut item| {
                item.status = status;
                AgentEvent::synthetic(EventPayload::ItemCompleted(ItemEvent { item }))
            })
            .collect()
    }

    pub(super) fn compaction_end(
        &mut self,
        ids: &dyn SessionIds,
        end: CompactionEnd,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let (label, detail) = match (&end.result, end.aborted, &end.error_message) {
            (Some(result), _, _) => {
                let tokens = result["tokensBefore"].as_u64();
                let detail = match tokens {
                    Some(tokens) => format!("{} ({tokens} tokens before)", end.reason),
                    None => end.reason.clone(),
                };
                ("compacted", detail)
            }
            (None, true, _) => ("compaction aborted", end.reason.clone()),
            (None, false, Some(error)) => ("compaction failed", format!("{}: {error}", end.reason)),
            (None, false, None) => ("compaction skipped", end.reason.clone()),
        };
        status_item(ids, label, Some(detail), raw)
    }

    pub(super) fn retry_start(
        &mut self,
        ids: &dyn SessionIds,
        retry: AutoRetryStart,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let detail = format!(
            "attempt {}/{} in {}ms: {}",
            retry.attempt, retry.max_attempts, retry.delay_ms, retry.error_message
        );
        status_item(ids, "retrying", Some(detail), raw)
    }

    pub(super) fn extension_error(
        &mut self,
        error: ExtensionError,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let message = format!(
            "extension {} failed handling `{}`: {}",
            error.extension_path, error.event, error.error
        );
        vec![event(
            EventPayload::Error(AgentError::AgentReported {
                message,
                code: Some("extension_error".into()),
            }),
            raw,
        )]
    }
}

/// Pi counts tokens as JSON numbers.
fn count(n: f64) -> u64 {
    if n.is_finite() && n > 0.0 {
        n.round() as u64
    } else {
        0
    }
}

/// The sum of the usage of the run's assistant messages (`None` without any).
pub(super) fn usage(messages: &[&AgentMessage]) -> Option<sandbox_universal::Usage> {
    let mut total: Option<sandbox_universal::Usage> = None;
    for message in messages {
        let usage = message.usage.unwrap_or_default();
        let sum = total.get_or_insert_with(|| sandbox_universal::Usage {
            cached_input_tokens: Some(0),
            cache_write_tokens: Some(0),
            total_cost_usd: Some(0.0),
            ..Default::default()
        });
        let add = |slot: &mut Option<u64>, n: f64| *slot = Some(slot.unwrap_or(0) + count(n));
        sum.input_tokens += count(usage.input);
        sum.output_tokens += count(usage.output);
        add(&mut sum.cached_input_tokens, usage.cache_read);
        add(&mut sum.cache_write_tokens, usage.cache_write);
        sum.total_cost_usd = Some(sum.total_cost_usd.unwrap_or(0.0) + usage.cost.total);
    }
    total
}

/// Maps Pi's error text to the universal error kinds. Provider errors read
/// `<status> <body>` (the SDKs' message; the body often JSON with `error.message`).
pub(super) fn agent_error(text: &str) -> AgentError {
    let (status, body) = match text.split_once(' ') {
        Some((code, body)) if code.len() == 3 => match code.parse::<u16>() {
            Ok(status) if (100..600).contains(&status) => (Some(status), body),
            _ => (None, text),
        },
        _ => (None, text),
    };
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|json| {
            json["error"]["message"]
                .as_str()
                .or_else(|| json["message"].as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| text.to_string());
    let lower = text.to_lowercase();
    match status {
        Some(401 | 403) => AgentError::TokenError { message },
        Some(status) => AgentError::ProviderError {
            message,
            status: Some(status),
        },
        None if lower.contains("api key")
            || lower.contains("unauthorized")
            || lower.contains("authentication") =>
        {
            AgentError::TokenError { message }
        }
        None => AgentError::AgentReported {
            message,
            code: None,
        },
    }
}
