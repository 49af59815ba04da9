//! Stored logins: a daemon with no credential in its environment refuses a session
//! naming the three ways to give one; `sandbox-daemon credentials import` finds the
//! agent's login file in a (fake) user's HOME and stores it; a session's private home gets
//! that file alone (0600), the agent uses it (and says it is logged in), what it refreshes
//! goes back to the store, and the copy goes when the session ends. No secret in an API
//! answer, an event, a process's arguments or any file but the store's and the copy.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sandbox_agents::login;
use sandbox_testkit::logins;
use sandbox_universal::{AgentId, CreateSessionRequest, CredentialKind, StopReason};
use serde_json::Value;

use super::Proved;
use super::ctx::{Ctx, check_turn, stop_reason};
use super::subject::{Runs, accepted_keys, files_under};
use crate::common::TestDaemon;
use crate::common::process::BINARY;

/// A line of the user's own config next to the login: it must reach no session.
const DECOY: &str = "user-config-decoy-6b1f";

/// The fake login of `agent`, and the token a model call made with it carries.
fn fake_login(ctx: &Ctx) -> Option<(Value, String)> {
    let url = ctx
        .subject
        .options
        .provider_env
        .get("AMP_URL")
        .unwrap_or("");
    Some(match ctx.subject.agent {
        AgentId::Claude => (logins::claude(), logins::CLAUDE_ACCESS.into()),
        // Expired: Codex refreshes it at the test kit's token endpoint first.
        AgentId::Codex => (logins::codex(), logins::refreshed_access()),
        AgentId::Opencode => (logins::opencode(), logins::PROVIDER_LOGIN_KEY.into()),
        AgentId::Pi => (logins::pi(), logins::CLAUDE_ACCESS.into()),
        AgentId::Amp => (logins::amp(url), logins::AMP_LOGIN_KEY.into()),
        AgentId::Mock => return None,
    })
}

/// A user's HOME holding `agent`'s login where the agent keeps it, and some config of
/// theirs beside it.
fn user_home(agent: AgentId, login: &Value) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let spec = login::spec(agent).unwrap();
    let path = spec.session_path(home.path());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, login.to_string()).unwrap();
    std::fs::write(
        path.with_file_name("settings.json"),
        format!("{{\"{DECOY}\": 1}}"),
    )
    .unwrap();
    home
}

/// Every file under `dir` holding `secret`.
fn holding(dir: &Path, secret: &str) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|f| std::fs::read(f).is_ok_and(|b| String::from_utf8_lossy(&b).contains(secret)))
        .collect()
}

pub async fn stored_login(ctx: Arc<Ctx>) -> Proved {
    let agent = ctx.subject.agent;
    let mut options = ctx.subject.options.clone();
    options.provider_env = options.provider_env.clone().without_credentials();
    if let Some(provider) = &ctx.subject.provider {
        options.provider_env = options.provider_env.with(
            "CODEX_REFRESH_TOKEN_URL_OVERRIDE",
            format!("{}/oauth/token", provider.base_url()),
        );
    }
    let daemon = TestDaemon::start_with(options).await;
    let listed = daemon.client.list_agents().await.unwrap();
    let info = listed.agents.iter().find(|a| a.id == agent).unwrap();
    assert!(info.credentials.available.is_empty(), "{info:?}");
    let Some((login, token)) = fake_login(&ctx) else {
        // The mock needs none: its sessions start on a daemon without any.
        assert!(!info.credentials.required);
        let (request, _) = request(&ctx, &daemon, "mock-login");
        daemon
            .client
            .create_session("mock-login", &request)
            .await
            .unwrap();
        return vec![];
    };
    assert!(info.credentials.required);

    // None of the three ways: refused at once, naming them.
    let (request, cwd) = request(&ctx, &daemon, "login");
    let error = daemon
        .client
        .create_session("login", &request)
        .await
        .unwrap_err();
    let problem = error.problem().unwrap_or_else(|| panic!("{error}"));
    assert_eq!(problem.status, 422, "{problem:?}");
    let message = problem.agent_error.clone().unwrap();
    assert_eq!(message.kind(), "tokenError");
    for way in ["`token`", "environment", "credentials import"] {
        assert!(problem.detail.contains(way), "{}", problem.detail);
    }

    // `credentials import` finds the user's login (and only it) and stores it.
    let home = user_home(agent, &login);
    let import = tokio::process::Command::new(BINARY)
        .args(["credentials", "import", "--agent", agent.as_str()])
        .args(["--endpoint", &daemon.url()])
        .env_clear()
        .env("HOME", home.path())
        .env(
            "SANDBOX_DAEMON_TOKEN",
            daemon.token.clone().unwrap_or_default(),
        )
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let import = tokio::time::timeout(std::time::Duration::from_secs(60), import)
        .await
        .expect("credentials import did not finish in 60 s")
        .unwrap();
    let shown = String::from_utf8_lossy(&import.stdout).into_owned()
        + &String::from_utf8_lossy(&import.stderr);
    assert!(import.status.success(), "{shown}");
    assert!(shown.contains("stored in the daemon"), "{shown}");
    let stored = daemon.client.get_credential(agent.as_str()).await.unwrap();
    let listed = daemon.client.list_agents().await.unwrap();
    let info = listed.agents.iter().find(|a| a.id == agent).unwrap();
    assert_eq!(info.credentials.available, [CredentialKind::StoredLogin]);
    let store_file = daemon
        .data_dir
        .path()
        .join(format!("credentials/{}.json", agent.as_str()));
    assert_eq!(mode(&store_file), 0o600);

    // A session on it: the agent's home gets the login file alone, the agent uses it.
    let created = daemon
        .client
        .create_session("login", &request)
        .await
        .unwrap();
    assert!(created.healthy);
    let events = daemon.turn("login", "hello (stored login)").await;
    check_turn("login", &events);
    assert_eq!(stop_reason(&events), StopReason::Completed, "{events:?}");
    let session_dir = daemon.data_dir.path().join("sessions/login");
    let spec = login::spec(agent).unwrap();
    let copies: Vec<PathBuf> = files_under(&session_dir)
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n == spec.file_name))
        .filter(|f| std::fs::read(f).is_ok_and(|b| serde_json::from_slice::<Value>(&b).is_ok()))
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    let copy = &copies[0];
    assert_eq!(mode(copy), 0o600, "{}", copy.display());
    assert!(
        holding(daemon.data_dir.path(), DECOY).is_empty(),
        "the user's config travelled"
    );
    match ctx.subject.runs {
        Runs::RealCli => {
            let calls: Vec<_> = ctx
                .subject
                .calls_with("hello (stored login)")
                .into_iter()
                .collect();
            let call = calls.last().expect("a model call");
            let accepted = call.key.expect("the provider checks keys");
            assert_eq!(
                accepted_keys()[accepted],
                token,
                "the model call did not carry the login's token"
            );
            logged_in(&ctx, copy).await;
        }
        Runs::StandIn => {
            let calls = std::fs::read_to_string(
                files_under(&session_dir)
                    .into_iter()
                    .find(|f| f.ends_with("standin-calls.jsonl"))
                    .expect("the stand-in ran"),
            )
            .unwrap();
            assert!(calls.contains(r#""stored_login": true"#), "{calls}");
            assert!(calls.contains(r#""api_key_set": false"#), "{calls}");
        }
        Runs::Mock => unreachable!(),
    }
    for pid in ctx.subject.processes(&cwd, daemon.data_dir.path(), None) {
        let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&argv).contains(&token),
            "argv of {pid}"
        );
    }

    // Codex refreshed its expired login: the store has the new one.
    if agent == AgentId::Codex {
        let now = daemon.client.get_credential("codex").await.unwrap();
        assert!(now.refreshed_at.is_some(), "{now:?}");
        let text = std::fs::read_to_string(&store_file).unwrap();
        assert!(
            text.contains(logins::REFRESHED_REFRESH_TOKEN),
            "not written back"
        );
    } else {
        assert_eq!(
            stored,
            daemon.client.get_credential(agent.as_str()).await.unwrap()
        );
    }
    // Ended: the copy goes; the secret is only in the store, in no answer or event.
    daemon.client.end_session("login").await.unwrap();
    assert!(!copy.exists(), "the login stayed in the session's home");
    let answers = [
        serde_json::to_string(&daemon.client.list_credentials().await.unwrap()).unwrap(),
        serde_json::to_string(&daemon.client.list_agents().await.unwrap()).unwrap(),
        serde_json::to_string(&daemon.client.get_session("login").await.unwrap()).unwrap(),
        serde_json::to_string(&daemon.events("login").await).unwrap(),
        shown,
    ];
    for secret in logins::secrets() {
        for answer in &answers {
            assert!(!answer.contains(&secret), "a secret in {answer}");
        }
        let files = holding(daemon.data_dir.path(), &secret);
        assert!(
            files.iter().all(|f| *f == store_file),
            "{secret} is in {files:?}"
        );
    }
    daemon
        .client
        .delete_credential(agent.as_str())
        .await
        .unwrap();
    assert!(!store_file.exists());
    vec![]
}

/// A create request of `ctx`'s subject on `daemon`, in its own directory.
fn request(ctx: &Ctx, daemon: &TestDaemon, id: &str) -> (CreateSessionRequest, PathBuf) {
    let cwd = daemon.data_dir.path().join("work").join(id);
    std::fs::create_dir_all(&cwd).unwrap();
    let cwd = cwd.canonicalize().unwrap();
    let request = CreateSessionRequest {
        agent: ctx.subject.agent.to_string(),
        model: ctx.subject.model.map(str::to_string),
        cwd: Some(cwd.display().to_string()),
        ..CreateSessionRequest::default()
    };
    (request, cwd)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The agent itself, run on the session's copy, says it is logged in.
async fn logged_in(ctx: &Ctx, copy: &Path) {
    let binary = ctx.subject.binary.clone().unwrap();
    let dir = copy.parent().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(&binary);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", scratch.path());
    let expected = match ctx.subject.agent {
        AgentId::Claude => {
            command
                .args(["auth", "status"])
                .env("CLAUDE_CONFIG_DIR", dir);
            "\"loggedIn\":true"
        }
        AgentId::Codex => {
            command.args(["login", "status"]).env("CODEX_HOME", dir);
            "LoggedinusingChatGPT"
        }
        AgentId::Opencode => {
            command
                .args(["auth", "list"])
                .env("XDG_DATA_HOME", dir.parent().unwrap());
            "Anthropic"
        }
        // Pi has no status command: its call above carried the login's token.
        _ => return,
    };
    command
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(std::time::Duration::from_secs(60), command.output())
        .await
        .unwrap_or_else(|_| panic!("{} did not answer in 60 s", binary.display()))
        .unwrap();
    let text = (String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr))
        .replace(' ', "");
    assert!(
        output.status.success() && text.contains(expected),
        "{}: {text}",
        binary.display()
    );
}
