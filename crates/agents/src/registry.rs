//! The table of every known agent and its driver.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use sandbox_universal::{
    AgentCapabilities, AgentError, AgentId, ModelsResponse, ModesResponse, PermissionMode,
};

use crate::amp::AmpDriver;
use crate::claude::ClaudeDriver;
use crate::codex::CodexDriver;
use crate::locate::BinaryLocator;
use crate::mock::MockDriver;
use crate::opencode::OpenCodeDriver;
use crate::pi::PiDriver;
use crate::{AgentDriver, AgentSession, BinaryStatus, EventSink, ProviderEnv, SessionConfig};

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

/// Every known agent, each with its driver.
#[derive(Clone)]
pub struct AgentRegistry {
    drivers: BTreeMap<AgentId, Arc<dyn AgentDriver>>,
}

impl AgentRegistry {
    /// The registry of this build: real drivers where they exist, and drivers that report
    /// "not supported yet" (with truthful install status) for the others.
    pub fn new(context: Arc<DriverContext>) -> Self {
        let mut drivers: BTreeMap<AgentId, Arc<dyn AgentDriver>> = BTreeMap::new();
        drivers.insert(AgentId::Mock, Arc::new(MockDriver));
        drivers.insert(
            AgentId::Claude,
            Arc::new(ClaudeDriver::new(context.clone())),
        );
        drivers.insert(AgentId::Codex, Arc::new(CodexDriver::new(context.clone())));
        drivers.insert(AgentId::Amp, Arc::new(AmpDriver::new(context.clone())));
        drivers.insert(AgentId::Pi, Arc::new(PiDriver::new(context.clone())));
        drivers.insert(
            AgentId::Opencode,
            Arc::new(OpenCodeDriver::new(context.clone())),
        );
        for agent in AgentId::ALL {
            drivers
                .entry(agent)
                .or_insert_with(|| Arc::new(UnsupportedDriver::new(agent, context.clone())));
        }
        Self { drivers }
    }

    /// The driver of `agent`.
    pub fn get(&self, agent: AgentId) -> Arc<dyn AgentDriver> {
        self.drivers
            .get(&agent)
            .cloned()
            .expect("every agent has a driver")
    }

    /// Every driver, in [`AgentId`] order.
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn AgentDriver>> {
        self.drivers.values()
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

/// A known agent this build cannot drive yet: it reports whether the binary is installed,
/// advertises no capabilities, and refuses to start sessions with `unsupportedAgent`.
struct UnsupportedDriver {
    agent: AgentId,
    context: Arc<DriverContext>,
}

impl UnsupportedDriver {
    fn new(agent: AgentId, context: Arc<DriverContext>) -> Self {
        Self { agent, context }
    }

    fn error(&self) -> AgentError {
        AgentError::UnsupportedAgent {
            message: format!(
                "this daemon build cannot drive {} sessions yet",
                display_name(self.agent)
            ),
        }
    }
}

#[async_trait]
impl AgentDriver for UnsupportedDriver {
    fn id(&self) -> AgentId {
        self.agent
    }

    fn name(&self) -> &'static str {
        display_name(self.agent)
    }

    fn supported(&self) -> bool {
        false
    }

    fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities::default()
    }

    async fn status(&self) -> BinaryStatus {
        self.context.status(self.agent).await
    }

    async fn models(&self) -> Result<ModelsResponse, AgentError> {
        Err(self.error())
    }

    async fn modes(&self) -> Result<ModesResponse, AgentError> {
        Ok(ModesResponse {
            modes: Vec::new(),
            default_mode: None,
            permission_modes: vec![PermissionMode::Default],
        })
    }

    async fn start(
        &self,
        _config: SessionConfig,
        _sink: EventSink,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        Err(self.error())
    }
}
