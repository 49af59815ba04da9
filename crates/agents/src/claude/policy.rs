//! A session's policy as Claude Code flags and private files: the system prompt in a file
//! (`--append-system-prompt-file` / `--system-prompt-file`), removed tools as deny rules
//! (`--disallowedTools`), `--max-turns`, and the session's MCP servers in a config file
//! (`--mcp-config` + `--strict-mcp-config`) whose secret values are `${VAR}` references to
//! the child's environment. Every process of the session (a respawn, a restore after a
//! daemon restart) gets the same flags: the system prompt is passed again although the
//! CLI's snapshot (`--system-prompt-snapshot on`, its default) already reuses the one it
//! recorded on the conversation's first request.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sandbox_universal::{
    McpServer, PolicySupport, SessionPolicy, SystemPromptMode, ToolName, ToolRestriction,
    TurnLimiter,
};
use serde_json::{Value, json};

use crate::process::add_session_env;

/// The file holding the session's system prompt (in its state dir).
pub const SYSTEM_PROMPT_FILE: &str = "claude-system-prompt.md";

/// The file holding the session's MCP servers (in its state dir).
pub const MCP_CONFIG_FILE: &str = "claude-mcp.json";

/// What Claude honours of a session policy: both prompt modes, built-in tools and MCP
/// tools removed from the model's tool list, its own turn limit, stdio and HTTP MCP
/// servers, the four image types of the Messages API, and extra environment variables.
/// The pinned CLI has no Glob or Grep tool (its Bash searches).
pub fn support() -> PolicySupport {
    PolicySupport {
        system_prompt_modes: vec![SystemPromptMode::Append, SystemPromptMode::Replace],
        tools: ToolName::BUILT_IN
            .iter()
            .map(|tool| {
                let restriction = match tool {
                    ToolName::Glob | ToolName::Grep => ToolRestriction::Absent,
                    _ => ToolRestriction::Removed,
                };
                (tool.key().to_string(), restriction)
            })
            .chain([("mcp".to_string(), ToolRestriction::Removed)])
            .collect(),
        max_turns: Some(TurnLimiter::Agent),
        mcp_transports: vec![
            sandbox_universal::McpTransport::Stdio,
            sandbox_universal::McpTransport::Http,
        ],
        image_types: sandbox_universal::IMAGE_TYPES
            .iter()
            .map(|t| t.to_string())
            .collect(),
        env: true,
        host_tools: true,
        ask_user: false,
    }
}

/// Claude's names of a built-in tool: the pinned CLI's (`Bash` with `Monitor`, which runs a
/// command in the background and streams its output; `Edit` with `NotebookEdit`), and the
/// names other versions a session may pin use (`MultiEdit`, `BashOutput`, `KillShell`,
/// `Glob`, `Grep`), as deny rules for absent tools change nothing.
pub fn claude_names(tool: &ToolName) -> &'static [&'static str] {
    match tool {
        ToolName::Read => &["Read"],
        ToolName::Write => &["Write"],
        ToolName::Edit => &["Edit", "MultiEdit", "NotebookEdit"],
        ToolName::Shell => &["Bash", "Monitor", "BashOutput", "KillShell"],
        ToolName::Glob => &["Glob"],
        ToolName::Grep => &["Grep"],
        ToolName::WebFetch => &["WebFetch"],
        ToolName::WebSearch => &["WebSearch"],
        ToolName::Mcp { .. } => &[],
    }
}

/// The deny rules (`--disallowedTools`) of a policy: Claude's names of every removed
/// built-in tool, `mcp__<server>__<tool>` for a removed MCP tool, and `mcp__<server>` (every
/// tool of the server) for a server the policy takes away whole.
pub fn disallowed(policy: &SessionPolicy) -> Vec<String> {
    let tools = &policy.tools;
    let mut rules: Vec<String> = tools
        .removed_built_ins()
        .iter()
        .flat_map(|t| claude_names(t).iter().map(|n| n.to_string()))
        .collect();
    for server in policy.mcp_servers.keys() {
        let every = ToolName::Mcp {
            server: server.clone(),
            tool: None,
        };
        let named = |list: &[String]| -> Vec<String> {
            list.iter()
                .filter_map(|n| match n.parse::<ToolName>() {
                    Ok(ToolName::Mcp {
                        server: s,
                        tool: Some(t),
                    }) if &s == server => Some(t),
                    _ => None,
                })
                .collect()
        };
        let denied_whole = tools
            .deny
            .iter()
            .any(|n| n.parse().ok() == Some(every.clone()));
        let allowed_any = match &tools.allow {
            None => true,
            Some(allow) => {
                allow.iter().any(|n| n.parse().ok() == Some(every.clone()))
                    || !named(allow).is_empty()
            }
        };
        if denied_whole || !allowed_any {
            rules.push(format!("mcp__{server}"));
            continue;
        }
        rules.extend(
            named(&tools.deny)
                .iter()
                .map(|t| crate::mcp::tool_name(server, t)),
        );
    }
    rules
}

/// The tools of `server` an `allow` list names one by one when it does not allow the whole
/// server (`None`: no such restriction). Claude cannot list the server's other tools up
/// front: they ask before each call (an `ask` rule) and the daemon refuses them.
pub fn partly_allowed(policy: &SessionPolicy, server: &str) -> Option<Vec<String>> {
    let allow = policy.tools.allow.as_ref()?;
    let mut tools = Vec::new();
    for name in allow {
        match name.parse::<ToolName>() {
            Ok(ToolName::Mcp { server: s, tool }) if s == server => match tool {
                None => return None,
                Some(tool) => tools.push(tool),
            },
            _ => {}
        }
    }
    (!tools.is_empty()).then_some(tools)
}

/// The variable that carries the `value`-th secret (header or env value) of the
/// `server`-th MCP server to Claude, referenced as `${VAR}` in the MCP config.
fn secret_var(server: usize, value: usize) -> String {
    format!("SANDBOX_MCP_{server}_{value}")
}

/// The MCP config file's content and the variables its `${VAR}` references need: no
/// secret value is in the file, Claude expands header and env values from its own
/// environment.
pub fn mcp_config(policy: &SessionPolicy) -> (Value, BTreeMap<String, String>) {
    let mut env = BTreeMap::new();
    let mut servers = serde_json::Map::new();
    for (i, (name, server)) in policy.mcp_servers.iter().enumerate() {
        let mut references = |values: &BTreeMap<String, String>| -> Value {
            values
                .iter()
                .enumerate()
                .map(|(j, (key, value))| {
                    let var = secret_var(i, j);
                    env.insert(var.clone(), value.clone());
                    (key.clone(), json!(format!("${{{var}}}")))
                })
                .collect::<serde_json::Map<_, _>>()
                .into()
        };
        let config = match server {
            McpServer::Stdio { command, args, env } => json!({
                "type": "stdio", "command": command, "args": args, "env": references(env),
            }),
            McpServer::Http { url, headers } => json!({
                "type": "http", "url": url, "headers": references(headers),
            }),
        };
        servers.insert(name.clone(), config);
    }
    (json!({ "mcpServers": servers }), env)
}

/// The flags, environment and files of a session's policy.
#[derive(Debug, Clone, Default)]
pub struct PolicyLaunch {
    /// Flags for every process of the session.
    pub args: Vec<String>,
    /// Variables for every process: the session's `env` and the MCP secrets.
    pub env: BTreeMap<String, String>,
    /// Files to write (0600) before the first process starts.
    pub files: Vec<(PathBuf, String)>,
}

impl PolicyLaunch {
    /// The launch of `policy` for a session whose private files are in `state_dir`.
    pub fn new(policy: &SessionPolicy, state_dir: &Path) -> Self {
        let mut launch = Self::default();
        if let Some(prompt) = &policy.system_prompt {
            let path = state_dir.join(SYSTEM_PROMPT_FILE);
            let flag = match policy.system_prompt_mode {
                SystemPromptMode::Append => "--append-system-prompt-file",
                SystemPromptMode::Replace => "--system-prompt-file",
            };
            launch.args.push(flag.into());
            launch.args.push(path.display().to_string());
            launch.files.push((path, prompt.clone()));
        }
        let denied = disallowed(policy);
        if !denied.is_empty() {
            launch.args.push("--disallowedTools".into());
            launch.args.push(denied.join(","));
        }
        let ask: Vec<String> = policy
            .mcp_servers
            .keys()
            .filter(|server| partly_allowed(policy, server).is_some())
            .map(|server| format!("mcp__{server}"))
            .collect();
        if !ask.is_empty() {
            launch.args.push("--settings".into());
            launch
                .args
                .push(json!({"permissions": {"ask": ask}}).to_string());
        }
        if let Some(max) = policy.max_turns {
            launch.args.push("--max-turns".into());
            launch.args.push(max.to_string());
        }
        if !policy.mcp_servers.is_empty() {
            let path = state_dir.join(MCP_CONFIG_FILE);
            let (config, secrets) = mcp_config(policy);
            launch.args.push("--mcp-config".into());
            launch.args.push(path.display().to_string());
            launch.args.push("--strict-mcp-config".into());
            launch.files.push((path, config.to_string()));
            launch.env.extend(secrets);
        }
        add_session_env(&mut launch.env, &policy.env);
        launch
    }
}

/// Writes `files` (path, content), readable by this user alone.
pub fn write_files(files: &[(PathBuf, String)]) -> std::io::Result<()> {
    for (path, text) in files {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(text.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(value: Value) -> SessionPolicy {
        serde_json::from_value(value).unwrap()
    }

    fn servers() -> Value {
        json!({
            "st": {"type": "stdio", "command": "python3", "args": ["s.py"],
                   "env": {"TOKEN": "stdio-secret"}},
            "my_ht": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                      "headers": {"Authorization": "Bearer http-secret"}},
        })
    }

    #[test]
    fn no_policy_no_flags() {
        let launch = PolicyLaunch::new(&SessionPolicy::default(), Path::new("/s"));
        assert!(launch.args.is_empty() && launch.env.is_empty() && launch.files.is_empty());
    }

    #[test]
    fn the_system_prompt_goes_in_a_file_by_mode() {
        let append = PolicyLaunch::new(
            &policy(json!({"systemPrompt": "Be brief."})),
            Path::new("/s"),
        );
        assert_eq!(
            append.args,
            ["--append-system-prompt-file", "/s/claude-system-prompt.md"]
        );
        assert_eq!(
            append.files,
            [(
                PathBuf::from("/s/claude-system-prompt.md"),
                "Be brief.".into()
            )]
        );
        let replace = PolicyLaunch::new(
            &policy(json!({"systemPrompt": "X", "systemPromptMode": "replace"})),
            Path::new("/s"),
        );
        assert_eq!(replace.args[0], "--system-prompt-file");
    }

    #[test]
    fn removed_tools_become_deny_rules() {
        let deny = policy(
            json!({"tools": {"deny": ["shell", "edit", "mcp:st/rm", "mcp:my_ht/*"]},
                                 "mcpServers": servers()}),
        );
        assert_eq!(
            disallowed(&deny),
            [
                "Edit",
                "MultiEdit",
                "NotebookEdit",
                "Bash",
                "Monitor",
                "BashOutput",
                "KillShell",
                "mcp__my_ht",
                "mcp__st__rm"
            ]
        );
        let allow = policy(json!({"tools": {"allow": ["read", "grep", "mcp:st/echo"]},
                                  "mcpServers": servers()}));
        let rules = disallowed(&allow);
        for removed in [
            "Write",
            "Edit",
            "Bash",
            "Glob",
            "WebFetch",
            "WebSearch",
            "mcp__my_ht",
        ] {
            assert!(rules.contains(&removed.to_string()), "{removed}: {rules:?}");
        }
        assert!(
            !rules
                .iter()
                .any(|r| r == "Read" || r == "Grep" || r.starts_with("mcp__st"))
        );
        assert_eq!(partly_allowed(&allow, "st"), Some(vec!["echo".to_string()]));
        assert_eq!(partly_allowed(&allow, "my_ht"), None);
        let launch = PolicyLaunch::new(&allow, Path::new("/s"));
        let at = launch.args.iter().position(|a| a == "--settings").unwrap();
        assert_eq!(
            launch.args[at + 1],
            r#"{"permissions":{"ask":["mcp__st"]}}"#
        );
        let whole = policy(json!({"tools": {"allow": ["mcp:st/*"]}, "mcpServers": servers()}));
        assert_eq!(partly_allowed(&whole, "st"), None);
        assert!(
            !PolicyLaunch::new(&whole, Path::new("/s"))
                .args
                .contains(&"--settings".into())
        );
    }

    #[test]
    fn mcp_secrets_reach_the_environment_only() {
        let p = policy(json!({"mcpServers": servers(), "maxTurns": 3,
                              "env": {"FOO": "session-secret", "HOME": "/x"}}));
        let launch = PolicyLaunch::new(&p, Path::new("/s"));
        let joined = launch.args.join(" ");
        assert!(
            joined.contains("--max-turns 3")
                && joined.ends_with("--mcp-config /s/claude-mcp.json --strict-mcp-config"),
            "{joined}"
        );
        let (path, text) = &launch.files[0];
        assert_eq!(path, Path::new("/s/claude-mcp.json"));
        for secret in ["stdio-secret", "http-secret", "session-secret"] {
            assert!(!joined.contains(secret) && !text.contains(secret));
        }
        let config: Value = serde_json::from_str(text).unwrap();
        let header = config["mcpServers"]["my_ht"]["headers"]["Authorization"]
            .as_str()
            .unwrap();
        let var = header
            .strip_prefix("${")
            .unwrap()
            .strip_suffix('}')
            .unwrap();
        assert_eq!(launch.env[var], "Bearer http-secret");
        let env_ref = config["mcpServers"]["st"]["env"]["TOKEN"].as_str().unwrap();
        let var = env_ref
            .strip_prefix("${")
            .unwrap()
            .strip_suffix('}')
            .unwrap();
        assert_eq!(launch.env[var], "stdio-secret");
        assert_eq!(config["mcpServers"]["st"]["args"], json!(["s.py"]));
        assert_eq!(launch.env["FOO"], "session-secret");
        assert!(!launch.env.contains_key("HOME"), "a protected variable");
    }

    #[test]
    fn files_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let launch = PolicyLaunch::new(&policy(json!({"systemPrompt": "P"})), dir.path());
        write_files(&launch.files).unwrap();
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(dir.path().join(SYSTEM_PROMPT_FILE)).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
    }
}
