//! The npm-registry source: which registry (never a built-in host: the configuration, else
//! npm's own settings), package metadata (packuments), tarballs with their integrity, and
//! installing a Node package (Pi) with its dependencies through the machine's npm.
//!
//! npm runs with an allow-listed environment ([`npm_env`]): what agents get (`PATH`,
//! locale, `TMPDIR`, proxies, CA settings), the daemon's `HOME` (npm's cache and
//! `.npmrc`), npm's own settings (`npm_config_*`) and the registry the daemon resolved —
//! never the daemon's token, provider keys or the GitHub token, which npm and the scripts
//! of the packages it fetches have no business seeing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use crate::config::InstallConfig;
use crate::error::InstallError;
use crate::fetch::Fetcher;
use crate::plan::Expected;

/// An npm registry.
#[derive(Debug, Clone)]
pub struct Registry {
    url: String,
    fetcher: Fetcher,
}

/// Where a package version's tarball is and what its bytes must be.
#[derive(Debug, Clone)]
pub struct Dist {
    /// The tarball's URL.
    pub tarball: String,
    /// Its integrity.
    pub expected: Expected,
}

const PACKUMENT: &str = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8";

impl Registry {
    /// The registry the configuration names, else npm's own (`npm_config_registry`, the
    /// user's `.npmrc`, else `npm config get registry`).
    pub async fn discover(config: &InstallConfig, fetcher: &Fetcher) -> Result<Self, InstallError> {
        let url = match &config.npm_registry {
            Some(url) => url.clone(),
            None => from_npm_config().await.ok_or(InstallError::NoRegistry)?,
        };
        Ok(Self {
            url: url.trim_end_matches('/').to_string(),
            fetcher: fetcher.clone(),
        })
    }

    /// The registry's URL (no trailing slash).
    pub fn url(&self) -> &str {
        &self.url
    }

    async fn packument(&self, name: &str) -> Result<Value, InstallError> {
        let url = format!("{}/{}", self.url, name.replace('/', "%2f"));
        self.fetcher.json(&url, PACKUMENT).await
    }

    /// The version `name`'s `latest` tag points at.
    pub async fn latest(&self, name: &str) -> Result<String, InstallError> {
        let packument = self.packument(name).await?;
        packument["dist-tags"]["latest"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| InstallError::BadResponse {
                url: format!("{}/{name}", self.url),
                detail: "no `latest` dist-tag".into(),
            })
    }

    /// Where `name@version`'s tarball is.
    pub async fn dist(&self, name: &str, version: &str) -> Result<Dist, InstallError> {
        let packument = self.packument(name).await?;
        let dist = &packument["versions"][version]["dist"];
        let url = format!("{}/{name}", self.url);
        let Some(tarball) = dist["tarball"].as_str() else {
            return Err(if packument["versions"].is_object() {
                InstallError::Http {
                    url: format!("{url} (version {version})"),
                    status: 404,
                }
            } else {
                InstallError::BadResponse {
                    url,
                    detail: "no `versions`".into(),
                }
            });
        };
        let expected = match integrity_sha512(dist["integrity"].as_str().unwrap_or_default()) {
            Some(b64) => Expected::Sha512(
                base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| InstallError::BadResponse {
                        url: url.clone(),
                        detail: format!("integrity is not base64: {e}"),
                    })?,
            ),
            None => Expected::Unpublished(format!(
                "the registry ({}) publishes no SHA-512 integrity for {name}@{version}",
                self.url
            )),
        };
        Ok(Dist {
            tarball: tarball.to_string(),
            expected,
        })
    }
}

/// The base64 SHA-512 of an `integrity` string (Subresource Integrity: one or more
/// space-separated `<algorithm>-<base64>`; weaker algorithms are ignored).
fn integrity_sha512(integrity: &str) -> Option<&str> {
    integrity
        .split_whitespace()
        .find_map(|hash| hash.strip_prefix("sha512-"))
        .map(|b64| b64.split('?').next().unwrap_or(b64))
}

/// npm's configured registry: its environment variable, the user's `.npmrc`, then
/// `npm config get registry`.
async fn from_npm_config() -> Option<String> {
    for var in ["npm_config_registry", "NPM_CONFIG_REGISTRY"] {
        if let Ok(url) = std::env::var(var)
            && !url.trim().is_empty()
        {
            return Some(url.trim().to_string());
        }
    }
    let userconfig = std::env::var_os("NPM_CONFIG_USERCONFIG")
        .or_else(|| std::env::var_os("npm_config_userconfig"))
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".npmrc")));
    if let Some(url) = userconfig
        .and_then(|path| std::fs::read_to_string(path).ok())
        .and_then(|text| npmrc_registry(&text))
    {
        return Some(url);
    }
    let npm = which("npm")?;
    let output = tokio::time::timeout(
        Duration::from_secs(10),
        npm_command(&npm, None)
            .args(["config", "get", "registry"])
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .ok()?
    .ok()?;
    let url = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (output.status.success() && url.starts_with("http")).then_some(url)
}

/// The `registry=` line of an `.npmrc`.
fn npmrc_registry(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.starts_with(['#', ';']))
        .find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "registry").then(|| value.trim().trim_matches('"').to_string())
        })
        .filter(|url| !url.is_empty())
}

/// Installs the Node package `name@version` with its dependencies into `dir` (as
/// `dir/node_modules/<name>`) with the machine's npm, from `registry`, running no install
/// scripts. Node.js itself must be on `PATH`: the agent runs on it.
pub async fn install_node_package(
    registry: &Registry,
    name: &str,
    version: &str,
    dir: &Path,
) -> Result<(), InstallError> {
    which("node").ok_or_else(|| {
        InstallError::MissingTool(format!(
            "{name} runs on Node.js, and no `node` was found on PATH: install Node.js 20 or newer"
        ))
    })?;
    let npm = which("npm").ok_or_else(|| {
        InstallError::MissingTool(format!(
            "installing {name} (a Node.js package with dependencies) needs npm, and no `npm` was found on PATH"
        ))
    })?;
    let manifest = serde_json::json!({
        "name": "sandbox-daemon-agent",
        "private": true,
        "dependencies": { name: version },
    });
    std::fs::write(dir.join("package.json"), manifest.to_string())
        .map_err(|e| InstallError::io("writing package.json", dir, e))?;
    let output = npm_command(&npm, Some(registry.url()))
        .args([
            "install",
            "--omit=dev",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
            "--loglevel=error",
            "--registry",
            registry.url(),
        ])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| InstallError::io("running npm", dir, e))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        return Err(InstallError::Npm(
            tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        ));
    }
    Ok(())
}

/// Variables npm gets from the daemon's environment besides the agents' own allow-list
/// ([`sandbox_agents::process::INHERITED_VARS`]: `PATH`, locale, `TMPDIR`, proxies, CA
/// settings): the daemon's `HOME`, where npm keeps its cache and reads `.npmrc`.
const NPM_VARS: &[&str] = &["HOME"];

/// Whether `name` is one of npm's own settings (`npm_config_<key>`, any case).
fn is_npm_setting(name: &str) -> bool {
    name.get(..11)
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case("npm_config_"))
}

/// The environment npm runs with, from `vars` (the daemon's environment): the agents'
/// allow-list, `HOME`, npm's own `npm_config_*` settings, and `registry` (the one the
/// daemon resolved) as npm's registry setting. Nothing else: not the daemon's token, not
/// provider keys, not the GitHub token.
pub fn npm_env(
    vars: impl IntoIterator<Item = (String, String)>,
    registry: Option<&str>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = vars
        .into_iter()
        .filter(|(name, _)| {
            sandbox_agents::process::INHERITED_VARS.contains(&name.as_str())
                || NPM_VARS.contains(&name.as_str())
                || is_npm_setting(name)
        })
        .collect();
    env.entry("PATH".into())
        .or_insert_with(|| "/usr/local/bin:/usr/bin:/bin".into());
    if let Some(registry) = registry {
        env.retain(|name, _| !name.eq_ignore_ascii_case("npm_config_registry"));
        env.insert("npm_config_registry".into(), registry.into());
    }
    env
}

/// `npm` with exactly [`npm_env`] of the daemon's environment.
fn npm_command(npm: &Path, registry: Option<&str>) -> tokio::process::Command {
    let env = npm_env(
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        registry,
    );
    sandbox_agents::process::helper_command(npm, env)
}

/// `program` on `PATH`.
fn which(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| {
            std::fs::metadata(path)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_line_of_an_npmrc() {
        assert_eq!(
            npmrc_registry("# comment\nfoo=1\nregistry = http://127.0.0.1:4873/ \n"),
            Some("http://127.0.0.1:4873/".into())
        );
        assert_eq!(npmrc_registry("; registry=http://x\n"), None);
        assert_eq!(npmrc_registry("//127.0.0.1/:_authToken=abc\n"), None);
    }

    #[test]
    fn npm_gets_its_settings_and_no_secrets() {
        let vars = [
            ("PATH", "/bin"),
            ("HOME", "/home/d"),
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("NODE_EXTRA_CA_CERTS", "/ca.pem"),
            ("npm_config_cache", "/cache"),
            ("NPM_CONFIG_REGISTRY", "http://other/"),
            ("SANDBOX_DAEMON_TOKEN", "secret"),
            ("ANTHROPIC_API_KEY", "secret"),
            ("OPENAI_API_KEY", "secret"),
            ("GITHUB_TOKEN", "secret"),
            ("SANDBOX_DAEMON_GITHUB_TOKEN", "secret"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("npm", "not a setting"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let env = npm_env(vars.clone(), Some("http://127.0.0.1:9/npm"));
        let names: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "HOME",
                "HTTPS_PROXY",
                "NODE_EXTRA_CA_CERTS",
                "PATH",
                "npm_config_cache",
                "npm_config_registry"
            ]
        );
        assert_eq!(env["npm_config_registry"], "http://127.0.0.1:9/npm");
        assert!(env.values().all(|v| v != "secret"));
        // Without a resolved registry, npm's own setting stays.
        let env = npm_env(vars, None);
        assert_eq!(env["NPM_CONFIG_REGISTRY"], "http://other/");
    }

    #[test]
    fn the_sha512_of_an_integrity_string() {
        assert_eq!(integrity_sha512("sha512-AAAA"), Some("AAAA"));
        assert_eq!(integrity_sha512("sha1-BBBB sha512-AAAA?opt"), Some("AAAA"));
        assert_eq!(integrity_sha512("sha1-BBBB"), None);
        assert_eq!(integrity_sha512(""), None);
    }
}
