//! What keeps requests a web page could forge away from the API, and what bounds a
//! request's head.
//!
//! Without a token (`--no-token`) anything that reaches the port is trusted, so the daemon
//! refuses what a browser could be tricked into sending: a `Host` that is not one of its
//! names (DNS rebinding: 403 `forbidden-host`), an `Origin` that is neither the daemon's own
//! (the `Host` it was reached at, over `http` or `https`: the inspector's pages at `/ui`)
//! nor one the `--cors-origin` list allows (403 `forbidden-origin`), and a `POST` whose
//! content type is not JSON (a form or `text/plain` request needs no CORS preflight; 415). `DELETE` cannot be sent cross-site
//! without a preflight at all. With a token these checks are not needed: a browser never
//! sends the bearer token on its own.
//!
//! Always: a URL longer than [`MAX_URI_BYTES`] gets 414, more than [`MAX_HEADER_FIELDS`]
//! header fields or headers over [`MAX_HEADER_BYTES`] get 431. Heads hyper refuses itself
//! (over its own limits, which are higher, or unparseable) get the same problems from
//! `serve/refusal.rs`.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::extract::is_json;

/// Longest accepted request URL (path and query), in bytes.
pub const MAX_URI_BYTES: usize = 8 << 10;
/// Largest accepted request headers, in bytes.
pub const MAX_HEADER_BYTES: usize = 64 << 10;
/// Most header fields a request may have (hyper's own HTTP/1 limit is set to this too).
pub const MAX_HEADER_FIELDS: usize = 100;

/// The host names and origins a `--no-token` daemon accepts.
#[derive(Debug, Clone)]
pub struct BrowserGuard {
    enabled: bool,
    hosts: Arc<HashSet<String>>,
    any_origin: bool,
    origins: Arc<HashSet<String>>,
}

impl BrowserGuard {
    /// The checks of a daemon bound to `bound` (`enabled` without a token): its own
    /// address, the loopback names and `extra_hosts` are allowed hosts; `cors_origins` are
    /// allowed origins (`*` for any).
    pub fn new(
        enabled: bool,
        bound: Option<SocketAddr>,
        extra_hosts: &[String],
        cors_origins: &[String],
    ) -> Self {
        let mut hosts: HashSet<String> = ["localhost", "127.0.0.1", "::1"]
            .into_iter()
            .map(String::from)
            .collect();
        if let Some(addr) = bound {
            hosts.insert(addr.ip().to_string());
        }
        hosts.extend(extra_hosts.iter().map(|h| normalize_host(h)));
        Self {
            enabled,
            hosts: Arc::new(hosts),
            any_origin: cors_origins.iter().any(|o| o == "*"),
            origins: Arc::new(
                cors_origins
                    .iter()
                    .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                    .collect(),
            ),
        }
    }

    fn check(&self, request: &Request) -> Result<(), ApiError> {
        let uri_len = request
            .uri()
            .path_and_query()
            .map_or(0, |p| p.as_str().len());
        if uri_len > MAX_URI_BYTES {
            return Err(ApiError::UriTooLong {
                limit: MAX_URI_BYTES,
            });
        }
        let header_bytes: usize = request
            .headers()
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + 4)
            .sum();
        if header_bytes > MAX_HEADER_BYTES || request.headers().len() > MAX_HEADER_FIELDS {
            return Err(headers_too_large());
        }
        if !self.enabled {
            return Ok(());
        }
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .or_else(|| request.uri().authority().map(|a| a.to_string()));
        if let Some(host) = &host
            && !self.hosts.contains(&normalize_host(host))
        {
            return Err(ApiError::ForbiddenHost(host.clone()));
        }
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            let normalized = origin.trim_end_matches('/').to_ascii_lowercase();
            let allowed = self.any_origin
                || self.origins.contains(&normalized)
                || host.is_some_and(|host| same_origin(&normalized, &host));
            if !allowed {
                return Err(ApiError::ForbiddenOrigin(origin.to_string()));
            }
        }
        Ok(())
    }

    /// Without a token, a state-changing request must say it is JSON, or for an upload a
    /// tar or gzip archive: types a browser cannot send to another origin without asking
    /// first (checked on the routes that exist, so an unknown method still gets its 405).
    /// Other methods than POST always ask first.
    fn check_content_type(&self, request: &Request) -> Result<(), ApiError> {
        if !self.enabled || request.method() != Method::POST {
            return Ok(());
        }
        let content_type = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        let upload = request.uri().path().ends_with("/files/upload");
        let archive = crate::routes::files::is_archive_type;
        if content_type.is_some_and(|v| is_json(v) || (upload && archive(v))) {
            Ok(())
        } else {
            Err(ApiError::UnsupportedMediaType)
        }
    }
}

/// The problem of headers over [`MAX_HEADER_FIELDS`] or [`MAX_HEADER_BYTES`].
pub fn headers_too_large() -> ApiError {
    ApiError::HeadersTooLarge {
        fields: MAX_HEADER_FIELDS,
        bytes: MAX_HEADER_BYTES,
    }
}

/// Whether a (lowercased) `Origin` is the daemon's own as the request reached it: `http` or
/// `https` and exactly the authority of its `Host`, which the caller has already checked is
/// one of the daemon's names. A page another site serves has another authority, and a
/// rebinding page's `Host` is refused before this.
fn same_origin(origin: &str, host: &str) -> bool {
    let authority = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    authority.is_some_and(|authority| authority == host.trim().to_ascii_lowercase())
}

/// `Host: Example.COM:2468` → `example.com`; `[::1]:80` → `::1`.
fn normalize_host(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default().to_string();
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name.to_string(),
        _ => host,
    }
}

/// Middleware applying the [`BrowserGuard`]'s host, origin and size checks (every request).
pub async fn guard(State(guard): State<BrowserGuard>, request: Request, next: Next) -> Response {
    match guard.check(&request) {
        Ok(()) => next.run(request).await,
        Err(error) => error.into_response(),
    }
}

/// Route middleware applying the [`BrowserGuard`]'s JSON rule to matched routes.
pub async fn json_only(
    State(guard): State<BrowserGuard>,
    request: Request,
    next: Next,
) -> Response {
    match guard.check_content_type(&request) {
        Ok(()) => next.run(request).await,
        Err(error) => error.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: Method, headers: &[(&str, &str)]) -> Request {
        let mut builder = Request::builder().method(method).uri("/sessions");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(axum::body::Body::empty()).unwrap()
    }

    #[test]
    fn hosts_origins_and_content_types() {
        let guard = BrowserGuard::new(
            true,
            Some("10.0.0.5:2468".parse().unwrap()),
            &["sandbox.internal".into()],
            &["http://localhost:5173".into()],
        );
        let ok = |h: &[(&str, &str)]| guard.check(&request(Method::GET, h)).is_ok();
        assert!(ok(&[("host", "localhost:2468")]));
        assert!(ok(&[("host", "127.0.0.1")]));
        assert!(ok(&[("host", "[::1]:2468")]));
        assert!(ok(&[("host", "10.0.0.5:2468")]));
        assert!(ok(&[("host", "Sandbox.Internal:80")]));
        assert!(!ok(&[("host", "evil.example:2468")]));
        assert!(ok(&[
            ("host", "localhost"),
            ("origin", "http://localhost:5173")
        ]));
        assert!(!ok(&[
            ("host", "localhost"),
            ("origin", "http://evil.example")
        ]));
        let post = |h: &[(&str, &str)]| {
            let request = request(Method::POST, h);
            guard.check(&request).is_ok() && guard.check_content_type(&request).is_ok()
        };
        assert!(post(&[
            ("host", "localhost"),
            ("content-type", "application/json")
        ]));
        assert!(!post(&[
            ("host", "localhost"),
            ("content-type", "text/plain")
        ]));
        assert!(!post(&[("host", "localhost")]));

        let open = BrowserGuard::new(false, None, &[], &[]);
        let names: Vec<String> = (0..MAX_HEADER_FIELDS).map(|i| format!("x-{i}")).collect();
        let mut headers: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "y")).collect();
        assert!(open.check(&request(Method::GET, &headers)).is_ok());
        headers.push(("x-one-more", "y"));
        assert!(matches!(
            open.check(&request(Method::GET, &headers)),
            Err(ApiError::HeadersTooLarge { .. })
        ));
        assert!(
            open.check(&request(Method::POST, &[("host", "evil.example")]))
                .is_ok()
        );
    }

    #[test]
    fn the_daemons_own_origin_is_allowed() {
        let guard = BrowserGuard::new(true, Some("127.0.0.1:2468".parse().unwrap()), &[], &[]);
        let ok = |host: &str, origin: &str| {
            let request = request(Method::POST, &[("host", host), ("origin", origin)]);
            guard.check(&request).is_ok()
        };
        assert!(ok("127.0.0.1:2468", "http://127.0.0.1:2468"));
        assert!(ok("127.0.0.1:2468", "https://127.0.0.1:2468/"));
        assert!(ok("LocalHost:2468", "http://localhost:2468"));
        assert!(ok("[::1]:2468", "http://[::1]:2468"));
        assert!(ok("localhost", "http://localhost"));
        // Another port is another origin (another server on this machine)...
        assert!(!ok("127.0.0.1:2468", "http://127.0.0.1:2469"));
        assert!(!ok("127.0.0.1:2468", "http://127.0.0.1"));
        assert!(!ok("localhost", "http://localhost:8080"));
        // ...another name too, even one that reaches the same daemon...
        assert!(!ok("127.0.0.1:2468", "http://localhost:2468"));
        assert!(!ok("127.0.0.1:2468", "http://evil.example"));
        // ...and neither an opaque origin nor another scheme is the daemon's own.
        assert!(!ok("127.0.0.1:2468", "null"));
        assert!(!ok("127.0.0.1:2468", "ws://127.0.0.1:2468"));
        assert!(!ok("127.0.0.1:2468", "http://127.0.0.1:2468.evil.example"));
        // A rebinding page's own origin matches its Host, which is refused first.
        let request = request(
            Method::POST,
            &[
                ("host", "evil.example:2468"),
                ("origin", "http://evil.example:2468"),
            ],
        );
        assert!(matches!(
            guard.check(&request),
            Err(ApiError::ForbiddenHost(_))
        ));
    }
}
