//! Writing (and checking) the generated specs: `spec/openapi.json` and
//! `spec/universal.schema.json`.

use std::path::Path;

use sandbox_universal as u;
use schemars::JsonSchema;
use schemars::generate::SchemaGenerator;

/// File name of the OpenAPI document.
pub const OPENAPI_FILE: &str = "openapi.json";
/// File name of the universal JSON Schema.
pub const SCHEMA_FILE: &str = "universal.schema.json";

/// The OpenAPI document as pretty JSON with a trailing newline.
pub fn openapi_json() -> String {
    let mut text = serde_json::to_string_pretty(crate::routes::openapi::document(
        crate::routes::openapi::DocAuth::Token,
    ))
    .expect("OpenAPI serializes");
    text.push('\n');
    text
}

/// The JSON Schema of the universal types: the root is `UniversalEvent`, and `$defs`
/// holds every request and response body too.
pub fn universal_schema_json() -> String {
    let mut generator = SchemaGenerator::default();
    register::<u::CreateSessionRequest>(&mut generator);
    register::<u::CreateSessionResponse>(&mut generator);
    register::<u::SendMessageRequest>(&mut generator);
    register::<u::SendMessageResponse>(&mut generator);
    register::<u::CancelResponse>(&mut generator);
    register::<u::EventsResponse>(&mut generator);
    register::<u::SessionInfo>(&mut generator);
    register::<u::SessionListResponse>(&mut generator);
    register::<u::PermissionReplyRequest>(&mut generator);
    register::<u::QuestionReplyRequest>(&mut generator);
    register::<u::QuestionRejectRequest>(&mut generator);
    register::<u::ToolCallResultRequest>(&mut generator);
    register::<u::ToolCallRejectRequest>(&mut generator);
    register::<u::HostToolCall>(&mut generator);
    register::<u::AgentsResponse>(&mut generator);
    register::<u::ModelsResponse>(&mut generator);
    register::<u::ModesResponse>(&mut generator);
    register::<u::InstallRequest>(&mut generator);
    register::<u::InstallResponse>(&mut generator);
    register::<u::InstallProgress>(&mut generator);
    register::<u::PutCredentialRequest>(&mut generator);
    register::<u::CredentialsResponse>(&mut generator);
    register::<u::StoredLoginInfo>(&mut generator);
    register::<u::HealthResponse>(&mut generator);
    register::<u::ProblemDetails>(&mut generator);
    register::<u::EventType>(&mut generator);
    register::<u::FileListing>(&mut generator);
    register::<u::UploadSummary>(&mut generator);
    register::<u::ProcessRequest>(&mut generator);
    register::<u::ProcessOutput>(&mut generator);
    register::<u::ProcessList>(&mut generator);
    register::<u::ProcessLogs>(&mut generator);
    register::<u::CreateWebhookRequest>(&mut generator);
    register::<u::CreatedWebhook>(&mut generator);
    register::<u::WebhookList>(&mut generator);
    register::<u::WebhookDeliveryList>(&mut generator);
    register::<u::WebhookPayload>(&mut generator);
    let mut schema = generator.into_root_schema_for::<u::UniversalEvent>();
    u::constraints::describe(
        schema
            .get_mut("$defs")
            .and_then(serde_json::Value::as_object_mut)
            .expect("the schema has definitions"),
    );
    let mut schema = schema.to_value();
    // One order whatever order the parts were written in (spec drift compares the text).
    u::canonical::sort_keys(&mut schema);
    let mut text = serde_json::to_string_pretty(&schema).expect("schema serializes");
    text.push('\n');
    text
}

fn register<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}

/// The files `spec` writes, with their contents.
pub fn files() -> [(&'static str, String); 2] {
    [
        (OPENAPI_FILE, openapi_json()),
        (SCHEMA_FILE, universal_schema_json()),
    ]
}

/// Writes the specs into `dir`.
pub fn write(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in files() {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(())
}

/// The names of spec files in `dir` that are missing or differ from the generated ones.
pub fn stale(dir: &Path) -> Vec<&'static str> {
    files()
        .into_iter()
        .filter(|(name, text)| {
            std::fs::read_to_string(dir.join(name)).ok().as_deref() != Some(text)
        })
        .map(|(name, _)| name)
        .collect()
}
