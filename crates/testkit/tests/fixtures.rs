//! The committed fixtures: one per scenario, each a parseable native transcript.
//! Re-record with `cargo run -p sandbox-testkit --bin testkit -- record --all`.

use std::path::PathBuf;

use sandbox_testkit::drivers::Dir;
use sandbox_testkit::drivers::transcript::parse_jsonl;
use sandbox_testkit::scenarios;

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

#[test]
fn every_scenario_has_a_recorded_fixture() {
    for scenario in scenarios::all() {
        let path = fixtures_dir()
            .join(scenario.agent.id())
            .join(format!("{}.jsonl", scenario.name));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run `testkit record --all`)", path.display()));
        let lines = parse_jsonl(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            lines.iter().any(|l| l.dir == Dir::In),
            "{}: nothing sent",
            path.display()
        );
        assert!(
            lines.iter().filter(|l| l.dir == Dir::Out).count() > 3,
            "{}: too little output",
            path.display()
        );
    }
}

#[test]
fn no_fixture_without_a_scenario() {
    let all = scenarios::all();
    for agent_dir in std::fs::read_dir(fixtures_dir()).unwrap() {
        let agent_dir = agent_dir.unwrap().path();
        // Amp cannot run offline: its fixtures are written from its documented shapes
        // (fixtures/amp/README.md), not recorded by a scenario.
        if agent_dir.ends_with("amp") {
            continue;
        }
        for file in std::fs::read_dir(&agent_dir).unwrap() {
            let file = file.unwrap().path();
            let agent = agent_dir
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let name = file.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(
                all.iter().any(|s| s.agent.id() == agent && s.name == name),
                "stale fixture {}",
                file.display()
            );
        }
    }
}
