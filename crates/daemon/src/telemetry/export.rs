//! The exporter: OTLP/HTTP through [`ExportClient`], behind the SDK's batch span
//! processor (spans queue in a bounded channel — dropped, never waited for, when full —
//! and a thread of its own exports them in batches), with the daemon's resource.

use opentelemetry::KeyValue;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::resource::{
    EnvResourceDetector, SdkProvidedResourceDetector, TelemetryResourceDetector,
};
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracerProvider};

use super::config::{Protocol, TelemetryConfig};
use super::http::ExportClient;

/// A tracer provider exporting as `config` says. The batch processor's own variables
/// (`OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_QUEUE_SIZE`, ...) and the exporter's
/// headers (`OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS`) are
/// read by the SDK.
pub fn provider(config: &TelemetryConfig) -> Result<SdkTracerProvider, String> {
    let client = ExportClient::new(&config.endpoint, config.timeout)?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_endpoint(config.endpoint.clone())
        .with_protocol(match config.protocol {
            Protocol::HttpProtobuf => opentelemetry_otlp::Protocol::HttpBinary,
            Protocol::HttpJson => opentelemetry_otlp::Protocol::HttpJson,
        })
        .with_timeout(config.timeout)
        .build()
        .map_err(|e| format!("the trace exporter: {e}"))?;
    Ok(SdkTracerProvider::builder()
        .with_span_processor(BatchSpanProcessor::builder(exporter).build())
        .with_resource(resource(&config.service_name))
        .build())
}

/// The daemon's resource: `service.name`, `service.version` (unless
/// `OTEL_RESOURCE_ATTRIBUTES` sets it), the SDK's attributes and
/// `OTEL_RESOURCE_ATTRIBUTES`.
fn resource(service_name: &str) -> Resource {
    Resource::builder_empty()
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .with_detectors(&[
            Box::new(SdkProvidedResourceDetector),
            Box::new(TelemetryResourceDetector),
            Box::new(EnvResourceDetector::new()),
        ])
        .with_service_name(service_name.to_string())
        .build()
}
