//! Amp through the daemon. Amp's agent loop runs on Amp's servers, so a turn cannot
//! complete offline: `real` checks what the real pinned binary does without the service
//! (its version, a fast `tokenError` without a key, a clear `error` when the service is
//! unreachable); `standin` drives the daemon's whole Amp lifecycle — a process per turn,
//! threads continued, the delegate permission round trip, cancel, crash, restart — against
//! `crates/testkit/standins/amp`, a STAND-IN that replays Amp's documented stream on Amp's
//! documented flags (it is not Amp).
//!
//! Each test claims the capability flags it proves (`CLAIMS`); `capabilities_are_truthful`
//! checks that the flags `GET /agents` reports are exactly the claimed ones.

mod harness;
mod real;
mod standin;

use crate::common::TestDaemon;
use crate::common::agent_events::assert_claims_are_reported;
use sandbox_universal::AgentId;

/// Which capability flags each test proves (against the stand-in: see the module doc).
pub const CLAIMS: &[(&str, &[&str])] = &[
    (
        "turns_continue_the_thread",
        &["textMessages", "multiTurn", "agentModes"],
    ),
    ("reasoning_when_asked", &["reasoning"]),
    (
        "command_permission_once_reject_always",
        &[
            "toolCalls",
            "commandExecution",
            "permissions",
            "permissionAlways",
        ],
    ),
    ("patch_with_its_diff_and_the_file_on_disk", &["fileChanges"]),
    ("cancel_kills_the_turn", &["cancel"]),
    ("daemon_restart_continues_the_thread", &["resume"]),
];

#[tokio::test]
async fn capabilities_are_truthful() {
    let daemon = TestDaemon::start().await;
    assert_claims_are_reported(&daemon.client, AgentId::Amp, CLAIMS).await;
}
