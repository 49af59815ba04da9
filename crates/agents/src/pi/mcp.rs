//! Session MCP servers on Pi, which has no MCP client of its own: the daemon's bridge
//! extension (`mcp.js`, loaded with `--extension`) is one, over Streamable HTTP. It reads
//! the session's servers from a private file whose path is in [`CONFIG_VAR`] (header
//! values are secrets: in that 0600 file only, never on argv) and registers each tool the
//! session's `tools` leave the model as `mcp__<server>__<tool>` ([`crate::mcp`]); a tool
//! the policy takes away is never registered. Stdio servers are refused before this (Pi's
//! `PolicySupport` takes HTTP only).
//!
//! Pi's `--tools` allow-list would drop the bridge's tools too (its names are known only
//! once the bridge has listed them), so a session with bridged servers gets no `--tools`:
//! the bridge is handed the built-in tools to keep instead (`builtinTools`) and makes them
//! and its own the only active tools when Pi's session starts.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use sandbox_universal::{McpServer, SessionPolicy, ToolName};
use serde_json::{Value, json};

/// The variable that names the bridge's config file in Pi's environment.
pub const CONFIG_VAR: &str = "SANDBOX_PI_MCP_CONFIG";

/// The bridge extension.
pub const EXTENSION: &str = include_str!("mcp.js");

/// Which of a server's tools the session's `tools` leave the model.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Offered {
    /// None: the server is left out.
    Nothing,
    /// Those the `allow` list names (`None`: every one), less the denied.
    Tools {
        allow: Option<Vec<String>>,
        deny: Vec<String>,
    },
}

/// What `policy` leaves the model of server `server`'s tools.
fn offered(policy: &SessionPolicy, server: &str) -> Offered {
    let rules = |names: &[String]| -> Vec<Option<String>> {
        names
            .iter()
            .filter_map(|name| match name.parse::<ToolName>() {
                Ok(ToolName::Mcp { server: s, tool }) if s == server => Some(tool),
                _ => None,
            })
            .collect()
    };
    let deny = rules(&policy.tools.deny);
    if deny.contains(&None) {
        return Offered::Nothing;
    }
    let allow = match &policy.tools.allow {
        None => None,
        Some(list) => {
            let named = rules(list);
            if named.contains(&None) {
                None
            } else if named.is_empty() {
                return Offered::Nothing;
            } else {
                Some(named.into_iter().flatten().collect())
            }
        }
    };
    Offered::Tools {
        allow,
        deny: deny.into_iter().flatten().collect(),
    }
}

/// The bridge's config for `policy`: its HTTP servers with their headers and which of
/// their tools to offer, and `builtin_tools` when the session restricts Pi's built-in
/// tools (Pi's `--tools` list). `None` when no server has a tool to offer: then the bridge
/// is not loaded.
pub fn config(policy: &SessionPolicy, builtin_tools: Option<&[&str]>) -> Option<Value> {
    let mut servers = serde_json::Map::new();
    for (name, server) in &policy.mcp_servers {
        let McpServer::Http { url, headers } = server else {
            continue;
        };
        let Offered::Tools { allow, deny } = offered(policy, name) else {
            continue;
        };
        let mut entry = json!({"url": url, "headers": headers});
        if let Some(allow) = allow {
            entry["allow"] = json!(allow);
        }
        if !deny.is_empty() {
            entry["deny"] = json!(deny);
        }
        servers.insert(name.clone(), entry);
    }
    if servers.is_empty() {
        return None;
    }
    let mut config = json!({ "servers": servers });
    if let Some(tools) = builtin_tools {
        config["builtinTools"] = json!(tools);
    }
    Some(config)
}

/// Whether a session with `policy` loads the bridge.
pub fn bridged(policy: &SessionPolicy) -> bool {
    config(policy, None).is_some()
}

/// Writes `text` to `path`, readable by the daemon's user alone.
pub fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(text.as_bytes())
}

/// The variable Pi's process gets when the bridge is loaded: [`CONFIG_VAR`] naming the
/// config file (which holds the secrets).
pub fn env(policy: &SessionPolicy, config_file: &Path) -> BTreeMap<String, String> {
    match bridged(policy) {
        true => [(CONFIG_VAR.to_string(), config_file.display().to_string())].into(),
        false => BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(value: Value) -> SessionPolicy {
        serde_json::from_value(value).unwrap()
    }

    fn servers() -> Value {
        json!({
            "ht": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                   "headers": {"Authorization": "Bearer http-secret"}},
            "ht_2": {"type": "http", "url": "http://127.0.0.1:2/mcp"},
            "st": {"type": "stdio", "command": "python3"},
        })
    }

    #[test]
    fn http_servers_are_bridged_with_their_headers() {
        assert_eq!(config(&SessionPolicy::default(), None), None);
        let stdio_only = policy(json!({"mcpServers": {"st": {"type": "stdio", "command": "x"}}}));
        assert!(!bridged(&stdio_only));
        let p = policy(json!({"mcpServers": servers()}));
        let config = config(&p, None).unwrap();
        assert_eq!(
            config,
            json!({"servers": {
                "ht": {"url": "http://127.0.0.1:1/mcp",
                       "headers": {"Authorization": "Bearer http-secret"}},
                "ht_2": {"url": "http://127.0.0.1:2/mcp", "headers": {}},
            }})
        );
        assert_eq!(
            env(&p, Path::new("/s/c.json")),
            BTreeMap::from([(CONFIG_VAR.to_string(), "/s/c.json".to_string())])
        );
        assert!(env(&SessionPolicy::default(), Path::new("/s/c.json")).is_empty());
    }

    #[test]
    fn the_tools_policy_decides_which_tools_are_offered() {
        let with = |tools: Value| policy(json!({"mcpServers": servers(), "tools": tools}));
        let deny = with(json!({"deny": ["mcp:ht/delete_everything", "mcp:ht_2/*", "shell"]}));
        let config = config(&deny, Some(&["read", "edit", "write"])).unwrap();
        assert_eq!(
            config["servers"]["ht"]["deny"],
            json!(["delete_everything"])
        );
        assert!(config["servers"]["ht"].get("allow").is_none());
        assert!(config["servers"].get("ht_2").is_none(), "denied whole");
        assert_eq!(config["builtinTools"], json!(["read", "edit", "write"]));
        let allow = with(json!({"allow": ["read", "mcp:ht/echo", "mcp:ht_2/*"]}));
        let config = super::config(&allow, Some(&["read"])).unwrap();
        assert_eq!(config["servers"]["ht"]["allow"], json!(["echo"]));
        assert!(config["servers"]["ht_2"].get("allow").is_none());
        let built_ins_only = with(json!({"allow": ["read"]}));
        assert!(!bridged(&built_ins_only), "no server has a tool left");
    }

    /// `mcp_tests.mjs`: the bridge against a Streamable HTTP server of its own on
    /// 127.0.0.1 (event streams split across chunks, JSON batches, pages, a forgotten
    /// session, errors, images, an abort), when Node is on PATH.
    #[test]
    fn the_bridge_speaks_streamable_http() {
        let Some(node) = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("node"))
                .find(|node| node.is_file())
        }) else {
            eprintln!("no node on PATH: the bridge's own test is skipped");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let bridge = dir.path().join("bridge.mjs");
        let harness = dir.path().join("mcp_tests.mjs");
        std::fs::write(&bridge, EXTENSION).unwrap();
        std::fs::write(&harness, include_str!("mcp_tests.mjs")).unwrap();
        let mut child = std::process::Command::new(node)
            .arg(&harness)
            .arg(&bridge)
            .arg(dir.path())
            .env_remove(CONFIG_VAR)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("the bridge's test took over a minute");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.trim() == "ok",
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    #[test]
    fn the_config_file_is_private() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&path, "{}").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
    }
}
