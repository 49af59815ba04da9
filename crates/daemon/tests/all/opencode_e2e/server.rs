//! `sandbox_agents::opencode::server` on the real binary: the launch's config is accepted
//! (only the configured provider, its key read from the key file and sent to the
//! provider), the password is enforced, no key is in the server's environment, the event
//! stream carries the session's events, and a killed or stopped server is reported.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_agents::ProviderEnv;
use sandbox_agents::opencode::launch::{self, ServerDirs, ServerKey};
use sandbox_agents::opencode::server::{EventHandler, Server, StreamEnd};
use sandbox_agents::transport::{HttpPeer, Line};
use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::provider::FakeProvider;
use serde_json::{Value, json};
use tokio::sync::watch;

const KEY: &str = "sk-ant-opencode-e2e-41c7";

#[derive(Default)]
struct Collect {
    events: Mutex<Vec<Value>>,
    unparsed: Mutex<Vec<String>>,
    ended: Mutex<Option<watch::Sender<Option<String>>>>,
}

impl EventHandler for Collect {
    fn event(&self, line: Line) {
        match line {
            Line::Json(value) => self.events.lock().unwrap().push(value),
            Line::NotJson { raw, .. } => self.unparsed.lock().unwrap().push(raw),
        }
    }

    fn ended(&self, end: StreamEnd) {
        let why = match end {
            StreamEnd::Exited(info) => format!("exited: {}", info.describe()),
            StreamEnd::Broken(why) => format!("broken: {why}"),
        };
        if let Some(tx) = self.ended.lock().unwrap().as_ref() {
            let _ = tx.send(Some(why));
        }
    }
}

impl Collect {
    fn types(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| e["payload"]["type"].as_str().map(String::from))
            .collect()
    }

    async fn wait_for(&self, what: &str, pred: impl Fn(&Value) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.events.lock().unwrap().iter().any(&pred) {
            assert!(Instant::now() < deadline, "no {what} in {:?}", self.types());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test]
async fn a_server_on_the_daemons_launch_serves_and_reports_its_end() {
    sandbox_testkit::isolate!();
    let Some(binary) = agents::require(Agent::OpenCode) else {
        return;
    };
    let provider = FakeProvider::builder()
        .require_api_key(KEY)
        .start()
        .await
        .unwrap();
    let env = ProviderEnv::default()
        .with("ANTHROPIC_API_KEY", KEY)
        .with("ANTHROPIC_BASE_URL", provider.base_url());
    let providers = launch::providers(&env, None, None);
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let dirs = ServerDirs::new(&root.path().join("servers"), &ServerKey::of(&providers));
    dirs.write(&providers).unwrap();
    let password = launch::password();
    let spec = launch::serve_shared(binary, &dirs, &providers, &password);
    let (tx, mut ended) = watch::channel(None);
    let collect = Arc::new(Collect {
        ended: Mutex::new(Some(tx)),
        ..Collect::default()
    });
    let server = Server::start(&spec, &password, collect.clone())
        .await
        .expect("the server starts");
    let peer = server.peer().clone();

    // The password is enforced.
    let stranger = HttpPeer::new(server.url(), Duration::from_secs(5))
        .unwrap()
        .with_basic_auth(launch::USER, "wrong");
    assert_eq!(
        stranger
            .get_json("/global/health")
            .await
            .unwrap_err()
            .status(),
        Some(401)
    );
    // No key in the server's environment; the password is (OpenCode's only way).
    let environ = std::fs::read(format!("/proc/{}/environ", server.pid())).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(!environ.contains(KEY), "the key is in the environment");
    assert!(environ.contains(&password));

    // Only the configured provider; the key comes from the key file.
    let listed = peer.get_json("/config/providers").await.unwrap();
    let ids: Vec<&str> = listed["providers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["id"].as_str())
        .collect();
    assert_eq!(ids, ["anthropic"], "{listed}");
    let model = listed["default"]["anthropic"].as_str().unwrap().to_string();

    // A prompt reaches the fake provider with the key, and its events arrive.
    let dir = work.display().to_string();
    let session = peer
        .post_json(&format!("/session?directory={dir}"), &json!({}))
        .await
        .unwrap();
    let sid = session["id"].as_str().unwrap().to_string();
    peer.post_json(
        &format!("/session/{sid}/prompt_async?directory={dir}"),
        &json!({"parts": [{"type": "text", "text": "say hi"}],
                "model": {"providerID": "anthropic", "modelID": model}}),
    )
    .await
    .unwrap();
    collect
        .wait_for("idle after the reply", |e| {
            e["payload"]["type"] == "session.status"
                && e["payload"]["properties"]["sessionID"] == sid.as_str()
                && e["payload"]["properties"]["status"]["type"] == "idle"
        })
        .await;
    // The fake provider refuses any other key: a text reply means the key file was read.
    let calls = provider.requests();
    assert!(
        calls
            .iter()
            .any(|c| c.route() == "/v1/messages" && c.reply == "text"),
        "{:?}",
        calls
            .iter()
            .map(|c| (&c.path, &c.reply))
            .collect::<Vec<_>>()
    );
    assert!(!collect.types().iter().any(|t| t == "session.error"));
    assert!(collect.unparsed.lock().unwrap().is_empty());
    assert!(collect.types().iter().any(|t| t == "message.part.updated"));

    // A killed server ends the stream as an exit.
    let pid = server.pid();
    // SAFETY: kill(2) on the server's process group, which this test started.
    unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
    let why = ended
        .wait_for(Option::is_some)
        .await
        .unwrap()
        .clone()
        .unwrap();
    assert!(why.starts_with("exited:"), "{why}");
    assert!(server.is_dead());
    drop(server.stop().await);
}
