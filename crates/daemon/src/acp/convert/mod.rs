//! Pure conversions between the universal schema and ACP v1 (no I/O).
//!
//! - [`UpdateConverter`]: a session's [`UniversalEvent`](sandbox_universal::UniversalEvent)s →
//!   `session/update` notifications ([`acp::SessionUpdate`]).
//! - [`stop_reason`], [`error_text`]: how a turn ended, in ACP's words and in the user's.
//! - [`permission_options`], [`permission_tool_call`], [`permission_reply`]: permission
//!   requests ↔ `session/request_permission`.
//! - [`question_form`], [`question_answers`]: questions ↔ `elicitation/create` forms.
//! - [`message_from_prompt`], [`mcp_servers`]: a `session/prompt` and a session's MCP servers
//!   → the daemon's request bodies.

use agent_client_protocol::v1::schema as acp;

mod diff;
mod hitl;
mod prompt;
mod tools;
mod transcript;

pub use diff::{DiffTexts, HUNK_GAP, diff_texts};
pub use hitl::{
    ALLOW_ALWAYS, ALLOW_ONCE, REJECT, permission_options, permission_reply, permission_tool_call,
    question_answers, question_form,
};
pub use prompt::{mcp_servers, message_from_prompt};
pub use tools::tool_kind;
pub use transcript::UpdateConverter;

use sandbox_universal::{AgentError, StopReason};

/// The ACP stop reason of a universal one.
///
/// - `completed` → `end_turn`: the agent finished its answer.
/// - `cancelled` → `cancelled`: ACP requires exactly this after `session/cancel`.
/// - `maxTokens` → `max_tokens`: the model hit its output limit.
/// - `maxTurns`, `maxBudget` → `max_turn_requests`: the closest ACP has to "the agent hit a
///   limit of its own" (ACP has no budget reason).
/// - `toolStop` → `end_turn`: a host tool ended the turn on purpose; the next prompt goes on.
/// - `error` → `end_turn`: ACP has no error reason; the bridge reports the error itself
///   (see [`error_text`]) and the turn is over.
pub fn stop_reason(reason: StopReason) -> acp::StopReason {
    match reason {
        StopReason::Completed | StopReason::ToolStop | StopReason::Error => {
            acp::StopReason::EndTurn
        }
        StopReason::Cancelled => acp::StopReason::Cancelled,
        StopReason::MaxTokens => acp::StopReason::MaxTokens,
        StopReason::MaxTurns | StopReason::MaxBudget => acp::StopReason::MaxTurnRequests,
    }
}

/// A one-line human text of an agent error, for the bridge to show (as a message chunk or
/// an error response): its message, what kind of error it is, and the details that help
/// (provider HTTP status, exit code or signal).
pub fn error_text(error: &AgentError) -> String {
    let detail = match error {
        AgentError::ProviderError {
            status: Some(status),
            ..
        } => format!(", HTTP {status}"),
        AgentError::ProcessExited {
            exit_code: Some(code),
            ..
        } => format!(", exit code {code}"),
        AgentError::ProcessExited {
            signal: Some(signal),
            ..
        } => format!(", signal {signal}"),
        AgentError::AgentReported {
            code: Some(code), ..
        } => format!(", {code}"),
        _ => String::new(),
    };
    format!("{} ({}{detail})", error.message(), error.kind())
}

#[cfg(test)]
mod tests;
