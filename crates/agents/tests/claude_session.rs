//! The Claude driver's process handling against a stand-in CLI
//! (`tests/support/fake_claude.py`), so it is tested even where the real CLI is not
//! installed: start-up handshake, turns, a crash and the `--resume` respawn, cancel,
//! shutdown, and a dropped session taking its process down.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sandbox_agents::claude::ClaudeDriver;
use sandbox_agents::locate::BinaryLocator;
use sandbox_agents::{
    AgentDriver, AgentEvent, CollectingSink, DriverContext, ProviderEnv, SessionConfig,
};
use sandbox_universal::{AgentError, AgentId, EventPayload, PermissionMode, StopReason};

fn fake_cli() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/fake_claude.py")
}

struct Fixture {
    _dir: tempfile::TempDir,
    driver: ClaudeDriver,
    config: SessionConfig,
    home: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("cwd");
    let state_dir = dir.path().join("state");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&state_dir).unwrap();
    let context = DriverContext {
        locator: BinaryLocator::new(HashMap::from([(AgentId::Claude, fake_cli())]), None, None),
        provider_env: ProviderEnv::default().with("ANTHROPIC_API_KEY", "sk-ant-test"),
        data_dir: std::env::temp_dir(),
        executable: std::env::temp_dir(),
    };
    let config = SessionConfig {
        session_id: "s".into(),
        agent_mode: None,
        permission_mode: PermissionMode::Default,
        model: None,
        variant: None,
        token: None,
        validate_token: false,
        dangerously_skip_permissions: false,
        agent_version: None,
        cwd,
        state_dir: state_dir.clone(),
        tap: None,
        policy: Default::default(),
        login: None,
    };
    Fixture {
        _dir: dir,
        driver: ClaudeDriver::new(Arc::new(context)),
        config,
        home: state_dir.join("home"),
    }
}

/// Waits (5 s at most) until an event satisfies `done`; returns all events so far.
async fn wait(store: &CollectingSink, done: impl Fn(&EventPayload) -> bool) -> Vec<AgentEvent> {
    for _ in 0..250 {
        let events = store.events();
        if events.iter().any(|e| done(&e.payload)) {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("event never came; got {:#?}", store.events());
}

fn ended(turn: &'static str, reason: StopReason) -> impl Fn(&EventPayload) -> bool {
    move |p| matches!(p, EventPayload::TurnEnded(t) if t.turn_id == turn && t.stop_reason == reason)
}

fn argv_log(home: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(home.join("fake-claude-argv.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn turns_crash_resume_cancel_and_shutdown() {
    let f = fixture();
    let (store, sink) = CollectingSink::new();
    let mut session = f.driver.start(f.config.clone(), sink).await.unwrap();
    let native = session.native_session_id().unwrap();
    assert_eq!(store.native_session_id(), Some(native.clone()));
    let events = store.events();
    match &events[0].payload {
        EventPayload::SessionStarted(started) => {
            assert_eq!(started.agent_version.as_deref(), Some("9.9.9"));
            assert_eq!(started.model.as_deref(), Some("fake-model"));
        }
        other => panic!("sessionStarted first, got {other:?}"),
    }

    session
        .send_message("turn_1", &"hello".into())
        .await
        .unwrap();
    wait(&store, ended("turn_1", StopReason::Completed)).await;

    session
        .send_message("turn_2", &"exit".into())
        .await
        .unwrap();
    let events = wait(&store, ended("turn_2", StopReason::Error)).await;
    let crash = events.iter().find_map(|e| match &e.payload {
        EventPayload::Error(AgentError::ProcessExited {
            exit_code,
            stderr_tail,
            ..
        }) => Some((*exit_code, stderr_tail.clone())),
        _ => None,
    });
    let (code, stderr) = crash.expect("a processExited error");
    assert_eq!(code, Some(3));
    assert!(stderr.unwrap().contains("asked to exit"));

    session
        .send_message("turn_3", &"again".into())
        .await
        .unwrap();
    wait(&store, ended("turn_3", StopReason::Completed)).await;
    let argv = argv_log(&f.home);
    assert_eq!(argv.len(), 2, "{argv:?}");
    let tail = |args: &Vec<String>| args[args.len() - 2..].to_vec();
    assert_eq!(tail(&argv[0]), ["--session-id".to_string(), native.clone()]);
    assert_eq!(tail(&argv[1]), ["--resume".to_string(), native.clone()]);

    session
        .send_message("turn_4", &"hang".into())
        .await
        .unwrap();
    session.cancel().await.unwrap();
    wait(&store, ended("turn_4", StopReason::Cancelled)).await;

    session.shutdown().await;
    let count = store.events().len();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(store.events().len(), count, "nothing after shutdown");
    assert!(
        !store
            .events()
            .iter()
            .any(|e| matches!(&e.payload, EventPayload::Error(_)) && e.raw.is_some()),
        "the cancelled turn reports no error"
    );
}

#[tokio::test]
async fn a_dropped_session_kills_its_process() {
    let f = fixture();
    let (_store, sink) = CollectingSink::new();
    let session = f.driver.start(f.config.clone(), sink).await.unwrap();
    let pid: i32 = std::fs::read_to_string(f.home.join("fake-claude.pid"))
        .unwrap()
        .parse()
        .unwrap();
    drop(session);
    let mut alive = true;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        // SAFETY: signal 0 only checks whether the process exists.
        let exists = unsafe { libc::kill(pid, 0) } == 0;
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(true);
        if !exists || zombie {
            alive = false;
            break;
        }
    }
    assert!(!alive, "the CLI outlived its dropped session");
}

#[tokio::test]
async fn a_cli_that_dies_at_start_is_reported_not_hung() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("claude");
    std::fs::write(&broken, "#!/bin/sh\necho 'cannot start' >&2\nexit 7\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    let driver = ClaudeDriver::new(Arc::new(DriverContext {
        locator: BinaryLocator::new(HashMap::from([(AgentId::Claude, broken)]), None, None),
        provider_env: ProviderEnv::default(),
        data_dir: std::env::temp_dir(),
        executable: std::env::temp_dir(),
    }));
    // A test thread forking at the moment the script was written can hold its write
    // descriptor until it execs: the script is then busy (ETXTBSY) for a moment.
    let mut attempts = 0;
    let (store, error) = loop {
        let (store, sink) = CollectingSink::new();
        match driver.start(f.config.clone(), sink).await {
            Ok(_) => panic!("a dead CLI must not be healthy"),
            Err(AgentError::SpawnFailed { message })
                if message.contains("Text file busy") && attempts < 20 =>
            {
                attempts += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(error) => break (store, error),
        }
    };
    assert!(
        matches!(&error, AgentError::ProcessExited { exit_code: Some(7), stderr_tail: Some(s), .. } if s.contains("cannot start")),
        "{error:?}"
    );
    assert!(
        store.events().is_empty(),
        "no events for a session that never started"
    );
}
