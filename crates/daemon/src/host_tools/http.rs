//! Calling http host tools: one signed `POST` of a [`HostToolCall`] per attempt,
//! answered with a [`ToolCallResultRequest`]; transient failures retried with backoff.

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::{Response, StatusCode, Url};
use sandbox_universal::{HostToolCall, SIGNATURE_HEADER, ToolCallResultRequest};

use crate::signing::{sign, unix_now};

/// The largest answer read from an endpoint; a longer one is a failure.
pub const MAX_ANSWER_BYTES: usize = 8 << 20;

/// The failure of a call when no signing secret is configured.
const NO_SECRET: &str =
    "The host tool cannot be called: the daemon has no signing secret for http host tools.";

/// How much of a failed answer's body the model is shown.
const SNIPPET_CHARS: usize = 300;

/// When and how often a failed attempt is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts after the first.
    pub retries: u32,
    /// The wait before the first retry; it doubles for each one after.
    pub backoff: Duration,
    /// The longest wait before a retry, the endpoint's `Retry-After` included.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    /// 4 retries, after 250 ms, 500 ms, 1 s and 2 s; a `Retry-After` up to 30 s.
    fn default() -> Self {
        Self {
            retries: 4,
            backoff: Duration::from_millis(250),
            max_wait: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1 for the first), unless the endpoint said.
    fn wait(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let doubled = self
            .backoff
            .saturating_mul(1 << retry.saturating_sub(1).min(16));
        retry_after.unwrap_or(doubled).min(self.max_wait)
    }
}

/// Calls http host tools: signed POSTs, retried with backoff.
#[derive(Clone)]
pub struct HttpToolCaller {
    /// Through the environment's proxies, if any, or straight to loopback endpoints;
    /// built on the first call.
    clients: sandbox_install::clients::LazyClients,
    secret: Option<Vec<u8>>,
    retry: RetryPolicy,
}

impl std::fmt::Debug for HttpToolCaller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpToolCaller")
            .field("can_sign", &self.can_sign())
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

/// How one attempt ended.
enum Attempt {
    /// An answer to hand back, or (its cause) a failure not worth retrying.
    Done(Result<ToolCallResultRequest, String>),
    /// A failure that may pass: its cause, and the wait the endpoint asked for.
    Transient(String, Option<Duration>),
}

impl HttpToolCaller {
    /// A caller signing with `secret` (an empty one counts as none), with the default
    /// [`RetryPolicy`]. Redirects are not followed: a signed body goes only where the
    /// tool's URL says. Proxies from the environment are used, except for loopback URLs.
    pub fn new(secret: Option<Vec<u8>>) -> Self {
        Self {
            clients: sandbox_install::clients::LazyClients::new(|| {
                reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .user_agent(concat!("sandbox-daemon/", env!("CARGO_PKG_VERSION")))
            }),
            secret: secret.filter(|s| !s.is_empty()),
            retry: RetryPolicy::default(),
        }
    }

    /// This caller, retrying by `retry`.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Whether a signing secret is configured (sessions with http host tools are refused
    /// without one).
    pub fn can_sign(&self) -> bool {
        self.secret.is_some()
    }

    /// Runs one call; Ok = what the endpoint answered, Err = a failure to show the model
    /// (a clear sentence). Each attempt may take `timeout`; every attempt sends the same
    /// body and `Idempotency-Key` (the call's id), signed afresh.
    pub async fn call(
        &self,
        url: &str,
        headers: &BTreeMap<String, String>,
        timeout: Duration,
        call: &HostToolCall,
    ) -> Result<ToolCallResultRequest, String> {
        let Some(secret) = &self.secret else {
            return Err(NO_SECRET.into());
        };
        let url = parse_url(url)?;
        let host = url.host_str().unwrap_or_default().to_owned();
        let headers = request_headers(headers, &call.call_id)?;
        let body = serde_json::to_vec(call).map_err(|e| format!("The call is not JSON: {e}."))?;
        let body = Bytes::from(body);
        let signature_header = HeaderName::from_bytes(SIGNATURE_HEADER.as_bytes())
            .expect("the signature header's name is a header name");
        let client = self.clients.get(is_loopback(&url));
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut signed = headers.clone();
            let signature = sign(secret, unix_now(), &body);
            let signature = HeaderValue::try_from(signature).expect("the signature is header text");
            signed.insert(signature_header.clone(), signature);
            let request = client
                .post(url.clone())
                .headers(signed)
                .body(body.clone())
                .send();
            let outcome = match tokio::time::timeout(timeout, answer(request, &host, attempt)).await
            {
                Ok(outcome) => outcome,
                Err(_) => Attempt::Transient(
                    format!("{host} did not answer within {}", seconds(timeout)),
                    None,
                ),
            };
            match outcome {
                Attempt::Done(result) => {
                    return result.map_err(|cause| format!("The host tool failed: {cause}"));
                }
                Attempt::Transient(cause, _) if attempt > self.retry.retries => {
                    return Err(format!(
                        "The host tool failed after {attempt} attempts: {cause}"
                    ));
                }
                Attempt::Transient(cause, retry_after) => {
                    let wait = self.retry.wait(attempt, retry_after);
                    tracing::debug!(%host, attempt, %cause, ?wait, "host tool call retried");
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }
}

/// The tool's URL, if it is `http://` or `https://` with a host.
fn parse_url(url: &str) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|e| format!("The host tool's URL is not valid: {e}."))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err("The host tool's URL is not an http:// or https:// URL.".into());
    }
    Ok(parsed)
}

/// Whether the URL's host is `localhost` or a loopback address.
pub fn is_loopback(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The tool's extra headers, then the daemon's own (which win). Names only in errors:
/// values may be credentials.
fn request_headers(extra: &BTreeMap<String, String>, call_id: &str) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    for (name, value) in extra {
        let bad = || format!("The host tool's header `{name}` is not a valid HTTP header.");
        let name = HeaderName::try_from(name.as_str()).map_err(|_| bad())?;
        let mut value = HeaderValue::try_from(value.as_str()).map_err(|_| bad())?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let key = HeaderValue::try_from(call_id).map_err(|_| "The call's id is not header text.")?;
    headers.insert("idempotency-key", key);
    Ok(headers)
}

/// `1.5 s`, `30 s`.
fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

/// Sends one attempt and judges its answer.
async fn answer(
    request: impl Future<Output = reqwest::Result<Response>>,
    host: &str,
    attempt: u32,
) -> Attempt {
    let response = match request.await {
        Ok(response) => response,
        Err(error) => {
            tracing::debug!(%host, attempt, "host tool call not answered");
            return Attempt::Transient(
                format!("{host} could not be reached ({})", cause(&error)),
                None,
            );
        }
    };
    let status = response.status();
    tracing::debug!(%host, attempt, status = status.as_u16(), "host tool answered");
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok()?.trim().parse().ok())
        .map(Duration::from_secs);
    let location = response.headers().contains_key(reqwest::header::LOCATION);
    let body = match read_bounded(response).await {
        Ok(body) => body,
        Err(Bounded::TooLong) => {
            return Attempt::Done(Err(format!(
                "{host} answered {status} with a body over {} MiB",
                MAX_ANSWER_BYTES >> 20
            )));
        }
        Err(Bounded::Broken(error)) => {
            let cause = format!("{host}'s answer ({status}) broke off ({})", cause(&error));
            return Attempt::Transient(cause, None);
        }
    };
    if status.is_success() {
        return Attempt::Done(parse_result(host, status, &body));
    }
    let what = format!("{host} answered {status}{}", snippet(&body));
    if status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::TOO_MANY_REQUESTS
        || status.is_server_error()
    {
        return Attempt::Transient(what, retry_after);
    }
    if status.is_redirection() && location {
        return Attempt::Done(Err(format!(
            "{what} (a redirect, which the daemon does not follow: the tool's URL must be the \
             endpoint itself)"
        )));
    }
    Attempt::Done(Err(what))
}

/// A 2xx body as a tool result, or what is wrong with it.
fn parse_result(
    host: &str,
    status: StatusCode,
    body: &[u8],
) -> Result<ToolCallResultRequest, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(format!(
            "{host} answered {status} with an empty body instead of a tool result \
             ({{\"output\": ...}})"
        ));
    }
    serde_json::from_slice(body).map_err(|error| {
        format!(
            "{host} answered {status} with a body that is not a tool result \
             ({{\"output\": ...}}): {error}{}",
            snippet(body)
        )
    })
}

/// `: <the body's first 300 characters>`, or nothing for an empty body.
fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let mut cut: String = text.chars().take(SNIPPET_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    format!(": {cut}")
}

/// Why reading a body failed.
enum Bounded {
    TooLong,
    Broken(reqwest::Error),
}

/// The whole body, if it is at most [`MAX_ANSWER_BYTES`].
async fn read_bounded(mut response: Response) -> Result<Vec<u8>, Bounded> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
    {
        return Err(Bounded::TooLong);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(Bounded::Broken)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(Bounded::TooLong);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// An error and its causes, without the URL (its path or query may hold a credential).
fn cause(error: &reqwest::Error) -> String {
    let mut text = if error.is_connect() {
        "connection failed".to_owned()
    } else if error.is_timeout() {
        "timed out".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}
