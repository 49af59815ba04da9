//! How each agent is published: the shapes of the release facts the manifest holds (vendor
//! hosts, version announcements, download paths, archives, checksums, npm packages). The
//! installer (`sandbox-install`) reads them; nothing here does I/O.

use crate::platform::{Os, Platform, PlatformNames};

/// A vendor host agents are downloaded from. Each has its real URL as default and can be
/// overridden (`--<name>-url` / [`ReleaseHost::env_var`]); a mirror stands in for all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReleaseHost {
    /// Claude Code's release bucket.
    ClaudeReleases,
    /// Amp's release bucket.
    AmpReleases,
    /// GitHub release downloads.
    Github,
    /// GitHub's REST API (release metadata).
    GithubApi,
}

impl ReleaseHost {
    /// Every host.
    pub const ALL: [ReleaseHost; 4] = [
        ReleaseHost::ClaudeReleases,
        ReleaseHost::AmpReleases,
        ReleaseHost::Github,
        ReleaseHost::GithubApi,
    ];

    /// The vendor's real base URL (no trailing slash). With a mirror, the path of this
    /// URL is kept and the scheme and host are replaced.
    pub fn default_url(&self) -> &'static str {
        match self {
            Self::ClaudeReleases => {
                "https://storage.googleapis.com/claude-code-dist-86c565f3-f756-42ad-8dfa-d59b1c096819/claude-code-releases"
            }
            Self::AmpReleases => "https://storage.googleapis.com/amp-public-assets-prod-0/cli",
            Self::Github => "https://github.com",
            Self::GithubApi => "https://api.github.com",
        }
    }

    /// Its short name, as in flags (`--claude-releases-url`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::ClaudeReleases => "claude-releases",
            Self::AmpReleases => "amp-releases",
            Self::Github => "github",
            Self::GithubApi => "github-api",
        }
    }

    /// The environment variable overriding its base URL, e.g.
    /// `SANDBOX_DAEMON_CLAUDE_RELEASES_URL`.
    pub fn env_var(&self) -> &'static str {
        match self {
            Self::ClaudeReleases => "SANDBOX_DAEMON_CLAUDE_RELEASES_URL",
            Self::AmpReleases => "SANDBOX_DAEMON_AMP_RELEASES_URL",
            Self::Github => "SANDBOX_DAEMON_GITHUB_URL",
            Self::GithubApi => "SANDBOX_DAEMON_GITHUB_API_URL",
        }
    }
}

/// How an agent announces its latest version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatestVersion {
    /// A text file holding the version, at `path` under `host`.
    Text {
        /// The host.
        host: ReleaseHost,
        /// The file's path under the host's base URL (leading `/`).
        path: &'static str,
    },
    /// The latest release of a GitHub repository (`tag_name`, the tag prefix dropped).
    GithubRelease {
        /// `owner/name`.
        repo: &'static str,
    },
}

/// How a release file is packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Archive {
    /// The executable itself.
    Raw,
    /// A gzipped tarball holding it.
    TarGz,
    /// A zip archive holding it.
    Zip,
}

/// One file of a release: where to download it and what it is installed as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleaseFile {
    /// Its path under the release host, with `{version}`, `{tag}`, `{platform}` (the
    /// agent's platform name) and `{ext}` (the archive's extension) placeholders.
    pub path: &'static str,
    /// The file to take out of the archive (`{platform}` filled in); unused for raw files.
    pub member: &'static str,
    /// Its name in the install directory.
    pub install_as: &'static str,
}

/// Where a release publishes the checksums of its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksums {
    /// Nowhere: only the size announced by the server and the executable's version are
    /// checked.
    None,
    /// A JSON manifest per version (`{"platforms": {"<platform>": {"checksum": "<sha256
    /// hex>", "size": N}}}`) at `path` (with `{version}`) under the release host.
    PlatformManifest {
        /// Its path under the host.
        path: &'static str,
    },
    /// GitHub's release metadata: every asset has `name`, `size` and `digest`
    /// (`sha256:<hex>`).
    GithubAssets {
        /// `owner/name`.
        repo: &'static str,
    },
}

/// An agent's official releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleaseSource {
    /// The host its files are downloaded from.
    pub host: ReleaseHost,
    /// How its latest version is announced.
    pub latest: LatestVersion,
    /// A version's release tag, with `{version}` (e.g. `rust-v{version}`).
    pub tag: &'static str,
    /// Its platform names.
    pub platforms: PlatformNames,
    /// How its files are packed on Linux.
    pub linux_archive: Archive,
    /// How its files are packed on macOS.
    pub macos_archive: Archive,
    /// The executable first, then the companions it needs next to it.
    pub files: &'static [ReleaseFile],
    /// Where checksums are published.
    pub checksums: Checksums,
}

impl ReleaseSource {
    /// How files are packed on `platform`.
    pub fn archive(&self, platform: Platform) -> Archive {
        match platform.os {
            Os::Linux => self.linux_archive,
            Os::Macos => self.macos_archive,
        }
    }

    /// The tag of `version`.
    pub fn tag_of(&self, version: &str) -> String {
        self.tag.replace("{version}", version)
    }

    /// The version a tag names (the tag pattern's prefix dropped), e.g. `0.169.0` from
    /// `rust-v0.169.0`.
    pub fn version_of_tag<'a>(&self, tag: &'a str) -> &'a str {
        let prefix = self.tag.split("{version}").next().unwrap_or_default();
        tag.strip_prefix(prefix).unwrap_or(tag)
    }
}

/// An agent's platform packages on an npm registry: they ship the same native binaries as
/// its releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NpmBinaries {
    /// The package holding a platform's binary, with `{platform}`.
    pub package: &'static str,
    /// The package version for an agent version, with `{version}` and `{platform}`.
    pub version: &'static str,
    /// npm platform names.
    pub platforms: PlatformNames,
    /// The executable first, then its companions: (path inside the package with
    /// `{platform}` and `{triple}`, name in the install directory).
    pub files: &'static [(&'static str, &'static str)],
}

/// How an agent is installed.
// Constant manifest data, never moved on a hot path: no boxing needed.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallSpec {
    /// A native executable, from the vendor's releases or from its npm platform package.
    Native {
        /// The official releases.
        release: ReleaseSource,
        /// The npm platform packages.
        npm: NpmBinaries,
    },
    /// A Node.js package (the agent's manifest `npm` entry), run with the machine's Node.
    Node {
        /// The executable script inside the package, e.g. `dist/cli.js`.
        script: &'static str,
    },
}
