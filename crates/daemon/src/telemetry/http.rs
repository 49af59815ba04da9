//! The exporter's HTTP client: the workspace's reqwest, run on a one-thread runtime of its
//! own (no second HTTP stack, and an export never takes a worker from the sessions' runtime,
//! nor waits for one). A collector that cannot be reached or refuses is logged as a
//! warning at most once a minute.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// Failed exports are warned about at most this often (the rest are counted).
pub const WARN_EVERY: Duration = Duration::from_secs(60);
/// The most of a collector's answer that is read (answers are a few bytes).
const MAX_ANSWER_BYTES: usize = 64 << 10;

/// Posts export requests through reqwest, on its own runtime.
#[derive(Debug)]
pub struct ExportClient {
    client: reqwest::Client,
    runtime: ExportRuntime,
    warnings: Warnings,
}

impl ExportClient {
    /// A client whose requests give up after `timeout`, posting to `endpoint` (named in
    /// warnings).
    pub fn new(endpoint: &str, timeout: Duration) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("the trace exporter's HTTP client: {e}"))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("otlp-export")
            .enable_all()
            .build()
            .map_err(|e| format!("the trace exporter's runtime: {e}"))?;
        Ok(Self {
            client,
            runtime: ExportRuntime(Some(runtime)),
            warnings: Warnings::new(shown(endpoint)),
        })
    }
}

#[async_trait::async_trait]
impl HttpClient for ExportClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let client = self.client.clone();
        self.runtime.handle().spawn(async move {
            let _ = answer.send(post(client, request).await);
        });
        let result = answered
            .await
            .unwrap_or_else(|_| Err("the exporter's runtime stopped".into()));
        match &result {
            Ok(response) if response.status().is_success() => self.warnings.succeeded(),
            Ok(response) => {
                self.warnings
                    .failed(&format!("the collector answered {}", response.status()));
            }
            Err(error) => {
                self.warnings.failed(error);
            }
        }
        result
    }
}

/// One post, its answer read up to [`MAX_ANSWER_BYTES`].
async fn post(
    client: reqwest::Client,
    request: Request<Bytes>,
) -> Result<Response<Bytes>, HttpError> {
    let request = reqwest::Request::try_from(request).map_err(|e| e.without_url())?;
    let mut response = client.execute(request).await.map_err(|e| e.without_url())?;
    let mut answer = Response::builder().status(response.status());
    if let Some(headers) = answer.headers_mut() {
        *headers = std::mem::take(response.headers_mut());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.without_url())? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(answer.body(Bytes::from(body))?)
}

/// The endpoint as logs show it: no user info, no query.
fn shown(endpoint: &str) -> String {
    match reqwest::Url::parse(endpoint) {
        Ok(url) => {
            format!(
                "{}://{}{}",
                url.scheme(),
                url.host_str().unwrap_or_default(),
                url.port().map(|p| format!(":{p}")).unwrap_or_default()
            ) + url.path()
        }
        Err(_) => "the collector".into(),
    }
}

/// The exporter's runtime, shut down without waiting when dropped (which may happen on
/// an async task, where a blocking shutdown is not allowed).
#[derive(Debug)]
struct ExportRuntime(Option<tokio::runtime::Runtime>);

impl ExportRuntime {
    fn handle(&self) -> &tokio::runtime::Handle {
        self.0
            .as_ref()
            .expect("the runtime lives as long as the client")
            .handle()
    }
}

impl Drop for ExportRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// Rate-limited warnings about failed exports.
#[derive(Debug)]
pub struct Warnings {
    endpoint: String,
    state: Mutex<WarnState>,
}

#[derive(Debug, Default)]
struct WarnState {
    last: Option<Instant>,
    suppressed: u64,
    failing: bool,
}

impl Warnings {
    /// Warnings about exports to `endpoint`.
    pub fn new(endpoint: String) -> Self {
        Self {
            endpoint,
            state: Mutex::default(),
        }
    }

    /// An export failed: warns unless it warned less than [`WARN_EVERY`] ago (then the
    /// failure is counted into the next warning). Answers whether it warned.
    pub fn failed(&self, error: &dyn std::fmt::Display) -> bool {
        let mut state = self.state.lock().expect("warnings lock");
        state.failing = true;
        if state.last.is_some_and(|last| last.elapsed() < WARN_EVERY) {
            state.suppressed += 1;
            return false;
        }
        let suppressed = std::mem::take(&mut state.suppressed);
        state.last = Some(Instant::now());
        tracing::warn!(
            endpoint = %self.endpoint,
            %error,
            failed_since_last_warning = suppressed,
            "traces could not be exported (dropped); the session goes on"
        );
        true
    }

    /// An export went through: says so once after failures.
    pub fn succeeded(&self) {
        let mut state = self.state.lock().expect("warnings lock");
        if std::mem::take(&mut state.failing) {
            tracing::info!(endpoint = %self.endpoint, "traces reach the collector again");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_warn_at_most_once_a_minute() {
        let warnings = Warnings::new("http://c/v1/traces".into());
        assert!(warnings.failed(&"refused"));
        assert!(!warnings.failed(&"refused"));
        assert!(!warnings.failed(&"refused"));
        warnings.succeeded();
        assert!(!warnings.failed(&"refused"), "still within the minute");
        warnings.state.lock().unwrap().last = Some(Instant::now() - WARN_EVERY);
        assert!(warnings.failed(&"refused"));
        assert_eq!(warnings.state.lock().unwrap().suppressed, 0);
    }

    #[test]
    fn logs_show_no_credentials() {
        assert_eq!(
            shown("https://user:secret@collector:4318/v1/traces?key=k"),
            "https://collector:4318/v1/traces"
        );
    }

    #[test]
    fn an_unreachable_collector_is_an_error_not_a_hang() {
        // A port nothing listens on: refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/v1/traces");
        let client = ExportClient::new(&url, Duration::from_secs(5)).unwrap();
        let request = Request::post(&url).body(Bytes::from_static(b"x")).unwrap();
        let started = Instant::now();
        let result = futures::executor::block_on(client.send_bytes(request));
        assert!(result.is_err());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(client.warnings.state.lock().unwrap().failing);
    }
}
