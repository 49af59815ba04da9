//! Agents: ids, capabilities, models and modes.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A coding agent the daemon knows.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    ToSchema,
    JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum AgentId {
    /// Anthropic's Claude Code.
    Claude,
    /// OpenAI's Codex.
    Codex,
    /// OpenCode.
    Opencode,
    /// Sourcegraph's Amp.
    Amp,
    /// The Pi coding agent.
    Pi,
    /// The built-in deterministic mock agent (no API keys needed).
    Mock,
}

impl AgentId {
    /// Every known agent, in display order.
    pub const ALL: [AgentId; 6] = [
        Self::Claude,
        Self::Codex,
        Self::Opencode,
        Self::Amp,
        Self::Pi,
        Self::Mock,
    ];

    /// The wire name (`claude`, `codex`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Opencode => "opencode",
            Self::Amp => "amp",
            Self::Pi => "pi",
            Self::Mock => "mock",
        }
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Returned when a string names no known agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownAgentName(pub String);

impl fmt::Display for UnknownAgentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = AgentId::ALL.iter().map(|a| a.as_str()).collect();
        write!(
            f,
            "unknown agent `{}`; known agents: {}",
            self.0,
            known.join(", ")
        )
    }
}

impl std::error::Error for UnknownAgentName {}

impl FromStr for AgentId {
    type Err = UnknownAgentName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AgentId::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| UnknownAgentName(s.to_string()))
    }
}

/// How much the agent may do without asking.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// The agent asks before risky actions.
    #[default]
    Default,
    /// Read-only planning; the agent proposes a plan for approval.
    Plan,
    /// File edits are allowed without asking; other actions still ask.
    AcceptEdits,
    /// Nothing asks. Needs `dangerouslySkipPermissions: true`.
    Bypass,
}

impl PermissionMode {
    /// Every permission mode.
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::Default,
        PermissionMode::Plan,
        PermissionMode::AcceptEdits,
        PermissionMode::Bypass,
    ];
}

/// Which universal features an agent supports. Every flag is backed by tests of the
/// agent's real CLI (or, for the mock, of the mock itself).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Assistant text messages.
    pub text_messages: bool,
    /// Text arrives as `itemDelta`s while it is generated.
    pub streaming_deltas: bool,
    /// Reasoning / thinking items.
    pub reasoning: bool,
    /// `toolCall` / `toolResult` items.
    pub tool_calls: bool,
    /// `commandExecution` items.
    pub command_execution: bool,
    /// `fileChange` items.
    pub file_changes: bool,
    /// `plan` items.
    pub plans: bool,
    /// Permission requests (`permissionAsked`).
    pub permissions: bool,
    /// `always` replies are honoured for the rest of the session.
    pub permission_always: bool,
    /// Questions (`questionAsked`).
    pub questions: bool,
    /// Plan approval requests.
    pub plan_approval: bool,
    /// Cancelling a running turn.
    pub cancel: bool,
    /// Several turns in one session.
    pub multi_turn: bool,
    /// The conversation survives an agent process exit.
    pub resume: bool,
    /// Token usage on `turnEnded`.
    pub usage: bool,
    /// Model selection.
    pub models: bool,
    /// Model variants (e.g. reasoning effort).
    pub variants: bool,
    /// Agent modes (e.g. build / plan).
    pub agent_modes: bool,
    /// `validateToken` on session creation.
    pub validate_token: bool,
    /// `systemPrompt` reaches the model (see `policy.systemPromptModes`).
    #[serde(default)]
    pub system_prompt: bool,
    /// `tools` takes tools away (see `policy.tools` for how).
    #[serde(default)]
    pub tool_lists: bool,
    /// `maxTurns` ends a turn that keeps calling tools (see `policy.maxTurns`).
    #[serde(default)]
    pub max_turns: bool,
    /// `mcpServers`: the agent calls the session's MCP servers (see
    /// `policy.mcpTransports`).
    #[serde(default)]
    pub mcp_servers: bool,
    /// Messages with images (see `policy.imageTypes`).
    #[serde(default)]
    pub images: bool,
    /// `env` reaches the agent's process.
    #[serde(default)]
    pub session_env: bool,
    /// `hostTools`: the agent calls the host's tools on the daemon's MCP server, answered
    /// by the client or an http endpoint, approved first or ending the turn as asked.
    #[serde(default)]
    pub host_tools: bool,
}

/// One agent as seen by `GET /agents`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentInfo {
    /// The agent id.
    pub id: AgentId,
    /// Display name.
    pub name: String,
    /// Whether a usable binary was found (always true for `mock`).
    pub installed: bool,
    /// Installed version, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Path of the binary in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Where the binary in use came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::BinarySource>,
    /// Every version the daemon has installed in its data dir (the one in use among them
    /// unless an override or `PATH` binary is used instead).
    #[serde(default)]
    pub installed_versions: Vec<InstalledVersion>,
    /// Whether this daemon can drive the agent yet.
    pub supported: bool,
    /// What the agent supports.
    pub capabilities: AgentCapabilities,
    /// Which credentials a session of the agent can use here (never the secrets).
    #[serde(default)]
    pub credentials: crate::AgentCredentials,
    /// What of a session policy (`systemPrompt`, `tools`, `maxTurns`, `mcpServers`,
    /// images, `env`) the agent honours, and how.
    #[serde(default)]
    pub policy: crate::PolicySupport,
    /// How each `true` capability was proven: the scenarios of the end-to-end table that
    /// showed it, and what ran behind the agent then. Keyed by the flag's name.
    #[serde(default)]
    pub capability_proofs: std::collections::BTreeMap<String, CapabilityProof>,
}

/// How one capability flag was proven.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityProof {
    /// The scenarios of the end-to-end table that showed it (see the README's agent table).
    pub scenarios: Vec<String>,
    /// What ran behind the agent: the real CLI and its version, the mock, or a stand-in.
    pub ran_with: String,
}

/// One version of an agent installed in the daemon's data dir.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstalledVersion {
    /// The version.
    pub version: String,
    /// Its executable.
    pub path: String,
    /// Whether it is the one new sessions use.
    pub current: bool,
}

/// One model an agent can use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// Model id to pass as `model`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Variants to pass as `variant` (e.g. reasoning effort).
    #[serde(default)]
    pub variants: Vec<String>,
    /// The variant used when none is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_variant: Option<String>,
}

/// Body of `GET /agents/{agent}/models`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelsResponse {
    /// The models.
    pub models: Vec<ModelInfo>,
    /// The model used when none is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
}

/// One agent mode (what the agent does: build, plan, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentModeInfo {
    /// Mode id to pass as `agentMode`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What the mode does.
    pub description: String,
}

/// Body of `GET /agents/{agent}/modes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModesResponse {
    /// Agent modes.
    pub modes: Vec<AgentModeInfo>,
    /// The mode used when none is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_mode: Option<String>,
    /// Permission modes the agent supports.
    pub permission_modes: Vec<PermissionMode>,
}
