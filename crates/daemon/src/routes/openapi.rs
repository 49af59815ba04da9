//! The OpenAPI document, generated from the route annotations and completed with what
//! every operation shares: the problems any request can meet (bad parameters or body,
//! authentication, limits, internal faults), the constraints of path parameters, and the
//! links between operations. The daemon serves the document that matches how it runs (with
//! a token, or `--no-token`); `spec/openapi.json` is the one with a token.

use std::sync::OnceLock;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use sandbox_universal::AgentId;
use serde_json::{Value, json};
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use super::AppState;
use sandbox_universal::constraints::{SEQUENCE, SESSION_ID};

/// Title, version, tags and the bearer security scheme; paths are added by the router.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "sandbox-daemon",
        description = "Run coding agents (Claude Code, Codex, OpenCode, Amp, Pi) inside a sandbox and drive them over one HTTP + SSE API with a universal event schema. Errors are RFC 7807 problem details (`application/problem+json`, `type` `urn:sandbox-daemon:problem:<kind>`). Besides the responses each operation lists, any request can be refused before it is routed, also as problem details: 400 `malformed-request` (an unparseable request line or header) or `invalid-framing` (an invalid `Content-Length` or `Transfer-Encoding`, a malformed chunked body), 408 `request-timeout` (a head or body that stops arriving), 414 `uri-too-long` (over 8 KiB), 431 `headers-too-large` (over 100 fields or 64 KiB), 505 `http-version-not-supported`; those that leave the connection unusable say `Connection: close`.",
    ),
    tags(
        (name = "daemon", description = "The daemon itself"),
        (name = "agents", description = "Known agents, their models and modes"),
        (name = "credentials", description = "Logins the daemon keeps for agents (write-only)"),
        (name = "sessions", description = "Sessions and turns"),
        (name = "events", description = "A session's event log"),
        (name = "hitl", description = "Human in the loop: permissions and questions"),
        (name = "files", description = "The session's workspace: list, read, write, delete, upload, snapshot"),
        (name = "processes", description = "Processes beside the agent: run to the end, or long-running with a log"),
        (name = "webhooks", description = "Events delivered to the host's URLs, signed, at least once, with their deliveries"),
    ),
    components(schemas(
        sandbox_universal::InstallProgress,
        sandbox_universal::HostToolCall,
        sandbox_universal::TerminalMessage,
        sandbox_universal::WebhookPayload
    )),
    modifiers(&BearerAuth)
)]
struct BaseDocument;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The document the router starts from.
pub fn base_document() -> utoipa::openapi::OpenApi {
    let mut doc = BaseDocument::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}

/// How the daemon authenticates requests, which shapes its document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocAuth {
    /// `Authorization: Bearer <token>` on every route but `/health` (401 without it).
    Token,
    /// `--no-token`: no credentials, but requests must name an allowed host, come from an
    /// allowed origin and declare JSON bodies (403 / 415 otherwise).
    NoToken,
}

/// Operations that take no body: an empty body or `{}` is accepted; `--no-token` requires
/// the JSON content type on them too.
const EMPTY_BODY_OPERATIONS: &[&str] = &[
    "cancelTurn",
    "endSession",
    "stopProcess",
    "killProcess",
    "createTerminalTicket",
];

/// Operations whose JSON body may be left out (an empty body means the defaults);
/// `--no-token` requires the JSON content type, so a body, on them too.
const OPTIONAL_BODY_OPERATIONS: &[&str] = &["installAgent"];

/// The complete OpenAPI document of the daemon.
pub fn document(auth: DocAuth) -> &'static Value {
    static TOKEN: OnceLock<Value> = OnceLock::new();
    static NO_TOKEN: OnceLock<Value> = OnceLock::new();
    let cell = match auth {
        DocAuth::Token => &TOKEN,
        DocAuth::NoToken => &NO_TOKEN,
    };
    cell.get_or_init(|| {
        let generated = super::api_router_documented().split_for_parts().1;
        let mut doc = serde_json::to_value(&generated).expect("OpenAPI serializes");
        complete(&mut doc, auth);
        // One order whatever order the parts were written in: the document is compared
        // (spec drift) and read by generators as text.
        sandbox_universal::canonical::sort_keys(&mut doc);
        doc
    })
}

/// The OpenAPI document of this API, as this daemon runs (with or without a token).
#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "openapi",
    tag = "daemon",
    security(("bearer" = [])),
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json"))
)]
pub async fn openapi_json(State(state): State<AppState>) -> Response {
    static JSON: [OnceLock<String>; 2] = [OnceLock::new(), OnceLock::new()];
    let auth = if state.token_required {
        DocAuth::Token
    } else {
        DocAuth::NoToken
    };
    let body = JSON[auth as usize]
        .get_or_init(|| serde_json::to_string_pretty(document(auth)).expect("OpenAPI serializes"));
    let mut response = body.clone().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn problem(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}}
    })
}

fn with_header(mut response: Value, name: &str, description: &str) -> Value {
    response["headers"][name] = json!({"description": description, "schema": {"type": "string"}});
    response
}

/// Adds what every operation shares to the generated document.
fn complete(doc: &mut Value, auth: DocAuth) {
    let paths = doc["paths"].as_object_mut().expect("paths");
    for item in paths.values_mut() {
        let item = item.as_object_mut().expect("a path item");
        for (method, operation) in item.iter_mut() {
            complete_operation(method, operation, auth);
        }
    }
    if auth == DocAuth::NoToken {
        doc["components"]
            .as_object_mut()
            .expect("components")
            .remove("securitySchemes");
    }
    add_links(doc);
    describe_bodies(doc);
    describe_frames(doc);
    describe_install_frames(doc);
}

/// The SSE route answers a stream of frames, not one JSON body: each frame (as Open API
/// 3.2's `itemSchema` describes a sequential media type) carries the event's sequence as
/// `id`, its type as `event` and the event itself as JSON in `data`.
fn describe_frames(doc: &mut Value) {
    let Some(media) = doc.pointer_mut(
        "/paths/~1sessions~1{sessionId}~1events~1sse/get/responses/200/content/text~1event-stream",
    ) else {
        return;
    };
    let media = media.as_object_mut().expect("a media type");
    media.remove("schema");
    media.insert(
        "itemSchema".into(),
        json!({
            "type": "object",
            "required": ["id", "event", "data"],
            "properties": {
                "id": {"type": "string", "pattern": SEQUENCE.pattern, "maxLength": SEQUENCE.max_length, "description": "The event's sequence (resume with `Last-Event-ID`)."},
                "event": {"type": "string", "description": "The event's `type`."},
                "data": {
                    "type": "string",
                    "contentMediaType": "application/json",
                    "contentSchema": {"$ref": "#/components/schemas/UniversalEvent"},
                    "description": "The event, as JSON."
                }
            }
        }),
    );
}

/// The install route's event stream, frame by frame: `progress` frames, then one
/// `installed` or `error` frame.
fn describe_install_frames(doc: &mut Value) {
    let Some(media) = doc.pointer_mut(
        "/paths/~1agents~1{agent}~1install/post/responses/200/content/text~1event-stream",
    ) else {
        return;
    };
    let media = media.as_object_mut().expect("a media type");
    media.remove("schema");
    let frame = |event: &str, schema: &str| {
        json!({
            "type": "object",
            "required": ["event", "data"],
            "properties": {
                "event": {"const": event},
                "data": {
                    "type": "string",
                    "contentMediaType": "application/json",
                    "contentSchema": {"$ref": format!("#/components/schemas/{schema}")}
                }
            }
        })
    };
    media.insert(
        "itemSchema".into(),
        json!({"oneOf": [
            frame("progress", "InstallProgress"),
            frame("installed", "InstallResponse"),
            frame("error", "ProblemDetails"),
        ]}),
    );
}

/// What the request bodies' types alone cannot say: the constraints of their fields and
/// the agents `agent` names (`sandbox_universal::constraints`, which the daemon checks),
/// and an example of the create request.
fn describe_bodies(doc: &mut Value) {
    let schemas = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
        .expect("the document has schemas");
    sandbox_universal::constraints::describe(schemas);
    schemas["CreateSessionRequest"]["examples"] = json!([{"agent": "mock"}]);
}

fn complete_operation(method: &str, operation: &mut Value, auth: DocAuth) {
    let id = operation["operationId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut has_params = false;
    if let Some(params) = operation
        .get_mut("parameters")
        .and_then(Value::as_array_mut)
    {
        for param in params {
            has_params = true;
            constrain(param);
        }
    }
    if EMPTY_BODY_OPERATIONS.contains(&id.as_str()) {
        operation["requestBody"] = json!({
            "description": "Nothing, or an empty JSON object",
            "required": auth == DocAuth::NoToken,
            "content": {"application/json": {"schema": {"type": "object", "maxProperties": 0}}}
        });
    }
    if OPTIONAL_BODY_OPERATIONS.contains(&id.as_str()) {
        operation["requestBody"]["required"] = json!(auth == DocAuth::NoToken);
    }
    let has_body = operation.get("requestBody").is_some();
    // A body of raw bytes (a file, an archive) may be empty (but for a `--no-token` POST,
    // which must declare its type), and is not JSON: the JSON body's 415 and 422 are not
    // its own (the operation states what it refuses).
    let json_body = operation["requestBody"]["content"]
        .as_object()
        .is_some_and(|c| c.contains_key("application/json"));
    if has_body && !json_body {
        operation["requestBody"]["required"] =
            json!(auth == DocAuth::NoToken && method.eq_ignore_ascii_case("post"));
    }
    let secured = operation["security"]
        .as_array()
        .is_some_and(|s| !s.is_empty());
    let responses = operation["responses"].as_object_mut().expect("responses");
    let mut add = |status: &str, response: Value| {
        responses.entry(status.to_string()).or_insert(response);
    };
    if has_params || has_body {
        add(
            "400",
            problem("Invalid path or query parameter, or malformed JSON body"),
        );
    }
    match auth {
        DocAuth::Token if secured => add(
            "401",
            with_header(
                problem("Missing or wrong bearer token"),
                "WWW-Authenticate",
                "`Bearer`",
            ),
        ),
        DocAuth::Token => {}
        DocAuth::NoToken => add(
            "403",
            problem(
                "The Host header names a host this daemon does not serve, or the Origin is not allowed (`--allow-host`, `--cors-origin`)",
            ),
        ),
    }
    if has_body {
        add("413", problem("The body is larger than the limit"));
    }
    if json_body {
        add(
            "415",
            problem("The body is not declared as `application/json`"),
        );
        add("422", problem("The body does not match the schema"));
    }
    add("500", problem("A fault of the daemon"));
    for status in ["503", "507"] {
        if let Some(response) = responses.get_mut(status) {
            *response = with_header(
                response.clone(),
                "Retry-After",
                "Seconds to wait before retrying",
            );
        }
    }
    if auth == DocAuth::NoToken {
        // Nothing is refused for its credentials (a terminal's ticket is not checked).
        responses.remove("401");
        operation
            .as_object_mut()
            .expect("operation")
            .remove("security");
    }
}

/// The schema constraints of path, query and header parameters the daemon enforces
/// (`sandbox_universal::constraints`, the same the daemon checks).
fn constrain(param: &mut Value) {
    let schema = match (param["in"].as_str(), param["name"].as_str()) {
        (Some("path"), Some("sessionId")) => SESSION_ID.schema(),
        (Some("path"), Some("agent")) => json!({
            "type": "string",
            "enum": AgentId::ALL.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
        }),
        (Some("path"), _) => json!({"type": "string", "minLength": 1}),
        (Some("header"), Some("Last-Event-ID")) | (Some("query"), Some("cursor")) => {
            SEQUENCE.schema()
        }
        (Some("header"), Some("Idempotency-Key")) => json!({
            "type": "string",
            "minLength": 1,
            "maxLength": crate::idempotency::MAX_KEY_CHARS,
            "pattern": crate::idempotency::KEY_PATTERN,
        }),
        _ => return,
    };
    param["schema"] = schema;
}

/// Links from a created session to what can be done with it (stateful clients and
/// testers follow them).
fn add_links(doc: &mut Value) {
    let Some(created) = doc.pointer_mut("/paths/~1sessions~1{sessionId}/post/responses/201") else {
        return;
    };
    let session = json!({"sessionId": "$request.path.sessionId"});
    let mut links = serde_json::Map::new();
    for operation in [
        "getSession",
        "sendMessage",
        "cancelTurn",
        "getEvents",
        "streamEvents",
        "endSession",
        "deleteSession",
    ] {
        links.insert(
            operation.to_string(),
            json!({"operationId": operation, "parameters": session}),
        );
    }
    created["links"] = Value::Object(links);
    // A webhook leads to itself, its deliveries and its deletion.
    if let Some(created) = doc.pointer_mut("/paths/~1webhooks/post/responses/201") {
        let webhook = json!({"webhookId": "$response.body#/id"});
        created["links"] = json!({
            "getWebhook": {"operationId": "getWebhook", "parameters": webhook},
            "listWebhookDeliveries": {"operationId": "listWebhookDeliveries", "parameters": webhook},
            "deleteWebhook": {"operationId": "deleteWebhook", "parameters": webhook},
        });
    }
    // A session's pending requests lead to their answers.
    let Some(info) = doc.pointer_mut("/paths/~1sessions~1{sessionId}/get/responses/200") else {
        return;
    };
    let pending = |operation: &str, id: &str, list: &str| {
        json!({
            "operationId": operation,
            "parameters": {
                "sessionId": "$request.path.sessionId",
                id: format!("$response.body#/{list}/0/{id}"),
            }
        })
    };
    info["links"] = json!({
        "replyPermission": pending("replyPermission", "permissionId", "pendingPermissions"),
        "replyQuestion": pending("replyQuestion", "questionId", "pendingQuestions"),
        "rejectQuestion": pending("rejectQuestion", "questionId", "pendingQuestions"),
    });
}
