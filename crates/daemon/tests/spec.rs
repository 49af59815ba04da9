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
