//! Pi end to end: the daemon drives the real pinned `pi --mode rpc` against the fake
//! provider (Anthropic Messages), inside a loopback-only network namespace. The daemon is
//! configured the way a user configures it (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, the
//! binary as `SANDBOX_DAEMON_PI_PATH` gives it). Permissions come from the daemon's own
//! extension (Pi has none built in).

mod harness;
mod lifecycle;
mod turns;

use crate::common::TestDaemon;
use crate::common::agent_events::assert_claims_are_reported;
use sandbox_universal::AgentId;

/// Which capability flags each test proves with the real CLI.
pub const CLAIMS: &[(&str, &[&str])] = &[
    (
        "text_three_turns_on_one_process",
        &["textMessages", "streamingDeltas", "multiTurn", "usage"],
    ),
    (
        "bash_permission_once_reject_always_and_a_write",
        &[
            "toolCalls",
            "commandExecution",
            "fileChanges",
            "permissions",
            "permissionAlways",
        ],
    ),
    ("cancel_during_a_slow_reply", &["cancel"]),
    ("kill_9_then_resume_with_history", &["resume"]),
    ("models_are_listed_live", &["models"]),
    (
        "a_thinking_level_reaches_the_model_and_reasoning_streams",
        &["reasoning", "variants"],
    ),
];

#[tokio::test]
async fn capabilities_are_truthful() {
    let daemon = TestDaemon::start().await;
    assert_claims_are_reported(&daemon.client, AgentId::Pi, CLAIMS).await;
}
