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
