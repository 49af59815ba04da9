//! The vendors' official release layouts, written out independently of the daemon's
//! manifest (from the product spec's install section, so a wrong fact in the manifest is
//! caught, not mirrored), filled with the real pinned binaries of the test kit. Only the
//! Linux builds of this machine's CPU are published; glibc and musl names serve the same
//! bytes (the test kit has one build), so tests tell them apart by the paths requested.

use std::fs::File;
use std::path::Path;

use super::{Published, digest, put, put_file};
use crate::agents::{self, Agent};

/// Where Claude Code's release bucket lives under the mirror.
pub const CLAUDE: &str =
    "/claude-code-dist-86c565f3-f756-42ad-8dfa-d59b1c096819/claude-code-releases";
/// Where Amp's release bucket lives under the mirror.
pub const AMP: &str = "/amp-public-assets-prod-0/cli";

fn cpu() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "x64"
    }
}

fn musl_triple() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "aarch64-unknown-linux-musl"
    } else {
        "x86_64-unknown-linux-musl"
    }
}

/// Publishes `agent`'s pinned version under `root`: Claude Code and Amp as raw binaries
/// with their `latest` files (and Claude's `manifest.json` of checksums), Codex and
/// OpenCode as GitHub releases (tarballs and the releases API's JSON with digests).
pub fn publish(agent: Agent, root: &Path) -> std::io::Result<Published> {
    let binary = agents::executable(agent).map_err(|e| std::io::Error::other(e.to_string()))?;
    let version = agent.version().to_string();
    let mut published = Published {
        version: version.clone(),
        ..Published::default()
    };
    match agent {
        Agent::Claude => {
            let mut platforms = serde_json::Map::new();
            for platform in [format!("linux-{}", cpu()), format!("linux-{}-musl", cpu())] {
                let path = format!("{CLAUDE}/{version}/{platform}/claude");
                put_file(root, &path, &binary)?;
                let (sha256, size) = digest(&binary)?;
                platforms.insert(
                    platform.clone(),
                    serde_json::json!({ "checksum": sha256, "size": size }),
                );
                published.paths.insert(platform, path);
            }
            let manifest = serde_json::json!({ "version": version, "buildDate": "2026-11-01T00:00:00Z", "platforms": platforms });
            put(
                root,
                &format!("{CLAUDE}/{version}/manifest.json"),
                manifest.to_string().as_bytes(),
            )?;
            put(
                root,
                &format!("{CLAUDE}/latest"),
                format!("{version}\n").as_bytes(),
            )?;
            published.paths.insert(
                "manifest".into(),
                format!("{CLAUDE}/{version}/manifest.json"),
            );
        }
        Agent::Amp => {
            let path = format!("{AMP}/{version}/amp-linux-{}", cpu());
            put_file(root, &path, &binary)?;
            put(
                root,
                &format!("{AMP}/cli-version.txt"),
                format!("{version}\n").as_bytes(),
            )?;
            published.paths.insert("binary".into(), path);
        }
        Agent::Codex => {
            let tag = format!("rust-v{version}");
            let triple = musl_triple();
            let host = binary.with_file_name("codex-code-mode-host");
            let mut assets = Vec::new();
            for (name, file) in [("codex", &binary), ("codex-code-mode-host", &host)] {
                let member = format!("{name}-{triple}");
                let asset = format!("{member}.tar.gz");
                let path = format!("/openai/codex/releases/download/{tag}/{asset}");
                tarball(root, &path, &[(&member, file)])?;
                assets.push(asset_json(root, &path, &asset)?);
                published.paths.insert(name.into(), path);
            }
            github_release(root, "openai/codex", &tag, assets)?;
        }
        Agent::OpenCode => {
            let tag = format!("v{version}");
            let mut assets = Vec::new();
            for platform in [format!("linux-{}", cpu()), format!("linux-{}-musl", cpu())] {
                let asset = format!("opencode-{platform}.tar.gz");
                let path = format!("/anomalyco/opencode/releases/download/{tag}/{asset}");
                tarball(root, &path, &[("opencode", &binary)])?;
                assets.push(asset_json(root, &path, &asset)?);
                published.paths.insert(platform, path);
            }
            github_release(root, "anomalyco/opencode", &tag, assets)?;
        }
        Agent::Pi => {
            return Err(std::io::Error::other(
                "Pi has no release binaries; it is published on npm (see mirror::registry)",
            ));
        }
    }
    Ok(published)
}

/// A gzipped tarball at `root/path` holding `files` (name in the archive, source).
fn tarball(root: &Path, path: &str, files: &[(&str, &Path)]) -> std::io::Result<()> {
    let dest = root.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(dest.parent().expect("a parent"))?;
    let gz = flate2::write::GzEncoder::new(File::create(&dest)?, flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (name, source) in files {
        tar.append_path_with_name(source, name)?;
    }
    tar.into_inner()?.finish()?;
    Ok(())
}

/// A release asset as GitHub's API describes it.
fn asset_json(root: &Path, path: &str, name: &str) -> std::io::Result<serde_json::Value> {
    let (sha256, size) = digest(&root.join(path.trim_start_matches('/')))?;
    Ok(serde_json::json!({
        "name": name,
        "size": size,
        "digest": format!("sha256:{sha256}"),
        "content_type": "application/gzip",
        "browser_download_url": format!("https://github.com{path}"),
    }))
}

/// GitHub's `releases/latest` and `releases/tags/<tag>` answers.
fn github_release(
    root: &Path,
    repo: &str,
    tag: &str,
    assets: Vec<serde_json::Value>,
) -> std::io::Result<()> {
    let release = serde_json::json!({
        "tag_name": tag,
        "name": tag,
        "draft": false,
        "prerelease": false,
        "assets": assets,
    })
    .to_string();
    put(
        root,
        &format!("/repos/{repo}/releases/latest"),
        release.as_bytes(),
    )?;
    put(
        root,
        &format!("/repos/{repo}/releases/tags/{tag}"),
        release.as_bytes(),
    )
}
