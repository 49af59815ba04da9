//! What the fake provider remembers about each request it served, and views of it in
//! any dialect (`views.rs`).

mod views;

pub use views::InputImage;

use std::collections::BTreeMap;

use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Replacement for secret header values.
pub const REDACTED: &str = "[redacted]";

/// One request as the agent sent it, with secrets redacted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// HTTP method (`POST`, `GET`, `HEAD`).
    pub method: String,
    /// Path including the query string, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Headers with lower-case names; secret values are replaced by [`REDACTED`].
    pub headers: BTreeMap<String, String>,
    /// The parsed JSON body; `Null` when empty, a JSON string when not JSON.
    pub body: Value,
    /// What the fake model answered: `text`, `tool:Bash`, `error:500`, `not-found`, ...
    pub reply: String,
    /// Which of the keys the provider requires the request carried (its index, in the
    /// order they were required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<usize>,
}

impl RecordedRequest {
    /// The path without its query string.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or_default()
    }

    /// The `model` field of the body, if any.
    pub fn model(&self) -> Option<&str> {
        self.body["model"].as_str()
    }

    /// Whether a model call: a Messages, Responses or Chat Completions request.
    pub fn is_model_call(&self) -> bool {
        let route = self.route().trim_start_matches("/v1");
        matches!(route, "/messages" | "/responses" | "/chat/completions")
    }
}

/// Whether a header carries a credential.
fn is_secret(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
    ];
    const PARTS: &[&str] = &["api-key", "apikey", "token", "secret", "password", "auth"];
    EXACT.contains(&name) || PARTS.iter().any(|p| name.contains(p))
}

/// Copies headers with lower-case names, redacting secrets.
pub fn redact_headers(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_ascii_lowercase();
            let value = if is_secret(&name) {
                REDACTED.to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect()
}

/// Parses a request body: JSON when possible, else the text as a JSON string.
pub fn parse_body(bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted() {
        let mut headers = HeaderMap::new();
        headers.insert("authorization", "Bearer sk-1".parse().unwrap());
        headers.insert("x-api-key", "sk-2".parse().unwrap());
        headers.insert("x-goog-api-key", "sk-3".parse().unwrap());
        headers.insert("content-type", "application/json".parse().unwrap());
        let out = redact_headers(&headers);
        assert_eq!(out["authorization"], REDACTED);
        assert_eq!(out["x-api-key"], REDACTED);
        assert_eq!(out["x-goog-api-key"], REDACTED);
        assert_eq!(out["content-type"], "application/json");
    }

    #[test]
    fn bodies_parse_leniently() {
        assert_eq!(parse_body(b""), Value::Null);
        assert_eq!(parse_body(b"{\"a\":1}")["a"], 1);
        assert_eq!(parse_body(b"plain"), Value::String("plain".into()));
    }
}
