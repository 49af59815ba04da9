//! The committed specs in `spec/` match what the code generates.

use std::path::Path;

#[test]
fn committed_specs_are_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let stale = sandbox_daemon::spec::stale(&dir);
    assert!(
        stale.is_empty(),
        "stale spec files: {stale:?}; run `cargo run -p sandbox-daemon -- spec --out spec`"
    );
}

#[test]
fn the_schema_describes_events_and_bodies() {
    let schema: serde_json::Value =
        serde_json::from_str(&sandbox_daemon::spec::universal_schema_json()).unwrap();
    assert_eq!(schema["title"], "UniversalEvent");
    for name in [
        "Item",
        "ContentPart",
        "AgentError",
        "PermissionRequest",
        "QuestionRequest",
        "CreateSessionRequest",
        "ProblemDetails",
    ] {
        assert!(schema["$defs"][name].is_object(), "missing {name}");
    }
}

use crate::common;

use common::TestDaemon;
use sandbox_universal::EventPayload;

/// Every event of a session that exercises every event type validates against both the
/// JSON Schema and the OpenAPI component, so the generated specs describe the real wire
/// format (field names included).
#[tokio::test]
async fn real_events_validate_against_both_specs() {
    let schema: serde_json::Value =
        serde_json::from_str(&sandbox_daemon::spec::universal_schema_json()).unwrap();
    let json_schema = jsonschema::validator_for(&schema).unwrap();
    let mut openapi: serde_json::Value =
        serde_json::from_str(&sandbox_daemon::spec::openapi_json()).unwrap();
    openapi["$ref"] = "#/components/schemas/UniversalEvent".into();
    let openapi_schema = jsonschema::validator_for(&openapi).unwrap();

    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    daemon
        .client
        .send_message("s", "tool permission question unparsed")
        .await
        .unwrap();
    let asked = daemon
        .wait_for("s", |e| {
            matches!(e.payload, EventPayload::PermissionAsked(_))
        })
        .await;
    let EventPayload::PermissionAsked(p) = &asked.last().unwrap().payload else {
        unreachable!()
    };
    daemon
        .client
        .reply_permission(
            "s",
            &p.permission_id,
            sandbox_universal::PermissionReply::Always,
        )
        .await
        .unwrap();
    let asked = daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::QuestionAsked(_)))
        .await;
    let EventPayload::QuestionAsked(q) = &asked.last().unwrap().payload else {
        unreachable!()
    };
    daemon
        .client
        .reply_question("s", &q.question_id, vec![vec!["Red".into()], vec![]])
        .await
        .unwrap();
    daemon.wait_turn_ended("s", 1).await;
    daemon
        .client
        .send_message("s", "permission crash")
        .await
        .unwrap();
    daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::SessionEnded(_)))
        .await;
    // A stored event this build cannot read is served as `unknown`.
    let stopped = daemon.stop().await;
    stopped
        .execute_sql(
            "UPDATE events SET body = 'corrupt' WHERE sequence = 2
             AND sid = (SELECT sid FROM sessions WHERE session_id = 's')",
        )
        .await;
    let daemon = stopped.start().await;

    let page = daemon
        .client
        .get_events(
            "s",
            &sandbox_client::EventsQuery {
                include_raw: true,
                limit: Some(1000),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for event in &page.events {
        seen.insert(event.payload.event_type().as_str());
        let value = serde_json::to_value(event).unwrap();
        let errors: Vec<String> = json_schema
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "JSON Schema rejects {value}: {errors:?}");
        let errors: Vec<String> = openapi_schema
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "OpenAPI rejects {value}: {errors:?}");
    }
    assert_eq!(seen.len(), 13, "every event type is exercised: {seen:?}");
}

/// A validator of one body schema of the published documents: the OpenAPI component and
/// the JSON Schema definition.
fn body_validators(name: &str) -> [jsonschema::Validator; 2] {
    let mut openapi: serde_json::Value =
        serde_json::from_str(&sandbox_daemon::spec::openapi_json()).unwrap();
    openapi["$ref"] = format!("#/components/schemas/{name}").into();
    let universal: serde_json::Value =
        serde_json::from_str(&sandbox_daemon::spec::universal_schema_json()).unwrap();
    let definition = serde_json::json!({
        "$schema": universal["$schema"],
        "$defs": universal["$defs"],
        "$ref": format!("#/$defs/{name}"),
    });
    [
        jsonschema::validator_for(&openapi).unwrap(),
        jsonschema::validator_for(&definition).unwrap(),
    ]
}

/// The published schemas and the daemon agree on request bodies: a body both schemas
/// refuse is refused as a bad shape (422, or the documented 404 for an agent that does not
/// exist), and a body they accept is not (201, or 400 for a choice only the daemon can
/// judge: a mode the agent does not offer, a `cwd` that does not exist).
#[tokio::test]
async fn the_schemas_and_the_daemon_agree_on_request_bodies() {
    use serde_json::json;
    let daemon = TestDaemon::start().await;
    let long = |n: usize| "x".repeat(n);
    let sessions = [
        (json!({"agent": "mock"}), 201),
        (
            json!({"agent": "mock", "agentMode": "plan", "model": "mock-1", "variant": "high"}),
            201,
        ),
        // The longest model name the schema allows; the mock offers no such model.
        (
            json!({"agent": "mock", "model": long(256), "variant": "high"}),
            400,
        ),
        (json!({"agent": "mock", "agentMode": "ünïcödé"}), 400),
        (
            json!({"agent": "mock", "agentMode": null, "model": null, "cwd": null}),
            201,
        ),
        (
            json!({"agent": "mock", "token": "", "validateToken": false}),
            201,
        ),
        (json!({"agent": "mock", "token": long(8192)}), 201),
        (
            json!({"agent": "mock", "dangerouslySkipPermissions": true}),
            201,
        ),
        (
            json!({"agent": "mock", "permissionMode": "bypass", "dangerouslySkipPermissions": true}),
            201,
        ),
        (
            json!({"agent": "mock", "permissionMode": "plan", "dangerouslySkipPermissions": false}),
            201,
        ),
        (
            json!({"agent": "mock", "agentVersion": "latest", "cwd": "/tmp"}),
            201,
        ),
        (json!({"agent": "mock", "cwd": "/no/such/dir"}), 400),
        (json!({"agent": "mock", "agentMode": ""}), 422),
        (json!({"agent": "mock", "agentMode": long(129)}), 422),
        (json!({"agent": "mock", "model": ""}), 422),
        (json!({"agent": "mock", "model": long(257)}), 422),
        (json!({"agent": "mock", "variant": "a\tb"}), 422),
        (json!({"agent": "mock", "token": long(8193)}), 422),
        (json!({"agent": "mock", "token": "a\u{7f}"}), 422),
        (json!({"agent": "mock", "agentVersion": "-1"}), 422),
        (json!({"agent": "mock", "cwd": "tmp"}), 422),
        (
            json!({"agent": "mock", "cwd": format!("/{}", long(4096))}),
            422,
        ),
        (json!({"agent": "mock", "permissionMode": "bypass"}), 422),
        (
            json!({"agent": "mock", "permissionMode": "default", "dangerouslySkipPermissions": true}),
            422,
        ),
        (json!({"agent": "mock", "extra": 1}), 422),
        (json!({"agent": 1}), 422),
        (json!({"agent": "nope"}), 404),
    ];
    // Installing is off in the test daemon: a body that passes is answered 409.
    let installs = [
        (json!({}), 409),
        (json!({"version": "pinned", "reinstall": true}), 409),
        (json!({"version": "2.1.330"}), 409),
        (json!({"version": ""}), 422),
        (json!({"version": "../x"}), 422),
        (json!({"version": long(129)}), 422),
    ];
    for (name, path, cases) in [
        ("CreateSessionRequest", "/sessions/agree-{i}", &sessions[..]),
        ("InstallRequest", "/agents/claude/install", &installs[..]),
    ] {
        let [openapi, json_schema] = body_validators(name);
        for (i, (body, expected)) in cases.iter().enumerate() {
            let valid = openapi.is_valid(body);
            assert_eq!(
                valid,
                json_schema.is_valid(body),
                "the two schemas differ on {body}"
            );
            assert_eq!(
                valid,
                ![422, 404].contains(expected),
                "{name} {body}: the schemas say valid = {valid}, the daemon answers {expected}"
            );
            let url = format!("{}{}", daemon.url(), path.replace("{i}", &i.to_string()));
            let (status, _, problem) = common::raw(
                reqwest::Method::POST,
                &url,
                None,
                Some("application/json"),
                Some(body.to_string().into_bytes()),
            )
            .await;
            assert_eq!(status, *expected, "{name} {body}: {problem}");
        }
    }
}
