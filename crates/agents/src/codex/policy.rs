//! A session policy in Codex's terms: what Codex honours ([`support`]), the instructions
//! of `thread/start` and `thread/resume` ([`Instructions`]), the per-thread `config`
//! object taking tools away and naming the session's MCP servers ([`thread_config`]),
//! and the app-server's environment carrying their secrets ([`secret_env`]).
//!
//! Secrets never travel in a request (the tap records every one): a stdio server's `env`
//! values and an HTTP server's header values sit in the app-server's environment under
//! names the daemon chooses (`SANDBOX_MCP_<n>_…`), and the thread config names only those
//! variables — `bearer_token_env_var` and `env_http_headers` for HTTP, and for stdio a
//! `/bin/sh` wrapper that renames the forwarded variables (`env_vars`) to the ones the
//! server asked for. The generated `config.toml` keeps these variables out of the
//! commands the model runs ([`SECRET_ENV_PREFIX`]).

use std::collections::BTreeMap;

use sandbox_universal::{
    IMAGE_TYPES, McpServer, McpTransport, PolicySupport, SessionPolicy, SystemPromptMode, ToolName,
    ToolRestriction, TurnLimiter,
};
use serde_json::{Map, Value, json};

/// The prefix of the app-server variables holding MCP secrets.
pub const SECRET_ENV_PREFIX: &str = "SANDBOX_MCP_";

/// What Codex honours of a session policy.
///
/// - Instructions: `developerInstructions` (append) or `baseInstructions` (replace).
/// - Tools: `shell` and `webSearch` are removed from the model's tools (features
///   `shell_tool`, `web_search = "disabled"`); `apply_patch` cannot be, so `write` and
///   `edit` are refused at call time; Codex has no tools of its own for `read`, `glob`,
///   `grep` or `webFetch` (it reads through the shell); MCP tools are removed per server
///   (`enabled_tools` / `disabled_tools`).
/// - `maxTurns`: Codex has no limit; the daemon counts model responses.
/// - MCP servers over stdio and HTTP, images of every type the daemon knows, and `env`.
pub fn support() -> PolicySupport {
    use ToolRestriction::{Absent, Refused, Removed};
    let tools = [
        ("read", Absent),
        ("write", Refused),
        ("edit", Refused),
        ("shell", Removed),
        ("glob", Absent),
        ("grep", Absent),
        ("webFetch", Absent),
        ("webSearch", Removed),
        ("mcp", Removed),
    ];
    PolicySupport {
        system_prompt_modes: vec![SystemPromptMode::Append, SystemPromptMode::Replace],
        tools: tools.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        max_turns: Some(TurnLimiter::Daemon),
        mcp_transports: vec![McpTransport::Stdio, McpTransport::Http],
        image_types: IMAGE_TYPES.iter().map(|t| t.to_string()).collect(),
        env: true,
        host_tools: true,
        ask_user: false,
    }
}

/// The instructions a thread is started (and resumed) with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Instructions {
    /// `baseInstructions`: replace Codex's own.
    pub base: Option<String>,
    /// `developerInstructions`: a developer message after Codex's own.
    pub developer: Option<String>,
}

impl Instructions {
    /// The instructions of a session's policy.
    pub fn of(policy: &SessionPolicy) -> Self {
        let Some(prompt) = &policy.system_prompt else {
            return Self::default();
        };
        match policy.system_prompt_mode {
            SystemPromptMode::Append => Self {
                developer: Some(prompt.clone()),
                base: None,
            },
            SystemPromptMode::Replace => Self {
                base: Some(prompt.clone()),
                developer: None,
            },
        }
    }

    /// Sets them in `thread/start` or `thread/resume` params.
    pub fn apply(&self, params: &mut Value) {
        if let Some(base) = &self.base {
            params["baseInstructions"] = json!(base);
        }
        if let Some(developer) = &self.developer {
            params["developerInstructions"] = json!(developer);
        }
    }
}

/// The variable holding the bearer token of the `index`th MCP server.
fn bearer_var(index: usize) -> String {
    format!("{SECRET_ENV_PREFIX}{index}_BEARER")
}

/// The variable holding the `header`th header (or env) value of the `index`th MCP server.
fn value_var(index: usize, value: usize) -> String {
    format!("{SECRET_ENV_PREFIX}{index}_{value}")
}

/// Whether `name` may be set in a POSIX shell (`sh` renames forwarded variables to it).
fn is_shell_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The variables [`thread_config`] names, with their secret values: for the app-server's
/// environment only.
pub fn secret_env(policy: &SessionPolicy) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    for (index, server) in policy.mcp_servers.values().enumerate() {
        match server {
            McpServer::Stdio { env: values, .. } => {
                for (i, (_, value)) in values.iter().enumerate() {
                    env.insert(value_var(index, i), value.clone());
                }
            }
            McpServer::Http { headers, .. } => {
                if let Some(token) = server.bearer_token() {
                    env.insert(bearer_var(index), token.to_string());
                }
                for (i, (name, value)) in headers.iter().enumerate() {
                    if !is_bearer(server, name) {
                        env.insert(value_var(index, i), value.clone());
                    }
                }
            }
        }
    }
    env
}

/// Whether `header` of `server` is its `Authorization: Bearer` header (sent through
/// `bearer_token_env_var`).
fn is_bearer(server: &McpServer, header: &str) -> bool {
    header.eq_ignore_ascii_case("authorization") && server.bearer_token().is_some()
}

/// How long Codex waits for a session's MCP server to start: Codex's own 10 s is short
/// for a server started by an interpreter on a busy machine (a server that missed it is
/// left out of the whole thread).
const STARTUP_TIMEOUT_SECS: u64 = 60;

/// How long Codex waits for one call of the daemon's host tools: a client tool waits for a
/// person (Codex's own limit is 60 s; the daemon's MCP endpoint keeps the call alive).
const HOST_TOOL_TIMEOUT_SECS: u64 = 24 * 60 * 60;

/// The `mcp_servers` entry of one server (the `index`th of the session's).
fn server_config(index: usize, server: &McpServer) -> Value {
    let mut config = launch_config(index, server);
    config["startup_timeout_sec"] = json!(STARTUP_TIMEOUT_SECS);
    config
}

/// How Codex reaches one server.
fn launch_config(index: usize, server: &McpServer) -> Value {
    match server {
        McpServer::Stdio { command, args, env } if env.is_empty() => {
            json!({"command": command, "args": args})
        }
        McpServer::Stdio { command, args, env } => {
            // Codex forwards variables of its own environment by name only: a shell
            // renames each forwarded variable to the name the server expects.
            // Names are shell names (checked when the session was created).
            let mut script = String::new();
            let mut forwarded = Vec::new();
            for (i, name) in env.keys().enumerate().filter(|(_, n)| is_shell_name(n)) {
                let var = value_var(index, i);
                script.push_str(&format!("export {name}=\"${var}\"; unset {var}; "));
                forwarded.push(var);
            }
            script.push_str("exec \"$@\"");
            let mut argv = vec![json!("-c"), json!(script), json!("sh"), json!(command)];
            argv.extend(args.iter().map(|a| json!(a)));
            json!({"command": "/bin/sh", "args": argv, "env_vars": forwarded})
        }
        McpServer::Http { url, headers } => {
            let mut config = json!({"url": url});
            if server.bearer_token().is_some() {
                config["bearer_token_env_var"] = json!(bearer_var(index));
            }
            let named: Map<String, Value> = headers
                .keys()
                .enumerate()
                .filter(|(_, name)| !is_bearer(server, name))
                .map(|(i, name)| (name.clone(), json!(value_var(index, i))))
                .collect();
            if !named.is_empty() {
                config["env_http_headers"] = Value::Object(named);
            }
            config
        }
    }
}

/// Which of a server's tools the session's `tools` leaves: all, some, or none.
enum ServerTools {
    All { except: Vec<String> },
    Only(Vec<String>),
    None,
}

fn server_tools(policy: &SessionPolicy, server: &str) -> ServerTools {
    let rules = |names: &[String]| -> Vec<ToolName> {
        names
            .iter()
            .filter_map(|n| n.parse().ok())
            .filter(|t| matches!(t, ToolName::Mcp { server: s, .. } if s == server))
            .collect()
    };
    let tool_names = |rules: &[ToolName]| -> Vec<String> {
        rules
            .iter()
            .filter_map(|t| match t {
                ToolName::Mcp { tool, .. } => tool.clone(),
                _ => None,
            })
            .collect()
    };
    let whole = |rules: &[ToolName]| {
        rules
            .iter()
            .any(|t| matches!(t, ToolName::Mcp { tool: None, .. }))
    };
    let deny = rules(&policy.tools.deny);
    if whole(&deny) {
        return ServerTools::None;
    }
    let denied = tool_names(&deny);
    match policy.tools.allow.as_deref() {
        None => ServerTools::All { except: denied },
        Some(allow) => {
            let allow = rules(allow);
            if whole(&allow) {
                return ServerTools::All { except: denied };
            }
            let only: Vec<String> = tool_names(&allow)
                .into_iter()
                .filter(|t| !denied.contains(t))
                .collect();
            if only.is_empty() {
                ServerTools::None
            } else {
                ServerTools::Only(only)
            }
        }
    }
}

/// The `config` of `thread/start` and `thread/resume` (`None`: nothing to set): the
/// removed tools and the session's complete set of MCP servers (a thread's
/// `mcp_servers` replaces the process's).
pub fn thread_config(policy: &SessionPolicy) -> Option<Value> {
    let mut config = Map::new();
    if !policy.tools.permits(&ToolName::Shell) {
        config.insert("features".into(), json!({"shell_tool": false}));
    }
    if !policy.tools.permits(&ToolName::WebSearch) {
        config.insert("web_search".into(), json!("disabled"));
    }
    let mut servers = Map::new();
    for (index, (name, server)) in policy.mcp_servers.iter().enumerate() {
        let mut entry = server_config(index, server);
        if name == sandbox_universal::HOST_MCP_SERVER {
            entry["tool_timeout_sec"] = json!(HOST_TOOL_TIMEOUT_SECS);
        }
        match server_tools(policy, name) {
            ServerTools::None => continue,
            ServerTools::All { except } if except.is_empty() => {}
            ServerTools::All { except } => entry["disabled_tools"] = json!(except),
            ServerTools::Only(only) => entry["enabled_tools"] = json!(only),
        }
        servers.insert(name.clone(), entry);
    }
    if !policy.mcp_servers.is_empty() {
        config.insert("mcp_servers".into(), Value::Object(servers));
    }
    (!config.is_empty()).then_some(Value::Object(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(value: Value) -> SessionPolicy {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_host_tool_server_waits_for_a_person() {
        let config = thread_config(&policy(json!({"mcpServers": {
            "host": {"type": "http", "url": "http://127.0.0.1:1/sessions/s/mcp",
                     "headers": {"Authorization": "Bearer t"}},
            "ht": {"type": "http", "url": "http://127.0.0.1:1/mcp"}
        }})))
        .unwrap();
        let servers = &config["mcp_servers"];
        assert_eq!(
            servers["host"]["tool_timeout_sec"],
            json!(HOST_TOOL_TIMEOUT_SECS)
        );
        assert!(servers["ht"].get("tool_timeout_sec").is_none());
    }

    #[test]
    fn instructions_append_as_developer_and_replace_as_base() {
        let mut params = json!({});
        Instructions::of(&policy(json!({"systemPrompt": "Be brief."}))).apply(&mut params);
        assert_eq!(params, json!({"developerInstructions": "Be brief."}));
        let mut params = json!({});
        let replace = json!({"systemPrompt": "Only this.", "systemPromptMode": "replace"});
        Instructions::of(&policy(replace)).apply(&mut params);
        assert_eq!(params, json!({"baseInstructions": "Only this."}));
        assert_eq!(
            Instructions::of(&SessionPolicy::default()),
            Instructions::default()
        );
    }

    #[test]
    fn removed_tools_are_features_of_the_thread() {
        assert_eq!(thread_config(&SessionPolicy::default()), None);
        let config = thread_config(&policy(json!({"tools": {"deny": ["shell", "webSearch"]}})));
        assert_eq!(
            config,
            Some(json!({"features": {"shell_tool": false}, "web_search": "disabled"}))
        );
        let config = thread_config(&policy(json!({"tools": {"allow": ["read", "shell"]}})));
        assert_eq!(config, Some(json!({"web_search": "disabled"})));
    }

    #[test]
    fn mcp_secrets_are_named_never_given() {
        let p = policy(json!({"mcpServers": {
            "ht": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                   "headers": {"Authorization": "Bearer tok-1", "X-Team": "team-2"}},
            "st": {"type": "stdio", "command": "python3", "args": ["s.py"],
                   "env": {"API_KEY": "key-3", "OTHER": "val-4"}},
            "plain": {"type": "stdio", "command": "srv"},
        }}));
        let config = thread_config(&p).unwrap();
        let shown = config.to_string();
        for secret in ["tok-1", "team-2", "key-3", "val-4"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        let servers = &config["mcp_servers"];
        // BTreeMap order: ht (0), plain (1), st (2).
        assert_eq!(
            servers["ht"],
            json!({"url": "http://127.0.0.1:1/mcp", "bearer_token_env_var": "SANDBOX_MCP_0_BEARER",
                   "env_http_headers": {"X-Team": "SANDBOX_MCP_0_1"}, "startup_timeout_sec": 60})
        );
        assert_eq!(
            servers["plain"],
            json!({"command": "srv", "args": [], "startup_timeout_sec": 60})
        );
        assert_eq!(servers["st"]["command"], "/bin/sh");
        assert_eq!(
            servers["st"]["env_vars"],
            json!(["SANDBOX_MCP_2_0", "SANDBOX_MCP_2_1"])
        );
        let args = servers["st"]["args"].as_array().unwrap();
        assert_eq!(args[2..], [json!("sh"), json!("python3"), json!("s.py")]);
        let env = secret_env(&p);
        assert_eq!(
            env,
            [
                ("SANDBOX_MCP_0_BEARER", "tok-1"),
                ("SANDBOX_MCP_0_1", "team-2"),
                ("SANDBOX_MCP_2_0", "key-3"),
                ("SANDBOX_MCP_2_1", "val-4"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
        );
    }

    /// The wrapper really gives the server the variables it asked for, under their names,
    /// and drops the daemon's.
    #[test]
    fn the_stdio_wrapper_renames_the_forwarded_variables() {
        let p = policy(
            json!({"mcpServers": {"st": {"type": "stdio", "command": "env",
            "env": {"API_KEY": "key 3 \"quoted\" $HOME", "OTHER": "val-4"}}}}),
        );
        let config = thread_config(&p).unwrap();
        let entry = &config["mcp_servers"]["st"];
        let args: Vec<String> = entry["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        let output = std::process::Command::new("/bin/sh")
            .args(&args)
            .env_clear()
            .envs(secret_env(&p))
            .output()
            .unwrap();
        let printed = String::from_utf8(output.stdout).unwrap();
        let lines: Vec<&str> = printed.lines().collect();
        assert!(
            lines.contains(&"API_KEY=key 3 \"quoted\" $HOME"),
            "{printed}"
        );
        assert!(lines.contains(&"OTHER=val-4"), "{printed}");
        assert!(!printed.contains(SECRET_ENV_PREFIX), "{printed}");
    }

    #[test]
    fn mcp_tool_lists_become_enabled_and_disabled_tools() {
        let servers = json!({
            "a": {"type": "stdio", "command": "a"},
            "b": {"type": "stdio", "command": "b"},
            "c": {"type": "stdio", "command": "c"},
        });
        let config = thread_config(&policy(json!({"mcpServers": servers,
            "tools": {"deny": ["mcp:a/drop", "mcp:c/*"]}})))
        .unwrap();
        let mcp = &config["mcp_servers"];
        assert_eq!(mcp["a"]["disabled_tools"], json!(["drop"]));
        assert!(
            mcp["b"].get("disabled_tools").is_none() && mcp["b"].get("enabled_tools").is_none()
        );
        assert!(
            mcp.get("c").is_none(),
            "a server with no tool left is left out"
        );
        let config = thread_config(&policy(json!({"mcpServers": servers,
            "tools": {"allow": ["shell", "mcp:a/echo", "mcp:a/drop", "mcp:b/*"],
                      "deny": ["mcp:a/drop"]}})))
        .unwrap();
        let mcp = &config["mcp_servers"];
        assert_eq!(mcp["a"]["enabled_tools"], json!(["echo"]));
        assert!(mcp["b"].get("enabled_tools").is_none());
        assert!(mcp.get("c").is_none());
        assert_eq!(config["web_search"], "disabled");
    }

    #[test]
    fn support_says_how_each_tool_goes() {
        let support = support();
        assert_eq!(support.tools["shell"], ToolRestriction::Removed);
        assert_eq!(support.tools["write"], ToolRestriction::Refused);
        assert_eq!(support.tools["read"], ToolRestriction::Absent);
        assert_eq!(support.max_turns, Some(TurnLimiter::Daemon));
        assert_eq!(support.image_types.len(), IMAGE_TYPES.len());
    }
}
