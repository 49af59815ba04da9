//! OpenTelemetry traces of sessions, off unless configured (`--otlp-endpoint`, the
//! `OTEL_*` variables: `config.rs`). Each session's core hands every event it logs to an
//! [`EventObserver`] (`spans.rs` builds the session's spans from them: a span per turn, a
//! child per tool call, waits as span events); finished spans go to the SDK's batch
//! processor and out over OTLP/HTTP (`export.rs`, `http.rs`) on threads of their own, so a
//! session never waits for an export. A `traceparent` on a message continues the caller's
//! trace (`context.rs`). Message text, tool arguments and results stay out of spans unless
//! content capture is on (`content.rs`).

mod config;
mod content;
mod context;
mod export;
mod http;
pub mod keys;
pub mod spans;
mod waits;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry::InstrumentationScope;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use sandbox_universal::{AgentId, EventPayload, UniversalEvent};

pub use config::{Protocol, TelemetryArgs, TelemetryConfig};
pub use context::TraceParent;
pub use spans::SessionSpans;

/// What watches a session's events as its core logs them. Called under the core's lock,
/// in log order: it must be quick and never wait.
pub trait EventObserver: Send + Sync {
    /// An event the core is about to append (its sequence and time are final).
    fn observe(&self, event: &UniversalEvent);
    /// The caller's trace context for turn `turn_id`, whose `turnStarted` is observed
    /// next: only that turn takes it.
    fn parent_turn(&self, turn_id: &str, parent: TraceParent);
}

/// Trace export, when configured: shared by every session of the daemon.
#[derive(Clone)]
pub struct Telemetry {
    inner: Arc<Inner>,
}

struct Inner {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    capture: bool,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("capture", &self.inner.capture)
            .finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Trace export as the flags and the environment ask: `None` when it is off.
    pub fn from_args(args: &TelemetryArgs) -> Result<Option<Self>, String> {
        args.resolve()?
            .map(|config| Self::start(&config))
            .transpose()
    }

    /// Starts exporting as `config` says.
    pub fn start(config: &TelemetryConfig) -> Result<Self, String> {
        let provider = export::provider(config)?;
        tracing::info!(
            endpoint = %config.endpoint,
            protocol = ?config.protocol,
            capture_content = config.capture_content,
            "exporting traces"
        );
        Ok(Self::with_provider(provider, config.capture_content))
    }

    /// Spans of `provider`'s (tests give one with an exporter of their own).
    pub fn with_provider(provider: SdkTracerProvider, capture: bool) -> Self {
        let scope = InstrumentationScope::builder("sandbox-daemon")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let tracer = provider.tracer_with_scope(scope);
        Self {
            inner: Arc::new(Inner {
                provider,
                tracer,
                capture,
            }),
        }
    }

    /// The observer building session `session_id`'s spans; `agent` and `model` as the
    /// session was created (its `sessionStarted` may name a model later).
    pub fn observer(
        &self,
        session_id: &str,
        agent: AgentId,
        model: Option<&str>,
    ) -> Box<dyn EventObserver> {
        Box::new(SessionTelemetry(Mutex::new(SessionSpans::new(
            self.inner.tracer.clone(),
            self.inner.capture,
            session_id,
            agent.as_str(),
            model,
        ))))
    }

    /// Exports the spans still queued, within `timeout`; spans ended after it are not
    /// exported.
    pub async fn shutdown(&self, timeout: Duration) {
        let provider = self.inner.provider.clone();
        let done = tokio::task::spawn_blocking(move || provider.shutdown_with_timeout(timeout));
        match done.await {
            Ok(Ok(())) => tracing::debug!("traces flushed"),
            Ok(Err(error)) => {
                tracing::warn!(%error, "not every trace could be exported at shutdown")
            }
            Err(error) => tracing::warn!(%error, "flushing traces failed"),
        }
    }
}

/// One session's span builder behind a lock (only the session's core takes it, under
/// its own lock, so it is never contended).
struct SessionTelemetry(Mutex<SessionSpans>);

impl EventObserver for SessionTelemetry {
    fn observe(&self, event: &UniversalEvent) {
        // The most frequent events carry nothing a span records.
        if matches!(
            event.payload,
            EventPayload::ItemDelta(_) | EventPayload::Unknown(_)
        ) {
            return;
        }
        self.spans().observe(event);
    }

    fn parent_turn(&self, turn_id: &str, parent: TraceParent) {
        self.spans().parent_turn(turn_id, parent);
    }
}

impl SessionTelemetry {
    /// The span state; a panic that poisoned it never stops the session's events.
    fn spans(&self) -> std::sync::MutexGuard<'_, SessionSpans> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
