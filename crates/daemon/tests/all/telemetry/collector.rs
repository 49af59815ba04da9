//! An OTLP/HTTP collector on loopback for the trace tests: `POST /v1/traces`, protobuf
//! or JSON, decoded with `opentelemetry-proto`; and reading what it got.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
pub use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use prost::Message as _;

use super::PATIENCE;

/// One export request the collector got.
#[derive(Debug, Clone)]
pub struct Export {
    pub content_type: String,
    pub headers: HeaderMap,
    pub service_name: Option<String>,
    pub spans: Vec<Span>,
}

#[derive(Default)]
struct Received {
    exports: Mutex<Vec<Export>>,
    /// Answer every export with 503.
    refuse: bool,
}

/// An OTLP/HTTP collector on loopback: `POST /v1/traces`, protobuf or JSON.
pub struct Collector {
    pub url: String,
    received: Arc<Received>,
    task: tokio::task::JoinHandle<()>,
}

impl Collector {
    pub async fn start() -> Self {
        Self::on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), false)
            .await
            .expect("a loopback port")
    }

    pub async fn on(addr: SocketAddr, refuse: bool) -> std::io::Result<Self> {
        let received = Arc::new(Received {
            refuse,
            ..Received::default()
        });
        let app = Router::new()
            .route("/v1/traces", axum::routing::post(receive))
            .with_state(received.clone());
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let url = format!("http://{}", listener.local_addr()?);
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Ok(Self {
            url,
            received,
            task,
        })
    }

    pub fn exports(&self) -> Vec<Export> {
        self.received.exports.lock().unwrap().clone()
    }

    pub fn spans(&self) -> Vec<Span> {
        self.exports().into_iter().flat_map(|e| e.spans).collect()
    }

    /// Waits (bounded) until the spans received satisfy `done`; answers them.
    pub async fn wait(&self, what: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            if tokio::time::Instant::now() > deadline {
                panic!("{what}: not received; got {:?}", names(&spans));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn receive(
    State(received): State<Arc<Received>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let request = if content_type == "application/json" {
        serde_json::from_slice::<ExportTraceServiceRequest>(&body).expect("OTLP/JSON")
    } else {
        ExportTraceServiceRequest::decode(&body[..]).expect("OTLP/protobuf")
    };
    let mut service_name = None;
    let mut spans = Vec::new();
    for resource_spans in request.resource_spans {
        if let Some(resource) = &resource_spans.resource {
            service_name = string(&resource.attributes, "service.name");
        }
        for scope in resource_spans.scope_spans {
            spans.extend(scope.spans);
        }
    }
    received.exports.lock().unwrap().push(Export {
        content_type,
        headers,
        service_name,
        spans,
    });
    if received.refuse {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    }
}

/// The spans' names.
pub fn names(spans: &[Span]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}

/// The value of attribute `key`.
pub fn value<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Any> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

/// The string value of attribute `key`.
pub fn string(attributes: &[KeyValue], key: &str) -> Option<String> {
    match value(attributes, key)? {
        Any::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

/// The integer value of attribute `key`.
pub fn int(attributes: &[KeyValue], key: &str) -> Option<i64> {
    match value(attributes, key)? {
        Any::IntValue(n) => Some(*n),
        _ => None,
    }
}

/// The span's string attribute `key`, which it must have.
pub fn attr(span: &Span, key: &str) -> String {
    string(&span.attributes, key).unwrap_or_else(|| panic!("{} has no {key}", span.name))
}

/// Whether the span's status is an error.
pub fn is_error(span: &Span) -> bool {
    span.status.as_ref().map(|s| s.code) == Some(SpanStatus::Error as i32)
}

/// Lowercase hex of an id.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
