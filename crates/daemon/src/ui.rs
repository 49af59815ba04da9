//! The inspector: the web app built into `ui/dist/`, embedded in the binary and served at
//! `/ui` (no Node is needed to build the daemon).
//!
//! `/ui/assets/<file>` serves the app's files; every other path under `/ui/` serves
//! `index.html`, since the app routes in the browser (a link to `/ui/sessions/<id>` loads
//! it). The pages need no token (`auth.rs`): the app asks the user for it and sends it on
//! its API calls. Every answer carries a strict Content-Security-Policy and is revalidated
//! by its strong `ETag` (the file's SHA-256). Not an API operation, so not in the OpenAPI
//! document.

use std::sync::OnceLock;

use axum::Router;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, IF_NONE_MATCH, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::middleware::map_response;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};

use crate::error::ApiError;

/// Where the inspector is served (its index; every path under it is the app's).
pub const UI_PATH: &str = "/ui/";

/// What the pages may load: their own scripts, styles and images, and calls to the daemon.
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// One embedded file.
struct Asset {
    bytes: &'static [u8],
    content_type: &'static str,
    etag: OnceLock<HeaderValue>,
}

impl Asset {
    const fn new(bytes: &'static [u8], content_type: &'static str) -> Self {
        Self {
            bytes,
            content_type,
            etag: OnceLock::new(),
        }
    }

    /// Its strong entity tag, computed when first asked for.
    fn etag(&self) -> &HeaderValue {
        self.etag.get_or_init(|| {
            let digest = sandbox_agents::portable::hex(&Sha256::digest(self.bytes));
            HeaderValue::from_str(&format!("\"{digest}\"")).expect("hex is a header value")
        })
    }

    /// The file, or 304 when the request's `If-None-Match` names it.
    fn serve(&self, request: &HeaderMap) -> Response {
        let etag = self.etag();
        let mut response = if matches_etag(request, etag) {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            ([(CONTENT_TYPE, self.content_type)], self.bytes).into_response()
        };
        response.headers_mut().insert(ETAG, etag.clone());
        response
    }
}

macro_rules! dist {
    ($file:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../ui/dist/",
            $file
        ))
    };
}

static INDEX: Asset = Asset::new(dist!("index.html"), "text/html; charset=utf-8");
static ASSETS: [(&str, Asset); 3] = [
    (
        "app.js",
        Asset::new(dist!("app.js"), "text/javascript; charset=utf-8"),
    ),
    (
        "app.css",
        Asset::new(dist!("app.css"), "text/css; charset=utf-8"),
    ),
    (
        "favicon.svg",
        Asset::new(dist!("favicon.svg"), "image/svg+xml"),
    ),
];

/// Whether `If-None-Match` names `etag` (or is `*`): the weak comparison RFC 9110 asks for.
fn matches_etag(request: &HeaderMap, etag: &HeaderValue) -> bool {
    let etag = etag.as_bytes();
    request
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.trim_start_matches("W/").as_bytes() == etag)
}

/// The inspector's routes: `/ui` (redirected to `/ui/`), `/ui/` and everything under it.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent(UI_PATH) }))
        .route(
            UI_PATH,
            get(|headers: HeaderMap| async move { INDEX.serve(&headers) }),
        )
        .route("/ui/{*path}", get(page))
        .layer(map_response(protect))
}

/// `/ui/assets/<file>`: that file or a 404 problem; any other path: the app's index.
async fn page(uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path();
    let Some(name) = path.strip_prefix("/ui/assets/") else {
        return INDEX.serve(&headers);
    };
    match ASSETS.iter().find(|(file, _)| *file == name) {
        Some((_, asset)) => asset.serve(&headers),
        None => ApiError::RouteNotFound(path.to_string()).into_response(),
    }
}

/// The headers every UI answer carries.
async fn protect(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
    );
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn if_none_match(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(IF_NONE_MATCH, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn etags_are_the_files_sha256_and_answer_if_none_match() {
        let etag = INDEX.etag().to_str().unwrap().to_string();
        assert_eq!(etag.len(), 66, "{etag}");
        assert!(etag.starts_with('"') && etag.ends_with('"'));
        assert_ne!(INDEX.etag(), ASSETS[0].1.etag());
        let fresh = |value: &str| matches_etag(&if_none_match(value), INDEX.etag());
        assert!(fresh(&etag));
        assert!(fresh(&format!("W/{etag}")));
        assert!(fresh(&format!("\"other\", {etag}")));
        assert!(fresh("*"));
        assert!(!fresh("\"other\""));
        assert!(!matches_etag(&HeaderMap::new(), INDEX.etag()));
        let status = INDEX.serve(&if_none_match(&etag)).status();
        assert_eq!(status, StatusCode::NOT_MODIFIED);
    }
}
