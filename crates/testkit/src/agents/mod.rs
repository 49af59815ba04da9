//! Where the pinned real agent CLIs are installed, and how tests require them.
//!
//! `scripts/install-test-agents.sh` installs the pinned npm packages into the cache
//! directory (`$SANDBOX_TEST_AGENTS_DIR`, default `$HOME/.cache/sandbox-daemon/test-agents`)
//! and writes `<cache>/agents.env`. Packages, pins and where the executables are come from
//! the agents' manifest (`sandbox_agents::manifest`), which the script reads through the
//! generated `scripts/test-agents.tsv`; `SANDBOX_DAEMON_<AGENT>_PATH` overrides one agent's
//! path.

use std::path::{Path, PathBuf};

use sandbox_agents::manifest::{self, AgentSpec, Platform};
use sandbox_universal::AgentId;

use crate::loud;

/// Where the install script reads the manifest (generated; `testkit pins --write`).
pub const TEST_AGENTS_TSV: &str = "scripts/test-agents.tsv";

/// Environment variable naming the cache directory of the installed test agents.
pub const AGENTS_DIR_ENV: &str = "SANDBOX_TEST_AGENTS_DIR";
/// When `1`, a missing agent fails the test instead of skipping it (CI sets it).
pub const REQUIRE_AGENTS_ENV: &str = "SANDBOX_REQUIRE_AGENTS";
/// The command that installs the agents.
pub const INSTALL_HINT: &str = "run scripts/install-test-agents.sh";

/// An agent CLI the kit can locate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Agent {
    /// Claude Code (`@anthropic-ai/claude-code`).
    Claude,
    /// Codex (`@openai/codex`).
    Codex,
    /// OpenCode (`opencode-ai`).
    OpenCode,
    /// Pi coding agent (`@mariozechner/pi-coding-agent`).
    Pi,
    /// Amp (`@ampcode/cli`); cannot run offline.
    Amp,
}

impl Agent {
    /// Every agent, in a stable order.
    pub const ALL: [Agent; 5] = [
        Agent::Claude,
        Agent::Codex,
        Agent::OpenCode,
        Agent::Pi,
        Agent::Amp,
    ];

    /// Short lower-case id (`claude`, `codex`, `opencode`, `pi`, `amp`).
    pub fn id(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::OpenCode => "opencode",
            Agent::Pi => "pi",
            Agent::Amp => "amp",
        }
    }

    /// Parses [`Agent::id`].
    pub fn from_id(id: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.id() == id)
    }

    /// The daemon's id of this agent.
    pub fn agent_id(self) -> AgentId {
        match self {
            Agent::Claude => AgentId::Claude,
            Agent::Codex => AgentId::Codex,
            Agent::OpenCode => AgentId::Opencode,
            Agent::Pi => AgentId::Pi,
            Agent::Amp => AgentId::Amp,
        }
    }

    /// Its manifest entry.
    pub fn spec(self) -> &'static AgentSpec {
        manifest::spec(self.agent_id())
    }

    /// The npm package.
    pub fn package(self) -> &'static str {
        self.spec()
            .npm
            .expect("every test agent has a package")
            .name
    }

    /// The pinned version.
    pub fn version(self) -> &'static str {
        self.spec()
            .npm
            .expect("every test agent has a package")
            .version
    }

    /// The variable through which the daemon finds this agent's binary,
    /// e.g. `SANDBOX_DAEMON_CLAUDE_PATH`.
    pub fn path_env(self) -> String {
        format!("SANDBOX_DAEMON_{}_PATH", self.id().to_ascii_uppercase())
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// A pinned agent that is not installed.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{agent} {version} is not installed (looked for {path}): {INSTALL_HINT}", version = agent.version(), path = path.display())]
pub struct MissingAgent {
    /// The agent.
    pub agent: Agent,
    /// Where its executable was expected.
    pub path: PathBuf,
}

/// The cache directory: `$SANDBOX_TEST_AGENTS_DIR`, else `$HOME/.cache/sandbox-daemon/test-agents`.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os(AGENTS_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => {
            let home =
                std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
            home.join(".cache/sandbox-daemon/test-agents")
        }
    }
}

/// `node_modules` of the cache directory.
pub fn node_modules() -> PathBuf {
    cache_dir().join("npm/node_modules")
}

/// Where the real executable of `agent` lives inside `node_modules`, skipping the node
/// launchers (the manifest's candidates, first match wins).
pub fn expected_path(agent: Agent, node_modules: &Path) -> PathBuf {
    manifest::npm_executable(
        agent.agent_id(),
        node_modules,
        Platform::current().expect("a supported machine"),
    )
    .expect("every test agent has a package")
}

/// The installed executable of `agent`: `$SANDBOX_DAEMON_<AGENT>_PATH` when set, else
/// the path in the cache directory.
pub fn executable(agent: Agent) -> Result<PathBuf, MissingAgent> {
    let path = match std::env::var_os(agent.path_env()) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => expected_path(agent, &node_modules()),
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(MissingAgent { agent, path })
    }
}

/// The executable for a test, or `None` after a loud skip message. Panics instead of
/// skipping when `SANDBOX_REQUIRE_AGENTS=1`.
pub fn require(agent: Agent) -> Option<PathBuf> {
    match executable(agent) {
        Ok(path) => Some(path),
        Err(missing) if loud::env_flag(REQUIRE_AGENTS_ENV) => {
            panic!("{missing} ({REQUIRE_AGENTS_ENV}=1)")
        }
        Err(missing) => {
            loud::warn(
                &format!("SKIPPED: {agent} is not installed"),
                &missing.to_string(),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_env_names() {
        for agent in Agent::ALL {
            assert_eq!(Agent::from_id(agent.id()), Some(agent));
        }
        assert_eq!(Agent::OpenCode.path_env(), "SANDBOX_DAEMON_OPENCODE_PATH");
        assert_eq!(Agent::from_id("nope"), None);
    }

    #[test]
    fn claude_falls_back_to_the_platform_binary() {
        let dir = tempfile::tempdir().unwrap();
        let linked = dir.path().join("@anthropic-ai/claude-code/bin/claude.exe");
        std::fs::create_dir_all(linked.parent().unwrap()).unwrap();
        std::fs::write(&linked, "#!/bin/sh\necho stub\n").unwrap();
        let path = expected_path(Agent::Claude, dir.path());
        assert!(path.ends_with("claude"), "{}", path.display());
        std::fs::write(&linked, b"\x7fELF rest").unwrap();
        assert_eq!(expected_path(Agent::Claude, dir.path()), linked);
    }

    #[test]
    fn the_install_script_reads_the_manifest() {
        let committed = include_str!("../../../../scripts/test-agents.tsv");
        assert_eq!(
            committed,
            manifest::test_agents_tsv(),
            "{TEST_AGENTS_TSV} is stale: cargo run -p sandbox-testkit --bin testkit -- pins --write"
        );
        for agent in Agent::ALL {
            let pin = format!("{}@{}", agent.package(), agent.version());
            assert!(committed.contains(&pin), "{TEST_AGENTS_TSV} lacks {pin}");
        }
    }

    #[test]
    fn missing_agent_message_names_the_install_script() {
        let err = MissingAgent {
            agent: Agent::Pi,
            path: PathBuf::from("/nowhere"),
        };
        let text = err.to_string();
        assert!(
            text.contains("pi 0.73.1") && text.contains(INSTALL_HINT),
            "{text}"
        );
    }
}
