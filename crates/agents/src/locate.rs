//! Finding agent binaries: `SANDBOX_DAEMON_<AGENT>_PATH`, then the version installed in
//! the daemon's install dir, then `PATH`; and the install dir's layout, which the installer
//! (`sandbox-install`) writes and this module reads:
//!
//! ```text
//! <install dir>/<agent>/<version>/           one complete install (renamed into place whole)
//! <install dir>/<agent>/<version>/.installed.json   its receipt (InstallReceipt)
//! <install dir>/<agent>/current              the version in use (replaced by rename)
//! ```

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

    /// Finds the binary of `agent`: its override, else the install dir's current version,
    /// else each of `names` on `PATH`. An explicit override wins even if the file is
    /// missing (so a typo is reported, not silently replaced by another binary).
    pub fn locate(&self, agent: AgentId, names: &[&str]) -> Option<PathBuf> {
        self.locate_with_origin(agent, names).map(|(path, _)| path)
    }

    /// [`Self::locate`], saying where the binary was found.
    pub fn locate_with_origin(
        &self,
        agent: AgentId,
        names: &[&str],
    ) -> Option<(PathBuf, BinaryOrigin)> {
        if let Some(path) = self.overrides.get(&agent) {
            return Some((path.clone(), BinaryOrigin::Override));
        }
        if let Some(dir) = &self.install_dir
            && let Some(version) = current_version(dir, agent)
            && let Some(path) = installed_executable(dir, agent, &version)
        {
            return Some((path, BinaryOrigin::Installed));
        }
        self.on_path(names).map(|path| (path, BinaryOrigin::Path))
    }

    /// Whether `agent` has an override (`SANDBOX_DAEMON_<AGENT>_PATH`).
    pub fn overridden(&self, agent: AgentId) -> bool {
        self.overrides.contains_key(&agent)
    }

    /// The first of `names` on the search path.
    fn on_path(&self, names: &[&str]) -> Option<PathBuf> {
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

    /// The binary of `agent` at `version`: the one in the install dir, else the located
    /// binary if it reports that version; `None` when that version is not here.
    pub async fn locate_version(
        &self,
        agent: AgentId,
        names: &[&str],
        version: &str,
    ) -> Option<PathBuf> {
        if !self.overridden(agent)
            && let Some(dir) = &self.install_dir
            && let Some(path) = installed_executable(dir, agent, version)
        {
            return Some(path);
        }
        let path = self.locate(agent, names)?;
        let found = self.version_of(&path).await?;
        (found == version).then_some(path)
    }

    /// Every version of `agent` installed in the install dir, oldest first by version
    /// string order.
    pub fn installed(&self, agent: AgentId) -> Vec<(String, PathBuf)> {
        let Some(dir) = &self.install_dir else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(agent_dir(dir, agent)) else {
            return Vec::new();
        };
        let mut found: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter_map(|entry| {
                let version = entry.file_name().to_str()?.to_string();
                let path = installed_executable(dir, agent, &version)?;
                Some((version, path))
            })
            .collect();
        found.sort();
        found
    }

    /// Locates the binary and reads its version with `--version` (cached per path and
    /// modification time).
    pub async fn status(&self, agent: AgentId, names: &[&str]) -> BinaryStatus {
        let Some((path, origin)) = self.locate_with_origin(agent, names) else {
            return BinaryStatus::default();
        };
        if !is_executable(&path) {
            return BinaryStatus {
                installed: false,
                version: None,
                path: Some(path),
                origin: Some(origin),
            };
        }
        // An install of ours is named by the version the installer resolved and checked:
        // no need to start a binary (Amp's takes seconds on a busy machine) to learn it.
        let version = match origin {
            BinaryOrigin::Installed => self.install_dir.as_deref().and_then(|dir| {
                let relative = path.strip_prefix(agent_dir(dir, agent)).ok()?;
                let version = relative.components().next()?.as_os_str().to_str()?;
                valid_version(version).then(|| version.to_string())
            }),
            _ => None,
        };
        let version = match version {
            Some(version) => Some(version),
            None => self.version_of(&path).await,
        };
        BinaryStatus {
            installed: true,
            version,
            path: Some(path),
            origin: Some(origin),
        }
    }

    /// What `path --version` reports (cached per path and modification time).
    pub async fn version_of(&self, path: &Path) -> Option<String> {
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
        if let Some((stamp, version)) = self.versions.lock().expect("lock").get(path)
            && *stamp == modified
        {
            return version.clone();
        }
        let (version, settled) = read_version(path).await;
        if settled {
            self.versions
                .lock()
                .expect("lock")
                .insert(path.to_path_buf(), (modified, version.clone()));
        }
        version
    }
}

/// Runs `<path> --version` (5 s limit) as agents run (allow-listed environment, private
/// HOME, the agent user) and extracts the first version-looking word. A JavaScript entry
/// point (Pi's `dist/cli.js`) has its version in its package's manifest: read there, it
/// needs no Node start, which a busy machine can stretch past the limit. Also answers
/// whether the answer is settled: a run that failed or ran out of time is tried again
/// next time rather than remembered as "no version".
async fn read_version(path: &Path) -> (Option<String>, bool) {
    if let Some(version) = package_version(path) {
        return (Some(version), true);
    }
    match crate::process::probe(path, &["--version"], Duration::from_secs(5)).await {
        Some(output) => (parse_version(&version_text(&output)), true),
        None => (None, false),
    }
}

/// The version in the `package.json` of the npm package a `.js` entry point belongs to
/// (the nearest one above it, at most three levels up; links are followed, as npm's `bin`
/// links lead to it).
fn package_version(path: &Path) -> Option<String> {
    let path = path.canonicalize().ok()?;
    if path.extension().and_then(|e| e.to_str()) != Some("js") {
        return None;
    }
    path.ancestors().skip(1).take(3).find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
        let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
        manifest["version"].as_str().and_then(parse_version)
    })
}

/// What a `--version` run printed: its stdout, else its stderr (Pi prints its version
/// there).
pub fn version_text(output: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    if parse_version(&stdout).is_some() {
        stdout.into_owned()
    } else {
        String::from_utf8_lossy(&output.stderr).into_owned()
    }
}

/// The first whitespace-separated word that starts with a digit (a leading `v` is
/// dropped), e.g. `2.1.330` from `2.1.330 (Claude Code)`.
pub fn parse_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .map(|w| w.trim_start_matches('v'))
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .map(|w| w.trim_end_matches([',', ')']).to_string())
}

/// Where a located binary came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOrigin {
    /// `SANDBOX_DAEMON_<AGENT>_PATH`.
    Override,
    /// The daemon's install dir.
    Installed,
    /// `PATH`.
    Path,
}

/// The file naming the version in use, in an agent's install directory.
pub const CURRENT_FILE: &str = "current";
/// The receipt written last into a version's directory: its presence marks a complete
/// install.
pub const RECEIPT_FILE: &str = ".installed.json";

/// What an install left behind in `<install dir>/<agent>/<version>/.installed.json`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallReceipt {
    /// The agent version.
    pub version: String,
    /// The executable, relative to the version's directory.
    pub executable: String,
    /// Where it came from: `release`, `npm` or `mirror`.
    pub source: String,
    /// The URL of the executable's download.
    pub url: String,
    /// Bytes downloaded.
    pub size: u64,
    /// The download's SHA-256, hex.
    pub sha256: String,
    /// When it was installed (RFC 3339).
    pub installed_at: String,
}

/// `<install dir>/<agent>`.
pub fn agent_dir(install_dir: &Path, agent: AgentId) -> PathBuf {
    install_dir.join(agent.as_str())
}

/// `<install dir>/<agent>/<version>`.
pub fn version_dir(install_dir: &Path, agent: AgentId, version: &str) -> PathBuf {
    agent_dir(install_dir, agent).join(version)
}

/// The version the install dir says is in use for `agent`.
pub fn current_version(install_dir: &Path, agent: AgentId) -> Option<String> {
    let text = std::fs::read_to_string(agent_dir(install_dir, agent).join(CURRENT_FILE)).ok()?;
    let version = text.trim();
    valid_version(version).then(|| version.to_string())
}

/// The receipt of an installed version, when the install is complete.
pub fn receipt(install_dir: &Path, agent: AgentId, version: &str) -> Option<InstallReceipt> {
    if !valid_version(version) {
        return None;
    }
    let text = std::fs::read(version_dir(install_dir, agent, version).join(RECEIPT_FILE)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// The executable of an installed version, when it is complete and executable.
pub fn installed_executable(install_dir: &Path, agent: AgentId, version: &str) -> Option<PathBuf> {
    let receipt = receipt(install_dir, agent, version)?;
    let path = version_dir(install_dir, agent, version).join(&receipt.executable);
    is_executable(&path).then_some(path)
}

/// Whether `version` can name a directory: a version string, not a path (the API's
/// `agentVersion` constraints).
pub fn valid_version(version: &str) -> bool {
    sandbox_universal::constraints::AGENT_VERSION.matches(version)
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

    /// Installs a fake `codex` printing `version` the way the installer lays it out.
    fn install(root: &Path, version: &str, current: bool) -> PathBuf {
        let dir = version_dir(root, AgentId::Codex, version);
        std::fs::create_dir_all(&dir).unwrap();
        let bin = dir.join("codex");
        std::fs::write(&bin, format!("#!/bin/sh\necho codex-cli {version}\n")).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let receipt = InstallReceipt {
            version: version.into(),
            executable: "codex".into(),
            source: "release".into(),
            url: "http://127.0.0.1:9/codex".into(),
            size: 1,
            sha256: String::new(),
            installed_at: "2026-11-23T00:00:00Z".into(),
        };
        std::fs::write(
            dir.join(RECEIPT_FILE),
            serde_json::to_vec(&receipt).unwrap(),
        )
        .unwrap();
        if current {
            std::fs::write(agent_dir(root, AgentId::Codex).join(CURRENT_FILE), version).unwrap();
        }
        bin
    }

    #[tokio::test]
    async fn the_current_install_comes_before_path_and_versions_are_found() {
        let root = tempfile::tempdir().unwrap();
        let on_path = tempfile::tempdir().unwrap();
        let path_bin = on_path.path().join("codex");
        std::fs::write(&path_bin, "#!/bin/sh\necho codex-cli 0.1.0\n").unwrap();
        std::fs::set_permissions(&path_bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let locator = BinaryLocator::new(
            HashMap::new(),
            Some(root.path().into()),
            Some(on_path.path().into()),
        );
        assert_eq!(
            locator.locate_with_origin(AgentId::Codex, &["codex"]),
            Some((path_bin.clone(), BinaryOrigin::Path))
        );

        let old = install(root.path(), "0.168.0", false);
        let new = install(root.path(), "0.169.0", true);
        // A version directory without its receipt is an interrupted install: not used.
        std::fs::create_dir_all(version_dir(root.path(), AgentId::Codex, "0.170.0")).unwrap();
        let status = locator.status(AgentId::Codex, &["codex"]).await;
        assert!(status.installed);
        assert_eq!(status.version.as_deref(), Some("0.169.0"));
        assert_eq!(status.path, Some(new.clone()));
        assert_eq!(status.origin, Some(BinaryOrigin::Installed));
        assert_eq!(
            locator.installed(AgentId::Codex),
            [
                ("0.168.0".to_string(), old.clone()),
                ("0.169.0".to_string(), new)
            ]
        );
        assert_eq!(
            locator
                .locate_version(AgentId::Codex, &["codex"], "0.168.0")
                .await,
            Some(old)
        );
        assert_eq!(
            locator
                .locate_version(AgentId::Codex, &["codex"], "9.9.9")
                .await,
            None
        );
        // `current` naming a path is ignored.
        std::fs::write(
            agent_dir(root.path(), AgentId::Codex).join(CURRENT_FILE),
            "../x",
        )
        .unwrap();
        assert_eq!(
            locator.locate_with_origin(AgentId::Codex, &["codex"]),
            Some((path_bin, BinaryOrigin::Path))
        );
        assert!(!valid_version("../x") && !valid_version("") && valid_version("0.0.1-g7+b.1"));
    }

    #[tokio::test]
    async fn an_install_of_ours_is_known_by_its_version_without_running_it() {
        let root = tempfile::tempdir().unwrap();
        let bin = install(root.path(), "0.169.0", true);
        // A binary that says nothing (or takes too long to say it) keeps its install's name.
        std::fs::write(&bin, "#!/bin/sh\nexit 1\n").unwrap();
        let locator = BinaryLocator::new(HashMap::new(), Some(root.path().into()), None);
        let status = locator.status(AgentId::Codex, &["codex"]).await;
        assert_eq!(status.origin, Some(BinaryOrigin::Installed));
        assert_eq!(status.version.as_deref(), Some("0.169.0"));
        // The same binary found another way is asked, and has no version.
        let overridden = BinaryLocator::new(HashMap::from([(AgentId::Codex, bin)]), None, None);
        assert_eq!(
            overridden.status(AgentId::Codex, &["codex"]).await.version,
            None
        );
    }

    #[test]
    fn a_javascript_entry_point_has_its_packages_version() {
        let dir = tempfile::tempdir().unwrap();
        let dist = dir.path().join("pkg/dist");
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(
            dir.path().join("pkg/package.json"),
            r#"{"name": "pi", "version": "0.73.1"}"#,
        )
        .unwrap();
        std::fs::write(dist.join("cli.js"), "").unwrap();
        assert_eq!(
            package_version(&dist.join("cli.js")).as_deref(),
            Some("0.73.1")
        );
        assert_eq!(package_version(&dir.path().join("pkg/package.json")), None);
    }
}
