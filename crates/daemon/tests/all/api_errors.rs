//! Every endpoint's error cases over a real socket: problem details with stable types.

use crate::common;

use common::{Options, TestDaemon, assert_problem, raw};
use reqwest::Method;
use serde_json::json;

const JSON: Option<&str> = Some("application/json");

fn body(value: serde_json::Value) -> Option<Vec<u8>> {
    Some(serde_json::to_vec(&value).unwrap())
}

#[tokio::test]
async fn auth_is_required_everywhere_but_health() {
    let daemon = TestDaemon::start_with(Options {
        token: Some("s3cret".into()),
        ..Options::default()
    })
    .await;
    let url = daemon.url();
    let health = raw(Method::GET, &format!("{url}/health"), None, None, None).await;
    assert_eq!(health.0, 200);
    assert_eq!(health.2["status"], "ok");
    assert_eq!(health.2["version"], env!("CARGO_PKG_VERSION"));

    for (method, path) in [
        (Method::GET, "/agents"),
        (Method::GET, "/sessions"),
        (Method::GET, "/openapi.json"),
        (Method::POST, "/sessions/x"),
        (Method::GET, "/sessions/x/events/sse"),
        (Method::GET, "/no/such/route"),
    ] {
        let missing = raw(method.clone(), &format!("{url}{path}"), None, None, None).await;
        assert_problem(&missing, 401, "unauthorized");
        let wrong = raw(
            method.clone(),
            &format!("{url}{path}"),
            Some("s3cre"),
            None,
            None,
        )
        .await;
        assert_problem(&wrong, 401, "unauthorized");
    }
    let ok = raw(
        Method::GET,
        &format!("{url}/agents"),
        Some("s3cret"),
        None,
        None,
    )
    .await;
    assert_eq!(ok.0, 200);
    let response = reqwest::get(format!("{url}/agents")).await.unwrap();
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
}

#[tokio::test]
async fn malformed_and_mistyped_bodies() {
    let daemon = TestDaemon::start().await;
    let url = format!("{}/sessions/s1", daemon.url());
    let malformed = raw(
        Method::POST,
        &url,
        None,
        JSON,
        Some(b"{\"agent\": ".to_vec()),
    )
    .await;
    assert_problem(&malformed, 400, "malformed-json");
    let wrong_type = raw(Method::POST, &url, None, JSON, body(json!({"agent": 5}))).await;
    assert_problem(&wrong_type, 422, "invalid-body");
    let missing = raw(Method::POST, &url, None, JSON, body(json!({}))).await;
    assert_problem(&missing, 422, "invalid-body");
    let unknown_field = raw(
        Method::POST,
        &url,
        None,
        JSON,
        body(json!({"agent": "mock", "agentmode": "plan"})),
    )
    .await;
    assert_problem(&unknown_field, 422, "invalid-body");
    assert!(
        unknown_field.2["detail"]
            .as_str()
            .unwrap()
            .contains("agentmode")
    );
    let bad_enum = raw(
        Method::POST,
        &url,
        None,
        JSON,
        body(json!({"agent": "mock", "permissionMode": "yolo"})),
    )
    .await;
    assert_problem(&bad_enum, 422, "invalid-body");
    let no_content_type = raw(
        Method::POST,
        &url,
        None,
        None,
        body(json!({"agent": "mock"})),
    )
    .await;
    assert_problem(&no_content_type, 415, "unsupported-media-type");
    // Nothing was created by any of these.
    assert!(
        daemon
            .client
            .list_sessions(&Default::default())
            .await
            .unwrap()
            .sessions
            .is_empty()
    );
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused() {
    let daemon = TestDaemon::start_with(Options {
        body_limit: 1024,
        ..Options::default()
    })
    .await;
    daemon.mock_session("s1").await;
    let big = json!({"message": "x".repeat(4096)});
    let url = format!("{}/sessions/s1/messages", daemon.url());
    let response = raw(Method::POST, &url, None, JSON, body(big)).await;
    assert_problem(&response, 413, "payload-too-large");
    assert!(response.2["detail"].as_str().unwrap().contains("1024"));
    let reject = format!("{}/sessions/s1/questions/q_1/reject", daemon.url());
    let response = raw(Method::POST, &reject, None, JSON, Some(vec![b' '; 4096])).await;
    assert_problem(&response, 413, "payload-too-large");
    // The session is untouched: no turn started.
    assert_eq!(daemon.events("s1").await.len(), 1);
}

#[tokio::test]
async fn unknown_agents_sessions_and_routes() {
    let daemon = TestDaemon::start().await;
    let url = daemon.url();
    let unknown_agent = raw(
        Method::POST,
        &format!("{url}/sessions/s1"),
        None,
        JSON,
        body(json!({"agent": "claud"})),
    )
    .await;
    assert_problem(&unknown_agent, 404, "unknown-agent");
    assert!(
        unknown_agent.2["detail"]
            .as_str()
            .unwrap()
            .contains("claude")
    );
    for path in ["/agents/claud/models", "/agents/claud/modes"] {
        let response = raw(Method::GET, &format!("{url}{path}"), None, None, None).await;
        assert_problem(&response, 404, "unknown-agent");
    }
    let install = raw(
        Method::POST,
        &format!("{url}/agents/claud/install"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&install, 404, "unknown-agent");

    for (method, path, payload) in [
        (Method::GET, "/sessions/nope", None),
        (Method::DELETE, "/sessions/nope", None),
        (Method::POST, "/sessions/nope/end", None),
        (
            Method::POST,
            "/sessions/nope/messages",
            body(json!({"message": "hi"})),
        ),
        (Method::POST, "/sessions/nope/cancel", None),
        (Method::GET, "/sessions/nope/events", None),
        (Method::GET, "/sessions/nope/events/sse", None),
        (
            Method::POST,
            "/sessions/nope/permissions/p/reply",
            body(json!({"reply": "once"})),
        ),
        (
            Method::POST,
            "/sessions/nope/questions/q/reply",
            body(json!({"answers": []})),
        ),
        (
            Method::POST,
            "/sessions/nope/questions/q/reject",
            body(json!({})),
        ),
    ] {
        let response = raw(method, &format!("{url}{path}"), None, JSON, payload).await;
        assert_problem(&response, 404, "session-not-found");
    }
    let route = raw(Method::GET, &format!("{url}/nowhere"), None, None, None).await;
    assert_problem(&route, 404, "not-found");
    let method = raw(Method::PUT, &format!("{url}/sessions"), None, None, None).await;
    assert_problem(&method, 405, "method-not-allowed");
}

#[tokio::test]
async fn bad_offsets_and_limits() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s1").await;
    let base = format!("{}/sessions/s1/events", daemon.url());
    for query in [
        "limit=0",
        "limit=1001",
        "limit=-1",
        "offset=-1",
        "offset=abc",
        "limit=1.5",
        "includeRaw=maybe",
        "bogus=1",
    ] {
        let response = raw(Method::GET, &format!("{base}?{query}"), None, None, None).await;
        assert_problem(&response, 400, "invalid-parameter");
    }
    let sse = raw(
        Method::GET,
        &format!("{base}/sse?offset=x"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&sse, 400, "invalid-parameter");
    let response = reqwest::Client::new()
        .get(format!("{base}/sse"))
        .header("last-event-id", "yesterday")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let ok = raw(
        Method::GET,
        &format!("{base}?offset=99&limit=1000"),
        None,
        None,
        None,
    )
    .await;
    assert_eq!(ok.0, 200);
    assert_eq!(ok.2, json!({"events": [], "hasMore": false}));
}

#[tokio::test]
async fn session_creation_is_validated() {
    let root = tempfile::tempdir().unwrap();
    let inside = root.path().join("work");
    std::fs::create_dir(&inside).unwrap();
    let daemon = TestDaemon::start_with(Options {
        workspace_root: Some(root.path().to_path_buf()),
        ..Options::default()
    })
    .await;
    let url = daemon.url();
    let create = |id: &str, payload: serde_json::Value| {
        let url = format!("{url}/sessions/{id}");
        async move { raw(Method::POST, &url, None, JSON, body(payload)).await }
    };
    let inside = inside.display().to_string();
    let ok = create("ok", json!({"agent": "mock", "cwd": inside})).await;
    assert_eq!(ok.0, 201, "{:?}", ok.2);
    assert_eq!(ok.2, json!({"healthy": true}));
    assert_problem(
        &create("ok", json!({"agent": "mock", "cwd": inside})).await,
        409,
        "session-exists",
    );
    assert_problem(
        &create("bad%20id", json!({"agent": "mock", "cwd": inside})).await,
        400,
        "invalid-parameter",
    );
    assert_problem(
        &create(".hidden", json!({"agent": "mock", "cwd": inside})).await,
        400,
        "invalid-parameter",
    );
    assert_problem(
        &create(&"x".repeat(129), json!({"agent": "mock", "cwd": inside})).await,
        400,
        "invalid-parameter",
    );
    // What only the daemon can judge: 400.
    let cases = [
        json!({"agent": "mock", "cwd": inside, "agentMode": "dance"}),
        json!({"agent": "mock", "cwd": format!("{inside}/missing")}),
        json!({"agent": "mock", "cwd": "/"}),
    ];
    for (i, case) in cases.into_iter().enumerate() {
        let response = create(&format!("c{i}"), case.clone()).await;
        assert_problem(&response, 400, "invalid-session-config");
    }
    // What the schema states: 422, naming the field.
    let cases = [
        (json!({"agent": "mock", "agentMode": ""}), "agentMode"),
        (
            json!({"agent": "mock", "agentMode": "x".repeat(129)}),
            "agentMode",
        ),
        (json!({"agent": "mock", "model": ""}), "model"),
        (json!({"agent": "mock", "model": "a\nb"}), "model"),
        (json!({"agent": "mock", "variant": "\u{0}"}), "variant"),
        (
            json!({"agent": "mock", "token": "key\r\nX-Injected: 1"}),
            "token",
        ),
        (
            json!({"agent": "mock", "agentVersion": "../x"}),
            "agentVersion",
        ),
        (json!({"agent": "mock", "agentVersion": ""}), "agentVersion"),
        (json!({"agent": "mock", "cwd": "relative/dir"}), "cwd"),
        (json!({"agent": "mock", "cwd": "/a\u{0}b"}), "cwd"),
        (
            json!({"agent": "mock", "permissionMode": "bypass"}),
            "dangerouslySkipPermissions",
        ),
        (
            json!({"agent": "mock", "permissionMode": "plan", "dangerouslySkipPermissions": true}),
            "dangerouslySkipPermissions",
        ),
    ];
    for (i, (case, field)) in cases.into_iter().enumerate() {
        let response = create(&format!("d{i}"), case.clone()).await;
        assert_problem(&response, 422, "invalid-body");
        let detail = response.2["detail"].as_str().unwrap();
        assert!(detail.contains(field), "{case}: {detail}");
        assert!(
            !detail.contains("X-Injected"),
            "a token is never repeated: {detail}"
        );
    }
    let skip = create(
        "skip",
        json!({"agent": "mock", "cwd": inside, "dangerouslySkipPermissions": true}),
    )
    .await;
    assert_eq!(skip.0, 201);
    let info = daemon.client.get_session("skip").await.unwrap();
    assert_eq!(
        info.permission_mode,
        sandbox_universal::PermissionMode::Bypass
    );
}

#[tokio::test]
async fn unhealthy_starts_leave_the_id_free() {
    let daemon = TestDaemon::start().await;
    let url = daemon.url();
    let bad_token = raw(
        Method::POST,
        &format!("{url}/sessions/s1"),
        None,
        JSON,
        body(json!({"agent": "mock", "token": "bad-key", "validateToken": true})),
    )
    .await;
    assert_problem(&bad_token, 422, "agent-credential-rejected");
    assert_eq!(bad_token.2["agentError"]["type"], "tokenError");
    assert!(daemon.client.get_session("s1").await.is_err());
    // Not validated: the same token is accepted, and the id is usable.
    let ok = raw(
        Method::POST,
        &format!("{url}/sessions/s1"),
        None,
        JSON,
        body(json!({"agent": "mock", "token": "bad-key"})),
    )
    .await;
    assert_eq!(ok.0, 201);

    // No credential at all: refused first, naming the three ways to give one.
    let no_credential = raw(
        Method::POST,
        &format!("{url}/sessions/s2"),
        None,
        JSON,
        body(json!({"agent": "pi"})),
    )
    .await;
    assert_problem(&no_credential, 422, "agent-credential-rejected");
    let detail = no_credential.2["detail"].as_str().unwrap();
    assert!(
        detail.contains("`token`")
            && detail.contains("ANTHROPIC_API_KEY")
            && detail.contains("credentials import"),
        "{detail}"
    );
    // Every agent is supported; one whose binary is missing is a 409 naming how to fix it.
    let missing = raw(
        Method::POST,
        &format!("{url}/sessions/s2"),
        None,
        JSON,
        body(json!({"agent": "pi", "token": "sk-own"})),
    )
    .await;
    assert_problem(&missing, 409, "agent-not-installed");
    assert_eq!(missing.2["agentError"]["type"], "notInstalled");
    assert!(daemon.client.get_session("s2").await.is_err());
}

#[tokio::test]
async fn agents_models_modes_and_install() {
    let daemon = TestDaemon::start().await;
    let agents = daemon.client.list_agents().await.unwrap().agents;
    let ids: Vec<&str> = agents.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["claude", "codex", "opencode", "amp", "pi", "mock"]);
    let mock = agents.iter().find(|a| a.id.as_str() == "mock").unwrap();
    assert!(mock.installed && mock.supported);
    assert!(mock.capabilities.permissions && mock.capabilities.questions);
    let pi = agents.iter().find(|a| a.id.as_str() == "pi").unwrap();
    assert!(!pi.installed && pi.supported);

    let models = daemon.client.agent_models("mock").await.unwrap();
    assert_eq!(models.default_model.as_deref(), Some("mock-1"));
    assert_eq!(models.models[0].variants, ["low", "medium", "high"]);
    let modes = daemon.client.agent_modes("mock").await.unwrap();
    assert_eq!(modes.modes.len(), 2);
    assert_eq!(modes.permission_modes.len(), 4);

    let install = daemon
        .client
        .install_agent("mock", &Default::default())
        .await
        .unwrap();
    assert!(install.already_installed);
    let url = daemon.url();
    let amp_install = raw(
        Method::POST,
        &format!("{url}/agents/amp/install"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&amp_install, 409, "install-unavailable");
    assert!(
        amp_install.2["detail"]
            .as_str()
            .unwrap()
            .contains("SANDBOX_DAEMON_AMP_PATH")
    );
    let pi_models = raw(
        Method::GET,
        &format!("{url}/agents/pi/models"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&pi_models, 409, "agent-not-installed");
}

#[tokio::test]
async fn openapi_document_lists_every_route() {
    let daemon = TestDaemon::start().await;
    let doc = daemon.client.openapi().await.unwrap();
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/health",
        "/agents",
        "/agents/{agent}/models",
        "/agents/{agent}/modes",
        "/agents/{agent}/install",
        "/sessions",
        "/sessions/{sessionId}",
        "/sessions/{sessionId}/messages",
        "/sessions/{sessionId}/cancel",
        "/sessions/{sessionId}/events",
        "/sessions/{sessionId}/events/sse",
        "/sessions/{sessionId}/permissions/{permissionId}/reply",
        "/sessions/{sessionId}/questions/{questionId}/reply",
        "/sessions/{sessionId}/questions/{questionId}/reject",
        "/openapi.json",
    ] {
        assert!(paths.contains_key(path), "missing {path}");
    }
    assert!(doc["components"]["schemas"]["UniversalEvent"].is_object());
}

#[tokio::test]
async fn problems_name_their_kind_and_instance() {
    let daemon = TestDaemon::start().await;
    let response = raw(
        Method::GET,
        &format!("{}/sessions/ghost", daemon.url()),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&response, 404, "session-not-found");
    assert_eq!(response.2["title"], "Session not found");
    assert_eq!(response.2["instance"], "/sessions/ghost");
    assert_eq!(response.2["detail"], "no session with id `ghost`");
}

#[tokio::test]
async fn cors_preflight_and_headers_for_listed_origins() {
    let daemon = TestDaemon::start_with(Options {
        token: Some("t".into()),
        cors_origins: vec!["http://app.local".into()],
        ..Options::default()
    })
    .await;
    let client = reqwest::Client::new();
    let preflight = client
        .request(
            Method::OPTIONS,
            format!("{}/sessions/s/messages", daemon.url()),
        )
        .header("origin", "http://app.local")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization,content-type",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 200);
    assert_eq!(
        preflight.headers()["access-control-allow-origin"],
        "http://app.local"
    );
    let allowed = preflight.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(allowed.contains("authorization"), "{allowed}");
    let other = client
        .get(format!("{}/sessions", daemon.url()))
        .header("origin", "http://evil.local")
        .bearer_auth("t")
        .send()
        .await
        .unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn two_daemons_cannot_share_a_data_dir() {
    let first = TestDaemon::start().await;
    let second = sandbox_daemon::server::start(sandbox_daemon::server::ServerConfig {
        host: "127.0.0.1".into(),
        port: 0,
        http: Default::default(),
        sessions: sandbox_daemon::session::SessionSettings::new(
            first.data_dir.path().to_path_buf(),
            first.data_dir.path().to_path_buf(),
        ),
        store: None,
        store_options: sandbox_daemon::store::StoreOptions::new(),
        provider_env: Default::default(),
        locator: Default::default(),
        executable: None,
        install: None,
        auto_install: false,
        shutdown_timeout: sandbox_daemon::server::DEFAULT_SHUTDOWN_TIMEOUT,
    })
    .await;
    let error = second.err().expect("the data dir is taken");
    assert!(
        error.to_string().contains("another sandbox-daemon"),
        "{error}"
    );
}
