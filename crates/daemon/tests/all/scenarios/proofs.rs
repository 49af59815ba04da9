//! The record of what each agent's run of the table proved (`crates/agents/src/proofs.json`)
//! and the README's agent table generated from it: checked after a full run, rewritten
//! with `SANDBOX_E2E_RECORD=1`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

pub use sandbox_agents::proofs::AgentProofs;
use sandbox_agents::proofs::{Proofs, parse};
use sandbox_universal::{AgentCapabilities, AgentId};

use sandbox_agents::context::display_name;

use super::subject::Subject;
use super::{Proved, table};
use crate::common::TestDaemon;

/// The agents in the README's column order.
const COLUMNS: [AgentId; 6] = [
    AgentId::Claude,
    AgentId::Codex,
    AgentId::Opencode,
    AgentId::Pi,
    AgentId::Amp,
    AgentId::Mock,
];
const BEGIN: &str = "<!-- scenario-table: generated from crates/agents/src/proofs.json -->";
const END: &str = "<!-- scenario-table: end -->";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn record_path() -> PathBuf {
    repo().join("crates/agents/src/proofs.json")
}

fn recording() -> bool {
    std::env::var("SANDBOX_E2E_RECORD").is_ok_and(|v| v == "1")
}

/// The names of the `true` flags.
pub fn true_flags(caps: &AgentCapabilities) -> BTreeSet<String> {
    serde_json::to_value(caps)
        .unwrap()
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v.as_bool() == Some(true))
        .map(|(k, _)| k.clone())
        .collect()
}

/// The record of one full run.
pub fn from_run(
    subject: &Subject,
    passed: &BTreeMap<&'static str, Proved>,
    not_run: &BTreeMap<&'static str, &'static str>,
) -> AgentProofs {
    AgentProofs {
        ran_with: subject.ran_with(),
        passed: passed
            .iter()
            .map(|(name, flags)| {
                let flags: BTreeSet<String> = flags.iter().map(|f| f.to_string()).collect();
                (name.to_string(), flags.into_iter().collect())
            })
            .collect(),
        not_run: not_run
            .iter()
            .map(|(name, why)| (name.to_string(), why.to_string()))
            .collect(),
    }
}

/// Checks `run` against the record, or (recording) writes it into the record and the
/// README. Agents run in separate processes: the record is locked while it changes.
pub fn check_or_record(agent: AgentId, run: AgentProofs) {
    if !recording() {
        let recorded = parse(sandbox_agents::proofs::RECORDED);
        assert_eq!(
            recorded.get(agent.as_str()),
            Some(&run),
            "{agent}: the run differs from crates/agents/src/proofs.json; if the change is \
             right, run the table again with SANDBOX_E2E_RECORD=1"
        );
        return;
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(record_path())
        .unwrap();
    file.lock().unwrap();
    let mut text = String::new();
    file.read_to_string(&mut text).unwrap();
    let mut proofs: Proofs = parse(&text);
    proofs.insert(agent.to_string(), run);
    let text = serde_json::to_string_pretty(&proofs).unwrap() + "\n";
    file.set_len(0).unwrap();
    file.rewind().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    write_readme(&proofs);
    println!("[scenarios {agent}] recorded in crates/agents/src/proofs.json and README.md");
}

/// The README's generated section for `proofs`.
pub fn readme_section(proofs: &Proofs) -> String {
    let header = |first: &str| {
        let names: Vec<String> = COLUMNS
            .iter()
            .map(|a| match a {
                AgentId::Amp => "Amp¹".to_string(),
                a => display_name(*a).to_string(),
            })
            .collect();
        format!(
            "| {first} | {} |\n|---|{}\n",
            names.join(" | "),
            "---|".repeat(COLUMNS.len())
        )
    };
    let of = |agent: AgentId| proofs.get(agent.as_str()).cloned().unwrap_or_default();
    let mut out = String::from(BEGIN);
    out.push_str(
        "\n\nEvery row runs through the daemon over HTTP for every agent whose capabilities \
         allow it, with the real pinned CLIs offline against the test kit's provider \
         (`cargo test -p sandbox-daemon --test all -- scenarios::`; \
         `SANDBOX_E2E_SCENARIOS=text,cancel` runs some rows). ✓ passed; ○ passed, and the \
         agent showed no such feature (it answered instead, or refused the request as \
         unsupported), which its capabilities say; – does not apply (why: \
         `crates/agents/src/proofs.json`). Every turn of every row is checked for \
         `unparsed` items (none) and for items left open.\n\n",
    );
    out.push_str(&header("scenario"));
    for scenario in table() {
        let cells: Vec<String> = COLUMNS
            .iter()
            .map(|a| {
                let proofs = of(*a);
                let cell = match proofs.passed.get(scenario.name) {
                    Some(shown) if shown.is_empty() && !scenario.proves.is_empty() => "○",
                    Some(_) => "✓",
                    None if proofs.not_run.contains_key(scenario.name) => "–",
                    None => "?",
                };
                // Amp's rows ran against its stand-in: each says so.
                match (a, cell) {
                    (AgentId::Amp, "✓" | "○") => format!("{cell}¹"),
                    _ => cell.to_string(),
                }
            })
            .collect();
        out.push_str(&format!(
            "| `{}`: {} | {} |\n",
            scenario.name,
            scenario.about,
            cells.join(" | ")
        ));
    }
    out.push_str("\nEach capability `GET /agents` claims, and the scenarios that proved it:\n\n");
    out.push_str(&header("capability"));
    let every_flag = serde_json::to_value(AgentCapabilities::default()).unwrap();
    // In name order, whatever order the type declares them in.
    let flags: BTreeSet<&String> = every_flag.as_object().unwrap().keys().collect();
    for flag in flags {
        let cells: Vec<String> = COLUMNS
            .iter()
            .map(|a| match of(*a).flags().get(flag) {
                Some(scenarios) => scenarios.join(", "),
                None => "–".into(),
            })
            .collect();
        out.push_str(&format!("| `{flag}` | {} |\n", cells.join(" | ")));
    }
    out.push_str(&format!(
        "\n¹ Amp: against {}; the real binary is checked for what it does offline \
         (`tests/all/amp_e2e/`).\n\n{END}",
        of(AgentId::Amp).ran_with
    ));
    out
}

/// The README with its generated section replaced.
fn readme_with(section: &str) -> (String, String) {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme
        .find(BEGIN)
        .expect("README has the scenario table's start marker");
    let end = readme
        .find(END)
        .expect("README has the scenario table's end marker")
        + END.len();
    let updated = format!("{}{section}{}", &readme[..start], &readme[end..]);
    (readme, updated)
}

fn write_readme(proofs: &Proofs) {
    let (_, updated) = readme_with(&readme_section(proofs));
    std::fs::write(repo().join("README.md"), updated).unwrap();
}

/// Every agent's claimed flags are exactly its recorded proofs, and the README shows the
/// table the record generates.
pub async fn check_claims_and_readme() {
    let proofs = sandbox_agents::proofs::recorded();
    let daemon = TestDaemon::start().await;
    let agents = daemon.client.list_agents().await.unwrap();
    for agent in COLUMNS {
        let info = agents.agents.iter().find(|a| a.id == agent).unwrap();
        let record = proofs
            .get(agent.as_str())
            .unwrap_or_else(|| panic!("{agent}: no record in crates/agents/src/proofs.json"));
        let proved: BTreeSet<String> = record.flags().into_keys().collect();
        assert_eq!(
            true_flags(&info.capabilities),
            proved,
            "{agent}: the claimed flags are not the recorded proofs"
        );
        let served: BTreeSet<String> = info.capability_proofs.keys().cloned().collect();
        assert_eq!(served, proved, "{agent}: GET /agents serves every proof");
        for scenario in record.passed.keys().chain(record.not_run.keys()) {
            assert!(
                table().iter().any(|s| s.name == scenario),
                "{agent}: the record names `{scenario}`, which the table does not have"
            );
        }
    }
    let (readme, updated) = readme_with(&readme_section(proofs));
    assert!(
        readme == updated,
        "README.md's agent table is not the one crates/agents/src/proofs.json generates; \
         run the table with SANDBOX_E2E_RECORD=1"
    );
}
