//! Portable Codex sessions on the real `codex app-server`, offline against the test kit's
//! provider on Codex's default model: a thread exported, imported into another daemon's
//! fresh `CODEX_HOME` and another cwd, and continued; and another agent's conversation
//! written as a rollout and continued.

use sandbox_universal::{AgentId, StopReason};

use crate::common::portable::{Portable, foreign_history, mentions};

/// Export → import (another daemon, another cwd) → restore → the next request carries the
/// earlier turn, its command's output, and only the new cwd.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_moves_to_another_daemon_and_directory_and_goes_on() {
    sandbox_testkit::isolate!();
    let Some(kit) = Portable::new(AgentId::Codex).await else {
        return;
    };
    let first = kit.driver("daemon-a");
    let config = kit.config("daemon-a", "s1", "work-a");
    let mut running = kit.start(&first, config.clone()).await;
    let (stop, _) = running.turn("remember CODEXKIWI then USE_TOOL").await;
    assert_eq!(stop, StopReason::Completed);
    let native_id = running.session.native_session_id().expect("a thread id");
    running.session.shutdown().await;

    let state = first
        .export_native(&config, Some(&native_id))
        .await
        .expect("export");
    assert_eq!(state.native_session_id.as_deref(), Some(native_id.as_str()));
    assert_eq!(state.files.len(), 1);
    assert_eq!(state.files[0].name, "rollout.jsonl");

    let second = kit.driver("daemon-b");
    let moved = kit.config("daemon-b", "s2", "elsewhere/work-b");
    let imported = second.import_native(&moved, &state).await.expect("import");
    assert_eq!(
        imported.as_deref(),
        Some(native_id.as_str()),
        "the thread keeps its id"
    );
    let mut restored = kit.restore(&second, moved.clone(), &native_id).await;
    let (stop, _) = restored.turn("LATERKIWI what was the word?").await;
    assert_eq!(stop, StopReason::Completed);

    let calls = kit.calls_with("LATERKIWI");
    let call = calls.last().expect("a model call for the new message");
    assert!(
        call.contains("CODEXKIWI"),
        "the earlier turn is not replayed: {call}"
    );
    assert!(
        call.contains("fake-tool-ran"),
        "the command's output is not replayed"
    );
    assert!(mentions(call, &moved.cwd), "the new cwd is not sent");
    assert!(
        !mentions(call, &config.cwd),
        "the old cwd is still sent: {call}"
    );
    restored.session.shutdown().await;
}

/// native_history → import → restore: the next request carries the other agent's user
/// text, reply and command output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_agents_conversation_becomes_a_thread_that_goes_on() {
    sandbox_testkit::isolate!();
    let Some(kit) = Portable::new(AgentId::Codex).await else {
        return;
    };
    let driver = kit.driver("daemon");
    let config = kit.config("daemon", "handed", "work");
    let history = foreign_history("HANDEDLYNX", "NOTESOUT7", "I will remember HANDEDREPLY.");
    let state = driver
        .native_history(&config, &history)
        .await
        .expect("native history");
    let thread = state.native_session_id.clone().expect("a new thread id");
    let imported = driver.import_native(&config, &state).await.expect("import");
    assert_eq!(imported.as_deref(), Some(thread.as_str()));
    let mut restored = kit.restore(&driver, config, &thread).await;
    let (stop, _) = restored.turn("LATERLYNX what was the word? USE_TOOL").await;
    assert_eq!(stop, StopReason::Completed);
    let calls = kit.calls_with("LATERLYNX");
    let first = calls.first().expect("a model call for the new message");
    for earlier in ["HANDEDLYNX", "NOTESOUT7", "HANDEDREPLY", "cat notes.txt"] {
        assert!(
            first.contains(earlier),
            "{earlier} is not replayed: {first}"
        );
    }
    restored.session.shutdown().await;
}
