//! How each agent's capability flags were proven: the record of the last full run of the
//! end-to-end scenario table (`crates/daemon/tests/all/scenarios/`), kept in
//! `proofs.json` beside this file. The table checks its run against the record (and
//! rewrites it with `SANDBOX_E2E_RECORD=1`); a test without agents checks that every
//! driver's `true` flags are exactly the recorded proofs; `GET /agents` serves them.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use sandbox_universal::{AgentId, CapabilityProof};
use serde::{Deserialize, Serialize};

/// The recorded run, as committed.
pub const RECORDED: &str = include_str!("proofs.json");

/// One agent's run of the table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProofs {
    /// What ran behind the agent (the real CLI and its version, the mock, a stand-in).
    pub ran_with: String,
    /// Each passed scenario and the flags it proved.
    pub passed: BTreeMap<String, Vec<String>>,
    /// Each scenario that did not run for this agent, and why.
    pub not_run: BTreeMap<String, String>,
}

impl AgentProofs {
    /// Each proved flag and the scenarios (in name order) that proved it.
    pub fn flags(&self) -> BTreeMap<String, Vec<String>> {
        let mut flags: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (scenario, proved) in &self.passed {
            for flag in proved {
                flags
                    .entry(flag.clone())
                    .or_default()
                    .push(scenario.clone());
            }
        }
        flags
    }
}

/// Every agent's record, keyed by agent id.
pub type Proofs = BTreeMap<String, AgentProofs>;

static PARSED: LazyLock<Proofs> = LazyLock::new(|| parse(RECORDED));

/// Parses a record; a malformed one is a build defect, caught by the tests.
pub fn parse(text: &str) -> Proofs {
    serde_json::from_str(text).expect("proofs.json is a valid record")
}

/// The committed record.
pub fn recorded() -> &'static Proofs {
    &PARSED
}

/// How each of `agent`'s flags was proven, for `GET /agents`.
pub fn capability_proofs(agent: AgentId) -> BTreeMap<String, CapabilityProof> {
    let Some(proofs) = recorded().get(agent.as_str()) else {
        return BTreeMap::new();
    };
    proofs
        .flags()
        .into_iter()
        .map(|(flag, scenarios)| {
            let proof = CapabilityProof {
                scenarios,
                ran_with: proofs.ran_with.clone(),
            };
            (flag, proof)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_parses_and_names_known_agents() {
        for agent in recorded().keys() {
            assert!(agent.parse::<AgentId>().is_ok(), "unknown agent `{agent}`");
        }
    }

    #[test]
    fn flags_are_grouped_by_scenario() {
        let proofs = AgentProofs {
            ran_with: "x".into(),
            passed: BTreeMap::from([
                ("a".into(), vec!["cancel".into(), "usage".into()]),
                ("b".into(), vec!["usage".into()]),
            ]),
            not_run: BTreeMap::new(),
        };
        let flags = proofs.flags();
        assert_eq!(flags["usage"], ["a", "b"]);
        assert_eq!(flags["cancel"], ["a"]);
    }
}
