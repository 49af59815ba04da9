//! What every driver shares: where agent binaries are, the daemon's provider environment,
//! its data dir and executable; and the manifest's facts drivers ask for by agent.

use std::path::PathBuf;

use sandbox_universal::{AgentError, AgentId};

use crate::locate::BinaryLocator;
use crate::{BinaryStatus, ProviderEnv};

/// What drivers share: where binaries are and the daemon's provider environment.
#[derive(Debug)]
pub struct DriverContext {
    /// Finds agent binaries.
    pub locator: BinaryLocator,
    /// Provider credentials and endpoints from the daemon's environment.
    pub provider_env: ProviderEnv,
    /// The daemon's data directory: what a driver keeps across sessions lives under
    /// `<data_dir>/<agent>/` (OpenCode's servers, say).
    pub data_dir: PathBuf,
    /// The daemon's own executable: agents that ask permission through a program (Amp's
    /// `delegate`) run it (see `amp::relay`).
    pub executable: PathBuf,
}

impl DriverContext {
    /// The binary of `agent`, or a `notInstalled` error that says how to provide it.
    pub fn binary(&self, agent: AgentId) -> Result<PathBuf, AgentError> {
        self.locator
            .locate(agent, binary_names(agent))
            .ok_or_else(|| AgentError::NotInstalled {
                message: format!(
                    "{} was not found: set {} to the `{}` binary, put it in the daemon's install dir, or on PATH",
                    display_name(agent),
                    crate::locate::override_var(agent),
                    binary_names(agent)[0],
                ),
            })
    }

    /// The binary a session of `agent` runs: the requested `version` (which the daemon
    /// installs before starting the session), else the located binary.
    pub async fn session_binary(
        &self,
        agent: AgentId,
        version: Option<&str>,
    ) -> Result<PathBuf, AgentError> {
        let Some(version) = version else {
            return self.binary(agent);
        };
        self.locator
            .locate_version(agent, binary_names(agent), version)
            .await
            .ok_or_else(|| AgentError::NotInstalled {
                message: format!(
                    "{} {version} is not installed (install it with POST /agents/{}/install and {{\"version\":\"{version}\"}})",
                    display_name(agent),
                    agent.as_str(),
                ),
            })
    }

    /// Whether `agent`'s binary is installed, where, and its version.
    pub async fn status(&self, agent: AgentId) -> BinaryStatus {
        self.locator.status(agent, binary_names(agent)).await
    }
}

/// The binary names each agent is installed under (from the manifest).
pub fn binary_names(agent: AgentId) -> &'static [&'static str] {
    crate::manifest::spec(agent).binary_names
}

/// Display names (from the manifest).
pub fn display_name(agent: AgentId) -> &'static str {
    crate::manifest::spec(agent).display_name
}
