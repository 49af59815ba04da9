//! From an agent, a version request and a platform to the files to download: the version
//! resolved (pinned, latest, or as given), each download's URL, packing, published
//! checksum, and which files to take out of it under which names.

use sandbox_agents::manifest::AgentSpec;
use sandbox_agents::platform::Platform;
use sandbox_agents::release::{
    Archive, Checksums, LatestVersion, NpmBinaries, ReleaseHost, ReleaseSource,
};
use sandbox_universal::BinarySource;
use serde_json::Value;

use crate::config::{DefaultVersion, InstallConfig};
use crate::error::InstallError;
use crate::fetch::Fetcher;
use crate::npm::Registry;

/// What a download's bytes must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// Nothing is published: only the announced size is checked.
    Unpublished,
    /// A SHA-256 (hex) and, when published, the size.
    Sha256 {
        /// Lowercase hex.
        hex: String,
        /// Bytes.
        size: Option<u64>,
    },
    /// npm's `integrity` (SHA-512).
    Sha512(Vec<u8>),
}

/// One file to download.
#[derive(Debug, Clone)]
pub struct Download {
    /// Its URL.
    pub url: String,
    /// How it is packed.
    pub archive: Archive,
    /// What its bytes must be.
    pub expected: Expected,
    /// (file in the archive, name in the install directory); the executable comes first.
    pub files: Vec<(String, String)>,
}

/// Everything to fetch for one install.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The agent version.
    pub version: String,
    /// Where it comes from.
    pub source: BinarySource,
    /// The downloads, the executable's first.
    pub downloads: Vec<Download>,
}

/// What the caller asked for, before resolution.
pub fn requested(config: &InstallConfig, version: Option<&str>) -> String {
    match version {
        Some(v) => v.to_string(),
        None => match config.default_version {
            DefaultVersion::Pinned => "pinned".into(),
            DefaultVersion::Latest => "latest".into(),
        },
    }
}

/// A version as given (`pinned` and `latest` are resolved by the source).
pub fn explicit(spec: &AgentSpec, requested: &str) -> Result<Option<String>, InstallError> {
    match requested {
        "latest" => Ok(None),
        "pinned" => Ok(Some(
            spec.pinned_version()
                .ok_or_else(|| InstallError::BadVersion(requested.into()))?
                .to_string(),
        )),
        other if sandbox_agents::locate::valid_version(other.trim_start_matches('v')) => {
            Ok(Some(other.trim_start_matches('v').to_string()))
        }
        other => Err(InstallError::BadVersion(other.into())),
    }
}

/// The plan of a native agent from its official releases.
pub async fn release_plan(
    config: &InstallConfig,
    fetcher: &Fetcher,
    spec: &AgentSpec,
    release: &ReleaseSource,
    platform: Platform,
    requested: &str,
) -> Result<Plan, InstallError> {
    let name = release
        .platforms
        .get(platform)
        .ok_or_else(|| unsupported(spec, platform))?;
    let version = match explicit(spec, requested)? {
        Some(version) => version,
        None => latest_release(config, fetcher, release).await?,
    };
    let archive = release.archive(platform);
    let ext = match archive {
        Archive::Raw => "",
        Archive::TarGz => "tar.gz",
        Archive::Zip => "zip",
    };
    let tag = release.tag_of(&version);
    let fill = |pattern: &str| {
        pattern
            .replace("{version}", &version)
            .replace("{tag}", &tag)
            .replace("{platform}", name)
            .replace("{ext}", ext)
    };
    let checksums = Published::fetch(config, fetcher, release, &version, &tag).await?;
    let downloads = release
        .files
        .iter()
        .map(|file| {
            let path = fill(file.path);
            let asset = path.rsplit('/').next().unwrap_or_default().to_string();
            Download {
                url: config.url(release.host, &path),
                archive,
                expected: checksums.of(name, &asset),
                files: vec![(fill(file.member), file.install_as.to_string())],
            }
        })
        .collect();
    Ok(Plan {
        version,
        source: if config.mirror.is_some() {
            BinarySource::Mirror
        } else {
            BinarySource::Release
        },
        downloads,
    })
}

/// The version a release source calls latest.
async fn latest_release(
    config: &InstallConfig,
    fetcher: &Fetcher,
    release: &ReleaseSource,
) -> Result<String, InstallError> {
    let (url, version) = match release.latest {
        LatestVersion::Text { host, path } => {
            let url = config.url(host, path);
            let text = fetcher.text(&url).await?;
            (url, text)
        }
        LatestVersion::GithubRelease { repo } => {
            let url = config.url(
                ReleaseHost::GithubApi,
                &format!("/repos/{repo}/releases/latest"),
            );
            let json = fetcher.json(&url, GITHUB_JSON).await?;
            let tag = json["tag_name"].as_str().unwrap_or_default().to_string();
            (url, release.version_of_tag(&tag).to_string())
        }
    };
    if sandbox_agents::locate::valid_version(&version) {
        Ok(version)
    } else {
        Err(InstallError::BadResponse {
            url,
            detail: format!(
                "`{}` is not a version",
                version.chars().take(80).collect::<String>()
            ),
        })
    }
}

const GITHUB_JSON: &str = "application/vnd.github+json";

/// The checksums a release publishes.
enum Published {
    None,
    /// Per platform name: (sha256, size).
    Manifest(Value),
    /// Per asset name: the GitHub release's assets.
    Assets(Vec<Value>),
}

impl Published {
    async fn fetch(
        config: &InstallConfig,
        fetcher: &Fetcher,
        release: &ReleaseSource,
        version: &str,
        tag: &str,
    ) -> Result<Self, InstallError> {
        Ok(match release.checksums {
            Checksums::None => Self::None,
            Checksums::PlatformManifest { path } => {
                let url = config.url(release.host, &path.replace("{version}", version));
                Self::Manifest(fetcher.json(&url, "application/json").await?)
            }
            Checksums::GithubAssets { repo } => {
                let url = config.url(
                    ReleaseHost::GithubApi,
                    &format!("/repos/{repo}/releases/tags/{tag}"),
                );
                let json = fetcher.json(&url, GITHUB_JSON).await?;
                Self::Assets(json["assets"].as_array().cloned().unwrap_or_default())
            }
        })
    }

    fn of(&self, platform_name: &str, asset: &str) -> Expected {
        let (digest, size) = match self {
            Self::None => return Expected::Unpublished,
            Self::Manifest(manifest) => {
                let entry = &manifest["platforms"][platform_name];
                (
                    entry["checksum"].as_str().map(str::to_string),
                    entry["size"].as_u64(),
                )
            }
            Self::Assets(assets) => {
                let Some(entry) = assets.iter().find(|a| a["name"].as_str() == Some(asset)) else {
                    return Expected::Unpublished;
                };
                let digest = entry["digest"]
                    .as_str()
                    .and_then(|d| d.strip_prefix("sha256:"))
                    .map(str::to_string);
                (digest, entry["size"].as_u64())
            }
        };
        match digest {
            Some(hex) => Expected::Sha256 {
                hex: hex.to_ascii_lowercase(),
                size,
            },
            None => Expected::Unpublished,
        }
    }
}

/// The plan of a native agent from its npm platform package.
pub async fn npm_plan(
    registry: &Registry,
    spec: &AgentSpec,
    npm: &NpmBinaries,
    platform: Platform,
    requested: &str,
) -> Result<Plan, InstallError> {
    let name = npm
        .platforms
        .get(platform)
        .ok_or_else(|| unsupported(spec, platform))?;
    let main = spec.npm.ok_or_else(|| InstallError::NotInstallable {
        agent: spec.display_name.into(),
    })?;
    let version = match explicit(spec, requested)? {
        Some(version) => version,
        None => registry.latest(main.name).await?,
    };
    let package = npm.package.replace("{platform}", name);
    let package_version = npm
        .version
        .replace("{version}", &version)
        .replace("{platform}", name);
    let dist = registry.dist(&package, &package_version).await?;
    Ok(Plan {
        version,
        source: BinarySource::Npm,
        downloads: vec![Download {
            url: dist.tarball,
            archive: Archive::TarGz,
            expected: dist.expected,
            files: npm
                .files
                .iter()
                .map(|(path, install_as)| {
                    (
                        format!("package/{}", platform.expand(path)),
                        install_as.to_string(),
                    )
                })
                .collect(),
        }],
    })
}

fn unsupported(spec: &AgentSpec, platform: Platform) -> InstallError {
    InstallError::UnsupportedPlatform {
        agent: spec.display_name.into(),
        platform: platform.to_string(),
    }
}
