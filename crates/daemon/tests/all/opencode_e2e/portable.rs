//! Portable OpenCode sessions on the real `opencode serve`, offline against the test kit's
//! provider: a session exported from its server and imported (with `opencode import`)
//! into another daemon's fresh server HOME and another cwd, and into the same daemon (a
//! copy with new ids), each continued; and another agent's conversation written as an
//! export document and continued.

use sandbox_universal::{AgentId, StopReason};

use crate::common::portable::{Portable, foreign_history, mentions};

/// Export → import (another daemon and cwd; then the same daemon) → restore → the next
/// request carries the earlier turn and its command's output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_moves_to_another_daemon_and_directory_and_goes_on() {
    sandbox_testkit::isolate!();
    let Some(kit) = Portable::new(AgentId::Opencode).await else {
        return;
    };
    let first = kit.driver("daemon-a");
    let config = kit.config("daemon-a", "s1", "work-a");
    let mut running = kit.start(&first, config.clone()).await;
    let (stop, _) = running.turn("remember OPENOKAPI then USE_TOOL").await;
    assert_eq!(stop, StopReason::Completed);
    let native_id = running.session.native_session_id().expect("a session id");
    // Exported while the session still holds its server.
    let state = first
        .export_native(&config, Some(&native_id))
        .await
        .expect("export");
    running.session.shutdown().await;
    assert_eq!(state.native_session_id.as_deref(), Some(native_id.as_str()));
    assert_eq!(state.files[0].name, "export.json");

    let second = kit.driver("daemon-b");
    let moved = kit.config("daemon-b", "s2", "elsewhere/work-b");
    let imported = second.import_native(&moved, &state).await.expect("import");
    assert_eq!(
        imported.as_deref(),
        Some(native_id.as_str()),
        "the session keeps its id"
    );
    let mut restored = kit.restore(&second, moved.clone(), &native_id).await;
    let (stop, _) = restored.turn("LATEROKAPI what was the word?").await;
    assert_eq!(stop, StopReason::Completed);
    let calls = kit.calls_with("LATEROKAPI");
    let call = calls.last().expect("a model call for the new message");
    assert!(
        call.contains("OPENOKAPI"),
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
    let again = second
        .export_native(&moved, Some(&native_id))
        .await
        .expect("export the moved session");
    let text = String::from_utf8_lossy(&again.files[0].bytes).into_owned();
    assert!(text.contains(&format!("\"directory\": \"{}\"", moved.cwd.display())));
    restored.session.shutdown().await;

    // The same daemon already holds the session: the import is a copy with new ids.
    let copy = kit.config("daemon-a", "s3", "work-c");
    let copied = first
        .import_native(&copy, &state)
        .await
        .expect("import a copy")
        .expect("an id");
    assert_ne!(copied, native_id);
    let mut restored = kit.restore(&first, copy, &copied).await;
    let (stop, _) = restored.turn("COPYOKAPI what was the word?").await;
    assert_eq!(stop, StopReason::Completed);
    let calls = kit.calls_with("COPYOKAPI");
    assert!(calls.last().expect("a call").contains("OPENOKAPI"));
    assert!(
        kit.calls_with("LATEROKAPI")
            .iter()
            .all(|c| !c.contains("COPYOKAPI")),
        "the copy is not merged into the original"
    );
    restored.session.shutdown().await;
}

/// native_history → import → restore: the next request carries the other agent's user
/// text, reply and command output (as a `bash` tool call and result).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_agents_conversation_becomes_a_session_that_goes_on() {
    sandbox_testkit::isolate!();
    let Some(kit) = Portable::new(AgentId::Opencode).await else {
        return;
    };
    let driver = kit.driver("daemon");
    let config = kit.config("daemon", "handed", "work");
    let history = foreign_history("HANDEDHERON", "NOTESOUT9", "I will remember HERONREPLY.");
    let state = driver
        .native_history(&config, &history)
        .await
        .expect("native history");
    let session = state.native_session_id.clone().expect("a new session id");
    let imported = driver.import_native(&config, &state).await.expect("import");
    assert_eq!(imported.as_deref(), Some(session.as_str()));
    let mut restored = kit.restore(&driver, config, &session).await;
    let (stop, _) = restored.turn("LATERHERON what was the word?").await;
    assert_eq!(stop, StopReason::Completed);
    let calls = kit.calls_with("LATERHERON");
    let first = calls.first().expect("a model call for the new message");
    for earlier in [
        "HANDEDHERON",
        "NOTESOUT9",
        "HERONREPLY",
        "cat notes.txt",
        "tool_use",
    ] {
        assert!(
            first.contains(earlier),
            "{earlier} is not replayed: {first}"
        );
    }
    restored.session.shutdown().await;
}
