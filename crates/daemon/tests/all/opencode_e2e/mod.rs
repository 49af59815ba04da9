//! OpenCode with the real pinned `opencode serve`, in the loopback-only namespace against
//! the test kit's fake provider.
//!
//! Below the daemon:
//! - `server`: one server started with the daemon's launch (config, key files, password),
//!   its event stream, its death and its stop;
//! - `pool`: servers shared by isolation key, separated by token, restarted after a kill with
//!   the conversation kept, stopped with their last session;
//! - `session`: one session: a text turn and a tool turn with a permission.
//!
//! Through the daemon (`harness`): `turns`, `hitl`, `servers`. Each test claims the
//! capability flags it proves (`CLAIMS`); `capabilities_are_truthful` checks that the flags
//! `GET /agents` reports are exactly the claimed ones.

mod harness;
mod hitl;
mod pool;
mod server;
mod servers;
mod session;
mod turns;

use crate::common::TestDaemon;
use crate::common::agent_events::assert_claims_are_reported;
use sandbox_universal::AgentId;

/// Which capability flags each test proves with the real CLI.
pub const CLAIMS: &[(&str, &[&str])] = &[
    (
        "text_reasoning_and_three_turns",
        &[
            "textMessages",
            "streamingDeltas",
            "reasoning",
            "multiTurn",
            "usage",
        ],
    ),
    (
        "models_modes_and_variants_are_live_and_checked",
        &["models", "variants", "agentModes"],
    ),
    ("cancel_during_slow_reply", &["cancel"]),
    ("validate_token_checks_the_key", &["validateToken"]),
    (
        "command_permission_once_reject_always",
        &["commandExecution", "permissions", "permissionAlways"],
    ),
    ("write_with_diff_and_file_on_disk", &["fileChanges"]),
    (
        "question_answered_and_rejected",
        &["questions", "toolCalls"],
    ),
    (
        "daemon_restart_then_the_conversation_continues",
        &["resume"],
    ),
];

#[tokio::test]
async fn capabilities_are_truthful() {
    // No agent runs here: `GET /agents` reports static flags.
    let daemon = TestDaemon::start().await;
    assert_claims_are_reported(&daemon.client, AgentId::Opencode, CLAIMS).await;
}
