//! Session policy: what a host hands the agent for one session — instructions, the tools it
//! may use, a turn limit, MCP servers, extra environment variables — and what each agent
//! can honour of it ([`PolicySupport`], served by `GET /agents`).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How `systemPrompt` combines with the agent's own instructions.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum SystemPromptMode {
    /// After the agent's own system prompt (the default).
    #[default]
    Append,
    /// Instead of the agent's own system prompt.
    Replace,
}

/// Which tools the agent may use, in universal names: `read`, `write`, `edit`, `shell`,
/// `glob`, `grep`, `webFetch`, `webSearch`, `mcp:<server>/<tool>`, `mcp:<server>/*`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolPolicy {
    /// Only these tools (absent: every tool). An MCP server's tools are allowed when the
    /// list names `mcp:<server>/*` or one of them; an empty list allows no tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Never these tools (applied after `allow`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

impl ToolPolicy {
    /// Whether the policy restricts nothing.
    pub fn is_open(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }

    /// Whether `tool` may be used under this policy (names that do not parse were refused
    /// when the session was created and count as absent).
    pub fn permits(&self, tool: &ToolName) -> bool {
        let parsed = |names: &[String]| -> Vec<ToolName> {
            names.iter().filter_map(|n| n.parse().ok()).collect()
        };
        let allowed = match &self.allow {
            None => true,
            Some(allow) => parsed(allow).iter().any(|rule| rule.covers(tool)),
        };
        allowed && !parsed(&self.deny).iter().any(|rule| rule.covers(tool))
    }

    /// The built-in tools this policy takes away.
    pub fn removed_built_ins(&self) -> Vec<ToolName> {
        ToolName::BUILT_IN
            .iter()
            .filter(|t| !self.permits(t))
            .cloned()
            .collect()
    }

    /// Whether the policy says anything about MCP tools (an `allow` list always does).
    pub fn restricts_mcp(&self) -> bool {
        self.allow.is_some() || self.deny.iter().any(|n| n.starts_with("mcp:"))
    }
}

/// A tool in universal terms.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolName {
    /// Reading files.
    Read,
    /// Creating or overwriting files.
    Write,
    /// Editing files in place.
    Edit,
    /// Running shell commands.
    Shell,
    /// Finding files by pattern.
    Glob,
    /// Searching file contents.
    Grep,
    /// Fetching a URL.
    WebFetch,
    /// Searching the web.
    WebSearch,
    /// A tool of a session MCP server; `tool: None` is every tool of the server.
    Mcp {
        /// The server's name in `mcpServers`.
        server: String,
        /// The tool's name, or `None` for `*`.
        tool: Option<String>,
    },
}

impl ToolName {
    /// The built-in tools, in their universal names' order.
    pub const BUILT_IN: [ToolName; 8] = [
        Self::Read,
        Self::Write,
        Self::Edit,
        Self::Shell,
        Self::Glob,
        Self::Grep,
        Self::WebFetch,
        Self::WebSearch,
    ];

    /// The universal name of a built-in tool (`mcp` for MCP tools).
    pub fn key(&self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Edit => "edit",
            Self::Shell => "shell",
            Self::Glob => "glob",
            Self::Grep => "grep",
            Self::WebFetch => "webFetch",
            Self::WebSearch => "webSearch",
            Self::Mcp { .. } => "mcp",
        }
    }

    /// Whether this rule (a name in `allow` or `deny`) covers `tool`.
    pub fn covers(&self, tool: &ToolName) -> bool {
        match (self, tool) {
            (
                Self::Mcp { server, tool: None },
                Self::Mcp {
                    server: other_server,
                    ..
                },
            ) => server == other_server,
            _ => self == tool,
        }
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Mcp { server, tool } => {
                write!(f, "mcp:{server}/{}", tool.as_deref().unwrap_or("*"))
            }
            other => f.write_str(other.key()),
        }
    }
}

impl FromStr for ToolName {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        if let Some(rest) = name.strip_prefix("mcp:") {
            let (server, tool) = rest.split_once('/').ok_or_else(|| {
                format!("`{name}` must be `mcp:<server>/<tool>` or `mcp:<server>/*`")
            })?;
            if !is_mcp_name(server) {
                return Err(format!(
                    "`{name}`: the server name must be 1 to 64 of A-Z a-z 0-9 _ -"
                ));
            }
            let tool = match tool {
                "*" => None,
                tool if is_mcp_tool_name(tool) => Some(tool.to_string()),
                _ => {
                    return Err(format!(
                        "`{name}`: the tool name must be `*` or 1 to 128 of A-Z a-z 0-9 _ - ."
                    ));
                }
            };
            return Ok(Self::Mcp {
                server: server.to_string(),
                tool,
            });
        }
        Self::BUILT_IN
            .iter()
            .find(|t| t.key() == name)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "unknown tool `{}`; tools: read, write, edit, shell, glob, grep, webFetch, webSearch, mcp:<server>/<tool>, mcp:<server>/*",
                    name.escape_debug()
                )
            })
    }
}

/// Whether `name` may name an MCP server: 1 to 64 of `A-Z a-z 0-9 _ -` (it becomes part of
/// the agents' tool names).
pub fn is_mcp_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `name` may name an MCP tool: 1 to 128 of `A-Z a-z 0-9 _ - .`.
pub fn is_mcp_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// One MCP server for one session, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum McpServer {
    /// A program the agent starts and speaks to on stdio.
    #[serde(rename_all = "camelCase")]
    Stdio {
        /// The program: a path, or a name found on the daemon's `PATH`.
        command: String,
        /// Its arguments.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        /// Extra environment variables for it (kept out of argv, the log and the store).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
    },
    /// A server reached over Streamable HTTP.
    #[serde(rename_all = "camelCase")]
    Http {
        /// Its URL (`http` or `https`).
        url: String,
        /// Headers sent with every request, e.g. `Authorization: Bearer …` (kept out of
        /// argv, the log and the store).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
    },
}

impl McpServer {
    /// How the agent reaches it.
    pub fn transport(&self) -> McpTransport {
        match self {
            Self::Stdio { .. } => McpTransport::Stdio,
            Self::Http { .. } => McpTransport::Http,
        }
    }

    /// The bearer token of an `Authorization: Bearer <token>` header, if it has one.
    pub fn bearer_token(&self) -> Option<&str> {
        let Self::Http { headers, .. } = self else {
            return None;
        };
        headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
            .and_then(|(_, value)| {
                let (scheme, token) = value.split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then_some(token.trim())
            })
    }
}

/// An MCP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpTransport {
    /// A child process on stdio.
    Stdio,
    /// Streamable HTTP.
    Http,
}

/// Everything a session's creator asked of the agent beyond its mode and model. Part of
/// `POST /sessions/{id}`; kept with the session so a restored agent gets it again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPolicy {
    /// Instructions for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// How they combine with the agent's own.
    #[serde(default)]
    pub system_prompt_mode: SystemPromptMode,
    /// The tools it may use.
    #[serde(default, skip_serializing_if = "ToolPolicy::is_open")]
    pub tools: ToolPolicy,
    /// The most model responses one turn may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// MCP servers for this session only.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp_servers: BTreeMap<String, McpServer>,
    /// Extra environment variables for the agent's process.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The host application's tools, served by the daemon over MCP.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_tools: Vec<crate::HostTool>,
}

impl SessionPolicy {
    /// Whether the policy asks nothing.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The policy without the values that may be secret (MCP servers' `env` and `headers`,
    /// the session's `env`: names kept, values emptied), and those values apart.
    pub fn split_secrets(&self) -> (Self, PolicySecrets) {
        let mut public = self.clone();
        let mut secrets = PolicySecrets::default();
        for (name, value) in public.env.iter_mut() {
            secrets.env.insert(name.clone(), std::mem::take(value));
        }
        for (server, config) in public.mcp_servers.iter_mut() {
            let values = match config {
                McpServer::Stdio { env, .. } => env,
                McpServer::Http { headers, .. } => headers,
            };
            let kept = secrets.mcp_servers.entry(server.clone()).or_default();
            for (name, value) in values.iter_mut() {
                kept.insert(name.clone(), std::mem::take(value));
            }
        }
        for tool in public.host_tools.iter_mut() {
            if let crate::HostToolHandler::Http { headers, .. } = &mut tool.handler
                && !headers.is_empty()
            {
                let kept = secrets.host_tools.entry(tool.name.clone()).or_default();
                for (name, value) in headers.iter_mut() {
                    kept.insert(name.clone(), std::mem::take(value));
                }
            }
        }
        (public, secrets)
    }

    /// Puts back what [`SessionPolicy::split_secrets`] took out.
    pub fn with_secrets(mut self, mut secrets: PolicySecrets) -> Self {
        for (name, value) in self.env.iter_mut() {
            if let Some(secret) = secrets.env.remove(name) {
                *value = secret;
            }
        }
        for (server, config) in self.mcp_servers.iter_mut() {
            let Some(mut kept) = secrets.mcp_servers.remove(server) else {
                continue;
            };
            let values = match config {
                McpServer::Stdio { env, .. } => env,
                McpServer::Http { headers, .. } => headers,
            };
            for (name, value) in values.iter_mut() {
                if let Some(secret) = kept.remove(name) {
                    *value = secret;
                }
            }
        }
        for tool in self.host_tools.iter_mut() {
            let crate::HostToolHandler::Http { headers, .. } = &mut tool.handler else {
                continue;
            };
            let Some(mut kept) = secrets.host_tools.remove(&tool.name) else {
                continue;
            };
            for (name, value) in headers.iter_mut() {
                if let Some(secret) = kept.remove(name) {
                    *value = secret;
                }
            }
        }
        self
    }
}

/// The values of a [`SessionPolicy`] that may be secret, kept apart from the store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicySecrets {
    /// The session's `env` values by name.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Each MCP server's `env` (stdio) or `headers` (http) values by name.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, BTreeMap<String, String>>,
    /// Each http host tool's `headers` values by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub host_tools: BTreeMap<String, BTreeMap<String, String>>,
}

/// The universal tool a permission request is for, when it is one the session's `tools`
/// can name: a command is `shell`, a file change `write` (and `edit`), a read outside the
/// workspace `read`, network access `webFetch`.
pub fn permission_tools(kind: crate::PermissionKind) -> &'static [ToolName] {
    use crate::PermissionKind as Kind;
    match kind {
        Kind::Command => &[ToolName::Shell],
        Kind::FileChange => &[ToolName::Write, ToolName::Edit],
        Kind::FileRead => &[ToolName::Read],
        Kind::Network => &[ToolName::WebFetch],
        Kind::PlanApproval | Kind::McpTool | Kind::HostTool | Kind::Tool => &[],
    }
}

/// How an agent keeps a tool from the model when a session's `tools` takes it away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ToolRestriction {
    /// The tool is absent from the model's tool list.
    Removed,
    /// The model still sees it; the daemon rejects each call (a `permissionAsked` answered
    /// `reject` at once, in the log), so it needs a permission mode that asks.
    Refused,
    /// The agent has no such tool: nothing to take away.
    Absent,
}

/// Who enforces `maxTurns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnLimiter {
    /// The agent's own limit.
    Agent,
    /// The daemon counts the agent's model responses and interrupts it.
    Daemon,
}

/// What of a session policy an agent honours, and how (`GET /agents`). A request for
/// something it does not honour is refused with a 422 naming the field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicySupport {
    /// The `systemPromptMode`s it honours (empty: no `systemPrompt`).
    pub system_prompt_modes: Vec<SystemPromptMode>,
    /// How each built-in tool (by universal name) and MCP tools (`mcp`) are taken away;
    /// a tool not listed cannot be, and a `tools` list that would is refused.
    pub tools: BTreeMap<String, ToolRestriction>,
    /// Who enforces `maxTurns` (absent: it cannot be limited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<TurnLimiter>,
    /// The MCP transports it takes in `mcpServers` (empty: none).
    pub mcp_transports: Vec<McpTransport>,
    /// The image media types its messages may carry (empty: no images).
    pub image_types: Vec<String>,
    /// Whether it takes the session's `env`.
    pub env: bool,
    /// Whether it takes `hostTools` (the daemon's per-session MCP server reaches it).
    #[serde(default)]
    pub host_tools: bool,
    /// Whether the daemon offers it `ask_user`, a question tool of the daemon's (it has
    /// none of its own), on that server.
    #[serde(default)]
    pub ask_user: bool,
}

/// The image media types the daemon knows.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The most bytes one image may hold (decoded).
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_parse_and_print_back() {
        for name in [
            "read",
            "write",
            "edit",
            "shell",
            "glob",
            "grep",
            "webFetch",
            "webSearch",
            "mcp:st/echo",
            "mcp:ht/*",
        ] {
            assert_eq!(name.parse::<ToolName>().unwrap().to_string(), name);
        }
        for bad in [
            "Bash",
            "mcp:",
            "mcp:st",
            "mcp:s t/x",
            "mcp:st/a b",
            "web_fetch",
            "",
        ] {
            assert!(bad.parse::<ToolName>().is_err(), "{bad}");
        }
    }

    #[test]
    fn allow_then_deny() {
        let policy = ToolPolicy {
            allow: Some(vec!["read".into(), "shell".into(), "mcp:st/*".into()]),
            deny: vec!["mcp:st/delete".into()],
        };
        let mcp = |tool: &str| ToolName::Mcp {
            server: "st".into(),
            tool: Some(tool.into()),
        };
        assert!(policy.permits(&ToolName::Read) && policy.permits(&ToolName::Shell));
        assert!(!policy.permits(&ToolName::Write) && !policy.permits(&ToolName::WebFetch));
        assert!(policy.permits(&mcp("echo")) && !policy.permits(&mcp("delete")));
        assert_eq!(policy.removed_built_ins().len(), 6);
        assert!(ToolPolicy::default().is_open() && ToolPolicy::default().permits(&mcp("x")));
    }

    #[test]
    fn secrets_come_apart_and_back() {
        let policy: SessionPolicy = serde_json::from_value(serde_json::json!({
            "env": {"FOO": "bar"},
            "mcpServers": {
                "st": {"type": "stdio", "command": "python3", "env": {"K": "v"}},
                "ht": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                       "headers": {"Authorization": "Bearer tok"}},
            },
        }))
        .unwrap();
        assert_eq!(policy.mcp_servers["ht"].bearer_token(), Some("tok"));
        let (public, secrets) = policy.split_secrets();
        let shown = serde_json::to_string(&public).unwrap();
        assert!(!shown.contains("bar") && !shown.contains("tok") && !shown.contains("\"v\""));
        assert!(shown.contains("Authorization") && shown.contains("FOO"));
        assert_eq!(public.with_secrets(secrets), policy);
    }
}
