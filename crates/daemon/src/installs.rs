//! The daemon's side of installing agents: what `POST /agents/{agent}/install` and the lazy
//! install of a session's agent (on `POST /sessions/{id}`, and when a session is restored)
//! do with the installer (`sandbox-install`). Binaries the
//! user provides (`SANDBOX_DAEMON_<AGENT>_PATH`, `PATH`) are used before anything is
//! downloaded; an override is authoritative (no other version is installed next to it).

use std::path::PathBuf;
use std::sync::Arc;

use sandbox_agents::context::{DriverContext, binary_names, display_name};
use sandbox_agents::locate::BinaryOrigin;
use sandbox_agents::manifest;
use sandbox_install::{InstallError, Installer};
use sandbox_universal::{
    AgentError, AgentId, BinarySource, InstallProgress, InstallRequest, InstallResponse,
    InstalledVersion,
};

use crate::error::ApiError;

/// Installing agents, as this daemon is configured to.
#[derive(Debug)]
pub struct AgentInstalls {
    installer: Option<Installer>,
    auto_install: bool,
    context: Arc<DriverContext>,
}

impl AgentInstalls {
    /// Installs with `installer` (`None`: installing is off), lazily for sessions when
    /// `auto_install`.
    pub fn new(
        installer: Option<Installer>,
        auto_install: bool,
        context: Arc<DriverContext>,
    ) -> Self {
        Self {
            auto_install: auto_install && installer.is_some(),
            installer,
            context,
        }
    }

    /// The versions of `agent` installed in the data dir, the current one marked.
    pub fn installed_versions(&self, agent: AgentId) -> Vec<InstalledVersion> {
        let current = self
            .context
            .locator
            .install_dir()
            .and_then(|dir| sandbox_agents::locate::current_version(dir, agent));
        self.context
            .locator
            .installed(agent)
            .into_iter()
            .map(|(version, path)| InstalledVersion {
                current: current.as_deref() == Some(version.as_str()),
                version,
                path: path.display().to_string(),
            })
            .collect()
    }

    /// Where the binary in use came from (its receipt says for installed ones).
    pub fn source(
        &self,
        agent: AgentId,
        origin: Option<BinaryOrigin>,
        version: Option<&str>,
    ) -> Option<BinarySource> {
        if manifest::spec(agent).built_in() {
            return Some(BinarySource::BuiltIn);
        }
        Some(match origin? {
            BinaryOrigin::Override => BinarySource::Override,
            BinaryOrigin::Path => BinarySource::Path,
            BinaryOrigin::Installed => self
                .context
                .locator
                .install_dir()
                .zip(version)
                .and_then(|(dir, v)| sandbox_agents::locate::receipt(dir, agent, v))
                .and_then(|r| sandbox_install::installer::source_of(&r.source))
                .unwrap_or(BinarySource::Release),
        })
    }

    /// The binary of `agent` at `version` (any, when `None`) if it is here already.
    async fn present(
        &self,
        agent: AgentId,
        version: Option<&str>,
    ) -> Option<(PathBuf, Option<BinaryOrigin>)> {
        let locator = &self.context.locator;
        let names = binary_names(agent);
        let (path, origin) = locator.locate_with_origin(agent, names)?;
        match version {
            None => Some((path, Some(origin))),
            Some(version) => {
                let found = locator.locate_version(agent, names, version).await?;
                let origin = if found == path {
                    Some(origin)
                } else {
                    Some(BinaryOrigin::Installed)
                };
                Some((found, origin))
            }
        }
    }

    /// `POST /agents/{agent}/install`: what is here already answers at once (unless
    /// `reinstall`); otherwise the installer downloads it, reporting to `progress`.
    pub async fn install(
        &self,
        agent: AgentId,
        request: &InstallRequest,
        progress: &(dyn Fn(InstallProgress) + Send + Sync),
    ) -> Result<InstallResponse, ApiError> {
        let started = std::time::Instant::now();
        if manifest::spec(agent).built_in() {
            return Ok(InstallResponse {
                agent,
                already_installed: true,
                version: Some(env!("CARGO_PKG_VERSION").into()),
                path: None,
                source: Some(BinarySource::BuiltIn),
                size: 0,
                duration_ms: 0,
            });
        }
        let exact = exact_version(agent, request.version.as_deref());
        let overridden = self.context.locator.overridden(agent);
        if !request.reinstall || overridden {
            let wants_latest = request.version.as_deref() == Some("latest");
            if let Some((path, origin)) = self.present(agent, exact).await
                && (!wants_latest || overridden)
            {
                let version = self.context.locator.version_of(&path).await;
                return Ok(InstallResponse {
                    agent,
                    already_installed: true,
                    source: self.source(agent, origin, version.as_deref()),
                    version,
                    path: Some(path.display().to_string()),
                    size: 0,
                    duration_ms: started.elapsed().as_millis() as u64,
                });
            }
            if overridden {
                return Err(ApiError::InstallUnavailable(format!(
                    "{} names the {} binary this daemon uses{}; unset it to let the daemon install agents",
                    sandbox_agents::locate::override_var(agent),
                    display_name(agent),
                    exact
                        .map(|v| format!(", and it is not version {v}"))
                        .unwrap_or_default(),
                )));
            }
        }
        self.installer(agent)?
            .install(
                agent,
                request.version.as_deref(),
                request.reinstall,
                progress,
            )
            .await
            .map(|done| done.response())
            .map_err(|e| install_failure(e).into())
    }

    /// Before a session of `agent` starts: its binary (at `version`, when given) is here,
    /// or is installed now when lazy installs are on (a session created while the agent is
    /// being installed waits for that install). Answers the version the session runs when
    /// one was asked for (`pinned` and `latest` resolved), for its record.
    pub async fn ensure(
        &self,
        agent: AgentId,
        version: Option<&str>,
    ) -> Result<Option<String>, InstallFailure> {
        let exact = exact_version(agent, version);
        if manifest::spec(agent).built_in() || self.context.locator.overridden(agent) {
            return Ok(exact.map(str::to_string));
        }
        if version != Some("latest") && self.present(agent, exact).await.is_some() {
            return Ok(exact.map(str::to_string));
        }
        if !self.auto_install {
            // The driver reports what is missing, and how to provide it.
            return Ok(exact.map(str::to_string));
        }
        let done = self
            .installer(agent)?
            .install(agent, version, false, &|_| {})
            .await
            .map_err(install_failure)?;
        Ok(version.map(|_| done.version))
    }

    fn installer(&self, agent: AgentId) -> Result<&Installer, InstallFailure> {
        self.installer.as_ref().ok_or_else(|| {
            InstallFailure::Unavailable(format!(
                "this daemon does not install agents (it was started without an install configuration); provide the {} binary with {} or on PATH",
                display_name(agent),
                sandbox_agents::locate::override_var(agent),
            ))
        })
    }
}

/// The version a request names without asking the network: `pinned` resolved, `latest`
/// (and no version) unknown.
fn exact_version(agent: AgentId, requested: Option<&str>) -> Option<&str> {
    match requested {
        Some("pinned") => sandbox_agents::manifest::spec(agent).pinned_version(),
        Some("latest") => None,
        other => other,
    }
}

/// Why an agent could not be installed: what [`AgentInstalls::ensure`] answers a
/// session, and what `POST /agents/{agent}/install` turns into a problem.
#[derive(Debug, Clone, thiserror::Error)]
pub enum InstallFailure {
    /// Installing is not available: this daemon does not install agents, or an override
    /// names the binary it uses.
    #[error("{0}")]
    Unavailable(String),
    /// The requested version is not one the installer understands (the caller's error).
    #[error("{0}")]
    BadVersion(String),
    /// The download or the install failed (`installFailed`).
    #[error("the agent failed: {0}")]
    Failed(AgentError),
}

/// What an installer error means for the caller.
fn install_failure(error: InstallError) -> InstallFailure {
    match error {
        InstallError::BadVersion(_) => InstallFailure::BadVersion(error.to_string()),
        other => InstallFailure::Failed(AgentError::from(other)),
    }
}

impl From<InstallFailure> for ApiError {
    /// Not available is a 409, a bad version a 400, a failed install a 502.
    fn from(failure: InstallFailure) -> Self {
        match failure {
            InstallFailure::Unavailable(detail) => Self::InstallUnavailable(detail),
            InstallFailure::BadVersion(detail) => Self::InvalidParameter(detail),
            InstallFailure::Failed(error) => Self::Agent(error),
        }
    }
}
