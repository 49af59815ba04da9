//! Session policy over HTTP, on the built-in mock (which honours none of it): every field
//! an agent cannot honour is a 422 naming it, bad input is a 422 naming the field, and
//! `GET /agents` states what each agent honours. What each real agent does with a policy
//! is proven by the scenario table's policy rows.

use crate::common;

use common::{TestDaemon, assert_problem, raw};
use reqwest::Method;
use serde_json::{Value, json};

const JSON: Option<&str> = Some("application/json");

async fn create(daemon: &TestDaemon, id: &str, body: Value) -> (u16, String, Value) {
    let url = format!("{}/sessions/{id}", daemon.url());
    raw(
        Method::POST,
        &url,
        None,
        JSON,
        Some(serde_json::to_vec(&body).unwrap()),
    )
    .await
}

fn detail(response: &(u16, String, Value)) -> &str {
    response.2["detail"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn what_an_agent_cannot_honour_is_refused_naming_the_field() {
    let daemon = TestDaemon::start().await;
    let cases = [
        (json!({"systemPrompt": "be brief"}), "`systemPrompt`"),
        (json!({"maxTurns": 3}), "`maxTurns`"),
        (json!({"env": {"MY_FLAG": "1"}}), "`env`"),
        (
            json!({"mcpServers": {"st": {"type": "stdio", "command": "sh"}}}),
            "`mcpServers`",
        ),
        (json!({"tools": {"deny": ["shell"]}}), "`tools`"),
        (
            json!({"systemPromptMode": "replace"}),
            "`systemPromptMode` needs",
        ),
    ];
    for (i, (fields, field)) in cases.into_iter().enumerate() {
        let mut body = json!({"agent": "mock"});
        body.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        let response = create(&daemon, &format!("p{i}"), body).await;
        assert_problem(&response, 422, "policy-unsupported");
        assert!(detail(&response).contains(field), "{response:?}");
    }
    // Nothing was kept: the ids are free.
    let listed = raw(
        Method::GET,
        &format!("{}/sessions", daemon.url()),
        None,
        None,
        None,
    )
    .await;
    assert_eq!(listed.2["sessions"], json!([]));
}

#[tokio::test]
async fn bad_policy_input_is_refused_naming_the_field() {
    let daemon = TestDaemon::start().await;
    let cases = [
        (json!({"tools": {"allow": ["Bash"]}}), "`tools.allow[0]`"),
        (
            json!({"tools": {"deny": ["read", "mcp:st"]}}),
            "`tools.deny[1]`",
        ),
        (json!({"tools": {"block": ["read"]}}), "block"),
        (json!({"maxTurns": 0}), "`maxTurns`"),
        (json!({"systemPrompt": ""}), "`systemPrompt`"),
        (json!({"env": {"1BAD": "x"}}), "`env`"),
        (json!({"env": {"OK": "nul\u{0}"}}), "`env.OK`"),
        (
            json!({"mcpServers": {"ht": {"type": "http", "url": "ftp://127.0.0.1/mcp"}}}),
            "`mcpServers.ht.url`",
        ),
        (
            json!({"mcpServers": {"ht": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                   "headers": {"Authorization": "Bearer x\r\nInjected: 1"}}}}),
            "`mcpServers.ht.headers.Authorization`",
        ),
        (
            json!({"mcpServers": {"ht": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                   "headers": {"Bad Header": "x"}}}}),
            "`mcpServers.ht.headers`",
        ),
        (
            json!({"mcpServers": {"bad name": {"type": "stdio", "command": "sh"}}}),
            "`mcpServers`",
        ),
        (
            json!({"mcpServers": {"st": {"type": "stdio", "command": ""}}}),
            "`mcpServers.st.command`",
        ),
        (
            json!({"mcpServers": {"st": {"type": "websocket", "url": "ws://x"}}}),
            "websocket",
        ),
    ];
    for (i, (fields, field)) in cases.into_iter().enumerate() {
        let mut body = json!({"agent": "mock"});
        body.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        let response = create(&daemon, &format!("b{i}"), body).await;
        assert_problem(&response, 422, "invalid-body");
        assert!(detail(&response).contains(field), "{field}: {response:?}");
        assert!(
            !detail(&response).contains("Injected"),
            "a refused value is not echoed: {response:?}"
        );
    }
}

#[tokio::test]
async fn messages_take_text_or_parts_and_refuse_images_an_agent_cannot_take() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("m").await;
    let url = format!("{}/sessions/m/messages", daemon.url());
    let send = |body: Value| {
        let url = url.clone();
        async move {
            raw(
                Method::POST,
                &url,
                None,
                JSON,
                Some(serde_json::to_vec(&body).unwrap()),
            )
            .await
        }
    };
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let image = json!({"type": "image", "mediaType": "image/png", "data": png});
    let refused = send(json!({"content": [{"type": "text", "text": "look"}, image]})).await;
    assert_problem(&refused, 422, "policy-unsupported");
    assert!(detail(&refused).contains("`content[1]`"), "{refused:?}");
    for (body, field) in [
        (json!({}), "`message` or `content`"),
        (
            json!({"message": "a", "content": [{"type": "text", "text": "b"}]}),
            "not both",
        ),
        (json!({"content": []}), "`content`"),
        (
            json!({"content": [{"type": "image", "mediaType": "image/tiff", "data": png}]}),
            "`content[0].mediaType`",
        ),
        (
            json!({"content": [{"type": "image", "mediaType": "image/png"}]}),
            "`content[0]`",
        ),
    ] {
        let response = send(body).await;
        assert_problem(&response, 422, "invalid-body");
        assert!(detail(&response).contains(field), "{field}: {response:?}");
    }
    // Text parts are a message like any other; the user item carries the parts.
    let sent = send(
        json!({"content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "there"}]}),
    )
    .await;
    assert_eq!(sent.0, 202, "{sent:?}");
    let events = daemon.wait_turn_ended("m", 1).await;
    let user = common::completed(&events, sandbox_universal::ItemKind::Message)
        .into_iter()
        .find(|i| i.role == Some(sandbox_universal::ItemRole::User))
        .unwrap();
    assert_eq!(user.content.len(), 2, "{user:?}");
}

#[tokio::test]
async fn agents_state_what_of_a_policy_they_honour() {
    let daemon = TestDaemon::start().await;
    let agents = raw(
        Method::GET,
        &format!("{}/agents", daemon.url()),
        None,
        None,
        None,
    )
    .await;
    for agent in agents.2["agents"].as_array().unwrap() {
        let policy = &agent["policy"];
        for field in [
            "systemPromptModes",
            "tools",
            "mcpTransports",
            "imageTypes",
            "env",
        ] {
            assert!(policy.get(field).is_some(), "{}: {policy}", agent["id"]);
        }
        let caps = &agent["capabilities"];
        // A flag is only claimed for what the policy says the agent honours.
        let honours = [
            (
                "systemPrompt",
                !policy["systemPromptModes"].as_array().unwrap().is_empty(),
            ),
            ("maxTurns", policy.get("maxTurns").is_some()),
            (
                "mcpServers",
                !policy["mcpTransports"].as_array().unwrap().is_empty(),
            ),
            (
                "images",
                !policy["imageTypes"].as_array().unwrap().is_empty(),
            ),
            ("sessionEnv", policy["env"] == true),
            (
                "toolLists",
                !policy["tools"].as_object().unwrap().is_empty(),
            ),
        ];
        for (flag, honoured) in honours {
            assert!(
                caps[flag] != true || honoured,
                "{} claims {flag} without the policy to back it: {policy}",
                agent["id"]
            );
        }
    }
    let mock = agents.2["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == "mock")
        .unwrap();
    assert_eq!(mock["policy"]["systemPromptModes"], json!([]));
}
