//! Portable Pi sessions over the daemon's HTTP API, on the real pinned `pi --mode rpc`
//! offline against the test kit's provider (see [`crate::common::moving`]).

use sandbox_universal::AgentId;

use crate::common::moving;

/// Export → import into another daemon and another cwd → the next message carries the
/// earlier turn, its `bash` call and output, and only the new directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_moves_to_another_daemon_and_directory_and_goes_on() {
    sandbox_testkit::isolate!();
    moving::a_session_moves_and_goes_on(AgentId::Pi, "bash", true).await;
}

/// A mock session handed over to Pi: Pi's next request carries the conversation as its
/// own session (the command as a `bash` call with its result).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_agents_conversation_is_handed_over_and_goes_on() {
    sandbox_testkit::isolate!();
    moving::another_agents_conversation_goes_on(AgentId::Pi, "bash").await;
}
