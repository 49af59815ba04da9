//! `AgentError`: what can go wrong with an agent, as a tagged union.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// An agent-level error, tagged by `type`. Appears in `error` events and as the
/// `agentError` of problem responses. Every variant has a human `message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AgentError {
    /// The credential was rejected (or missing).
    #[serde(rename_all = "camelCase")]
    TokenError {
        /// What happened.
        message: String,
    },
    /// The agent process (or worker) exited unexpectedly.
    #[serde(rename_all = "camelCase")]
    ProcessExited {
        /// What happened.
        message: String,
        /// Exit code, when it exited normally.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// Signal number, when it was killed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
        /// The last lines of its stderr.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stderr_tail: Option<String>,
    },
    /// Installing the agent failed.
    #[serde(rename_all = "camelCase")]
    InstallFailed {
        /// What happened.
        message: String,
    },
    /// The agent is not installed and could not be found.
    #[serde(rename_all = "camelCase")]
    NotInstalled {
        /// What happened, and how to fix it.
        message: String,
    },
    /// The agent is known but not supported by this daemon build yet.
    #[serde(rename_all = "camelCase")]
    UnsupportedAgent {
        /// What happened.
        message: String,
    },
    /// The agent process could not be started.
    #[serde(rename_all = "camelCase")]
    SpawnFailed {
        /// What happened.
        message: String,
    },
    /// The agent spoke a protocol the daemon did not expect.
    #[serde(rename_all = "camelCase")]
    ProtocolError {
        /// What happened.
        message: String,
    },
    /// The model provider failed (HTTP error, overload, ...), as reported by the agent.
    #[serde(rename_all = "camelCase")]
    ProviderError {
        /// What happened.
        message: String,
        /// The provider's HTTP status, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
    },
    /// The agent reported an error of its own.
    #[serde(rename_all = "camelCase")]
    AgentReported {
        /// What the agent said.
        message: String,
        /// The agent's error code or subtype, when it gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// The agent did not answer in time.
    #[serde(rename_all = "camelCase")]
    Timeout {
        /// What happened.
        message: String,
    },
    /// The agent no longer has the permission or question request being answered (it
    /// restarted, or settled the request on its own); the answer did not reach it.
    #[serde(rename_all = "camelCase")]
    RequestGone {
        /// What happened.
        message: String,
    },
    /// The daemon could not write the session's events to its store (disk full, database
    /// gone). Events stay readable and are written, with no gap, once the store can write
    /// again.
    #[serde(rename_all = "camelCase")]
    StoreError {
        /// What happened.
        message: String,
    },
}

impl AgentError {
    /// The human message of any variant.
    pub fn message(&self) -> &str {
        match self {
            Self::TokenError { message }
            | Self::ProcessExited { message, .. }
            | Self::InstallFailed { message }
            | Self::NotInstalled { message }
            | Self::UnsupportedAgent { message }
            | Self::SpawnFailed { message }
            | Self::ProtocolError { message }
            | Self::ProviderError { message, .. }
            | Self::AgentReported { message, .. }
            | Self::Timeout { message }
            | Self::RequestGone { message }
            | Self::StoreError { message } => message,
        }
    }

    /// The camelCase tag of the variant.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::TokenError { .. } => "tokenError",
            Self::ProcessExited { .. } => "processExited",
            Self::InstallFailed { .. } => "installFailed",
            Self::NotInstalled { .. } => "notInstalled",
            Self::UnsupportedAgent { .. } => "unsupportedAgent",
            Self::SpawnFailed { .. } => "spawnFailed",
            Self::ProtocolError { .. } => "protocolError",
            Self::ProviderError { .. } => "providerError",
            Self::AgentReported { .. } => "agentReported",
            Self::Timeout { .. } => "timeout",
            Self::RequestGone { .. } => "requestGone",
            Self::StoreError { .. } => "storeError",
        }
    }

    /// Shorthand for a protocol error.
    pub fn protocol(message: impl Into<String>) -> Self {
        Self::ProtocolError {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl std::error::Error for AgentError {}
