//! Shared by the smoke tests: run a scenario (skipping loudly when the agent is not
//! installed), print its timing, panic with the transcript tail when it fails.

use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::scenarios::{self, Options, Run};

/// Runs `agent/name` in a temporary directory (removed afterwards); `None` when the
/// agent is not installed (after a loud skip message; a panic when
/// `SANDBOX_REQUIRE_AGENTS=1`).
pub async fn scenario(agent: Agent, name: &str) -> Option<Run> {
    scenario_with(agent, name, Options::default()).await
}

/// [`scenario`] with these options.
#[allow(dead_code, reason = "not every test binary sets options")]
pub async fn scenario_with(agent: Agent, name: &str, options: Options) -> Option<Run> {
    agents::require(agent)?;
    let dir = tempfile::tempdir().expect("tempdir");
    let run = match scenarios::run_with(agent, name, dir.path(), options).await {
        Ok(run) => run,
        Err(error) => panic!("{error}"),
    };
    println!(
        "[smoke] {agent}/{name}: {:.2} s, {} model calls",
        run.elapsed.as_secs_f64(),
        run.model_requests().len()
    );
    Some(run)
}
