//! `/credentials` and `sandbox-daemon credentials`: stored logins over HTTP and the CLI,
//! write-only, private on disk, and every bad input a problem.

use std::os::unix::fs::PermissionsExt;

use reqwest::Method;
use sandbox_testkit::logins;
use sandbox_universal::{AgentId, CredentialKind, LoginEntryKind, PutCredentialRequest};

use crate::cli::{json, run};
use crate::common::{Options, TestDaemon, assert_problem, raw};

fn put_login(login: serde_json::Value) -> PutCredentialRequest {
    PutCredentialRequest {
        login: Some(login),
        ..Default::default()
    }
}

#[tokio::test]
async fn logins_are_stored_described_and_removed_never_answered() {
    let daemon = TestDaemon::start_with(Options {
        token: Some("daemon-token".into()),
        ..Default::default()
    })
    .await;
    let client = &daemon.client;
    assert!(
        client
            .list_credentials()
            .await
            .unwrap()
            .credentials
            .is_empty()
    );

    let stored = client
        .put_credential("codex", &put_login(logins::codex()))
        .await
        .unwrap();
    assert_eq!(stored.agent, AgentId::Codex);
    assert_eq!(stored.file.as_deref(), Some(".codex/auth.json"));
    assert_eq!(stored.entries[0].name, "chatgpt");
    assert_eq!(stored.entries[0].kind, LoginEntryKind::Oauth);
    assert_eq!(
        stored.entries[0].expires_at.as_deref(),
        Some("2001-09-09T01:46:40Z")
    );
    let file = daemon.data_dir.path().join("credentials/codex.json");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);

    // 201 first, 200 when it replaces one; the secret is in no answer.
    let url = format!("{}/credentials/claude", daemon.url());
    let body = serde_json::to_vec(&put_login(logins::claude())).unwrap();
    let (status, _, answer) = raw(
        Method::PUT,
        &url,
        Some("daemon-token"),
        Some("application/json"),
        Some(body.clone()),
    )
    .await;
    assert_eq!(status, 201, "{answer}");
    let (status, _, _) = raw(
        Method::PUT,
        &url,
        Some("daemon-token"),
        Some("application/json"),
        Some(body),
    )
    .await;
    assert_eq!(status, 200);
    let token = serde_json::to_vec(&PutCredentialRequest {
        token: Some("sk-ant-oat01-setup-token".into()),
        ..Default::default()
    })
    .unwrap();
    let (status, _, answer) = raw(
        Method::PUT,
        &url,
        Some("daemon-token"),
        Some("application/json"),
        Some(token),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["entries"][0]["kind"], "token");
    let mut answers = vec![answer.to_string()];
    for path in [
        "/credentials",
        "/credentials/codex",
        "/credentials/claude",
        "/agents",
    ] {
        let (status, _, answer) = raw(
            Method::GET,
            &format!("{}{path}", daemon.url()),
            Some("daemon-token"),
            None,
            None,
        )
        .await;
        assert_eq!(status, 200, "{path}: {answer}");
        answers.push(answer.to_string());
    }
    for answer in &answers {
        for secret in logins::secrets()
            .into_iter()
            .chain(["sk-ant-oat01-setup-token".to_string()])
        {
            assert!(!answer.contains(&secret), "{answer}");
        }
    }
    let agents = client.list_agents().await.unwrap().agents;
    let codex = agents.iter().find(|a| a.id == AgentId::Codex).unwrap();
    assert_eq!(codex.credentials.available, [CredentialKind::StoredLogin]);
    assert!(codex.credentials.required);
    let mock = agents.iter().find(|a| a.id == AgentId::Mock).unwrap();
    assert!(!mock.credentials.required);

    client.delete_credential("codex").await.unwrap();
    assert!(!file.exists());
    let listed = client.list_credentials().await.unwrap().credentials;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].agent, AgentId::Claude);
}

#[tokio::test]
async fn bad_logins_and_unknown_agents_are_problems() {
    let daemon = TestDaemon::start().await;
    let url = |agent: &str| format!("{}/credentials/{agent}", daemon.url());
    let put = |agent: &str, body: &str| {
        let url = url(agent);
        let body = body.as_bytes().to_vec();
        async move {
            raw(
                Method::PUT,
                &url,
                None,
                Some("application/json"),
                Some(body),
            )
            .await
        }
    };
    // Not a login of that agent: the reason is given.
    let answer = put(
        "codex",
        r#"{"login": {"claudeAiOauth": {"accessToken": "x"}}}"#,
    )
    .await;
    assert_problem(&answer, 422, "invalid-credential");
    assert!(
        answer.2["detail"].as_str().unwrap().contains("tokens"),
        "{answer:?}"
    );
    assert_problem(
        &put("mock", r#"{"login": {"a": 1}}"#).await,
        422,
        "invalid-credential",
    );
    assert_problem(
        &put("codex", r#"{"token": "t"}"#).await,
        422,
        "invalid-credential",
    );
    assert_problem(
        &put("claude", r#"{"token": ""}"#).await,
        422,
        "invalid-credential",
    );
    // Neither or both, a token with a control character, an unknown field.
    assert_problem(&put("claude", "{}").await, 422, "invalid-body");
    assert_problem(
        &put("claude", r#"{"login": {}, "token": "t"}"#).await,
        422,
        "invalid-body",
    );
    assert_problem(
        &put("claude", r#"{"token": "a\u0007b"}"#).await,
        422,
        "invalid-body",
    );
    assert_problem(
        &put("claude", r#"{"token": "t", "extra": 1}"#).await,
        422,
        "invalid-body",
    );
    assert_problem(&put("claude", "{not json").await, 400, "malformed-json");
    assert_problem(
        &put("nobody", r#"{"token": "t"}"#).await,
        404,
        "unknown-agent",
    );
    // Nothing stored.
    for method in [Method::GET, Method::DELETE] {
        let answer = raw(method, &url("codex"), None, None, None).await;
        assert_problem(&answer, 404, "credential-not-found");
    }
    assert_problem(
        &raw(Method::GET, &url("nobody"), None, None, None).await,
        404,
        "unknown-agent",
    );
    assert!(
        !daemon
            .data_dir
            .path()
            .join("credentials/codex.json")
            .exists()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_puts_lists_gets_and_removes_logins() {
    let daemon = TestDaemon::start_with(Options {
        token: Some("cli-token".into()),
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auth.json");
    std::fs::write(&file, logins::opencode().to_string()).unwrap();
    let stored = json(
        &run(
            &daemon,
            &[
                "credentials",
                "put",
                "opencode",
                "--file",
                file.to_str().unwrap(),
            ],
        )
        .await,
    );
    assert_eq!(stored["entries"][0]["name"], "anthropic");
    assert_eq!(stored["source"], file.display().to_string());
    let listed = json(&run(&daemon, &["credentials", "list"]).await);
    assert_eq!(listed["credentials"][0]["agent"], "opencode");
    let got = json(&run(&daemon, &["credentials", "get", "opencode"]).await);
    assert_eq!(got["entries"][0]["kind"], "apiKey");
    for output in [&listed, &got, &stored] {
        assert!(!output.to_string().contains(logins::PROVIDER_LOGIN_KEY));
    }
    // A token from standard input, never the command line.
    let mut command = std::process::Command::new(crate::common::process::BINARY);
    command
        .args([
            "credentials",
            "put",
            "claude",
            "--token-stdin",
            "--endpoint",
            &daemon.url(),
        ])
        .env("SANDBOX_DAEMON_TOKEN", "cli-token")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let output = tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"sk-ant-oat01-from-stdin\n")
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(json(&output)["entries"][0]["kind"], "token");
    let removed = run(&daemon, &["credentials", "remove", "opencode"]).await;
    assert!(removed.status.success());
    let missing = run(&daemon, &["credentials", "remove", "opencode"]).await;
    assert!(!missing.status.success());
    let problem: serde_json::Value = serde_json::from_slice(&missing.stderr).unwrap();
    assert_eq!(problem["status"], 404);
    // `import` with nothing to find says where it looked and stores nothing.
    let empty = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(crate::common::process::BINARY);
    command
        .args([
            "credentials",
            "import",
            "--agent",
            "codex",
            "--endpoint",
            &daemon.url(),
        ])
        .env_clear()
        .env("HOME", empty.path())
        .env("SANDBOX_DAEMON_TOKEN", "cli-token");
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{text}");
    assert!(
        text.contains("no login at") && text.contains(".codex/auth.json"),
        "{text}"
    );
}
