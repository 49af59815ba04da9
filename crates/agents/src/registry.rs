//! The table of every known agent and its driver.

use std::collections::BTreeMap;
use std::sync::Arc;

use sandbox_universal::AgentId;

use crate::AgentDriver;
use crate::amp::AmpDriver;
use crate::claude::ClaudeDriver;
use crate::codex::CodexDriver;
use crate::context::DriverContext;
use crate::mock::MockDriver;
use crate::opencode::OpenCodeDriver;
use crate::pi::PiDriver;

/// Every known agent, each with its driver.
#[derive(Clone)]
pub struct AgentRegistry {
    drivers: BTreeMap<AgentId, Arc<dyn AgentDriver>>,
}

impl AgentRegistry {
    /// The registry of this build: every agent's driver (the match is exhaustive, so a
    /// new agent id does not build without one).
    pub fn new(context: Arc<DriverContext>) -> Self {
        let driver = |agent: AgentId| -> Arc<dyn AgentDriver> {
            let context = context.clone();
            match agent {
                AgentId::Mock => Arc::new(MockDriver),
                AgentId::Claude => Arc::new(ClaudeDriver::new(context)),
                AgentId::Codex => Arc::new(CodexDriver::new(context)),
                AgentId::Opencode => Arc::new(OpenCodeDriver::new(context)),
                AgentId::Amp => Arc::new(AmpDriver::new(context)),
                AgentId::Pi => Arc::new(PiDriver::new(context)),
            }
        };
        let drivers = AgentId::ALL
            .into_iter()
            .map(|agent| (agent, driver(agent)))
            .collect();
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
