//! The manifest: every fact about an agent that is not code, in one table. The registry,
//! the drivers, the test kit and `scripts/install-test-agents.sh` (through the generated
//! `scripts/test-agents.tsv`) read it, so bumping an agent's version is one line here.

use sandbox_universal::AgentId;

/// A machine an agent's executable is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    /// `x64` or `arm64` (npm's names).
    pub arch: &'static str,
    /// The Rust/LLVM target triple of the musl build (e.g. `x86_64-unknown-linux-musl`).
    pub musl_triple: &'static str,
}

impl Platform {
    /// The machine this build runs on.
    pub fn current() -> Self {
        if cfg!(target_arch = "aarch64") {
            Self {
                arch: "arm64",
                musl_triple: "aarch64-unknown-linux-musl",
            }
        } else {
            Self {
                arch: "x64",
                musl_triple: "x86_64-unknown-linux-musl",
            }
        }
    }

    /// `pattern` with `{arch}` and `{triple}` filled in.
    pub fn expand(&self, pattern: &str) -> String {
        pattern
            .replace("{arch}", self.arch)
            .replace("{triple}", self.musl_triple)
    }
}

/// Where an agent's real executable sits inside `node_modules` once its npm package is
/// installed (the package's own launcher is skipped: it would spawn Node for nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NpmExecutable {
    /// Path under `node_modules`, with `{arch}` / `{triple}` placeholders.
    pub path: &'static str,
    /// Taken only when the file is a native (ELF) executable: a placeholder the package's
    /// install script replaces may stand there instead.
    pub native_only: bool,
}

/// An agent's npm package, pinned: how the test kit installs the real CLI (and, for a Node
/// CLI such as Pi, how it is installed at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NpmPackage {
    /// The package name.
    pub name: &'static str,
    /// The pinned version every test runs against.
    pub version: &'static str,
    /// Candidates for the real executable, first match wins.
    pub executables: &'static [NpmExecutable],
}

/// Everything the daemon and its tests know about one agent besides its driver code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentSpec {
    /// The agent.
    pub id: AgentId,
    /// Its name for people.
    pub display_name: &'static str,
    /// The names its binary is installed under (looked up on `PATH` and in the install dir).
    pub binary_names: &'static [&'static str],
    /// Its npm package, pinned (`None` for the built-in mock).
    pub npm: Option<NpmPackage>,
    /// The environment variables holding its credential, in order of preference.
    pub credential_vars: &'static [&'static str],
    /// The environment variables naming its provider endpoint.
    pub endpoint_vars: &'static [&'static str],
}

impl AgentSpec {
    /// The pinned version, when the agent has a package.
    pub fn pinned_version(&self) -> Option<&'static str> {
        self.npm.map(|p| p.version)
    }

    /// The variable through which the daemon is told this agent's binary, e.g.
    /// `SANDBOX_DAEMON_CLAUDE_PATH`.
    pub fn path_var(&self) -> String {
        format!(
            "SANDBOX_DAEMON_{}_PATH",
            self.id.as_str().to_ascii_uppercase()
        )
    }
}

/// Every agent, in [`AgentId::ALL`] order.
pub const MANIFEST: [AgentSpec; 6] = [
    AgentSpec {
        id: AgentId::Claude,
        display_name: "Claude Code",
        binary_names: &["claude"],
        npm: Some(NpmPackage {
            name: "@anthropic-ai/claude-code",
            version: "2.1.330",
            executables: &[
                // Linked by the package's install script; a placeholder until then.
                NpmExecutable {
                    path: "@anthropic-ai/claude-code/bin/claude.exe",
                    native_only: true,
                },
                NpmExecutable {
                    path: "@anthropic-ai/claude-code-linux-{arch}/claude",
                    native_only: false,
                },
            ],
        }),
        credential_vars: &["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
        endpoint_vars: &["ANTHROPIC_BASE_URL"],
    },
    AgentSpec {
        id: AgentId::Codex,
        display_name: "Codex",
        binary_names: &["codex"],
        npm: Some(NpmPackage {
            name: "@openai/codex",
            version: "0.169.0",
            executables: &[NpmExecutable {
                path: "@openai/codex-linux-{arch}/vendor/{triple}/bin/codex",
                native_only: false,
            }],
        }),
        credential_vars: &["OPENAI_API_KEY"],
        endpoint_vars: &["OPENAI_BASE_URL"],
    },
    AgentSpec {
        id: AgentId::Opencode,
        display_name: "OpenCode",
        binary_names: &["opencode"],
        npm: Some(NpmPackage {
            name: "opencode-ai",
            version: "1.18.33",
            executables: &[NpmExecutable {
                path: "opencode-linux-{arch}/bin/opencode",
                native_only: false,
            }],
        }),
        credential_vars: &["ANTHROPIC_API_KEY", "OPENAI_API_KEY"],
        endpoint_vars: &["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"],
    },
    AgentSpec {
        id: AgentId::Amp,
        display_name: "Amp",
        binary_names: &["amp"],
        npm: Some(NpmPackage {
            name: "@ampcode/cli",
            version: "0.0.1790142911-g7618fb",
            executables: &[NpmExecutable {
                path: "@ampcode/cli-linux-{arch}/amp",
                native_only: false,
            }],
        }),
        credential_vars: &["AMP_API_KEY"],
        endpoint_vars: &["AMP_URL"],
    },
    AgentSpec {
        id: AgentId::Pi,
        display_name: "Pi",
        binary_names: &["pi"],
        npm: Some(NpmPackage {
            name: "@mariozechner/pi-coding-agent",
            version: "0.73.1",
            // A Node script with a shebang.
            executables: &[NpmExecutable {
                path: "@mariozechner/pi-coding-agent/dist/cli.js",
                native_only: false,
            }],
        }),
        credential_vars: &["ANTHROPIC_API_KEY", "OPENAI_API_KEY"],
        endpoint_vars: &["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"],
    },
    AgentSpec {
        id: AgentId::Mock,
        display_name: "Mock agent",
        binary_names: &[],
        npm: None,
        credential_vars: &[],
        endpoint_vars: &[],
    },
];

/// The manifest entry of `agent`.
pub fn spec(agent: AgentId) -> &'static AgentSpec {
    MANIFEST
        .iter()
        .find(|s| s.id == agent)
        .expect("every agent is in the manifest")
}

/// Whether `path` is a native (ELF) executable.
fn is_elf(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"\x7fELF"
}

/// Where `agent`'s real executable is in `node_modules` on `platform`: the first candidate
/// that qualifies, else the last one (so a missing install names a path).
pub fn npm_executable(
    agent: AgentId,
    node_modules: &std::path::Path,
    platform: Platform,
) -> Option<std::path::PathBuf> {
    let package = spec(agent).npm?;
    let candidates: Vec<_> = package
        .executables
        .iter()
        .map(|e| (node_modules.join(platform.expand(e.path)), e.native_only))
        .collect();
    candidates
        .iter()
        .find(|(path, native_only)| {
            if *native_only {
                is_elf(path)
            } else {
                path.is_file()
            }
        })
        .or(candidates.last())
        .map(|(path, _)| path.clone())
}

/// The manifest as `scripts/install-test-agents.sh` reads it (`scripts/test-agents.tsv`):
/// one line per agent with a package — id, `package@version`, then the executable
/// candidates (a `!` prefix: native only).
pub fn test_agents_tsv() -> String {
    let mut out = String::from(
        "# Generated from crates/agents/src/manifest.rs by `cargo run -p sandbox-testkit --bin testkit -- pins --write`; do not edit.\n",
    );
    for spec in &MANIFEST {
        let Some(npm) = spec.npm else { continue };
        let candidates: Vec<String> = npm
            .executables
            .iter()
            .map(|e| format!("{}{}", if e.native_only { "!" } else { "" }, e.path))
            .collect();
        out.push_str(&format!(
            "{}\t{}@{}\t{}\n",
            spec.id.as_str(),
            npm.name,
            npm.version,
            candidates.join("\t")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_has_one_entry_in_order() {
        let ids: Vec<AgentId> = MANIFEST.iter().map(|s| s.id).collect();
        assert_eq!(ids, AgentId::ALL);
    }

    #[test]
    fn executables_fall_back_to_the_platform_binary() {
        let dir = tempfile::tempdir().unwrap();
        let x64 = Platform {
            arch: "x64",
            musl_triple: "x86_64-unknown-linux-musl",
        };
        // Claude's launcher is still the placeholder: the platform package's binary.
        let launcher = dir.path().join("@anthropic-ai/claude-code/bin/claude.exe");
        std::fs::create_dir_all(launcher.parent().unwrap()).unwrap();
        std::fs::write(&launcher, "placeholder").unwrap();
        assert_eq!(
            npm_executable(AgentId::Claude, dir.path(), x64).unwrap(),
            dir.path()
                .join("@anthropic-ai/claude-code-linux-x64/claude")
        );
        std::fs::write(&launcher, b"\x7fELF...").unwrap();
        assert_eq!(
            npm_executable(AgentId::Claude, dir.path(), x64).unwrap(),
            launcher
        );
        assert_eq!(
            npm_executable(AgentId::Codex, dir.path(), x64).unwrap(),
            dir.path()
                .join("@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
        );
        assert!(npm_executable(AgentId::Mock, dir.path(), x64).is_none());
    }
}
