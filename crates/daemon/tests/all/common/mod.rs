//! Shared helpers of the daemon's integration tests: a daemon on a real socket and a
//! client, plus ways to wait for events.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use sandbox_agents::ProviderEnv;
use sandbox_agents::locate::BinaryLocator;
use sandbox_client::{Client, EventsQuery};
use sandbox_daemon::app::HttpSettings;
use sandbox_daemon::auth::AuthConfig;
use sandbox_daemon::server::{RunningServer, ServerConfig, start};
use sandbox_daemon::session::SessionSettings;
use sandbox_daemon::store::StoreConfig;
use sandbox_universal::{
    AgentId, CreateSessionRequest, EventPayload, EventType, ItemKind, UniversalEvent,
};

pub mod agent_events;
pub mod process;
pub mod proxy;
pub mod store_access;
pub mod workspace;
pub use workspace::{alive, problem_slug, session_in};

/// A stopped [`TestDaemon`]: its data dir and options, to start it again.
pub struct Stopped {
    pub data_dir: tempfile::TempDir,
    pub options: Options,
}

impl Stopped {
    /// Starts a daemon on the same data dir and store.
    pub async fn start(self) -> TestDaemon {
        TestDaemon::start_in(self.data_dir, self.options).await
    }

    /// Runs SQL statements against the store (either backend).
    pub async fn execute_sql(&self, sql: &str) {
        store_access::execute(self.data_dir.path(), self.options.store.as_ref(), sql).await
    }

    /// The rows of one query against the store, as strings (NULL as "NULL").
    pub async fn query_sql(&self, sql: &str) -> Vec<Vec<String>> {
        store_access::query(self.data_dir.path(), self.options.store.as_ref(), sql).await
    }
}

/// A daemon serving on 127.0.0.1 with a temp data dir, and a client of it.
pub struct TestDaemon {
    pub server: RunningServer,
    pub client: Client,
    pub data_dir: tempfile::TempDir,
    pub token: Option<String>,
    pub event_timeout: Duration,
    /// The options it was started with (a restart keeps them).
    pub options: Options,
}

/// Options of [`TestDaemon::start_with`].
#[derive(Clone)]
pub struct Options {
    pub token: Option<String>,
    pub body_limit: usize,
    pub sse_keep_alive: Duration,
    pub workspace_root: Option<std::path::PathBuf>,
    /// Provider credentials and base URLs, as the daemon would read them from its env.
    pub provider_env: ProviderEnv,
    /// Agent binaries, as `SANDBOX_DAEMON_<AGENT>_PATH` would give them.
    pub agent_paths: HashMap<AgentId, PathBuf>,
    /// How long `wait_for` waits for an event.
    pub event_timeout: Duration,
    pub cors_origins: Vec<String>,
    /// The store (`None`: the one `SANDBOX_TEST_STORE` picks, see [`test_store`]).
    pub store: Option<StoreConfig>,
    /// `--idle-timeout` (`None`: agents never idle out).
    pub idle_timeout: Option<Duration>,
    /// `--retain-ended`.
    pub retain_ended: Option<Duration>,
    /// How long an unused session without agent stays loaded (default 10 s).
    pub evict_after: Option<Duration>,
    /// `--allow-host`.
    pub allowed_hosts: Vec<String>,
    /// Connection timeouts.
    pub timeouts: sandbox_daemon::serve::ConnectionTimeouts,
    /// `--request-body-timeout`.
    pub body_timeout: Duration,
    /// `--install-mirror`: installs come from this loopback mirror, which is also the npm
    /// registry (`<mirror>/npm`: Amp's verified binary, Pi) (`None`: installing is off, so
    /// no test ever reaches a vendor).
    pub install_mirror: Option<String>,
    /// Install missing agents when sessions are created.
    pub auto_install: bool,
    /// `--host-tool-secret-file`'s secret (default [`HOST_TOOL_SECRET`]).
    pub host_tool_secret: Option<Vec<u8>>,
    /// When webhook deliveries are retried and given up.
    pub webhook_policy: sandbox_daemon::webhooks::DeliveryPolicy,
}

/// The secret test daemons sign http host tool calls with.
pub const HOST_TOOL_SECRET: &[u8] = b"test-host-tool-secret-3f9a";

/// The store test daemons use: SQLite in the data dir, or with `SANDBOX_TEST_STORE=postgres`
/// a fresh database of the cluster at `SANDBOX_TEST_POSTGRES_URL` (see
/// `scripts/test-postgres.sh`).
pub async fn test_store() -> Option<StoreConfig> {
    match std::env::var("SANDBOX_TEST_STORE").as_deref() {
        Ok("postgres") => Some(StoreConfig::Postgres(fresh_postgres_database().await)),
        _ => None,
    }
}

/// Creates an empty database in the test cluster and answers its URL.
pub async fn fresh_postgres_database() -> String {
    let admin = sandbox_testkit::postgres::admin_url()
        .expect("SANDBOX_TEST_POSTGRES_URL names the test cluster (scripts/test-postgres.sh)");
    sandbox_testkit::postgres::fresh_database(&admin, "sdtest").await
}

impl Default for Options {
    fn default() -> Self {
        Self {
            token: None,
            body_limit: HttpSettings::default().body_limit,
            sse_keep_alive: Duration::from_secs(15),
            workspace_root: None,
            provider_env: ProviderEnv::default(),
            agent_paths: HashMap::new(),
            event_timeout: Duration::from_secs(10),
            cors_origins: Vec::new(),
            store: None,
            idle_timeout: None,
            install_mirror: None,
            auto_install: false,
            retain_ended: None,
            evict_after: None,
            allowed_hosts: Vec::new(),
            timeouts: Default::default(),
            body_timeout: sandbox_daemon::app::DEFAULT_BODY_TIMEOUT,
            host_tool_secret: Some(HOST_TOOL_SECRET.to_vec()),
            webhook_policy: Default::default(),
        }
    }
}

impl TestDaemon {
    pub async fn start() -> Self {
        Self::start_with(Options::default()).await
    }

    pub async fn start_with(mut options: Options) -> Self {
        if options.store.is_none() {
            options.store = test_store().await;
        }
        Self::start_in(tempfile::tempdir().unwrap(), options).await
    }

    /// Stops this daemon (agents stop, sessions stay on disk) and starts a new one on the
    /// same data directory, as a daemon restart would.
    pub async fn restart(self) -> Self {
        self.stop().await.start().await
    }

    /// Runs SQL statements against the running daemon's store.
    pub async fn execute_sql(&self, sql: &str) {
        store_access::execute(self.data_dir.path(), self.options.store.as_ref(), sql).await
    }

    /// The rows of one query against the running daemon's store.
    pub async fn query_sql(&self, sql: &str) -> Vec<Vec<String>> {
        store_access::query(self.data_dir.path(), self.options.store.as_ref(), sql).await
    }

    /// Stops this daemon; its data dir and store stay for [`Stopped::start`].
    pub async fn stop(self) -> Stopped {
        let Self {
            server,
            data_dir,
            options,
            ..
        } = self;
        server.stop().await.unwrap();
        Stopped { data_dir, options }
    }

    pub async fn start_in(data_dir: tempfile::TempDir, options: Options) -> Self {
        let auth = match &options.token {
            Some(token) => AuthConfig::token(token.as_str()),
            None => AuthConfig::disabled(),
        };
        let server = start(ServerConfig {
            host: "127.0.0.1".into(),
            port: 0,
            http: HttpSettings {
                auth,
                body_limit: options.body_limit,
                sse_keep_alive: options.sse_keep_alive,
                cors_origins: options.cors_origins.clone(),
                allowed_hosts: options.allowed_hosts.clone(),
                timeouts: options.timeouts,
                body_timeout: options.body_timeout,
            },
            sessions: SessionSettings {
                workspace_root: options.workspace_root.clone(),
                idle_timeout: options.idle_timeout,
                retain_ended: options.retain_ended,
                evict_after: options
                    .evict_after
                    .unwrap_or(sandbox_daemon::session::DEFAULT_EVICT_AFTER),
                host_tools: sandbox_daemon::host_tools::HostBroker::new(
                    options.host_tool_secret.clone(),
                ),
                webhooks: options.webhook_policy,
                ..SessionSettings::new(data_dir.path().to_path_buf(), data_dir.path().to_path_buf())
            },
            store: options.store.clone(),
            store_options: sandbox_daemon::store::StoreOptions::new(),
            provider_env: options.provider_env.clone(),
            // No PATH: only the mock and the agents given in `agent_paths` are
            // "installed", whatever this machine has.
            locator: BinaryLocator::new(
                options.agent_paths.clone(),
                Some(data_dir.path().join("agents")),
                None,
            ),
            executable: Some(PathBuf::from(process::BINARY)),
            install: options.install_mirror.as_ref().map(|mirror| {
                let mut config =
                    sandbox_install::InstallConfig::new(data_dir.path().join("agents"));
                config.mirror = Some(mirror.clone());
                config.npm_registry = Some(format!("{mirror}/npm"));
                config.backoff = Duration::from_millis(10);
                config
            }),
            auto_install: options.auto_install,
            shutdown_timeout: sandbox_daemon::server::DEFAULT_SHUTDOWN_TIMEOUT,
        })
        .await
        .unwrap();
        let client = Client::new(&server.url(), options.token.clone()).unwrap();
        Self {
            server,
            client,
            data_dir,
            token: options.token.clone(),
            event_timeout: options.event_timeout,
            options,
        }
    }

    pub fn url(&self) -> String {
        self.server.url()
    }

    /// Creates a healthy mock session.
    pub async fn mock_session(&self, id: &str) {
        create_mock(&self.client, id).await
    }

    /// Every event logged so far.
    pub async fn events(&self, id: &str) -> Vec<UniversalEvent> {
        all_events(&self.client, id).await
    }

    /// Follows the SSE stream from the start until an event matches, and returns every
    /// event up to and including it (`event_timeout` limit, 10 s by default).
    pub async fn wait_for(
        &self,
        id: &str,
        matches: impl Fn(&UniversalEvent) -> bool,
    ) -> Vec<UniversalEvent> {
        let mut stream = self.client.stream_events(id, None, false).await.unwrap();
        let mut seen = Vec::new();
        let found = tokio::time::timeout(self.event_timeout, async {
            while let Some(event) = stream.next().await {
                let event = event.unwrap();
                let done = matches(&event);
                seen.push(event);
                if done {
                    return true;
                }
            }
            false
        })
        .await;
        assert!(
            matches!(found, Ok(true)),
            "event not seen; got {:#?}",
            types(&seen)
        );
        seen
    }

    /// Waits for the session's first `permissionAsked`, answers it with `reply`, and
    /// returns the request.
    pub async fn answer_first_permission(
        &self,
        id: &str,
        reply: sandbox_universal::PermissionReply,
    ) -> sandbox_universal::PermissionRequest {
        let events = self
            .wait_for(id, |e| {
                matches!(e.payload, EventPayload::PermissionAsked(_))
            })
            .await;
        let EventPayload::PermissionAsked(request) = &events.last().unwrap().payload else {
            unreachable!("wait_for stops at the match")
        };
        self.client
            .reply_permission(id, &request.permission_id, reply)
            .await
            .unwrap();
        request.clone()
    }

    /// Creates a healthy session of `agent` in its own working directory under the data
    /// dir (canonical); returns the directory.
    pub async fn agent_session(
        &self,
        agent: &str,
        id: &str,
        request: CreateSessionRequest,
    ) -> PathBuf {
        let cwd = self.data_dir.path().join("work").join(id);
        std::fs::create_dir_all(&cwd).unwrap();
        let cwd = cwd.canonicalize().unwrap();
        let created = self
            .client
            .create_session(
                id,
                &CreateSessionRequest {
                    agent: agent.into(),
                    cwd: Some(cwd.display().to_string()),
                    ..request
                },
            )
            .await
            .unwrap();
        assert!(created.healthy, "{created:?}");
        cwd
    }

    /// Sends a message and returns the events of that turn once it ended.
    pub async fn turn(&self, id: &str, message: &str) -> Vec<UniversalEvent> {
        let turn = self.client.send_message(id, message).await.unwrap();
        self.turn_ended(id, &turn.turn_id).await
    }

    /// Waits for the end of `turn_id` and returns its events (the log is checked to be
    /// contiguous).
    pub async fn turn_ended(&self, id: &str, turn_id: &str) -> Vec<UniversalEvent> {
        let number = turn_id.trim_start_matches("turn_").parse().unwrap();
        let events = self.wait_turn_ended(id, number).await;
        assert_contiguous(&events, id);
        agent_events::turn_events(&events, turn_id)
    }

    /// Sends `message` to session `id`, answers the permission it asks (the session's `n`th)
    /// with `reply`, and returns the request and the events of the turn once it ended.
    pub async fn permission_turn(
        &self,
        id: &str,
        message: &str,
        n: usize,
        reply: sandbox_universal::PermissionReply,
    ) -> (sandbox_universal::PermissionRequest, Vec<UniversalEvent>) {
        let turn = self.client.send_message(id, message).await.unwrap();
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let events = self
            .wait_for(id, |e| {
                matches!(e.payload, EventPayload::PermissionAsked(_))
                    && seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == n
            })
            .await;
        let EventPayload::PermissionAsked(asked) = &events.last().unwrap().payload else {
            unreachable!("wait_for stops at the match")
        };
        self.client
            .reply_permission(id, &asked.permission_id, reply)
            .await
            .unwrap();
        (asked.clone(), self.turn_ended(id, &turn.turn_id).await)
    }

    /// Waits until the `n`th `turnEnded` and returns all events so far.
    pub async fn wait_turn_ended(&self, id: &str, n: usize) -> Vec<UniversalEvent> {
        let count = std::sync::atomic::AtomicUsize::new(0);
        self.wait_for(id, |e| {
            e.payload.event_type() == EventType::TurnEnded
                && count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == n
        })
        .await
    }
}

/// Creates a healthy mock session through `client`.
pub async fn create_mock(client: &Client, id: &str) {
    let created = client
        .create_session(
            id,
            &CreateSessionRequest {
                agent: "mock".into(),
                ..CreateSessionRequest::default()
            },
        )
        .await
        .unwrap();
    assert!(created.healthy, "{created:?}");
}

/// Every stored event of a session, page by page.
pub async fn all_events(client: &Client, id: &str) -> Vec<UniversalEvent> {
    events_with(client, id, false).await
}

/// Every stored event of a session with the agent's native JSON (`raw`).
pub async fn raw_events(client: &Client, id: &str) -> Vec<UniversalEvent> {
    events_with(client, id, true).await
}

async fn events_with(client: &Client, id: &str, include_raw: bool) -> Vec<UniversalEvent> {
    let mut all: Vec<UniversalEvent> = Vec::new();
    loop {
        let page = client
            .get_events(
                id,
                &EventsQuery {
                    offset: all.last().map(|e| e.sequence),
                    limit: Some(1000),
                    include_raw,
                },
            )
            .await
            .unwrap();
        all.extend(page.events);
        if !page.has_more {
            return all;
        }
    }
}

/// The event types, in order.
pub fn types(events: &[UniversalEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(|e| e.payload.event_type().as_str())
        .collect()
}

/// The canonical skeleton of a turn: types with item kinds, deltas collapsed.
pub fn skeleton(events: &[UniversalEvent]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for event in events {
        let entry = match &event.payload {
            EventPayload::ItemStarted(e) => format!("itemStarted:{}", kind(e.item.kind)),
            EventPayload::ItemCompleted(e) => format!("itemCompleted:{}", kind(e.item.kind)),
            EventPayload::ItemDelta(_) => "itemDelta*".to_string(),
            other => other.event_type().as_str().to_string(),
        };
        if entry == "itemDelta*" && out.last().map(String::as_str) == Some("itemDelta*") {
            continue;
        }
        out.push(entry);
    }
    out
}

fn kind(kind: ItemKind) -> String {
    serde_json::to_value(kind)
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

/// Checks the envelope invariants: contiguous sequences from 1, one session id.
pub fn assert_contiguous(events: &[UniversalEvent], session: &str) {
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event.sequence, i as u64 + 1, "sequence gap at index {i}");
        assert_eq!(event.session_id, session);
    }
}

/// Sends a raw request and returns status, content type and body JSON.
pub async fn raw(
    method: reqwest::Method,
    url: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: Option<Vec<u8>>,
) -> (u16, String, serde_json::Value) {
    let method_is_post = method == reqwest::Method::POST;
    let mut request = reqwest::Client::new().request(method, url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    // Bodiless POSTs declare JSON, as every client must for a daemon without a token.
    let content_type =
        content_type.or((method_is_post && body.is_none()).then_some("application/json"));
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    if let Some(body) = body {
        request = request.body(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let text = response.text().await.unwrap();
    let json = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
    (status, content_type, json)
}

/// Asserts a response is a problem of the given kind and status.
pub fn assert_problem(response: &(u16, String, serde_json::Value), status: u16, slug: &str) {
    let (got_status, content_type, body) = response;
    assert_eq!(*got_status, status, "body: {body}");
    assert_eq!(content_type, "application/problem+json", "body: {body}");
    assert_eq!(
        body["type"],
        format!("urn:sandbox-daemon:problem:{slug}"),
        "body: {body}"
    );
    assert_eq!(body["status"], status);
    assert!(body["title"].is_string());
    assert!(!body["detail"].as_str().unwrap().is_empty());
}

/// The concatenated deltas of one item.
pub fn deltas(events: &[UniversalEvent], item_id: &str) -> String {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemDelta(d) if d.item_id == item_id => Some(d.delta.as_str()),
            _ => None,
        })
        .collect()
}

/// Every completed item of a kind.
pub fn completed(events: &[UniversalEvent], kind: ItemKind) -> Vec<sandbox_universal::Item> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) if i.item.kind == kind => Some(i.item.clone()),
            _ => None,
        })
        .collect()
}

/// The first payload `pick` accepts.
pub fn first<T>(events: &[UniversalEvent], pick: impl Fn(&EventPayload) -> Option<T>) -> T {
    events
        .iter()
        .find_map(|e| pick(&e.payload))
        .expect("event present")
}

/// What "at once" means for a client of a daemon whose store cannot write.
pub const PROMPTLY: Duration = Duration::from_secs(1);

/// Runs `request`, failing the test when it takes longer than [`PROMPTLY`].
pub async fn promptly<T>(what: &str, request: impl std::future::Future<Output = T>) -> T {
    let started = std::time::Instant::now();
    let answer = tokio::time::timeout(PROMPTLY, request)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {PROMPTLY:?}"));
    eprintln!("{what}: answered in {:?}", started.elapsed());
    answer
}

/// A raw request's status and problem `type` (if any), within [`PROMPTLY`].
pub async fn status_of(what: &str, request: reqwest::RequestBuilder) -> (u16, String) {
    let response = promptly(what, async {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        (
            status,
            body["type"].as_str().unwrap_or_default().to_string(),
        )
    })
    .await;
    eprintln!("{what}: {response:?}");
    response
}
