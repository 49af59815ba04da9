//! The real pinned Amp, offline: what can be checked without Amp's service.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use sandbox_agents::ProviderEnv;
use sandbox_testkit::agents::{self, Agent};
use sandbox_universal::{AgentId, CreateSessionRequest, EventPayload, StopReason};

use super::assert_not_on_disk;
use crate::common::agent_events::{assert_no_unparsed, find, stop_reason};
use crate::common::{Options, TestDaemon};

/// The key the daemon is given.
const KEY: &str = "sk-amp-e2e-4b1d";

/// A daemon running `binary` as Amp with `env` (as `SANDBOX_DAEMON_AMP_PATH`, `AMP_URL`
/// and `AMP_API_KEY` set it up).
async fn start(binary: PathBuf, env: ProviderEnv) -> TestDaemon {
    TestDaemon::start_with(Options {
        provider_env: env,
        agent_paths: HashMap::from([(AgentId::Amp, binary)]),
        event_timeout: Duration::from_secs(60),
        ..Options::default()
    })
    .await
}

#[tokio::test]
async fn the_real_amp_without_its_service() {
    sandbox_testkit::isolate!();
    let Some(binary) = agents::require(Agent::Amp) else {
        return;
    };
    // A loopback port nothing listens on: Amp's service is unreachable.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);

    // Without a key: refused at once (Amp itself would wait for a browser login).
    let amp = start(binary.clone(), ProviderEnv::default().with("AMP_URL", &url)).await;
    let agents = amp.client.list_agents().await.unwrap();
    let info = agents.agents.iter().find(|a| a.id == AgentId::Amp).unwrap();
    assert!(info.installed && info.supported);
    assert!(
        info.version
            .as_deref()
            .unwrap()
            .starts_with("0.0.1790142911-g7618fb"),
        "{info:?}"
    );
    let cwd = amp.data_dir.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let started = Instant::now();
    let error = amp
        .client
        .create_session(
            "nokey",
            &CreateSessionRequest {
                agent: "amp".into(),
                cwd: Some(cwd.display().to_string()),
                ..CreateSessionRequest::default()
            },
        )
        .await
        .unwrap_err();
    let sandbox_client::ClientError::Problem(problem) = error else {
        panic!("{error}")
    };
    assert_eq!(problem.status, 422, "{problem:?}");
    assert_eq!(problem.agent_error.unwrap().kind(), "tokenError");
    assert!(started.elapsed() < Duration::from_secs(5));

    // With a key and no reachable service: the turn ends with a clear error, quickly.
    let amp = start(
        binary,
        ProviderEnv::default()
            .with("AMP_API_KEY", KEY)
            .with("AMP_URL", &url),
    )
    .await;
    amp.agent_session("amp", "s", CreateSessionRequest::default())
        .await;
    let started = Instant::now();
    let turn = amp.turn("s", "say hi").await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(stop_reason(&turn), StopReason::Error);
    let error = find(&turn, |p| match p {
        EventPayload::Error(e) => Some(e.clone()),
        _ => None,
    })
    .expect("an error event");
    let text = serde_json::to_string(&error).unwrap();
    eprintln!("amp without its service: {text}");
    assert!(
        text.contains("Error"),
        "the stderr tail is in the error: {text}"
    );
    assert_not_on_disk(amp.data_dir.path(), KEY);
    assert_no_unparsed(&amp.events("s").await);
}

/// A stored login reaches the real Amp: with no key anywhere but the login the daemon
/// stores (`secrets.json`, keyed by Amp's service URL), the real binary starts without a
/// login prompt and its first request to its service carries that key.
#[tokio::test]
async fn a_stored_login_reaches_the_real_amp() {
    sandbox_testkit::isolate!();
    let Some(binary) = agents::require(Agent::Amp) else {
        return;
    };
    // Amp's service: a loopback listener that records each request's head and answers 404.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    // With its slash: Amp keys a stored login by the URL as given (`apiKey@<url>`).
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let (heads, mut heard) = tokio::sync::mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut socket, _)) = listener.accept().await {
            let heads = heads.clone();
            tokio::spawn(async move {
                let mut buffer = vec![0; 64 * 1024];
                let n = socket.read(&mut buffer).await.unwrap_or(0);
                let _ = heads.send(String::from_utf8_lossy(&buffer[..n]).into_owned());
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
            });
        }
    });
    let amp = start(binary, ProviderEnv::default().with("AMP_URL", &url)).await;
    let login = sandbox_testkit::logins::amp(&url);
    amp.client
        .put_credential(
            "amp",
            &sandbox_universal::PutCredentialRequest {
                login: Some(login),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    amp.agent_session("amp", "login", CreateSessionRequest::default())
        .await;
    let turn = amp.turn("login", "say hi").await;
    assert_eq!(
        stop_reason(&turn),
        StopReason::Error,
        "no service: {turn:?}"
    );
    let first = tokio::time::timeout(Duration::from_secs(30), heard.recv())
        .await
        .expect("Amp called its service")
        .unwrap();
    let bearer = format!("Bearer {}", sandbox_testkit::logins::AMP_LOGIN_KEY);
    assert!(
        first
            .lines()
            .any(|l| l.eq_ignore_ascii_case(&format!("authorization: {bearer}"))),
        "the stored key is not what Amp sent: {}",
        first.lines().next().unwrap_or_default()
    );
    amp.client.end_session("login").await.unwrap();
    assert!(
        super::super::scenarios::subject::files_under(amp.data_dir.path())
            .iter()
            .all(|f| !f.ends_with("secrets.json")),
        "the login stayed in the session's home"
    );
}
