//! Where installs go and where they come from: the install directory, the vendor hosts
//! (each overridable), one mirror standing in for all of them, the npm registry, the
//! default version, the platform, whether unverifiable downloads are accepted, and the
//! network's patience.
//!
//! ## The network's patience
//!
//! An install waits on the network in two different ways, and they are bounded apart:
//!
//! - **Waiting for an answer** ([`InstallConfig::answer_timeout`], 8 s): from sending a
//!   request (connecting included) to the response's head — and for a small document (a
//!   version file, release metadata, a packument) to its whole body. Every retry of that
//!   request and the pauses between them come out of the same 8 s, so a host that accepts
//!   connections and never answers, or drops every packet, fails the install after 8 s
//!   with a message naming the host, not after minutes of retries. A session created for
//!   an agent that is not installed therefore fails within about 10 s when nothing answers.
//! - **Waiting for bytes** ([`InstallConfig::read_timeout`], 30 s): once a download has
//!   answered, the longest gap between two chunks of its body. A slow transfer that keeps
//!   progressing is never cut off, however long it takes (a 360 MiB binary on a slow link);
//!   a transfer that stops for 30 s is broken and starts over (up to
//!   [`InstallConfig::retries`] times), each new attempt again with 8 s to be answered.
//!
//! A single connection attempt gives up after [`InstallConfig::connect_timeout`] (4 s), so
//! a lost SYN is tried again on a fresh connection within the answer budget.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use sandbox_agents::platform::Platform;
use sandbox_agents::release::ReleaseHost;

/// Where native agents are downloaded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SourceKind {
    /// The vendors' official release files (or the mirror).
    #[default]
    Release,
    /// The agents' platform packages on an npm registry.
    Npm,
}

impl std::str::FromStr for SourceKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "release" => Ok(Self::Release),
            "npm" => Ok(Self::Npm),
            other => Err(format!("unknown install source `{other}` (release or npm)")),
        }
    }
}

/// Which version an install without one gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DefaultVersion {
    /// The version this daemon build is tested with (the manifest's pin).
    #[default]
    Pinned,
    /// Whatever the vendor calls latest now.
    Latest,
}

impl std::str::FromStr for DefaultVersion {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pinned" => Ok(Self::Pinned),
            "latest" => Ok(Self::Latest),
            other => Err(format!(
                "unknown default version `{other}` (pinned or latest)"
            )),
        }
    }
}

/// Everything an [`crate::Installer`] needs to know.
#[derive(Debug, Clone)]
pub struct InstallConfig {
    /// `<data dir>/agents`: one directory per agent, one per version inside.
    pub install_dir: PathBuf,
    /// Base URLs replacing the vendors' real ones, per host.
    pub hosts: HashMap<ReleaseHost, String>,
    /// A base URL every official URL is fetched under (`<mirror>` + the URL's path).
    pub mirror: Option<String>,
    /// The npm registry (else npm's own configuration is read).
    pub npm_registry: Option<String>,
    /// A GitHub token, sent to GitHub's API host only (release metadata of Codex and
    /// OpenCode; anonymous callers get 60 requests an hour).
    pub github_token: Option<String>,
    /// Where native agents come from.
    pub source: SourceKind,
    /// The version an install without one gets.
    pub default_version: DefaultVersion,
    /// The machine to install for (else this one, detected).
    pub platform: Option<Platform>,
    /// Accept a download whose vendor publishes no checksum for it (installed with a loud
    /// warning); by default such an install is refused (`--allow-unverified-installs`).
    pub allow_unverified: bool,
    /// One connection attempt (a fresh one follows, within [`Self::answer_timeout`]).
    pub connect_timeout: Duration,
    /// How long one request may wait for its answer, retries and their pauses included:
    /// the response head of a download, the whole of a small document. Any answer ends
    /// the wait; the time a download's body takes is not counted (see the module doc).
    pub answer_timeout: Duration,
    /// The longest a download's body may stall (no byte received) once it has answered;
    /// a stalled transfer starts over.
    pub read_timeout: Duration,
    /// How many times a request is tried again after a 5xx answer, a broken connection or
    /// a stalled transfer (pauses of a request not yet answered count against
    /// [`Self::answer_timeout`]).
    pub retries: u32,
    /// The first pause before trying again (doubled each time).
    pub backoff: Duration,
}

impl InstallConfig {
    /// Defaults for installing into `install_dir`: official hosts, release source, pinned
    /// versions, this machine, unverifiable downloads refused, 4 s per connection attempt,
    /// 8 s for a request to be answered, 30 s stall limit for a download's body, 3 retries
    /// from 500 ms.
    pub fn new(install_dir: PathBuf) -> Self {
        Self {
            install_dir,
            hosts: HashMap::new(),
            mirror: None,
            npm_registry: None,
            github_token: None,
            source: SourceKind::Release,
            default_version: DefaultVersion::Pinned,
            platform: None,
            allow_unverified: false,
            connect_timeout: Duration::from_secs(4),
            answer_timeout: Duration::from_secs(8),
            read_timeout: Duration::from_secs(30),
            retries: 3,
            backoff: Duration::from_millis(500),
        }
    }

    /// The URL of `path` on `host`: the mirror's base plus the official URL's path, else
    /// the host's override, else the vendor's real URL.
    pub fn url(&self, host: ReleaseHost, path: &str) -> String {
        if let Some(mirror) = &self.mirror {
            return format!(
                "{}{}{path}",
                mirror.trim_end_matches('/'),
                url_path(host.default_url())
            );
        }
        let base = self
            .hosts
            .get(&host)
            .map(String::as_str)
            .unwrap_or(host.default_url());
        format!("{}{path}", base.trim_end_matches('/'))
    }
}

/// The path of an absolute URL (`/a/b` of `https://host/a/b`; empty for a bare host).
fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.find('/').map_or("", |i| &rest[i..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mirror_keeps_the_official_path_and_drops_the_host() {
        let mut config = InstallConfig::new("/x".into());
        assert_eq!(
            config.url(
                ReleaseHost::GithubApi,
                "/repos/openai/codex/releases/latest"
            ),
            "https://api.github.com/repos/openai/codex/releases/latest"
        );
        config.mirror = Some("http://127.0.0.1:9/m/".into());
        assert_eq!(
            config.url(
                ReleaseHost::GithubApi,
                "/repos/openai/codex/releases/latest"
            ),
            "http://127.0.0.1:9/m/repos/openai/codex/releases/latest"
        );
        assert_eq!(
            config.url(
                ReleaseHost::Github,
                "/openai/codex/releases/download/rust-v1/x"
            ),
            "http://127.0.0.1:9/m/openai/codex/releases/download/rust-v1/x"
        );
        let claude = config.url(ReleaseHost::ClaudeReleases, "/latest");
        assert!(claude.starts_with("http://127.0.0.1:9/m/claude-code-dist-"));
        assert!(claude.ends_with("/claude-code-releases/latest"));
    }

    #[test]
    fn a_host_override_replaces_its_base() {
        let mut config = InstallConfig::new("/x".into());
        config
            .hosts
            .insert(ReleaseHost::AmpReleases, "http://127.0.0.1:9/amp/".into());
        assert_eq!(
            config.url(ReleaseHost::AmpReleases, "/cli-version.txt"),
            "http://127.0.0.1:9/amp/cli-version.txt"
        );
    }
}
