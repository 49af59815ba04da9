//! What agent code can reach, tried against the real daemon binary: a fake agent that dumps
//! its environment and tries to read the daemon's `/proc` files; the modes of everything
//! the daemon writes under umask 000; data and session directories planted or opened up by
//! someone else.
//!
//! The cases with other users (a non-root daemon; a root daemon with `--agent-user`) need
//! root to create them; elsewhere they skip loudly, and `SANDBOX_REQUIRE_USERS=1` (CI)
//! makes them mandatory.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::process::{BINARY, DaemonProcess};

/// The daemon's own token in these tests.
const DAEMON_TOKEN: &str = "daemon-token-7d1c";
/// Secrets of the daemon's environment that are no agent's business.
const OTHER_SECRETS: [(&str, &str); 2] = [
    ("GITHUB_TOKEN", "ghp-secret-5a9e"),
    ("AWS_SECRET_ACCESS_KEY", "aws-secret-0b3f"),
];

/// A fake `claude` that records, in `dumps`, who it runs as, its arguments, its whole
/// environment, and what it can read of its parent's (the daemon's) `/proc` files; then
/// answers `--version` and exits.
fn fake_agent(dir: &Path, dumps: &Path) -> PathBuf {
    let script = dir.join("claude");
    std::fs::write(
        &script,
        format!(
            r#"#!/bin/sh
out="{dumps}/$$"
{{
  echo "uid=$(id -u)"
  echo "args=$*"
  echo "--- env"; env
  echo "--- daemon environ"; cat /proc/$PPID/environ 2>&1 | tr '\0' '\n'
  echo "--- daemon cmdline"; cat /proc/$PPID/cmdline 2>&1 | tr '\0' ' '; echo
  echo "--- daemon mem"; dd if=/proc/$PPID/mem bs=1 count=1 2>&1
}} > "$out.tmp"
mv "$out.tmp" "$out"
[ "$1" = --version ] && echo "2.0.0 (Claude Code)"
exit 0
"#,
            dumps = dumps.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// Everything the fake agent recorded, one dump per process.
fn dumps(dir: &Path) -> Vec<String> {
    let mut dumps: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none())
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    dumps.sort();
    dumps
}

/// A directory anyone may write (the agents' user records its dumps there).
fn shared_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// The daemon command: a data dir, the fake agent, secrets in its environment.
fn daemon_command(data_dir: &Path, agent: &Path) -> Command {
    let mut command = Command::new(BINARY);
    command
        .args(["--port", "0", "--data-dir"])
        .arg(data_dir)
        .env("SANDBOX_DAEMON_CLAUDE_PATH", agent)
        .env("ANTHROPIC_API_KEY", "sk-ant-agent-credential")
        .env_remove("SANDBOX_DAEMON_TOKEN_FILE");
    for (name, value) in OTHER_SECRETS {
        command.env(name, value);
    }
    command
}

/// Drives the daemon into running the agent twice: the `--version` probe behind
/// `GET /agents`, and a session (which fails, the fake agent being no agent).
async fn run_agent_twice(url: &str) {
    let client = sandbox_client::Client::new(url, Some(DAEMON_TOKEN.into())).unwrap();
    let agents = client.list_agents().await.unwrap().agents;
    let claude = agents.iter().find(|a| a.id.as_str() == "claude").unwrap();
    assert_eq!(claude.version.as_deref(), Some("2.0.0"), "{claude:?}");
    let request = sandbox_universal::CreateSessionRequest {
        agent: "claude".into(),
        ..Default::default()
    };
    let started = client.create_session("s", &request).await;
    assert!(started.is_err(), "the fake agent cannot start: {started:?}");
}

/// No agent process was given a daemon secret (in its environment or arguments), and,
/// with `anywhere`, none could read one at all (from the daemon's `/proc` files either).
fn assert_no_secret(dumps: &[String], anywhere: bool) {
    assert!(dumps.len() >= 2, "the probe and the session ran: {dumps:?}");
    assert!(
        dumps.iter().any(|d| !d.contains("args=--version")),
        "a session ran the agent: {dumps:?}"
    );
    for dump in dumps {
        let given = &dump[..dump.find("--- daemon environ").unwrap_or(dump.len())];
        let checked = if anywhere { dump.as_str() } else { given };
        assert!(!checked.contains(DAEMON_TOKEN), "the token leaked: {dump}");
        for (name, value) in OTHER_SECRETS {
            assert!(!checked.contains(value), "{name} leaked: {dump}");
        }
        let env = section(dump, "env");
        assert!(!env.contains("SANDBOX_DAEMON"), "{env}");
    }
}

/// The lines of a dump between `--- name` and the next section.
fn section<'a>(dump: &'a str, name: &str) -> &'a str {
    let start = dump
        .find(&format!("--- {name}\n"))
        .map(|i| i + name.len() + 5)
        .unwrap_or(dump.len());
    let rest = &dump[start..];
    &rest[..rest.find("\n--- ").map_or(rest.len(), |i| i + 1)]
}

/// The agents ran as `user`, were given no secret and could read none.
fn assert_sealed_off(dumps: &[String], user: &sandbox_agents::user::AgentUser) {
    assert_no_secret(dumps, true);
    assert_proc_refused(dumps);
    for dump in dumps {
        assert!(dump.starts_with(&format!("uid={}\n", user.uid)), "{dump}");
    }
}

/// Reading the daemon's memory and environment was refused.
fn assert_proc_refused(dumps: &[String]) {
    for dump in dumps {
        for name in ["daemon environ", "daemon mem"] {
            let text = section(dump, name);
            assert!(
                text.contains("Permission denied") || text.contains("Operation not permitted"),
                "{name} was readable: {dump}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_daemon_secret_reaches_an_agent_process() {
    let data = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let out = shared_dir();
    let agent = fake_agent(bin.path(), out.path());
    let mut command = daemon_command(data.path(), &agent);
    command.env("SANDBOX_DAEMON_TOKEN", DAEMON_TOKEN);
    let daemon = DaemonProcess::spawn_command(command);
    run_agent_twice(&daemon.url).await;
    // Agents that run as root can still read the daemon's /proc files: the daemon says so
    // at start, and `--agent-user` closes it (the tests below).
    assert_no_secret(&dumps(out.path()), false);
}

/// Creates (once) a system user for these tests, or says why it cannot.
pub(crate) fn test_user(name: &str) -> Option<sandbox_agents::user::AgentUser> {
    if let Ok(user) = sandbox_agents::user::AgentUser::lookup(name) {
        return Some(user);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return skip(&format!("creating user {name} needs root"));
    }
    let created = Command::new("useradd")
        .args([
            "--system",
            "--no-create-home",
            "--shell",
            "/usr/sbin/nologin",
            name,
        ])
        .status();
    match created {
        Ok(status) if status.success() => {}
        // Another test may have created it meanwhile.
        _ if sandbox_agents::user::AgentUser::lookup(name).is_ok() => {}
        other => return skip(&format!("useradd {name} failed: {other:?}")),
    }
    sandbox_agents::user::AgentUser::lookup(name).ok()
}

pub(crate) fn skip<T>(why: &str) -> Option<T> {
    if std::env::var("SANDBOX_REQUIRE_USERS").as_deref() == Ok("1") {
        panic!("SANDBOX_REQUIRE_USERS=1 but {why}");
    }
    eprintln!("!! SKIPPED: {why}");
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_of_a_non_root_daemon_cannot_read_its_token() {
    let Some(user) = test_user("sbxtest-daemon") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(data.path(), Some(user.uid), Some(user.gid)).unwrap();
    let bin = tempfile::tempdir().unwrap();
    let out = shared_dir();
    let agent = fake_agent(bin.path(), out.path());
    let mut command = daemon_command(data.path(), &agent);
    // The token in the environment: agents run as the daemon's own user, and still cannot
    // read it from /proc.
    command
        .env("SANDBOX_DAEMON_TOKEN", DAEMON_TOKEN)
        .env("HOME", data.path())
        .uid(user.uid)
        .gid(user.gid);
    let daemon = DaemonProcess::spawn_command(command);
    run_agent_twice(&daemon.url).await;
    assert_sealed_off(&dumps(out.path()), &user);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_of_a_root_daemon_run_as_the_agent_user_and_cannot_read_its_token() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip::<()>("a root daemon needs root");
        return;
    }
    let Some(user) = test_user("sbxtest-agent") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let out = shared_dir();
    let agent = fake_agent(bin.path(), out.path());
    let token_file = data.path().join("token");
    std::fs::write(&token_file, DAEMON_TOKEN).unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut command = daemon_command(&data.path().join("state"), &agent);
    command
        .arg("--token-file")
        .arg(&token_file)
        .args(["--agent-user", "sbxtest-agent"]);
    let daemon = DaemonProcess::spawn_command(command);
    run_agent_twice(&daemon.url).await;
    assert_sealed_off(&dumps(out.path()), &user);
    assert!(
        !daemon.stderr.lock().unwrap().contains("agents run as root"),
        "no root warning with --agent-user"
    );
    // The agent user cannot read the daemon's store or the session's files either.
    let state = data.path().join("state");
    let read = Command::new("cat")
        .arg(state.join("store.db"))
        .uid(user.uid)
        .gid(user.gid)
        .output()
        .unwrap();
    assert!(!read.status.success(), "the store is readable");
    let list = Command::new("ls")
        .arg(state.join("sessions"))
        .uid(user.uid)
        .gid(user.gid)
        .output()
        .unwrap();
    assert!(!list.status.success(), "sessions/ is listable");
}

#[test]
fn a_token_on_the_command_line_warns_and_a_root_daemon_says_who_reads_it() {
    let data = tempfile::tempdir().unwrap();
    let mut command = Command::new(BINARY);
    command
        .args(["--token", DAEMON_TOKEN, "--port", "0", "--data-dir"])
        .arg(data.path());
    let daemon = DaemonProcess::spawn_command(command);
    let stderr = daemon.stderr.lock().unwrap().clone();
    assert!(stderr.contains("--token-file"), "{stderr}");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert!(stderr.contains("agents run as root"), "{stderr}");
    }
}

/// Every file and directory under `root`, with its mode.
fn modes(root: &Path) -> Vec<(PathBuf, u32)> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        found.push((path.clone(), meta.mode() & 0o777));
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                stack.push(entry.unwrap().path());
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_the_daemon_writes_is_private_under_umask_000() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let mut command = Command::new(BINARY);
    command.args(common::process::daemon_args(&data, None));
    // SAFETY: umask is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            libc::umask(0);
            Ok(())
        })
    };
    let daemon = DaemonProcess::spawn_command(command);
    let client = sandbox_client::Client::new(&daemon.url, None).unwrap();
    let request = sandbox_universal::CreateSessionRequest {
        agent: "mock".into(),
        token: Some("sk-session".into()),
        ..Default::default()
    };
    client.create_session("s", &request).await.unwrap();
    client.send_message("s", "hello").await.unwrap();
    daemon.terminate();
    let found = modes(&data);
    assert!(found.len() > 5, "{found:?}");
    for (path, mode) in &found {
        assert_eq!(mode & 0o077, 0, "{} is mode {mode:o}", path.display());
    }
}

/// Starts the daemon on `data` and answers its exit status and stderr (it must refuse).
fn refused_start(data: &Path) -> String {
    let mut child = Command::new(BINARY)
        .args(common::process::daemon_args(data, None))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the daemon started on {data:?} instead of refusing it");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    assert!(!output.status.success(), "the daemon started on {data:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_data_dir_others_can_write_or_own_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o777)).unwrap();
    let stderr = refused_start(&data);
    assert!(
        stderr.contains("refusing to use") && stderr.contains("written by its group or by others"),
        "{stderr}"
    );
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&data, Some(65534), Some(65534)).unwrap();
        let stderr = refused_start(&data);
        assert!(stderr.contains("belongs to uid 65534"), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_session_is_not_imported_and_an_opened_up_one_not_run() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    // A session another user could have planted: its directory is writable by all.
    let planted = data.join("sessions/planted");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::set_permissions(
        data.join("sessions"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(
        planted.join("session.json"),
        serde_json::json!({
            "sessionId": "planted", "agent": "mock", "permissionMode": "bypass",
            "dangerouslySkipPermissions": true, "cwd": "/",
            "createdAt": "2026-01-02T03:04:05Z"
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(planted.join("events.jsonl"), "").unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    let daemon = DaemonProcess::spawn(&data, None);
    let client = sandbox_client::Client::new(&daemon.url, None).unwrap();
    common::create_mock(&client, "mine").await;
    let listed = client.list_sessions(&Default::default()).await.unwrap();
    let ids: Vec<&str> = listed
        .sessions
        .iter()
        .map(|s| s.session_id.as_str())
        .collect();
    assert_eq!(ids, ["mine"], "the planted session is not imported");
    assert!(
        daemon.stderr.lock().unwrap().contains("not importing"),
        "{}",
        daemon.stderr.lock().unwrap()
    );
    daemon.terminate();

    // While the daemon is down, the directory of a real session is opened up to others: it
    // is not run again (its files may have been replaced), and the problem says why.
    std::fs::set_permissions(
        data.join("sessions/mine"),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    let daemon = DaemonProcess::spawn(&data, None);
    let response = common::raw(
        reqwest::Method::POST,
        &format!("{}/sessions/mine/messages", daemon.url),
        None,
        Some("application/json"),
        Some(br#"{"message":"hi"}"#.to_vec()),
    )
    .await;
    common::assert_problem(&response, 409, "session-unusable");
    assert!(
        response.2["detail"]
            .as_str()
            .unwrap()
            .contains("written by its group or by others"),
        "{}",
        response.2
    );
}
