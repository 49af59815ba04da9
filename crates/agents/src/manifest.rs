//! The manifest: every fact about an agent that is not code, in one table. The registry,
//! the drivers, the test kit and `scripts/install-test-agents.sh` (through the generated
//! `scripts/test-agents.tsv`) read it, so bumping an agent's version is one line here.

use sandbox_universal::AgentId;

pub use crate::platform::{Arch, Os, Platform, PlatformNames};
use crate::release::{
    Archive, Checksums, InstallSpec, LatestVersion, NpmBinaries, ReleaseFile, ReleaseHost,
    ReleaseSource,
};

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
    /// How it is installed (`None`: built in).
    pub install: Option<InstallSpec>,
}

impl AgentSpec {
    /// Whether the agent is part of the daemon itself (nothing to install or find).
    pub fn built_in(&self) -> bool {
        self.install.is_none()
    }

    /// The pinned version, when the agent has a package.
    pub fn pinned_version(&self) -> Option<&'static str> {
        self.npm.map(|p| p.version)
    }

    /// Where its executable is inside an install directory
    /// (`<data>/agents/<agent>/<version>/`).
    pub fn installed_executable(&self) -> Option<String> {
        match self.install? {
            InstallSpec::Native { release, .. } => Some(release.files[0].install_as.to_string()),
            InstallSpec::Node { script } => {
                Some(format!("node_modules/{}/{script}", self.npm?.name))
            }
        }
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
        install: Some(InstallSpec::Native {
            release: ReleaseSource {
                host: ReleaseHost::ClaudeReleases,
                latest: LatestVersion::Text {
                    host: ReleaseHost::ClaudeReleases,
                    path: "/latest",
                },
                tag: "{version}",
                platforms: CLAUDE_PLATFORMS,
                linux_archive: Archive::Raw,
                macos_archive: Archive::Raw,
                files: &[ReleaseFile {
                    path: "/{version}/{platform}/claude",
                    member: "claude",
                    install_as: "claude",
                }],
                checksums: Checksums::PlatformManifest {
                    path: "/{version}/manifest.json",
                },
            },
            npm: NpmBinaries {
                package: "@anthropic-ai/claude-code-{platform}",
                version: "{version}",
                platforms: CLAUDE_PLATFORMS,
                files: &[("claude", "claude")],
            },
        }),
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
        // Where Codex refreshes a ChatGPT login (its own variable; e.g. a proxy).
        endpoint_vars: &["OPENAI_BASE_URL", "CODEX_REFRESH_TOKEN_URL_OVERRIDE"],
        install: Some(InstallSpec::Native {
            release: ReleaseSource {
                host: ReleaseHost::Github,
                latest: LatestVersion::GithubRelease {
                    repo: "openai/codex",
                },
                tag: "rust-v{version}",
                platforms: PlatformNames {
                    linux_x64: Some("x86_64-unknown-linux-musl"),
                    linux_x64_musl: Some("x86_64-unknown-linux-musl"),
                    linux_arm64: Some("aarch64-unknown-linux-musl"),
                    linux_arm64_musl: Some("aarch64-unknown-linux-musl"),
                    darwin_x64: Some("x86_64-apple-darwin"),
                    darwin_arm64: Some("aarch64-apple-darwin"),
                },
                linux_archive: Archive::TarGz,
                macos_archive: Archive::TarGz,
                // Code mode (the default model's tools) runs in a host process Codex
                // starts from next to its own executable.
                files: &[
                    ReleaseFile {
                        path: "/openai/codex/releases/download/{tag}/codex-{platform}.{ext}",
                        member: "codex-{platform}",
                        install_as: "codex",
                    },
                    ReleaseFile {
                        path: "/openai/codex/releases/download/{tag}/codex-code-mode-host-{platform}.{ext}",
                        member: "codex-code-mode-host-{platform}",
                        install_as: "codex-code-mode-host",
                    },
                ],
                checksums: Checksums::GithubAssets {
                    repo: "openai/codex",
                },
            },
            npm: NpmBinaries {
                package: "@openai/codex",
                version: "{version}-{platform}",
                platforms: NPM_PLATFORMS_STATIC_LINUX,
                files: &[
                    ("vendor/{triple}/bin/codex", "codex"),
                    (
                        "vendor/{triple}/bin/codex-code-mode-host",
                        "codex-code-mode-host",
                    ),
                ],
            },
        }),
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
        install: Some(InstallSpec::Native {
            release: ReleaseSource {
                host: ReleaseHost::Github,
                latest: LatestVersion::GithubRelease {
                    repo: "anomalyco/opencode",
                },
                tag: "v{version}",
                platforms: OPENCODE_PLATFORMS,
                linux_archive: Archive::TarGz,
                macos_archive: Archive::Zip,
                files: &[ReleaseFile {
                    path: "/anomalyco/opencode/releases/download/{tag}/opencode-{platform}.{ext}",
                    member: "opencode",
                    install_as: "opencode",
                }],
                checksums: Checksums::GithubAssets {
                    repo: "anomalyco/opencode",
                },
            },
            npm: NpmBinaries {
                package: "opencode-{platform}",
                version: "{version}",
                platforms: OPENCODE_PLATFORMS,
                files: &[("bin/opencode", "opencode")],
            },
        }),
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
        install: Some(InstallSpec::Native {
            release: ReleaseSource {
                host: ReleaseHost::AmpReleases,
                latest: LatestVersion::Text {
                    host: ReleaseHost::AmpReleases,
                    path: "/cli-version.txt",
                },
                tag: "{version}",
                platforms: AMP_PLATFORMS,
                linux_archive: Archive::Raw,
                macos_archive: Archive::Raw,
                files: &[ReleaseFile {
                    path: "/{version}/amp-{platform}",
                    member: "amp",
                    install_as: "amp",
                }],
                checksums: Checksums::None,
            },
            npm: NpmBinaries {
                package: "@ampcode/cli-{platform}",
                version: "{version}",
                platforms: AMP_PLATFORMS,
                files: &[("amp", "amp")],
            },
        }),
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
        install: Some(InstallSpec::Node {
            script: "dist/cli.js",
        }),
    },
    AgentSpec {
        id: AgentId::Mock,
        display_name: "Mock agent",
        binary_names: &[],
        npm: None,
        credential_vars: &[],
        endpoint_vars: &[],
        install: None,
    },
];

/// Claude Code's platform names (its release paths and npm packages agree).
const CLAUDE_PLATFORMS: PlatformNames = PlatformNames {
    linux_x64: Some("linux-x64"),
    linux_x64_musl: Some("linux-x64-musl"),
    linux_arm64: Some("linux-arm64"),
    linux_arm64_musl: Some("linux-arm64-musl"),
    darwin_x64: Some("darwin-x64"),
    darwin_arm64: Some("darwin-arm64"),
};

/// OpenCode's platform names (its release assets and npm packages agree).
const OPENCODE_PLATFORMS: PlatformNames = CLAUDE_PLATFORMS;

/// Amp's platform names: no musl build.
const AMP_PLATFORMS: PlatformNames = PlatformNames {
    linux_x64_musl: None,
    linux_arm64_musl: None,
    ..CLAUDE_PLATFORMS
};

/// npm's `<os>-<cpu>` names, for packages with one static Linux build (musl systems too).
const NPM_PLATFORMS_STATIC_LINUX: PlatformNames = PlatformNames {
    linux_x64_musl: Some("linux-x64"),
    linux_arm64_musl: Some("linux-arm64"),
    ..CLAUDE_PLATFORMS
};

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
        let x64 = Platform::linux(Arch::X64, false);
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
