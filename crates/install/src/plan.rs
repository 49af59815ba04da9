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
    /// Nothing is published for it (why, for people): only the announced size could be
    /// checked, so it is refused unless unverified installs are allowed.
    Unpublished(String),
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
    let checksums = Published::fetch(config, fetcher, spec, release, &version, &tag).await?;
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
    /// None: why (for people).
    None(String),
    /// Per platform name: (sha256, size), in the manifest at this URL.
    Manifest(String, Value),
    /// Per asset name: the GitHub release's assets, from the metadata at this URL.
    Assets(String, Vec<Value>),
}

impl Published {
    async fn fetch(
        config: &InstallConfig,
        fetcher: &Fetcher,
        spec: &AgentSpec,
        release: &ReleaseSource,
        version: &str,
        tag: &str,
    ) -> Result<Self, InstallError> {
        Ok(match release.checksums {
            Checksums::None => Self::None(format!(
                "{}'s release host publishes no checksums",
                spec.display_name
            )),
            Checksums::PlatformManifest { path } => {
                let url = config.url(release.host, &path.replace("{version}", version));
                let manifest = fetcher.json(&url, "application/json").await?;
                Self::Manifest(url, manifest)
            }
            Checksums::GithubAssets { repo } => {
                let url = config.url(
                    ReleaseHost::GithubApi,
                    &format!("/repos/{repo}/releases/tags/{tag}"),
                );
                let json = fetcher.json(&url, GITHUB_JSON).await?;
                Self::Assets(url, json["assets"].as_array().cloned().unwrap_or_default())
            }
        })
    }

    /// What the file `asset` for `platform_name` must be, or why nothing says.
    fn of(&self, platform_name: &str, asset: &str) -> Expected {
        let (digest, size, missing) = match self {
            Self::None(why) => return Expected::Unpublished(why.clone()),
            Self::Manifest(url, manifest) => {
                let entry = &manifest["platforms"][platform_name];
                if !entry.is_object() {
                    return Expected::Unpublished(format!(
                        "the release's checksum manifest ({url}) has no entry for {platform_name}"
                    ));
                }
                (
                    entry["checksum"].as_str().map(str::to_string),
                    entry["size"].as_u64(),
                    format!(
                        "the release's checksum manifest ({url}) gives no checksum for {platform_name}"
                    ),
                )
            }
            Self::Assets(url, assets) => {
                let Some(entry) = assets.iter().find(|a| a["name"].as_str() == Some(asset)) else {
                    return Expected::Unpublished(format!(
                        "the release's metadata ({url}) lists no asset {asset}"
                    ));
                };
                let digest = entry["digest"]
                    .as_str()
                    .and_then(|d| d.strip_prefix("sha256:"))
                    .map(str::to_string);
                (
                    digest,
                    entry["size"].as_u64(),
                    format!(
                        "the release's metadata ({url}) gives no SHA-256 digest for the asset {asset}"
                    ),
                )
            }
        };
        match digest {
            Some(hex) if is_sha256_hex(&hex) => Expected::Sha256 {
                hex: hex.to_ascii_lowercase(),
                size,
            },
            Some(other) => Expected::Unpublished(format!(
                "{missing}: `{}` is not a SHA-256",
                other.chars().take(80).collect::<String>()
            )),
            None => Expected::Unpublished(missing),
        }
    }
}

/// Whether `text` is 64 hex digits.
fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
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

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "ab00000000000000000000000000000000000000000000000000000000000000";

    fn unpublished(expected: Expected) -> String {
        match expected {
            Expected::Unpublished(why) => why,
            other => panic!("published: {other:?}"),
        }
    }

    #[test]
    fn a_manifest_vouches_only_for_the_platforms_it_lists() {
        let manifest = Published::Manifest(
            "http://m/1.0/manifest.json".into(),
            serde_json::json!({"platforms": {
                "linux-x64": {"checksum": HEX.to_ascii_uppercase(), "size": 7},
                "linux-arm64": {"size": 7},
                "darwin-x64": {"checksum": "sha256:abc", "size": 7},
            }}),
        );
        assert_eq!(
            manifest.of("linux-x64", "claude"),
            Expected::Sha256 {
                hex: HEX.into(),
                size: Some(7)
            }
        );
        let why = unpublished(manifest.of("linux-x64-musl", "claude"));
        assert!(
            why.contains("http://m/1.0/manifest.json")
                && why.contains("no entry for linux-x64-musl"),
            "{why}"
        );
        let why = unpublished(manifest.of("linux-arm64", "claude"));
        assert!(why.contains("gives no checksum for linux-arm64"), "{why}");
        let why = unpublished(manifest.of("darwin-x64", "claude"));
        assert!(why.contains("is not a SHA-256"), "{why}");
    }

    #[test]
    fn a_release_vouches_only_for_assets_with_a_sha256_digest() {
        let assets = Published::Assets(
            "http://api/repos/o/r/releases/tags/v1".into(),
            vec![
                serde_json::json!({"name": "a.tar.gz", "size": 9, "digest": format!("sha256:{HEX}")}),
                serde_json::json!({"name": "b.tar.gz", "size": 9}),
                serde_json::json!({"name": "c.tar.gz", "size": 9, "digest": "sha512:00"}),
            ],
        );
        assert_eq!(
            assets.of("x", "a.tar.gz"),
            Expected::Sha256 {
                hex: HEX.into(),
                size: Some(9)
            }
        );
        for (asset, says) in [
            ("b.tar.gz", "gives no SHA-256 digest for the asset b.tar.gz"),
            ("c.tar.gz", "gives no SHA-256 digest for the asset c.tar.gz"),
            ("d.tar.gz", "lists no asset d.tar.gz"),
        ] {
            let why = unpublished(assets.of("x", asset));
            assert!(
                why.contains(says) && why.contains("releases/tags/v1"),
                "{why}"
            );
        }
        let none = Published::None("Amp's release host publishes no checksums".into());
        assert_eq!(
            unpublished(none.of("linux-x64", "amp")),
            "Amp's release host publishes no checksums"
        );
    }
}
