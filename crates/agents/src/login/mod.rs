//! Logins people already have: each agent's login file (a subscription's OAuth tokens, or
//! a key the agent keeps itself), where it lives on a machine, what it holds, and how a
//! session's private home gets it ([`SeededLogin`]) and gives back what the agent
//! refreshed ([`merge`]).
//!
//! Only the login file travels: never the rest of the user's config, sessions or plugins.

mod describe;
mod seed;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use sandbox_universal::{AgentId, LoginEntry};
use serde_json::Value;

pub use describe::describe;
pub use seed::{LoginChange, SeededLogin};

/// A login's content: the agent's login file (JSON), or a token it takes from its
/// environment. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub enum Login {
    /// The login file as the agent wrote it.
    File(Value),
    /// A long-lived token (Claude's `CLAUDE_CODE_OAUTH_TOKEN`).
    Token(String),
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(_) => f.write_str("File(<redacted>)"),
            Self::Token(_) => f.write_str("Token(<redacted>)"),
        }
    }
}

/// Where an agent keeps its login, and what a session's home needs of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginSpec {
    /// The agent.
    pub agent: AgentId,
    /// The login file's name inside its directory.
    pub file_name: &'static str,
    /// Its directory relative to HOME when no variable says otherwise.
    pub home_dir: &'static str,
    /// A variable naming that directory instead, and the subdirectory of it that holds
    /// the file (`CODEX_HOME` holds `auth.json`; `XDG_DATA_HOME` holds `opencode/auth.json`).
    pub dir_var: Option<(&'static str, &'static str)>,
    /// A variable holding a token that stands for the login (Claude's OAuth token).
    pub token_var: Option<&'static str>,
}

/// The agents that keep a login of their own, and where.
pub const SPECS: &[LoginSpec] = &[
    LoginSpec {
        agent: AgentId::Claude,
        file_name: ".credentials.json",
        home_dir: ".claude",
        dir_var: Some(("CLAUDE_CONFIG_DIR", "")),
        token_var: Some("CLAUDE_CODE_OAUTH_TOKEN"),
    },
    LoginSpec {
        agent: AgentId::Codex,
        file_name: "auth.json",
        home_dir: ".codex",
        dir_var: Some(("CODEX_HOME", "")),
        token_var: None,
    },
    LoginSpec {
        agent: AgentId::Opencode,
        file_name: "auth.json",
        home_dir: ".local/share/opencode",
        dir_var: Some(("XDG_DATA_HOME", "opencode")),
        token_var: None,
    },
    LoginSpec {
        agent: AgentId::Amp,
        file_name: "secrets.json",
        home_dir: ".local/share/amp",
        dir_var: Some(("XDG_DATA_HOME", "amp")),
        token_var: None,
    },
    LoginSpec {
        agent: AgentId::Pi,
        file_name: "auth.json",
        home_dir: ".pi/agent",
        dir_var: Some(("PI_CODING_AGENT_DIR", "")),
        token_var: None,
    },
];

/// The login spec of `agent`, if it keeps a login (the mock does not).
pub fn spec(agent: AgentId) -> Option<&'static LoginSpec> {
    SPECS.iter().find(|s| s.agent == agent)
}

impl LoginSpec {
    /// Where the login file is on a machine whose environment is `var` and whose HOME is
    /// `home`: in the directory the variable names, else under HOME.
    pub fn path(&self, var: &dyn Fn(&str) -> Option<OsString>, home: &Path) -> PathBuf {
        if let Some((name, sub)) = self.dir_var
            && let Some(dir) = var(name).filter(|v| !v.is_empty())
        {
            return PathBuf::from(dir).join(sub).join(self.file_name);
        }
        home.join(self.home_dir).join(self.file_name)
    }

    /// Where a session's private home `home` keeps the file: the agent's default place.
    pub fn session_path(&self, home: &Path) -> PathBuf {
        home.join(self.home_dir).join(self.file_name)
    }
}

/// A login found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The agent.
    pub agent: AgentId,
    /// The file read, or the variable for a token.
    pub source: String,
    /// What it holds.
    pub login: Login,
    /// Its entries (names, kinds, expiry; no secret).
    pub entries: Vec<LoginEntry>,
}

/// What looking for `agent`'s login on this machine gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discovery {
    /// A usable login.
    Found(Found),
    /// Nothing where the agent keeps it (the path looked at).
    Missing(String),
    /// Something that is not a usable login (where, and why).
    Unusable(String, String),
}

/// Looks for `agent`'s login on the machine whose environment is `var` and whose HOME is
/// `home`: its file first (it can be refreshed), else its token variable.
pub fn discover(agent: AgentId, var: &dyn Fn(&str) -> Option<OsString>, home: &Path) -> Discovery {
    let Some(spec) = spec(agent) else {
        return Discovery::Missing(format!("{} keeps no login", agent.as_str()));
    };
    let path = spec.path(var, home);
    let shown = path.display().to_string();
    match std::fs::read(&path) {
        Ok(bytes) => {
            let login = match serde_json::from_slice::<Value>(&bytes) {
                Ok(value) => Login::File(value),
                Err(e) => return Discovery::Unusable(shown, format!("not JSON: {e}")),
            };
            return match describe(agent, &login) {
                Ok(entries) => Discovery::Found(Found {
                    agent,
                    source: shown,
                    login,
                    entries,
                }),
                Err(why) => Discovery::Unusable(shown, why),
            };
        }
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Discovery::Unusable(shown, e.to_string());
        }
        Err(_) => {}
    }
    if let Some(name) = spec.token_var
        && let Some(token) = var(name).and_then(|v| v.into_string().ok())
        && !token.is_empty()
    {
        let login = Login::Token(token);
        return match describe(agent, &login) {
            Ok(entries) => Discovery::Found(Found {
                agent,
                source: format!("${name}"),
                login,
                entries,
            }),
            Err(why) => Discovery::Unusable(format!("${name}"), why),
        };
    }
    Discovery::Missing(shown)
}

/// Gives back to the stored login `stored` what an agent changed in its copy: `base` is
/// what the session's home was given, `theirs` what the agent left there. Entries are the
/// file's top-level keys: one the agent changed (refreshed, added, removed) replaces the
/// stored one, the others stay as stored, so two sessions refreshing different entries
/// both keep theirs. When another session refreshed the same entry meanwhile, the one
/// whose access token lasts longer wins (else this, the later write).
pub fn merge(base: &Value, theirs: &Value, stored: &Value) -> Value {
    let (Some(base), Some(theirs), Some(stored_map)) =
        (base.as_object(), theirs.as_object(), stored.as_object())
    else {
        return theirs.clone();
    };
    let mut merged = stored_map.clone();
    let keys: std::collections::BTreeSet<&String> = base.keys().chain(theirs.keys()).collect();
    for key in keys {
        let (was, now) = (base.get(key), theirs.get(key));
        if was == now {
            continue;
        }
        let current = stored_map.get(key);
        let refreshed_elsewhere = current != was;
        match now {
            Some(now) => {
                let keep_stored = refreshed_elsewhere
                    && matches!((current.and_then(expiry), expiry(now)), (Some(a), Some(b)) if a > b);
                if !keep_stored {
                    merged.insert(key.clone(), now.clone());
                }
            }
            None => {
                merged.remove(key);
            }
        }
    }
    Value::Object(merged)
}

/// When an entry's access token expires (ms since the epoch), as Claude (`expiresAt`),
/// OpenCode and Pi (`expires`) write it.
fn expiry(entry: &Value) -> Option<i64> {
    ["expiresAt", "expires"]
        .iter()
        .find_map(|key| entry.get(key).and_then(Value::as_i64))
}

#[cfg(test)]
mod tests;
