//! A session's policy on OpenCode.
//!
//! - `systemPrompt`, `append`: the per-prompt `system` string (OpenCode puts it after its
//!   own prompt). `replace`: the `prompt` of the session's agent (`build` unless it names
//!   another), which OpenCode uses instead of its own provider prompt; agents are config,
//!   so such a session gets a server of its own.
//! - `tools`: the session is created with `deny` rules (`pattern: "*"`), which take the
//!   tools out of the model's list, plus per-prompt `tools: {name: false}` for the exact
//!   names (the only way to take `write` without `edit`: both are OpenCode's `edit`
//!   permission; the map replaces the session's rules, so it carries them all, see
//!   [`prompt_tools`]). A session that takes tools away also loses `task`: a subagent's
//!   session is not bound by its parent's rules. MCP tools: rules in the config of the
//!   session's own server ([`mcp_permission`]).
//! - `maxTurns`: the daemon counts the turn's assistant messages (one per model call) and
//!   aborts the session past the limit ([`crate::kernel::StepLimit`]). OpenCode's own agent
//!   `steps` does not end the turn: its last step runs without tools and the model is told
//!   to sum up, a normal completion.
//! - `mcpServers`, `env`: per process, so a server of the session's own
//!   ([`OwnServer`]), its config holding `mcp.<name>` and the values (MCP `env` and
//!   `headers`) as `{file:…}` references to files only the server's user reads: in neither
//!   argv nor the environment. MCP tools are `<server>_<tool>`; under a permission mode
//!   that asks, `<server>_*` asks too (OpenCode runs MCP tools without asking otherwise).
//!   Their rules are the server's config, not the session's: a prompt's `tools` map
//!   replaces the session's rules.
//!
//! Every text the session gives is put in the config with `{` escaped (`\u007b`), so
//! OpenCode's `{env:…}` / `{file:…}` substitution applies only to the daemon's own
//! references ([`ConfigRefs`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::login::SeededLogin;

use sandbox_universal::{
    IMAGE_TYPES, McpServer, McpTransport, PermissionMode, PolicySupport, SessionPolicy,
    SystemPromptMode, ToolName, ToolRestriction,
};

/// The agent a session runs when it names none.
pub const DEFAULT_AGENT: &str = "build";

/// What the driver tells the daemon it honours.
pub fn support() -> PolicySupport {
    PolicySupport {
        system_prompt_modes: vec![SystemPromptMode::Append, SystemPromptMode::Replace],
        tools: ToolName::BUILT_IN
            .iter()
            .map(|t| (t.key().to_string(), ToolRestriction::Removed))
            .chain([("mcp".to_string(), ToolRestriction::Removed)])
            .collect(),
        max_turns: Some(sandbox_universal::TurnLimiter::Daemon),
        mcp_transports: vec![McpTransport::Stdio, McpTransport::Http],
        image_types: IMAGE_TYPES.iter().map(|t| (*t).to_string()).collect(),
        env: true,
        host_tools: true,
        ask_user: false,
    }
}

/// OpenCode's tools for a universal built-in tool: `(permission, tools)`. The permission
/// is the rule's name (`None` when it covers more than the universal tool: `write` and
/// `edit` share `edit`); the tools are the exact names.
fn native_tools(tool: &ToolName) -> (Option<&'static str>, &'static [&'static str]) {
    match tool {
        ToolName::Read => (Some("read"), &["read"]),
        ToolName::Write => (None, &["write"]),
        ToolName::Edit => (None, &["edit", "multiedit", "apply_patch", "patch"]),
        ToolName::Shell => (Some("bash"), &["bash"]),
        ToolName::Glob => (Some("glob"), &["glob", "list"]),
        ToolName::Grep => (Some("grep"), &["grep"]),
        ToolName::WebFetch => (Some("webfetch"), &["webfetch"]),
        ToolName::WebSearch => (Some("websearch"), &["websearch", "codesearch"]),
        ToolName::Mcp { .. } => (None, &[]),
    }
}

/// OpenCode's name of an MCP tool (`<server>_<tool>`, other characters than
/// `A-Z a-z 0-9 _ -` as `_`), or the pattern of all of a server's tools.
pub fn mcp_tool_name(server: &str, tool: Option<&str>) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{}_{}", clean(server), tool.map_or("*".into(), clean))
}

fn rule(permission: &str, action: &str) -> Value {
    json!({"permission": permission, "pattern": "*", "action": action})
}

/// The rules the session is created with beyond its permission mode's
/// ([`super::launch::permission_rules`]): the built-in tools it takes away, denied (the
/// last matching rule wins). A session that takes tools away also loses `task`.
pub fn session_rules(policy: &SessionPolicy) -> Vec<Value> {
    let removed = policy.tools.removed_built_ins();
    let mut denied: Vec<&str> = removed.iter().filter_map(|t| native_tools(t).0).collect();
    if removed.contains(&ToolName::Write) && removed.contains(&ToolName::Edit) {
        denied.push("edit");
    }
    if !policy.tools.is_open() {
        denied.push("task");
    }
    denied.into_iter().map(|p| rule(p, "deny")).collect()
}

/// The per-prompt `tools` map of a session that takes tools away (empty otherwise).
/// OpenCode drops a tool named `false` from the model's list, which is the only way to
/// take `write` without `edit` (both are its `edit` permission); but it also *replaces*
/// the session's rules with the map (`true` allow, `false` deny), so the map carries the
/// whole rule set of the session as well: `rules` (its permission mode's and
/// [`session_rules`], none of them `ask`), later ones winning.
pub fn prompt_tools(policy: &SessionPolicy, rules: &[Value]) -> Map<String, Value> {
    let mut tools = Map::new();
    if policy.tools.is_open() {
        return tools;
    }
    for rule in rules {
        if let (Some(permission), Some(action)) =
            (rule["permission"].as_str(), rule["action"].as_str())
        {
            tools.insert(permission.to_string(), json!(action == "allow"));
        }
    }
    for tool in policy.tools.removed_built_ins() {
        for name in native_tools(&tool).1 {
            tools.insert((*name).to_string(), json!(false));
        }
    }
    tools
}

/// The permissions of the session's MCP tools, for its own server's config (MCP sessions
/// always have one): each server's tools ask under a mode that asks (OpenCode runs them
/// without asking otherwise), then what `tools` takes away is denied and what an allow
/// list gives back of a server asks again. Server-wide keys sort before their tools'
/// (`*` before any name character), and the last matching key wins.
pub fn mcp_permission(policy: &SessionPolicy, mode: PermissionMode) -> Map<String, Value> {
    let mut permission = Map::new();
    let ask = match mode {
        PermissionMode::Bypass => "allow",
        _ => "ask",
    };
    for server in policy.mcp_servers.keys() {
        let tool = |tool: Option<String>| ToolName::Mcp {
            server: server.clone(),
            tool,
        };
        let named = |list: &[String]| -> Vec<String> {
            list.iter()
                .filter_map(|n| match n.parse::<ToolName>() {
                    Ok(ToolName::Mcp { server: s, tool }) if s == *server => tool,
                    _ => None,
                })
                .collect()
        };
        let mut set = |name: Option<&str>, action: &str| {
            permission.insert(mcp_tool_name(server, name), json!(action));
        };
        if policy.tools.permits(&tool(None)) {
            set(None, ask);
            for name in named(&policy.tools.deny) {
                set(Some(&name), "deny");
            }
            continue;
        }
        // Not all of the server's tools: none, then back those the allow list names and
        // `deny` does not.
        set(None, "deny");
        for name in named(policy.tools.allow.as_deref().unwrap_or_default()) {
            if policy.tools.permits(&tool(Some(name.clone()))) {
                set(Some(&name), ask);
            }
        }
    }
    permission
}

/// Whether the session needs a server of its own: MCP servers, an environment and agent
/// prompts are the server process's.
pub fn needs_own_server(policy: &SessionPolicy) -> bool {
    !policy.mcp_servers.is_empty()
        || !policy.env.is_empty()
        || (policy.system_prompt.is_some()
            && policy.system_prompt_mode == SystemPromptMode::Replace)
}

/// The agent whose prompt a `replace` session sets (and names in every prompt).
pub fn replaced_agent(policy: &SessionPolicy, agent_mode: Option<&str>) -> Option<String> {
    (policy.system_prompt.is_some() && policy.system_prompt_mode == SystemPromptMode::Replace)
        .then(|| agent_mode.unwrap_or(DEFAULT_AGENT).to_string())
}

/// A server of one session's own: what its process gets beyond a shared server's.
#[derive(Clone)]
pub struct OwnServer {
    /// The daemon session (names the server's directory).
    pub session_id: String,
    /// Where the server's directories go (inside the session's state directory, so they
    /// go with the session).
    pub root: PathBuf,
    /// The session's MCP servers (with their secret values).
    pub mcp_servers: BTreeMap<String, McpServer>,
    /// Extra variables for the server process (and so for the tools it runs).
    pub env: BTreeMap<String, String>,
    /// `(agent, prompt)`: the agent's prompt replaced.
    pub prompt: Option<(String, String)>,
    /// The permissions of its MCP tools ([`mcp_permission`]).
    pub permission: Map<String, Value>,
    /// The stored login seeded as its `auth.json`.
    pub login: Option<ServerLogin>,
}

/// A stored login a session's own server is started with.
#[derive(Clone)]
pub struct ServerLogin {
    /// The login, seeded as the server's `auth.json`.
    pub login: Arc<SeededLogin>,
    /// The providers it enables, each with the base URL the daemon's environment gives
    /// it, if any.
    pub providers: Vec<(String, Option<String>)>,
}

impl std::fmt::Debug for OwnServer {
    /// Names, never values.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnServer")
            .field("session_id", &self.session_id)
            .field("mcp_servers", &self.mcp_servers.keys().collect::<Vec<_>>())
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("prompt", &self.prompt.as_ref().map(|(agent, _)| agent))
            .field("permission", &self.permission)
            .field("login", &self.login.as_ref().map(|l| &l.providers))
            .finish()
    }
}

impl OwnServer {
    /// The server of a session that [`needs_own_server`] or uses a stored `login`, its
    /// directories under `state_dir`.
    pub fn of(
        session_id: &str,
        state_dir: &Path,
        policy: &SessionPolicy,
        agent_mode: Option<&str>,
        mode: PermissionMode,
        login: Option<ServerLogin>,
    ) -> Option<Self> {
        (needs_own_server(policy) || login.is_some()).then(|| Self {
            login,
            session_id: session_id.to_string(),
            root: state_dir.join("opencode"),
            mcp_servers: policy.mcp_servers.clone(),
            env: policy.env.clone(),
            prompt: replaced_agent(policy, agent_mode).zip(policy.system_prompt.clone()),
            permission: mcp_permission(policy, mode),
        })
    }

    /// Writes the secret values into `secrets` (0600 files, replacing earlier ones) and
    /// adds the server's part to `config`: `mcp` (values as references to those files)
    /// and the replaced agent prompt.
    pub fn configure(
        &self,
        config: &mut Value,
        secrets: &Path,
        refs: &ConfigRefs,
    ) -> std::io::Result<Vec<PathBuf>> {
        if let Some(login) = &self.login {
            add_login_providers(config, &login.providers);
        }
        let mut written = Vec::new();
        let mut value_ref = |server: &str, index: usize, value: &str| -> std::io::Result<String> {
            let path = secrets.join(format!("mcp-{server}-{index}.value"));
            write_secret(&path, value)?;
            let reference = refs.file(&path);
            written.push(path);
            Ok(reference)
        };
        let mut mcp = Map::new();
        for (name, server) in &self.mcp_servers {
            let entry = match server {
                McpServer::Stdio { command, args, env } => {
                    let mut environment = Map::new();
                    for (index, (var, value)) in env.iter().enumerate() {
                        environment.insert(var.clone(), json!(value_ref(name, index, value)?));
                    }
                    let command: Vec<&str> = std::iter::once(command.as_str())
                        .chain(args.iter().map(String::as_str))
                        .collect();
                    json!({"type": "local", "command": command, "environment": environment,
                           "enabled": true, "timeout": MCP_TIMEOUT_MS})
                }
                McpServer::Http { url, headers } => {
                    let mut sent = Map::new();
                    for (index, (header, value)) in headers.iter().enumerate() {
                        sent.insert(header.clone(), json!(value_ref(name, index, value)?));
                    }
                    // The daemon's own server answers at once, but a client host tool
                    // waits for a person.
                    let timeout = if name == sandbox_universal::HOST_MCP_SERVER {
                        HOST_TOOL_TIMEOUT_MS
                    } else {
                        MCP_TIMEOUT_MS
                    };
                    json!({"type": "remote", "url": url, "headers": sent, "oauth": false,
                           "enabled": true, "timeout": timeout})
                }
            };
            mcp.insert(name.clone(), entry);
        }
        if !mcp.is_empty() {
            config["mcp"] = Value::Object(mcp);
        }
        if let Some(rules) = config["permission"].as_object_mut() {
            rules.extend(self.permission.clone());
        }
        if let Some((agent, prompt)) = &self.prompt {
            config["agent"] = json!({agent.as_str(): {"prompt": prompt}});
        }
        Ok(written)
    }
}

/// How long OpenCode waits for an MCP server's answers (its default, 5 s, is short for a
/// program starting on a busy machine).
pub const MCP_TIMEOUT_MS: u64 = 30_000;

/// How long OpenCode waits for the daemon's host tool server: a client host tool's call
/// waits for a person.
pub const HOST_TOOL_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

fn write_secret(path: &Path, value: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(value.as_bytes())
}

/// The daemon's own `{file:…}` references in a config, told apart from the session's texts
/// by a random marker: [`ConfigRefs::render`] escapes every `{env:` and `{file:` of the
/// config's strings, then turns the marked references into real ones.
#[derive(Debug, Clone)]
pub struct ConfigRefs {
    marker: String,
}

impl Default for ConfigRefs {
    fn default() -> Self {
        Self {
            marker: format!("@ref-{}@", uuid::Uuid::new_v4().simple()),
        }
    }
}

impl ConfigRefs {
    /// A reference to the (trimmed) content of `path`.
    pub fn file(&self, path: &Path) -> String {
        format!("{}file:{}}}", self.marker, path.display())
    }

    /// The config as `OPENCODE_CONFIG_CONTENT`.
    pub fn render(&self, config: &Value) -> String {
        config
            .to_string()
            .replace("{env:", "\\u007benv:")
            .replace("{file:", "\\u007bfile:")
            .replace(&self.marker, "{")
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;

/// Enables the providers of a stored login in `config` (their keys come from its
/// `auth.json`, which OpenCode reads itself), each at its base URL when one is given.
fn add_login_providers(config: &mut Value, providers: &[(String, Option<String>)]) {
    for (id, base_url) in providers {
        if let Some(enabled) = config["enabled_providers"].as_array_mut()
            && !enabled.iter().any(|e| e == id.as_str())
        {
            enabled.push(json!(id));
        }
        if let Some(url) = base_url
            && config["provider"].get(id).is_none()
        {
            config["provider"][id] = json!({"options": {"baseURL": url}});
        }
    }
}
