//! The CLI: a subcommand for every route, driven as a real process against a real daemon.

use crate::common;

use std::process::{Command, Output};

use clap::CommandFactory;
use common::TestDaemon;
use sandbox_daemon::cli::{Cli, OPERATIONS};
use sandbox_universal::{EventPayload, UniversalEvent};

pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sandbox-daemon"))
}

#[test]
fn every_route_has_a_cli_subcommand() {
    let doc =
        sandbox_daemon::routes::openapi::document(sandbox_daemon::routes::openapi::DocAuth::Token);
    let mut operations: Vec<String> = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| {
            item.as_object()
                .unwrap()
                .values()
                .map(|op| {
                    op["operationId"]
                        .as_str()
                        .expect("every route has an operationId")
                        .to_string()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    operations.sort();
    let mut covered: Vec<String> = OPERATIONS.iter().map(|(op, _)| op.to_string()).collect();
    covered.sort();
    assert_eq!(
        operations, covered,
        "OPERATIONS must list exactly the routes of the OpenAPI document"
    );
    let cli = Cli::command();
    for (operation, path) in OPERATIONS {
        let mut command = &cli;
        for name in *path {
            command = command.find_subcommand(name).unwrap_or_else(|| {
                panic!("`{operation}` needs the subcommand `{}`", path.join(" "))
            });
        }
    }
}

pub(crate) async fn run(daemon: &TestDaemon, args: &[&str]) -> Output {
    let mut command = bin();
    command
        .args(args)
        .env("SANDBOX_DAEMON_ENDPOINT", daemon.url());
    if let Some(token) = &daemon.token {
        command.env("SANDBOX_DAEMON_TOKEN", token);
    }
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

pub(crate) fn json(output: &Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn lines(output: &Output) -> Vec<UniversalEvent> {
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn host_tool_calls_through_the_cli() {
    let daemon = TestDaemon::start().await;
    let tools = r#"[{"name": "lookup", "handler": {"type": "client"}}]"#;
    let created = run(
        &daemon,
        &[
            "sessions",
            "create",
            "h1",
            "--agent",
            "mock",
            "--host-tools",
            tools,
        ],
    )
    .await;
    assert!(json(&created)["healthy"] == true);
    let next_call = |after: Option<String>| {
        let daemon = &daemon;
        async move {
            let events = daemon
                .wait_for("h1", |e| {
                    matches!(&e.payload, EventPayload::ToolCallRequested(c) if Some(&c.call_id) != after.as_ref())
                })
                .await;
            match &events.last().unwrap().payload {
                EventPayload::ToolCallRequested(call) => call.call_id.clone(),
                _ => unreachable!(),
            }
        }
    };
    run(
        &daemon,
        &["sessions", "send-message", "h1", "-m", "hosttool lookup"],
    )
    .await;
    let first = next_call(None).await;
    let args = [
        "sessions",
        "tool-calls",
        "result",
        "h1",
        &first,
        "--output",
        "from the cli",
    ];
    json(&run(&daemon, &args).await);
    let events = daemon.wait_turn_ended("h1", 1).await;
    assert!(
        serde_json::to_string(&events)
            .unwrap()
            .contains("from the cli"),
        "the CLI's answer reached the agent"
    );
    // A second answer is the daemon's 409, printed as problem details.
    let again = run(&daemon, &args).await;
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("tool-call-resolved"));
    run(
        &daemon,
        &["sessions", "send-message", "h1", "-m", "hosttool lookup"],
    )
    .await;
    let second = next_call(Some(first)).await;
    let reject = [
        "sessions",
        "tool-calls",
        "reject",
        "h1",
        &second,
        "--reason",
        "no thanks",
    ];
    json(&run(&daemon, &reject).await);
    let events = daemon.wait_turn_ended("h1", 2).await;
    assert!(
        serde_json::to_string(&events)
            .unwrap()
            .contains("no thanks")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_session_through_the_cli() {
    let daemon = TestDaemon::start_with(common::Options {
        token: Some("cli-token".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(json(&run(&daemon, &["health"]).await)["status"], "ok");
    assert!(json(&run(&daemon, &["openapi"]).await)["paths"].is_object());
    let agents = json(&run(&daemon, &["agents", "list"]).await);
    assert_eq!(agents["agents"].as_array().unwrap().len(), 6);
    assert_eq!(
        json(&run(&daemon, &["agents", "models", "mock"]).await)["defaultModel"],
        "mock-1"
    );
    assert_eq!(
        json(&run(&daemon, &["agents", "modes", "mock"]).await)["defaultMode"],
        "build"
    );
    assert_eq!(
        json(&run(&daemon, &["agents", "install", "mock"]).await)["alreadyInstalled"],
        true
    );

    let created = run(
        &daemon,
        &[
            "sessions",
            "create",
            "c1",
            "--agent",
            "mock",
            "--permission-mode",
            "accept-edits",
        ],
    )
    .await;
    assert_eq!(json(&created)["healthy"], true);
    assert_eq!(
        json(&run(&daemon, &["sessions", "list"]).await)["sessions"][0]["sessionId"],
        "c1"
    );
    let sent = run(
        &daemon,
        &[
            "sessions",
            "send-message",
            "c1",
            "--message",
            "permission and a question",
        ],
    )
    .await;
    assert_eq!(json(&sent)["turnId"], "turn_1");

    let asked = daemon
        .wait_for("c1", |e| {
            matches!(e.payload, EventPayload::PermissionAsked(_))
        })
        .await;
    let EventPayload::PermissionAsked(permission) = &asked.last().unwrap().payload else {
        unreachable!()
    };
    let info = json(&run(&daemon, &["sessions", "get", "c1"]).await);
    assert_eq!(
        info["pendingPermissions"][0]["permissionId"],
        permission.permission_id.as_str()
    );
    json(
        &run(
            &daemon,
            &[
                "sessions",
                "permissions",
                "reply",
                "c1",
                &permission.permission_id,
                "--reply",
                "once",
            ],
        )
        .await,
    );

    let asked = daemon
        .wait_for("c1", |e| {
            matches!(e.payload, EventPayload::QuestionAsked(_))
        })
        .await;
    let EventPayload::QuestionAsked(question) = &asked.last().unwrap().payload else {
        unreachable!()
    };
    json(
        &run(
            &daemon,
            &[
                "sessions",
                "questions",
                "reply",
                "c1",
                &question.question_id,
                "--answers",
                r#"[["Blue"],["Olives"]]"#,
            ],
        )
        .await,
    );
    daemon.wait_turn_ended("c1", 1).await;

    let page = json(&run(&daemon, &["sessions", "get-messages", "c1", "--limit", "3"]).await);
    assert_eq!(page["events"].as_array().unwrap().len(), 3);
    assert_eq!(page["hasMore"], true);
    let all = lines(&run(&daemon, &["sessions", "events", "c1"]).await);
    assert_eq!(all, daemon.events("c1").await);

    // A question rejected from the CLI, and a turn cancelled from it.
    run(
        &daemon,
        &["sessions", "send-message", "c1", "-m", "question"],
    )
    .await;
    let asked = daemon.wait_for("c1", |e| matches!(&e.payload, EventPayload::QuestionAsked(q) if q.question_id != question.question_id)).await;
    let EventPayload::QuestionAsked(second) = &asked.last().unwrap().payload else {
        unreachable!()
    };
    json(
        &run(
            &daemon,
            &["sessions", "questions", "reject", "c1", &second.question_id],
        )
        .await,
    );
    daemon.wait_turn_ended("c1", 2).await;
    run(&daemon, &["sessions", "send-message", "c1", "-m", "slow"]).await;
    assert_eq!(
        json(&run(&daemon, &["sessions", "cancel", "c1"]).await)["turnId"],
        "turn_3"
    );
    daemon.wait_turn_ended("c1", 3).await;

    // --follow streams until the session ends.
    let follower = {
        let mut command = bin();
        command
            .args(["sessions", "events", "c1", "--follow", "--offset", "5"])
            .env("SANDBOX_DAEMON_ENDPOINT", daemon.url())
            .env("SANDBOX_DAEMON_TOKEN", "cli-token");
        tokio::task::spawn_blocking(move || command.output().unwrap())
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        json(&run(&daemon, &["sessions", "end", "c1"]).await)["status"],
        "ended"
    );
    let followed = lines(&follower.await.unwrap());
    assert_eq!(followed.first().unwrap().sequence, 6);
    assert!(matches!(
        followed.last().unwrap().payload,
        EventPayload::SessionEnded(_)
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_errors_print_problem_details() {
    let daemon = TestDaemon::start_with(common::Options {
        token: Some("right".into()),
        ..Default::default()
    })
    .await;
    let mut command = bin();
    command.args([
        "sessions",
        "list",
        "--token",
        "wrong",
        "--endpoint",
        &daemon.url(),
    ]);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(!output.status.success());
    let problem: serde_json::Value = serde_json::from_slice(&output.stderr).unwrap();
    assert_eq!(problem["type"], "urn:sandbox-daemon:problem:unauthorized");
    let output = run(&daemon, &["sessions", "get", "missing"]).await;
    assert!(!output.status.success());
    let problem: serde_json::Value = serde_json::from_slice(&output.stderr).unwrap();
    assert_eq!(problem["status"], 404);
}

#[test]
fn the_server_demands_a_token_choice() {
    let output = bin().output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--token") && stderr.contains("--no-token"),
        "{stderr}"
    );
    let output = bin().args(["--token", "a", "--no-token"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn boolean_variables_take_the_usual_spellings() {
    for (value, accepted) in [
        ("1", true),
        ("0", true),
        ("yes", true),
        ("off", true),
        ("true", true),
        ("maybe", false),
    ] {
        for var in [
            "SANDBOX_DAEMON_NO_AUTO_INSTALL",
            "SANDBOX_DAEMON_ALLOW_UNVERIFIED_INSTALLS",
        ] {
            // Without a token choice the server stops after parsing its arguments: with a
            // usable value it complains about the token, else about the value.
            let output = bin().env(var, value).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(
                stderr.contains("--token-file"),
                accepted,
                "{var}={value}: {stderr}"
            );
        }
    }
}

#[test]
fn the_server_starts_and_answers_with_a_token() {
    use std::io::{BufRead, BufReader};
    let data = tempfile::tempdir().unwrap();
    let child = bin()
        .args([
            "--token",
            "t0k",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--data-dir",
        ])
        .arg(data.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let mut stderr = BufReader::new(child.0.stderr.take().unwrap());
    let mut seen = String::new();
    let url = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!("the server exited before listening: {seen}");
        }
        seen.push_str(&line);
        let last = line.trim().rsplit(' ').next().unwrap_or_default();
        if last.starts_with("http://127.0.0.1:") {
            break last.to_string();
        }
    };
    assert!(
        seen.contains("--token-file"),
        "a token on the command line warns and names --token-file: {seen}"
    );
    let health = bin().args(["health", "--endpoint", &url]).output().unwrap();
    assert!(health.status.success());
    let denied = bin()
        .args(["agents", "list", "--endpoint", &url])
        .env_remove("SANDBOX_DAEMON_TOKEN")
        .output()
        .unwrap();
    assert!(!denied.status.success());
    let allowed = bin()
        .args(["agents", "list", "--endpoint", &url, "--token", "t0k"])
        .output()
        .unwrap();
    assert!(allowed.status.success());
    Command::new("kill")
        .arg(child.0.id().to_string())
        .status()
        .unwrap();
    let status = child.0.wait().unwrap();
    assert!(status.success(), "SIGTERM shuts down cleanly: {status:?}");
}

/// Kills the child when a test panics before stopping it, so a failed
/// assertion never leaves a daemon holding the test harness's pipes.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}
