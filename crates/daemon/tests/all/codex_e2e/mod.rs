//! Codex end to end: the daemon drives the real pinned `codex app-server` against the fake
//! provider, inside a loopback-only network namespace (`isolate!`). The daemon is set up
//! the way a user sets it up: `OPENAI_API_KEY` and `OPENAI_BASE_URL` in its provider
//! environment and the binary given as `SANDBOX_DAEMON_CODEX_PATH` would give it.
//!
//! Each test claims the capability flags it proves (`CLAIMS`); `capabilities_are_truthful`
//! checks that the flags `GET /agents` reports are exactly the claimed ones.

use crate::common;
mod harness;
mod hitl;
mod lifecycle;
mod turns;

use common::TestDaemon;
use common::agent_events::assert_claims_are_reported;
use sandbox_universal::AgentId;

/// Which capability flags each test proves with the real CLI.
pub const CLAIMS: &[(&str, &[&str])] = &[
    (
        "text_reasoning_three_turns_and_variant",
        &[
            "textMessages",
            "streamingDeltas",
            "reasoning",
            "multiTurn",
            "usage",
            "variants",
        ],
    ),
    (
        "command_approvals_once_reject_always",
        &["commandExecution", "permissions", "permissionAlways"],
    ),
    ("apply_patch_with_approval_and_modes", &["fileChanges"]),
    ("question_is_answered", &["questions", "toolCalls"]),
    ("cancel_during_slow_reply", &["cancel"]),
    ("kill_9_then_resume", &["resume"]),
    ("daemon_restart_then_resume", &["resume"]),
    ("models_are_listed_live", &["models"]),
    ("validate_token_checks_the_key", &["validateToken"]),
];

#[tokio::test]
async fn capabilities_are_truthful() {
    // No agent runs here: `GET /agents` reports static flags.
    let daemon = TestDaemon::start().await;
    assert_claims_are_reported(&daemon.client, AgentId::Codex, CLAIMS).await;
}
