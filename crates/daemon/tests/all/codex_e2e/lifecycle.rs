//! The app-server process: kill -9 and resume, credentials kept out of commands.

use sandbox_universal::{
    AgentError, CreateSessionRequest, EventPayload, ItemKind, ItemStatus, PermissionReply,
    StopReason,
};

use super::harness::*;

#[tokio::test]
async fn kill_9_then_resume() {
    sandbox_testkit::isolate!();
    let Some(codex) = Codex::start().await else {
        return;
    };
    let cwd = codex.session("s", CreateSessionRequest::default()).await;

    // Turn 1 approves the command for the session.
    codex
        .daemon
        .client
        .send_message("s", "USE_TOOL MARKER-1")
        .await
        .unwrap();
    let asked = codex
        .daemon
        .answer_first_permission("s", PermissionReply::Always)
        .await;
    codex.daemon.wait_turn_ended("s", 1).await;

    // kill -9 while idle: an error, no session end.
    let first = app_server_pid(&codex.binary, &cwd).expect("app-server running");
    kill_9(first);
    let events = codex
        .wait_count("s", 1, |e| matches!(e.payload, EventPayload::Error(_)))
        .await;
    let error = find(&events, |p| match p {
        EventPayload::Error(e) => Some(e.clone()),
        _ => None,
    })
    .unwrap();
    assert!(
        matches!(
            error,
            AgentError::ProcessExited {
                signal: Some(9),
                ..
            }
        ),
        "{error:?}"
    );

    // Turn 2 runs in a new app-server that resumed the thread. Codex forgot the
    // approval; the daemon remembers `always` and answers for the client.
    let resumed = codex.turn("s", "USE_TOOL again").await;
    let second = app_server_pid(&codex.binary, &cwd).expect("app-server running");
    assert_ne!(first, second);
    let automatic = find(&resumed, |p| match p {
        EventPayload::PermissionResolved(r) if r.automatic => Some(r.clone()),
        _ => None,
    })
    .expect("automatic approval");
    assert_eq!(automatic.request.unwrap().always_scope, asked.always_scope);
    assert_eq!(stop_reason(&resumed), StopReason::Completed);
    let command = completed(&resumed, ItemKind::CommandExecution)
        .pop()
        .unwrap();
    assert_eq!(command_part(&command).2, Some(0));

    // kill -9 in the middle of a turn: the turn ends with an error, open items fail.
    codex
        .daemon
        .client
        .send_message("s", "SLOW please")
        .await
        .unwrap();
    let deltas_before = codex.daemon.events("s").await.len();
    codex
        .wait_count("s", 1, |e| {
            e.sequence as usize > deltas_before && matches!(e.payload, EventPayload::ItemDelta(_))
        })
        .await;
    kill_9(second);
    let all = codex.daemon.wait_turn_ended("s", 3).await;
    let crashed = turn_events(&all, "turn_3");
    assert_eq!(stop_reason(&crashed), StopReason::Error);
    assert!(crashed.iter().any(|e| matches!(
        &e.payload,
        EventPayload::Error(AgentError::ProcessExited { .. })
    )));
    assert_eq!(
        completed(&crashed, ItemKind::Message).pop().unwrap().status,
        ItemStatus::Failed
    );

    // Turn 4: resumed again; the provider sees the whole history.
    let last = codex.turn("s", "what did I say first").await;
    assert_eq!(canonical(&last), MESSAGE_TURN);
    let requests = codex.model_requests("s").await;
    let input = requests.last().unwrap().body["input"].to_string();
    assert!(input.contains("USE_TOOL MARKER-1"), "history lost: {input}");
    assert!(input.contains("USE_TOOL again"), "history lost: {input}");
    let info = codex.daemon.client.get_session("s").await.unwrap();
    assert_eq!(info.status, sandbox_universal::SessionStatus::Idle);
    let all = codex.daemon.events("s").await;
    assert_no_unparsed(&all);
    codex.check_capabilities("kill_9_then_resume", &all).await;
}

#[tokio::test]
async fn daemon_restart_then_resume() {
    sandbox_testkit::isolate!();
    let Some(codex) = Codex::start().await else {
        return;
    };
    let cwd = codex.session("s", CreateSessionRequest::default()).await;
    codex
        .daemon
        .client
        .send_message("s", "USE_TOOL MARKER-R")
        .await
        .unwrap();
    codex
        .daemon
        .answer_first_permission("s", PermissionReply::Always)
        .await;
    codex.daemon.wait_turn_ended("s", 1).await;
    let before = codex.daemon.events("s").await;
    let first = app_server_pid(&codex.binary, &cwd).expect("app-server running");

    // The daemon stops its app-servers and a new daemon restores the session; the next
    // message resumes the thread in a new app-server, and the daemon still remembers the
    // `always` answer that Codex forgot.
    let codex = codex.restart().await;
    assert_eq!(
        app_server_pid(&codex.binary, &cwd),
        None,
        "stopped with the daemon"
    );
    let turn = codex.turn("s", "USE_TOOL after the restart").await;
    assert_eq!(stop_reason(&turn), StopReason::Completed);
    assert!(turn.iter().any(|e| matches!(&e.payload,
        EventPayload::PermissionResolved(r) if r.automatic)));
    let second = app_server_pid(&codex.binary, &cwd).expect("app-server running");
    assert_ne!(first, second);
    let input = codex.model_requests("s").await.last().unwrap().body["input"].to_string();
    assert!(input.contains("USE_TOOL MARKER-R"), "history lost: {input}");

    let all = codex.daemon.events("s").await;
    assert_eq!(all[..before.len()], before[..]);
    assert_eq!(
        all.iter()
            .filter(|e| matches!(e.payload, EventPayload::SessionStarted(_)))
            .count(),
        1
    );
    assert_no_unparsed(&all);
    codex
        .check_capabilities("daemon_restart_then_resume", &all)
        .await;
}

#[tokio::test]
async fn credentials_stay_out_of_commands() {
    sandbox_testkit::isolate!();
    let Some(codex) = Codex::start().await else {
        return;
    };
    let bypass = CreateSessionRequest {
        dangerously_skip_permissions: Some(true),
        ..CreateSessionRequest::default()
    };
    // A session token overrides the daemon's key (the provider refuses this one).
    let wrong_key = CreateSessionRequest {
        token: Some("sk-not-the-key".into()),
        ..CreateSessionRequest::default()
    };
    let (cwd, _) = tokio::join!(
        codex.session("s", bypass),
        codex.session("wrong", wrong_key)
    );
    let show_env = format!("{SHOW_ENV} please");
    // Codex retries the refused request five times (about 6 s) before giving up.
    let (turn, failed) = tokio::join!(codex.turn("s", &show_env), codex.turn("wrong", "say hello"));

    let command = completed(&turn, ItemKind::CommandExecution).pop().unwrap();
    let (_, output, exit_code) = command_part(&command);
    let output = output.expect("env output");
    assert_eq!(exit_code, Some(0));
    assert!(output.contains("PATH="), "{output}");
    assert!(
        !output.contains(KEY),
        "the key leaked into a command: {output}"
    );
    assert!(!output.contains("OPENAI_API_KEY"), "{output}");

    // Not in the app-server's environment, not on disk.
    let pid = app_server_pid(&codex.binary, &cwd).expect("app-server running");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    assert!(!String::from_utf8_lossy(&environ).contains(KEY));
    let state = codex.daemon.data_dir.path().join("sessions/s");
    for file in files_under(&state) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "the key is stored in {}",
            file.display()
        );
    }
    assert_no_unparsed(&codex.daemon.events("s").await);

    assert_eq!(stop_reason(&failed), StopReason::Error);
    let error = find(&failed, |p| match p {
        EventPayload::Error(e) => Some(e.clone()),
        _ => None,
    })
    .expect("error");
    assert!(matches!(error, AgentError::TokenError { .. }), "{error:?}");
    assert_no_unparsed(&codex.daemon.events("wrong").await);
    eprintln!(
        "credentials_stay_out_of_commands: {:.1} s",
        codex.started.elapsed().as_secs_f64()
    );
}
