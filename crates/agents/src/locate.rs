//! Finding agent binaries: `SANDBOX_DAEMON_<AGENT>_PATH`, then the daemon's install dir,
//! then `PATH`.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use sandbox_universal::AgentId;

use crate::BinaryStatus;

/// Where to look for agent binaries. Built once by the daemon and shared by all drivers.
#[derive(Debug, Default)]
pub struct BinaryLocator {
    overrides: HashMap<AgentId, PathBuf>,
    install_dir: Option<PathBuf>,
    search_path: Option<OsString>,
    versions: Mutex<HashMap<PathBuf, (SystemTime, Option<String>)>>,
}

/// The environment variable that overrides an agent's binary, e.g.
/// `SANDBOX_DAEMON_CLAUDE_PATH`.
pub fn override_var(agent: AgentId) -> String {
    format!(
        "SANDBOX_DAEMON_{}_PATH",
        agent.as_str().to_ascii_uppercase()
    )
}

impl BinaryLocator {
    /// A locator with explicit overrides, install dir and search path.
    pub fn new(
        overrides: HashMap<AgentId, PathBuf>,
        install_dir: Option<PathBuf>,
        search_path: Option<OsString>,
    ) -> Self {
        Self {
            overrides,
            install_dir,
            search_path,
            versions: Mutex::default(),
        }
    }

    /// A locator reading `SANDBOX_DAEMON_<AGENT>_PATH` and `PATH` from the process
    /// environment.
    pub fn from_process_env(install_dir: Option<PathBuf>) -> Self {
        let overrides = AgentId::ALL
            .into_iter()
            .filter_map(|agent| {
                std::env::var_os(override_var(agent))
                    .filter(|v| !v.is_empty())
                    .map(|v| (agent, PathBuf::from(v)))
            })
            .collect();
        Self::new(overrides, install_dir, std::env::var_os("PATH"))
    }

    /// The daemon's install directory, if configured.
    pub fn install_dir(&self) -> Option<&Path> {
        self.install_dir.as_deref()
    }

    /// Finds the binary of `agent`, trying each of `names` in the install dir and on `PATH`.
    /// An explicit override wins even if the file is missing (so a typo is reported, not
    /// silently replaced by another binary).
    pub fn locate(&self, agent: AgentId, names: &[&str]) -> Option<PathBuf> {
        if let Some(path) = self.overrides.get(&agent) {
            return Some(path.clone());
        }
        if let Some(dir) = &self.install_dir {
            for name in names {
                for candidate in [dir.join(agent.as_str()).join(name), dir.join(name)] {
                    if is_executable(&candidate) {
                        return Some(candidate);
                    }
                }
            }
        }
        let search = self.search_path.as_ref()?;
        for dir in std::env::split_paths(search) {
            for name in names {
                let candidate = dir.join(name);
                if is_executable(&candidate) {
                    return Some(candidate);
                }
            }
        }
        None
    }

    /// Locates the binary and reads its version with `--version` (cached per path and
    /// modification time).
    pub async fn status(&self, agent: AgentId, names: &[&str]) -> BinaryStatus {
        let Some(path) = self.locate(agent, names) else {
            return BinaryStatus::default();
        };
        if !is_executable(&path) {
            return BinaryStatus {
                installed: false,
                version: None,
                path: Some(path),
            };
        }
        let version = self.version_of(&path).await;
        BinaryStatus {
            installed: true,
            version,
            path: Some(path),
        }
    }

    async fn version_of(&self, path: &Path) -> Option<String> {
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
        if let Some((stamp, version)) = self.versions.lock().expect("lock").get(path)
            && *stamp == modified
        {
            return version.clone();
        }
        let version = read_version(path).await;
        self.versions
            .lock()
            .expect("lock")
            .insert(path.to_path_buf(), (modified, version.clone()));
        version
    }
}

/// Runs `<path> --version` (5 s limit) as agents run (allow-listed environment, private
/// HOME, the agent user) and extracts the first version-looking word.
async fn read_version(path: &Path) -> Option<String> {
    let output = crate::process::probe(path, &["--version"], Duration::from_secs(5)).await?;
    let text = String::from_utf8_lossy(&output.stdout);
    parse_version(&text)
}

/// The first whitespace-separated word that starts with a digit (a leading `v` is
/// dropped), e.g. `2.1.330` from `2.1.330 (Claude Code)`.
pub fn parse_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .map(|w| w.trim_start_matches('v'))
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .map(|w| w.trim_end_matches([',', ')']).to_string())
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions_from_common_outputs() {
        assert_eq!(
            parse_version("2.1.330 (Claude Code)\n").as_deref(),
            Some("2.1.330")
        );
        assert_eq!(
            parse_version("codex-cli 0.169.0").as_deref(),
            Some("0.169.0")
        );
        assert_eq!(parse_version("v1.18.33").as_deref(), Some("1.18.33"));
        assert_eq!(parse_version("no version here"), None);
    }

    #[test]
    fn override_wins_and_path_is_searched() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("claude");
        std::fs::write(&bin, "#!/bin/sh\necho 9.9.9\n").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();

        let on_path = BinaryLocator::new(HashMap::new(), None, Some(dir.path().into()));
        assert_eq!(
            on_path.locate(AgentId::Claude, &["claude"]),
            Some(bin.clone())
        );
        assert_eq!(on_path.locate(AgentId::Codex, &["codex"]), None);

        let overridden = BinaryLocator::new(
            HashMap::from([(AgentId::Claude, PathBuf::from("/nope/claude"))]),
            None,
            Some(dir.path().into()),
        );
        assert_eq!(
            overridden.locate(AgentId::Claude, &["claude"]),
            Some(PathBuf::from("/nope/claude"))
        );
    }

    #[tokio::test]
    async fn status_reads_the_version() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("codex");
        std::fs::write(&bin, "#!/bin/sh\necho codex-cli 0.169.0\n").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let locator = BinaryLocator::new(HashMap::new(), Some(dir.path().into()), None);
        let status = locator.status(AgentId::Codex, &["codex"]).await;
        assert!(status.installed);
        assert_eq!(status.version.as_deref(), Some("0.169.0"));
        assert_eq!(status.path, Some(bin));
    }
}
