//! An npm registry made of the packages the test kit installed: for each package, a
//! packument (`/<prefix>/<name>`: `dist-tags`, `versions` with each version's manifest and
//! `dist.tarball` / `dist.integrity`) and tarballs (`package/…`) built from its directory
//! in `node_modules`. Tarball URLs name the mirror serving them (`__MIRROR__` is replaced
//! when a packument is served).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use base64::Engine;
use sha2::{Digest, Sha512};

use super::put;

/// The file a packument is kept in, inside the package's directory (its tarballs are
/// under `-/` next to it, as on a registry); the mirror serves it for the directory's URL.
pub const PACKUMENT_FILE: &str = ".packument";

/// The placeholder the mirror replaces with its own base URL in packuments.
pub const MIRROR_PLACEHOLDER: &str = "__MIRROR__";

/// Publishes the packages at `dirs` (package directories inside `node_modules`), and with
/// `with_dependencies` everything they depend on as Node would resolve it, under
/// `root/<prefix>`. Returns the published `name@version`s.
pub fn publish(
    root: &Path,
    prefix: &str,
    dirs: &[PathBuf],
    with_dependencies: bool,
) -> std::io::Result<Vec<String>> {
    let mut packages = BTreeSet::new();
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(dir) = stack.pop() {
        if !packages.insert(dir.clone()) || !with_dependencies {
            continue;
        }
        let manifest = read_manifest(&dir)?;
        for field in ["dependencies", "optionalDependencies", "peerDependencies"] {
            for name in manifest[field]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                if let Some(found) = resolve(&dir, name) {
                    stack.push(found);
                }
            }
        }
    }
    let mut versions: BTreeMap<String, BTreeMap<String, serde_json::Value>> = BTreeMap::new();
    let mut published = Vec::new();
    for dir in packages {
        let mut manifest = read_manifest(&dir)?;
        let name = manifest["name"].as_str().unwrap_or_default().to_string();
        let version = manifest["version"].as_str().unwrap_or_default().to_string();
        let file = format!(
            "{prefix}/{name}/-/{}-{version}.tgz",
            name.rsplit('/').next().unwrap_or(&name)
        );
        let integrity = pack(&dir, &root.join(file.trim_start_matches('/')))?;
        manifest["dist"] = serde_json::json!({
            "tarball": format!("{MIRROR_PLACEHOLDER}{file}"),
            "integrity": integrity,
        });
        published.push(format!("{name}@{version}"));
        versions.entry(name).or_default().insert(version, manifest);
    }
    for (name, versions) in versions {
        let latest = versions.keys().next_back().cloned().unwrap_or_default();
        let packument = serde_json::json!({
            "name": name,
            "dist-tags": { "latest": latest },
            "versions": versions,
        });
        put(
            root,
            &format!("{prefix}/{name}/{PACKUMENT_FILE}"),
            packument.to_string().as_bytes(),
        )?;
    }
    Ok(published)
}

/// Marks `name`'s `latest` dist-tag as `version` in an already published packument.
pub fn tag_latest(root: &Path, prefix: &str, name: &str, version: &str) -> std::io::Result<()> {
    let path = root.join(format!("{prefix}/{name}/{PACKUMENT_FILE}").trim_start_matches('/'));
    let mut packument: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)?;
    packument["dist-tags"]["latest"] = version.into();
    std::fs::write(path, packument.to_string())
}

fn read_manifest(dir: &Path) -> std::io::Result<serde_json::Value> {
    Ok(serde_json::from_slice(&std::fs::read(
        dir.join("package.json"),
    )?)?)
}

/// Where Node finds `name` from the package at `dir`: `dir/node_modules/name`, then
/// `name` in each enclosing `node_modules`, nearest first.
fn resolve(dir: &Path, name: &str) -> Option<PathBuf> {
    std::iter::once(dir.join("node_modules"))
        .chain(
            dir.ancestors()
                .skip(1)
                .filter(|a| a.file_name() == Some("node_modules".as_ref()))
                .map(Path::to_path_buf),
        )
        .map(|modules| modules.join(name))
        .find(|candidate| candidate.join("package.json").is_file())
}

/// A package tarball of `dir` (everything but its `node_modules`, under `package/`) at
/// `dest`; returns its `sha512-` integrity.
fn pack(dir: &Path, dest: &Path) -> std::io::Result<String> {
    std::fs::create_dir_all(dest.parent().expect("a parent"))?;
    {
        let gz = flate2::write::GzEncoder::new(File::create(dest)?, flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        tar.follow_symlinks(false);
        add_dir(&mut tar, dir, Path::new("package"))?;
        tar.into_inner()?.finish()?;
    }
    let mut hasher = Sha512::new();
    super::hash_file(dest, |chunk| hasher.update(chunk))?;
    Ok(format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(hasher.finalize())
    ))
}

fn add_dir(
    tar: &mut tar::Builder<flate2::write::GzEncoder<File>>,
    dir: &Path,
    name: &Path,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let file_name = entry.file_name();
        if file_name == "node_modules" {
            continue;
        }
        let kind = entry.file_type()?;
        let inner = name.join(&file_name);
        if kind.is_dir() {
            add_dir(tar, &entry.path(), &inner)?;
        } else if kind.is_file() {
            tar.append_path_with_name(entry.path(), &inner)?;
        }
    }
    Ok(())
}
