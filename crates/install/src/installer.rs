//! The installer: one install of one agent at a time (a lock per agent in this process and
//! a file lock across processes), each install resolved, downloaded, verified, unpacked,
//! run once (`--version`) and committed whole — or leaving nothing behind.
//!
//! Verification fails closed: a download nothing vouches for (no published checksum) is
//! refused before a byte is fetched, unless the operator allows unverified installs (then
//! it is installed with a loud warning). An agent whose release host publishes no
//! checksums at all (Amp) is installed from its npm platform package instead — the same
//! binary, held to the registry's SHA-512 integrity — whenever an npm registry is known.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_agents::locate::{self, InstallReceipt};
use sandbox_agents::manifest::{self, AgentSpec};
use sandbox_agents::platform::Platform;
use sandbox_agents::release::{Checksums, InstallSpec, NpmBinaries, ReleaseSource};
use sandbox_universal::{AgentId, BinarySource, InstallProgress};

use crate::config::{InstallConfig, SourceKind};
use crate::error::InstallError;
use crate::fetch::{Fetcher, hex};
use crate::layout::{AgentLock, Staging};
use crate::npm::{self, Registry};
use crate::plan::{self, Download, Expected, Plan};
use crate::unpack::unpack;

/// What an install did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The agent.
    pub agent: AgentId,
    /// The version now current.
    pub version: String,
    /// Its executable.
    pub path: PathBuf,
    /// Where it came from.
    pub source: BinarySource,
    /// Whether it was there already (nothing downloaded).
    pub already_installed: bool,
    /// Bytes downloaded.
    pub size: u64,
    /// How long it took.
    pub duration: Duration,
    /// The downloads installed without a published checksum, each with why (only when
    /// unverified installs are allowed; empty otherwise).
    pub unverified: Vec<String>,
}

impl Installed {
    /// The summary the API answers.
    pub fn response(&self) -> sandbox_universal::InstallResponse {
        sandbox_universal::InstallResponse {
            agent: self.agent,
            already_installed: self.already_installed,
            version: Some(self.version.clone()),
            path: Some(self.path.display().to_string()),
            source: Some(self.source),
            size: self.size,
            duration_ms: self.duration.as_millis() as u64,
        }
    }
}

/// Receives progress as an install goes.
pub type Progress<'a> = &'a (dyn Fn(InstallProgress) + Send + Sync);

/// Installs agents into one install directory.
#[derive(Debug)]
pub struct Installer {
    config: InstallConfig,
    fetcher: Fetcher,
    running: Mutex<HashMap<AgentId, Arc<tokio::sync::Mutex<()>>>>,
}

impl Installer {
    /// An installer following `config`.
    pub fn new(config: InstallConfig) -> Self {
        if config.allow_unverified {
            tracing::warn!(
                "unverified installs are allowed (--allow-unverified-installs): a download whose vendor publishes no checksum is installed without one"
            );
        }
        Self {
            fetcher: Fetcher::new(&config),
            config,
            running: Mutex::default(),
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &InstallConfig {
        &self.config
    }

    /// The machine installs are for.
    pub fn platform(&self) -> Result<Platform, InstallError> {
        self.config
            .platform
            .or_else(Platform::current)
            .ok_or_else(|| InstallError::UnsupportedPlatform {
                agent: "any agent".into(),
                platform: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
            })
    }

    /// Installs `agent` at `version` (`None`: the configured default; `pinned`, `latest`
    /// or a version) and makes it current, unless that version is installed already and
    /// `reinstall` is false. Waits for another install of the same agent (in this process
    /// or another) to finish first.
    pub async fn install(
        &self,
        agent: AgentId,
        version: Option<&str>,
        reinstall: bool,
        progress: Progress<'_>,
    ) -> Result<Installed, InstallError> {
        let started = Instant::now();
        let spec = manifest::spec(agent);
        let install = spec.install.ok_or_else(|| InstallError::NotInstallable {
            agent: spec.display_name.into(),
        })?;
        let requested = plan::requested(&self.config, version);
        plan::explicit(spec, &requested)?;
        let running = self
            .running
            .lock()
            .expect("install lock map")
            .entry(agent)
            .or_default()
            .clone();
        let _running = match running.try_lock() {
            Ok(guard) => guard,
            Err(_) => {
                progress(InstallProgress::Waiting {});
                running.lock().await
            }
        };
        if !AgentLock::is_free(&self.config.install_dir, agent) {
            progress(InstallProgress::Waiting {});
        }
        let lock = AgentLock::acquire(&self.config.install_dir, agent).await?;
        progress(InstallProgress::Resolving {
            requested: requested.clone(),
        });
        let fetcher = self.fetcher.for_agent(spec);
        let mut job = Job {
            installer: self,
            fetcher: &fetcher,
            spec,
            lock: &lock,
            reinstall,
            progress,
            started,
        };
        // A version known without asking the network, installed already: nothing to fetch.
        let known = plan::explicit(spec, &requested)?;
        let existing = match &known {
            Some(version) => job.existing(version, BinarySource::Release)?,
            None => None,
        };
        let result = match install {
            _ if existing.is_some() => Ok(existing.expect("checked")),
            InstallSpec::Native { release, npm } => {
                let platform = self.platform()?;
                let plan = match self.config.source {
                    SourceKind::Release if release.checksums == Checksums::None => {
                        self.unpublished_release(
                            &fetcher, spec, &release, &npm, platform, &requested,
                        )
                        .await?
                    }
                    SourceKind::Release => {
                        plan::release_plan(
                            &self.config,
                            &fetcher,
                            spec,
                            &release,
                            platform,
                            &requested,
                        )
                        .await?
                    }
                    SourceKind::Npm => {
                        let registry = Registry::discover(&self.config, &fetcher).await?;
                        plan::npm_plan(&registry, spec, &npm, platform, &requested).await?
                    }
                };
                job.native(plan).await
            }
            InstallSpec::Node { .. } => job.node(&requested).await,
        };
        match &result {
            Ok(done) if !done.already_installed => tracing::info!(
                agent = %agent.as_str(),
                version = %done.version,
                path = %done.path.display(),
                size = done.size,
                elapsed_ms = done.duration.as_millis() as u64,
                "installed"
            ),
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(agent = %agent.as_str(), %error, reason = error.reason(), "install failed")
            }
        }
        result
    }

    /// The plan for an agent whose release host publishes no checksums (Amp): its npm
    /// platform package (the same binary, verified by the registry's SHA-512 integrity)
    /// when an npm registry is configured or npm knows one; else the release file, which
    /// [`Job::native`] refuses unless unverified installs are allowed.
    async fn unpublished_release(
        &self,
        fetcher: &Fetcher,
        spec: &AgentSpec,
        release: &ReleaseSource,
        npm: &NpmBinaries,
        platform: Platform,
        requested: &str,
    ) -> Result<Plan, InstallError> {
        if release.platforms.get(platform).is_none() {
            return Err(InstallError::UnsupportedPlatform {
                agent: spec.display_name.into(),
                platform: platform.to_string(),
            });
        }
        match Registry::discover(&self.config, fetcher).await {
            Ok(registry) => {
                tracing::info!(
                    agent = spec.display_name,
                    registry = registry.url(),
                    "the release host publishes no checksums: installing the npm platform package, verified by the registry's integrity"
                );
                plan::npm_plan(&registry, spec, npm, platform, requested).await
            }
            Err(InstallError::NoRegistry) => {
                let mut plan =
                    plan::release_plan(&self.config, fetcher, spec, release, platform, requested)
                        .await?;
                for download in &mut plan.downloads {
                    download.expected = Expected::Unpublished(format!(
                        "{}'s release host publishes no checksums, and its npm platform package (held to the registry's SHA-512 integrity) needs an npm registry: none is configured (set --npm-registry or SANDBOX_DAEMON_NPM_REGISTRY, or npm's own `registry` setting)",
                        spec.display_name
                    ));
                }
                Ok(plan)
            }
            Err(other) => Err(other),
        }
    }
}

/// One install, under the agent's lock.
struct Job<'a> {
    installer: &'a Installer,
    /// The network, for this agent.
    fetcher: &'a Fetcher,
    spec: &'static AgentSpec,
    lock: &'a AgentLock,
    reinstall: bool,
    progress: Progress<'a>,
    started: Instant,
}

impl Job<'_> {
    fn install_dir(&self) -> &Path {
        &self.installer.config.install_dir
    }

    /// The version already installed, made current, when no reinstall is asked for.
    fn existing(
        &self,
        version: &str,
        source: BinarySource,
    ) -> Result<Option<Installed>, InstallError> {
        if self.reinstall {
            return Ok(None);
        }
        let Some(path) = locate::installed_executable(self.install_dir(), self.spec.id, version)
        else {
            return Ok(None);
        };
        self.lock.set_current(version)?;
        let source = locate::receipt(self.install_dir(), self.spec.id, version)
            .and_then(|r| source_of(&r.source))
            .unwrap_or(source);
        Ok(Some(Installed {
            agent: self.spec.id,
            version: version.into(),
            path,
            source,
            already_installed: true,
            size: 0,
            duration: self.started.elapsed(),
            unverified: Vec::new(),
        }))
    }

    /// Holds `expected` to the rule that every download is verified: nothing published
    /// for `url` refuses the install, unless unverified installs are allowed — then it is
    /// logged loudly and answered, to be reported with the install.
    fn vouched(&self, url: &str, expected: &Expected) -> Result<Option<String>, InstallError> {
        let Expected::Unpublished(reason) = expected else {
            return Ok(None);
        };
        if !self.installer.config.allow_unverified {
            return Err(InstallError::Unverified {
                url: url.into(),
                reason: reason.clone(),
                path_var: self.spec.path_var(),
            });
        }
        tracing::warn!(
            agent = self.spec.display_name,
            %url,
            %reason,
            "INSTALLING AN UNVERIFIED DOWNLOAD: no checksum is published for it, and --allow-unverified-installs accepts it anyway"
        );
        Ok(Some(format!("{url}: {reason}")))
    }

    async fn native(&mut self, plan: Plan) -> Result<Installed, InstallError> {
        if let Some(done) = self.existing(&plan.version, plan.source)? {
            return Ok(done);
        }
        // Before a byte is fetched: every download is vouched for, or allowed not to be.
        let mut unverified = Vec::new();
        for download in &plan.downloads {
            unverified.extend(self.vouched(&download.url, &download.expected)?);
        }
        let staging = self.lock.stage()?;
        let mut size = 0;
        let mut first: Option<(String, String)> = None;
        for (i, download) in plan.downloads.iter().enumerate() {
            let file = staging.path().join(format!(".download-{i}"));
            let progress = self.progress;
            let version = plan.version.clone();
            let url = download.url.clone();
            // At most ten frames a second, plus the first and the last.
            let mut last: Option<Instant> = None;
            let got = self
                .fetcher
                .download(
                    &download.url,
                    &file,
                    matches!(download.expected, Expected::Sha512(_)),
                    |bytes, total| {
                        let done = total == Some(bytes);
                        if !done && last.is_some_and(|t| t.elapsed() < Duration::from_millis(100)) {
                            return;
                        }
                        last = Some(Instant::now());
                        progress(InstallProgress::Downloading {
                            version: version.clone(),
                            url: url.clone(),
                            bytes,
                            total,
                        })
                    },
                )
                .await?;
            (self.progress)(InstallProgress::Verifying {
                version: plan.version.clone(),
            });
            check(download, &got)?;
            size += got.size;
            first.get_or_insert((download.url.clone(), got.sha256.clone()));
            let (archive, files, dir, url) = (
                download.archive,
                download.files.clone(),
                staging.path().to_path_buf(),
                download.url.clone(),
            );
            let unpacked = file.clone();
            tokio::task::spawn_blocking(move || unpack(&unpacked, archive, &files, &dir, &url))
                .await
                .expect("unpacking does not panic")?;
            let _ = std::fs::remove_file(&file);
        }
        let executable = plan.downloads[0].files[0].1.clone();
        let (url, sha256) = first.expect("a plan has a download");
        let mut done = self
            .finish(
                staging,
                &plan.version,
                &executable,
                plan.source,
                url,
                size,
                sha256,
            )
            .await?;
        done.unverified = unverified;
        Ok(done)
    }

    async fn node(&mut self, requested: &str) -> Result<Installed, InstallError> {
        let package = self.spec.npm.ok_or_else(|| InstallError::NotInstallable {
            agent: self.spec.display_name.into(),
        })?;
        let executable = self
            .spec
            .installed_executable()
            .expect("a Node agent has a script");
        let registry = Registry::discover(&self.installer.config, self.fetcher).await?;
        let version = match plan::explicit(self.spec, requested)? {
            Some(version) => version,
            None => registry.latest(package.name).await?,
        };
        if let Some(done) = self.existing(&version, BinarySource::Npm)? {
            return Ok(done);
        }
        // The registry answers and has that version (npm itself would retry for a minute),
        // and vouches for it: npm then holds every tarball to the registry's integrity.
        let dist = registry.dist(package.name, &version).await?;
        let unverified: Vec<String> = self
            .vouched(&dist.tarball, &dist.expected)?
            .into_iter()
            .collect();
        let staging = self.lock.stage()?;
        (self.progress)(InstallProgress::Downloading {
            version: version.clone(),
            url: registry.url().to_string(),
            bytes: 0,
            total: None,
        });
        npm::install_node_package(&registry, package.name, &version, staging.path()).await?;
        (self.progress)(InstallProgress::Verifying {
            version: version.clone(),
        });
        let script = staging.path().join(&executable);
        mark_executable(&script)?;
        let size = dir_size(staging.path());
        let url = format!("{}/{}", registry.url(), package.name);
        let mut done = self
            .finish(
                staging,
                &version,
                &executable,
                BinarySource::Npm,
                url,
                size,
                String::new(),
            )
            .await?;
        done.unverified = unverified;
        Ok(done)
    }

    /// Runs the staged executable's `--version`, then commits the staging directory and
    /// makes the version current.
    #[allow(clippy::too_many_arguments)]
    async fn finish(
        &self,
        staging: Staging,
        version: &str,
        executable: &str,
        source: BinarySource,
        url: String,
        size: u64,
        sha256: String,
    ) -> Result<Installed, InstallError> {
        let staged = staging.path().join(executable);
        verify_version(self.spec, &staged, version).await?;
        let receipt = InstallReceipt {
            version: version.into(),
            executable: executable.into(),
            source: source_name(source).into(),
            url,
            size,
            sha256,
            installed_at: chrono::Utc::now().to_rfc3339(),
        };
        let dir = staging.commit(self.lock, &receipt)?;
        self.lock.set_current(version)?;
        Ok(Installed {
            agent: self.spec.id,
            version: version.into(),
            path: dir.join(executable),
            source,
            already_installed: false,
            size,
            duration: self.started.elapsed(),
            unverified: Vec::new(),
        })
    }
}

/// Holds a download to what was published for it (a download with nothing published got
/// this far only when allowed: [`Job::vouched`]).
fn check(download: &Download, got: &crate::fetch::Downloaded) -> Result<(), InstallError> {
    let corrupt = |detail: String| InstallError::Corrupt {
        what: "the download".into(),
        url: download.url.clone(),
        detail,
    };
    match &download.expected {
        Expected::Unpublished(_) => Ok(()),
        Expected::Sha256 {
            size: Some(size), ..
        } if *size != got.size => Err(corrupt(format!(
            "{} bytes where {size} were published",
            got.size
        ))),
        Expected::Sha256 { hex, .. } if *hex != got.sha256 => Err(corrupt(format!(
            "SHA-256 {} where {hex} was published",
            got.sha256
        ))),
        Expected::Sha512(want) if got.sha512.as_ref() != Some(want) => Err(corrupt(format!(
            "SHA-512 {} where the registry's integrity is {}",
            got.sha512.as_deref().map(hex).unwrap_or_default(),
            hex(want)
        ))),
        _ => Ok(()),
    }
}

/// Runs `<exe> --version` the way agents run and holds it to `version`.
async fn verify_version(spec: &AgentSpec, exe: &Path, version: &str) -> Result<(), InstallError> {
    let failed = |detail: String| InstallError::Verification {
        agent: spec.display_name.into(),
        detail,
    };
    let output = sandbox_agents::process::probe(exe, &["--version"], Duration::from_secs(30))
        .await
        .ok_or_else(|| failed(format!("`{} --version` did not run", exe.display())))?;
    let text = locate::version_text(&output);
    match locate::parse_version(&text) {
        Some(found) if found == version => Ok(()),
        Some(found) => Err(failed(format!("it reports version {found}, not {version}"))),
        None => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            Err(failed(format!(
                "`--version` printed no version (exit {}, stdout {:?}, stderr ends {:?})",
                output.status,
                text.chars().take(200).collect::<String>(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
            )))
        }
    }
}

fn mark_executable(path: &Path) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| InstallError::io("marking executable", path, e))
}

fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// The receipt's name of a source.
pub fn source_name(source: BinarySource) -> &'static str {
    match source {
        BinarySource::Release => "release",
        BinarySource::Mirror => "mirror",
        BinarySource::Npm => "npm",
        BinarySource::Override => "override",
        BinarySource::Path => "path",
        BinarySource::BuiltIn => "builtIn",
    }
}

/// The source a receipt names.
pub fn source_of(name: &str) -> Option<BinarySource> {
    Some(match name {
        "release" => BinarySource::Release,
        "mirror" => BinarySource::Mirror,
        "npm" => BinarySource::Npm,
        _ => return None,
    })
}
