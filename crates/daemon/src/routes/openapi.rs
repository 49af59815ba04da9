//! The OpenAPI document, generated from the route annotations.

use std::sync::OnceLock;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

/// Title, version, tags and the bearer security scheme; paths are added by the router.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "sandbox-daemon",
        description = "Run coding agents (Claude Code, Codex, OpenCode, Amp, Pi) inside a sandbox and drive them over one HTTP + SSE API with a universal event schema. Errors are RFC 7807 problem details.",
    ),
    tags(
        (name = "daemon", description = "The daemon itself"),
        (name = "agents", description = "Known agents, their models and modes"),
        (name = "sessions", description = "Sessions and turns"),
        (name = "events", description = "A session's event log"),
        (name = "hitl", description = "Human in the loop: permissions and questions"),
    ),
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

/// The complete OpenAPI document of the daemon.
pub fn document() -> &'static utoipa::openapi::OpenApi {
    static DOC: OnceLock<utoipa::openapi::OpenApi> = OnceLock::new();
    DOC.get_or_init(|| super::api_router().split_for_parts().1)
}

/// The OpenAPI document of this API.
#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "openapi",
    tag = "daemon",
    security(("bearer" = [])),
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json"))
)]
pub async fn openapi_json() -> Response {
    static JSON: OnceLock<String> = OnceLock::new();
    let body = JSON.get_or_init(|| document().to_pretty_json().expect("OpenAPI serializes"));
    let mut response = body.clone().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
