//! `sandbox_agents::opencode::pool` on the real binary: sessions with the same credentials
//! share one server and never see each other's events; a session with its own token gets a
//! server of its own; a killed server is reported to its sessions and started again on
//! the next use, with the conversations kept; the last session's release stops it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_agents::ProviderEnv;
use sandbox_agents::kernel::Gone;
use sandbox_agents::kernel::server::{Route as SessionRoute, ServerLease};
use sandbox_agents::opencode::launch;
use sandbox_agents::opencode::pool::{Lease, ServerPool};
use sandbox_agents::transport::HttpPeer;
use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::provider::FakeProvider;
use serde_json::{Value, json};

#[derive(Default)]
struct Route {
    events: Mutex<Vec<Value>>,
    lost: Mutex<Vec<String>>,
}

impl SessionRoute for Route {
    fn event(&self, payload: &Value) {
        self.events.lock().unwrap().push(payload.clone());
    }
    fn not_json(&self, raw: &str, _error: &str) {
        panic!("not JSON: {raw}");
    }
    fn server_lost(&self, gone: &Gone) {
        let signal = gone.exit.signal;
        self.lost
            .lock()
            .unwrap()
            .push(format!("{} (signal {signal:?})", gone.why));
    }
}

impl Route {
    fn idles(&self) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| {
                e["type"] == "session.status" && e["properties"]["status"]["type"] == "idle"
            })
            .count()
    }

    async fn wait(&self, what: &str, done: impl Fn(&Self) -> bool) {
        // Generous: a server started again after a kill takes seconds, more on a machine
        // busy with the whole suite.
        let deadline = Instant::now() + Duration::from_secs(180);
        while !done(self) {
            assert!(Instant::now() < deadline, "waited in vain for {what}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

struct Session {
    lease: Lease,
    route: Arc<Route>,
    id: String,
    dir: String,
}

async fn model(peer: &HttpPeer) -> String {
    let listed = peer.get_json("/config/providers").await.unwrap();
    listed["default"]["anthropic"].as_str().unwrap().to_string()
}

async fn open(
    pool: &ServerPool,
    env: &ProviderEnv,
    token: Option<&str>,
    dir: &std::path::Path,
) -> Session {
    std::fs::create_dir_all(dir).unwrap();
    let lease = pool.lease(launch::providers(env, token, None));
    let peer = lease.peer().await.unwrap();
    let dir = dir.display().to_string();
    let created = peer
        .post_json(&format!("/session?directory={dir}"), &json!({}))
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    let route = Arc::new(Route::default());
    lease.route(&id, route.clone());
    Session {
        lease,
        route,
        id,
        dir,
    }
}

impl Session {
    async fn prompt(&self, text: &str) {
        let peer = self.lease.peer().await.unwrap();
        let model = model(&peer).await;
        peer.post_json(
            &format!("/session/{}/prompt_async?directory={}", self.id, self.dir),
            &json!({"parts": [{"type": "text", "text": text}],
                    "model": {"providerID": "anthropic", "modelID": model}}),
        )
        .await
        .unwrap();
    }

    fn foreign_events(&self) -> Vec<Value> {
        self.route
            .events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| {
                let sid = e["properties"]["sessionID"]
                    .as_str()
                    .or_else(|| e["properties"]["info"]["sessionID"].as_str())
                    .or_else(|| e["properties"]["info"]["id"].as_str());
                sid.is_some_and(|sid| sid != self.id)
            })
            .cloned()
            .collect()
    }
}

#[tokio::test]
async fn servers_are_shared_by_key_separated_by_token_restarted_and_stopped() {
    sandbox_testkit::isolate!();
    let Some(binary) = agents::require(Agent::OpenCode) else {
        return;
    };
    let provider = FakeProvider::builder().start().await.unwrap();
    let env = ProviderEnv::default()
        .with("ANTHROPIC_API_KEY", "sk-shared-key")
        .with("ANTHROPIC_BASE_URL", provider.base_url());
    let root = tempfile::tempdir().unwrap();
    let pool = ServerPool::new(binary, root.path().join("servers"));

    let a = open(&pool, &env, None, &root.path().join("a")).await;
    let b = open(&pool, &env, None, &root.path().join("b")).await;
    let own = open(&pool, &env, Some("sk-own-token"), &root.path().join("c")).await;
    let shared_pid = a.lease.pid().await.unwrap();
    assert_eq!(
        b.lease.pid().await,
        Some(shared_pid),
        "same key, one server"
    );
    assert_ne!(
        own.lease.pid().await,
        Some(shared_pid),
        "a token, its own server"
    );
    assert_eq!(pool.servers(), 2);

    tokio::join!(a.prompt("say hi"), b.prompt("say hi"), own.prompt("say hi"));
    for s in [&a, &b, &own] {
        s.route.wait("the turn's idle", |r| r.idles() >= 1).await;
        assert!(s.foreign_events().is_empty(), "{:?}", s.foreign_events());
    }
    // The shared server dies: both of its sessions hear it, the other does not.
    // SAFETY: kill(2) on the server's process group, which this test's pool started.
    unsafe { libc::kill(-(shared_pid as i32), libc::SIGKILL) };
    a.route
        .wait("the loss", |r| !r.lost.lock().unwrap().is_empty())
        .await;
    b.route
        .wait("the loss", |r| !r.lost.lock().unwrap().is_empty())
        .await;
    assert!(own.route.lost.lock().unwrap().is_empty());
    let lost = a.route.lost.lock().unwrap()[0].clone();
    assert!(lost.ends_with("(signal Some(9))"), "how it died: {lost}");
    // The next use starts a new server on the same HOME: the conversation goes on.
    a.prompt("say hi again").await;
    a.route.wait("the second idle", |r| r.idles() >= 2).await;
    let restarted = a.lease.pid().await.unwrap();
    assert_ne!(restarted, shared_pid);
    let history = a
        .lease
        .peer()
        .await
        .unwrap()
        .get_json(&format!("/session/{}/message?directory={}", a.id, a.dir))
        .await
        .unwrap();
    assert_eq!(
        history.as_array().unwrap().len(),
        4,
        "two turns of user + assistant"
    );

    // Releasing the last session of a server stops it.
    a.lease.release().await;
    assert!(
        std::path::Path::new(&format!("/proc/{restarted}")).exists(),
        "b still holds it"
    );
    b.lease.release().await;
    let own_pid = own.lease.pid().await.unwrap();
    own.lease.release().await;
    for pid in [restarted, own_pid] {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty() || stat.contains(") Z "),
            "server {pid} still runs"
        );
    }
    assert_eq!(pool.servers(), 0);
}
