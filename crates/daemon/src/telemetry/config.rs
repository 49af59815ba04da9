//! Whether and where traces go: the server's flags and the standard `OTEL_*` variables,
//! resolved once at start. Traces are off unless an endpoint is configured.

use std::time::Duration;

use clap::Args;

/// The service name spans carry when neither `OTEL_SERVICE_NAME` nor
/// `OTEL_RESOURCE_ATTRIBUTES` names one.
pub const DEFAULT_SERVICE_NAME: &str = "sandbox-daemon";
/// How long one export may take unless `OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT` says.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Where traces go below an endpoint given as a base URL.
const TRACES_PATH: &str = "/v1/traces";

/// The trace flags of the server.
#[derive(Debug, Clone, Default, Args)]
pub struct TelemetryArgs {
    /// Export OpenTelemetry traces of sessions (a span per turn, one per tool call) over
    /// OTLP/HTTP to this collector, e.g. `http://localhost:4318` (traces go to
    /// `<url>/v1/traces`). Without it, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` turn traces on; with none of them, nothing is sent.
    #[arg(long, env = "SANDBOX_DAEMON_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
    /// Put message text, tool arguments and tool results into spans (as
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` does). Off by default:
    /// spans then carry no content. The variable takes `1`/`0`, `true`/`false`,
    /// `yes`/`no`, `on`/`off`.
    #[arg(
        long,
        env = "SANDBOX_DAEMON_OTLP_CAPTURE_CONTENT",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub otlp_capture_content: bool,
}

/// How spans are encoded on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf` (the default).
    HttpProtobuf,
    /// `http/json`.
    HttpJson,
}

/// Where and how traces are exported.
#[derive(Debug, Clone, PartialEq)]
pub struct TelemetryConfig {
    /// The URL spans are posted to (`.../v1/traces`).
    pub endpoint: String,
    /// The encoding.
    pub protocol: Protocol,
    /// How long one export may take.
    pub timeout: Duration,
    /// The `service.name` of the resource.
    pub service_name: String,
    /// Whether spans carry message text, tool arguments and results.
    pub capture_content: bool,
}

impl TelemetryArgs {
    /// The configuration these flags and the process's environment ask for: `None`
    /// when traces are off, an error for an endpoint that is not an http(s) URL.
    pub fn resolve(&self) -> Result<Option<TelemetryConfig>, String> {
        self.resolve_with(|name| std::env::var(name).ok())
    }

    /// [`Self::resolve`] with the variables `env` gives.
    pub fn resolve_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<TelemetryConfig>, String> {
        let env = |name: &str| {
            env(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let Some(endpoint) = self.endpoint(&env)? else {
            return Ok(None);
        };
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            tracing::info!("OTEL_SDK_DISABLED=true: no traces are exported");
            return Ok(None);
        }
        if let Some(exporters) = env("OTEL_TRACES_EXPORTER") {
            let names: Vec<String> = exporters
                .split(',')
                .map(|n| n.trim().to_ascii_lowercase())
                .collect();
            if names.iter().any(|n| n == "none") {
                return Ok(None);
            }
            if !names.iter().any(|n| n == "otlp") {
                tracing::warn!(%exporters, "OTEL_TRACES_EXPORTER names no exporter this daemon has (only `otlp`): no traces are exported");
                return Ok(None);
            }
        }
        let protocol = match env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .as_deref()
        {
            None | Some("http/protobuf") => Protocol::HttpProtobuf,
            Some("http/json") => Protocol::HttpJson,
            Some(other) => {
                tracing::warn!(
                    protocol = other,
                    "unsupported OTLP protocol; exporting traces as http/protobuf"
                );
                Protocol::HttpProtobuf
            }
        };
        let timeout = env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
            .or_else(|| env("OTEL_EXPORTER_OTLP_TIMEOUT"))
            .and_then(|ms| ms.parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        let capture_content = self.otlp_capture_content
            || env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        Ok(Some(TelemetryConfig {
            endpoint,
            protocol,
            timeout,
            service_name: service_name(&env),
            capture_content,
        }))
    }

    /// The traces URL: the flag (a base URL), else the traces variable (as it is), else
    /// the general one (a base URL).
    fn endpoint(&self, env: &impl Fn(&str) -> Option<String>) -> Result<Option<String>, String> {
        let flag = self.otlp_endpoint.as_deref().map(str::trim);
        let (source, url) = if let Some(url) = flag.filter(|u| !u.is_empty()) {
            ("--otlp-endpoint", below(url))
        } else if let Some(url) = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url)
        } else if let Some(url) = env("OTEL_EXPORTER_OTLP_ENDPOINT") {
            ("OTEL_EXPORTER_OTLP_ENDPOINT", below(&url))
        } else {
            return Ok(None);
        };
        match reqwest::Url::parse(&url) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.has_host() => {
                Ok(Some(url))
            }
            Ok(_) => Err(format!("{source}: `{url}` is not an http(s) URL")),
            Err(error) => Err(format!("{source}: `{url}` is not a URL ({error})")),
        }
    }
}

/// `<base>/v1/traces`, unless `base` already ends so.
fn below(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with(TRACES_PATH) {
        base.to_string()
    } else {
        format!("{base}{TRACES_PATH}")
    }
}

/// `OTEL_SERVICE_NAME`, else `service.name` in `OTEL_RESOURCE_ATTRIBUTES`, else
/// [`DEFAULT_SERVICE_NAME`].
fn service_name(env: &impl Fn(&str) -> Option<String>) -> String {
    env("OTEL_SERVICE_NAME")
        .or_else(|| {
            env("OTEL_RESOURCE_ATTRIBUTES")?
                .split(',')
                .filter_map(|pair| pair.split_once('='))
                .find(|(key, _)| key.trim() == "service.name")
                .map(|(_, value)| value.trim().to_string())
                .filter(|value| !value.is_empty())
        })
        .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(
        flag: Option<&str>,
        vars: &[(&str, &str)],
    ) -> Result<Option<TelemetryConfig>, String> {
        let args = TelemetryArgs {
            otlp_endpoint: flag.map(str::to_string),
            otlp_capture_content: false,
        };
        args.resolve_with(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        })
    }

    #[test]
    fn off_unless_an_endpoint_is_configured() {
        assert_eq!(resolve(None, &[]), Ok(None));
        assert_eq!(resolve(Some(""), &[("OTEL_SERVICE_NAME", "x")]), Ok(None));
    }

    #[test]
    fn the_flag_then_the_traces_variable_then_the_general_one() {
        let url = |flag, vars: &[(&str, &str)]| resolve(flag, vars).unwrap().unwrap().endpoint;
        assert_eq!(url(Some("http://c:4318"), &[]), "http://c:4318/v1/traces");
        assert_eq!(
            url(Some("http://c:4318/v1/traces/"), &[]),
            "http://c:4318/v1/traces"
        );
        let both = [
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://g:2/"),
        ];
        assert_eq!(url(Some("https://f"), &both), "https://f/v1/traces");
        assert_eq!(url(None, &both), "http://t:1/custom");
        assert_eq!(url(None, &both[1..]), "http://g:2/v1/traces");
        assert!(
            resolve(Some("ftp://x"), &[])
                .unwrap_err()
                .contains("--otlp-endpoint")
        );
        assert!(resolve(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", "nope")]).is_err());
    }

    #[test]
    fn the_standard_switches_turn_traces_off() {
        let on = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")];
        let with = |extra: (&'static str, &'static str)| {
            let mut vars = on.to_vec();
            vars.push(extra);
            resolve(None, &vars).unwrap()
        };
        assert!(with(("OTEL_SDK_DISABLED", "TRUE")).is_none());
        assert!(with(("OTEL_SDK_DISABLED", "false")).is_some());
        assert!(with(("OTEL_TRACES_EXPORTER", "none")).is_none());
        assert!(with(("OTEL_TRACES_EXPORTER", "console")).is_none());
        assert!(with(("OTEL_TRACES_EXPORTER", "otlp")).is_some());
    }

    #[test]
    fn protocol_timeout_service_and_content() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        let config = resolve(None, &[base]).unwrap().unwrap();
        assert_eq!(config.protocol, Protocol::HttpProtobuf);
        assert_eq!(config.timeout, DEFAULT_TIMEOUT);
        assert_eq!(config.service_name, DEFAULT_SERVICE_NAME);
        assert!(!config.capture_content);
        let config = resolve(
            None,
            &[
                base,
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
                ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2500"),
                ("OTEL_RESOURCE_ATTRIBUTES", "team=a, service.name = agents"),
                ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "True"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.protocol, Protocol::HttpJson);
        assert_eq!(config.timeout, Duration::from_millis(2500));
        assert_eq!(config.service_name, "agents");
        assert!(config.capture_content);
        let named = resolve(
            None,
            &[
                base,
                ("OTEL_SERVICE_NAME", "svc"),
                ("OTEL_RESOURCE_ATTRIBUTES", "service.name=other"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(named.service_name, "svc");
        assert_eq!(named.protocol, Protocol::HttpProtobuf);
        let flagged = TelemetryArgs {
            otlp_endpoint: Some("http://c".into()),
            otlp_capture_content: true,
        };
        assert!(
            flagged
                .resolve_with(|_| None)
                .unwrap()
                .unwrap()
                .capture_content
        );
    }
}
