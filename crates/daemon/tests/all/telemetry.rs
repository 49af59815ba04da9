//! OpenTelemetry traces of the real daemon binary, received by an OTLP/HTTP collector in
//! the test (protobuf and JSON, decoded with `opentelemetry-proto`): a span per turn with
//! its GenAI attributes, tool spans as its children, waits as its events, the caller's
//! `traceparent`, content only when asked, the flush on SIGTERM, a failing collector that
//! costs a warning a minute, and nothing at all when traces are not configured.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::Command;
use std::time::Duration;

use futures::StreamExt;
use opentelemetry_proto::tonic::trace::v1::Span;
use sandbox_client::Client;
use sandbox_universal::{EventPayload, PermissionReply, UniversalEvent};

use crate::common::create_mock;
use crate::common::process::{BINARY, DaemonProcess, daemon_args};

mod collector;

use collector::{Any, Collector, attr, hex, int, is_error, names, string, value};

/// The caller's span in the `traceparent` tests.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";
/// A word only the user's message holds: where it shows up, content was captured.
const MARKER: &str = "zanzibar";
/// How long anything the tests wait for may take.
const PATIENCE: Duration = Duration::from_secs(20);

/// The turns' spans by turn id.
fn turn_span<'a>(spans: &'a [Span], turn: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.name == "invoke_agent mock" && attr(s, "sandbox.turn.id") == turn)
        .unwrap_or_else(|| panic!("no span of {turn}: {:?}", names(spans)))
}

/// The daemon binary with `args` and `env`, and no `OTEL_*` or trace variable of the
/// test's own environment.
fn daemon(data_dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> DaemonProcess {
    let mut command = Command::new(BINARY);
    command.args(daemon_args(data_dir, None)).args(args);
    for (name, _) in std::env::vars() {
        if name.starts_with("OTEL_") || name.starts_with("SANDBOX_DAEMON_OTLP") {
            command.env_remove(name);
        }
    }
    command.envs(env.iter().copied());
    DaemonProcess::spawn_command(command)
}

/// SIGTERM, and the exit (off the runtime: the collector runs on it and must answer the
/// daemon's last export).
async fn stop(daemon: DaemonProcess) -> (std::process::ExitStatus, String) {
    tokio::task::spawn_blocking(move || daemon.terminate_within(PATIENCE))
        .await
        .unwrap()
}

/// Stops `daemon`, which must exit cleanly.
async fn terminate(daemon: DaemonProcess) {
    let (status, stderr) = stop(daemon).await;
    assert!(status.success(), "{stderr}");
}

/// Spans leave a daemon of these tests 100 ms after they end.
const SOON: (&str, &str) = ("OTEL_BSP_SCHEDULE_DELAY", "100");

/// Follows session `id` until the end of turn `turn`, answering its permission requests
/// (once) and questions; answers the session's events so far.
async fn finish_turn(client: &Client, id: &str, turn: &str) -> Vec<UniversalEvent> {
    let mut stream = client.stream_events(id, None, false).await.unwrap();
    let mut seen = Vec::new();
    let mut current = false;
    let done = tokio::time::timeout(PATIENCE, async {
        while let Some(event) = stream.next().await {
            let event = event.unwrap();
            // Earlier turns' requests were answered then.
            current |= matches!(&event.payload, EventPayload::TurnStarted(t) if t.turn_id == turn);
            match &event.payload {
                _ if !current => {}
                EventPayload::PermissionAsked(request) => client
                    .reply_permission(id, &request.permission_id, PermissionReply::Once)
                    .await
                    .unwrap(),
                EventPayload::QuestionAsked(request) => client
                    .reply_question(
                        id,
                        &request.question_id,
                        vec![vec!["Red".into()], vec!["Cheese".into()]],
                    )
                    .await
                    .unwrap(),
                _ => {}
            }
            let ended = matches!(&event.payload, EventPayload::TurnEnded(e) if e.turn_id == turn);
            seen.push(event);
            if ended {
                return;
            }
        }
    })
    .await;
    assert!(done.is_ok(), "{turn} did not end");
    seen
}

/// Sends `message` (with `headers`) and follows its turn to the end.
async fn turn(
    client: &Client,
    url: &str,
    id: &str,
    message: &str,
    headers: &[(&str, &str)],
) -> (String, Vec<UniversalEvent>) {
    let mut request = reqwest::Client::new()
        .post(format!("{url}/sessions/{id}/messages"))
        .json(&serde_json::json!({ "message": message }));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 202, "{}", response.text().await.unwrap());
    let turn_id = response.json::<serde_json::Value>().await.unwrap()["turnId"]
        .as_str()
        .unwrap()
        .to_string();
    let events = finish_turn(client, id, &turn_id).await;
    (turn_id, events)
}

#[tokio::test]
async fn turns_and_tools_are_spans_with_genai_attributes() {
    let collector = Collector::start().await;
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon(
        dir.path(),
        &["--otlp-endpoint", &collector.url],
        &[
            SOON,
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "authorization=Bearer%20collector-key",
            ),
        ],
    );
    let client = Client::new(&daemon.url, None).unwrap();
    create_mock(&client, "traced").await;
    let message = format!("{MARKER}: use a tool, ask permission and a question");
    let (first, events) = turn(&client, &daemon.url, "traced", &message, &[]).await;
    let (second, _) = turn(&client, &daemon.url, "traced", "hello", &[]).await;
    let spans = collector
        .wait("both turns", |s| {
            s.iter().filter(|s| s.name == "invoke_agent mock").count() == 2
        })
        .await;

    let span = turn_span(&spans, &first);
    assert_ne!(
        turn_span(&spans, &second).span_id,
        span.span_id,
        "a span per turn"
    );
    assert_eq!(attr(span, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(span, "gen_ai.agent.name"), "mock");
    assert_eq!(attr(span, "gen_ai.conversation.id"), "traced");
    assert_eq!(attr(span, "sandbox.session.id"), "traced");
    assert!(
        span.parent_span_id.is_empty(),
        "a root span without a traceparent"
    );
    assert!(!is_error(span));
    // Usage and the stop reason as the turn's `turnEnded` says, its times the events'.
    let ended = events
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::TurnEnded(t) if t.turn_id == first => Some((e.time, t.clone())),
            _ => None,
        })
        .unwrap();
    let usage = ended.1.usage.clone().unwrap();
    assert_eq!(
        int(&span.attributes, "gen_ai.usage.input_tokens"),
        Some(usage.input_tokens as i64)
    );
    assert_eq!(
        int(&span.attributes, "gen_ai.usage.output_tokens"),
        Some(usage.output_tokens as i64)
    );
    let Some(Any::ArrayValue(reasons)) = value(&span.attributes, "gen_ai.response.finish_reasons")
    else {
        panic!("no finish reasons");
    };
    assert_eq!(
        reasons.values[0].value,
        Some(Any::StringValue("completed".into()))
    );
    let started = events
        .iter()
        .find(|e| matches!(&e.payload, EventPayload::TurnStarted(t) if t.turn_id == first))
        .unwrap()
        .time;
    assert_eq!(
        span.start_time_unix_nano as i64,
        started.timestamp_nanos_opt().unwrap()
    );
    assert_eq!(
        span.end_time_unix_nano as i64,
        ended.0.timestamp_nanos_opt().unwrap()
    );

    // Tools: children of the turn's span, in its trace.
    let children: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == span.span_id)
        .collect();
    let mut tools: Vec<&str> = children.iter().map(|s| s.name.as_str()).collect();
    tools.sort();
    assert_eq!(
        tools,
        [
            "execute_tool ask_user",
            "execute_tool mock_search",
            "execute_tool shell",
            "execute_tool shell"
        ]
    );
    for child in &children {
        assert_eq!(child.trace_id, span.trace_id);
        assert_eq!(attr(child, "gen_ai.operation.name"), "execute_tool");
        assert!(!attr(child, "gen_ai.tool.call.id").is_empty());
        assert_eq!(attr(child, "gen_ai.tool.type"), "function");
        assert!(child.start_time_unix_nano >= span.start_time_unix_nano);
        assert!(child.end_time_unix_nano <= span.end_time_unix_nano);
    }
    let search = children
        .iter()
        .find(|s| s.name == "execute_tool mock_search")
        .unwrap();
    assert_eq!(attr(search, "gen_ai.tool.name"), "mock_search");

    // The waits: asked and resolved, with the log's ids and outcomes.
    let asked: Vec<&str> = span.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        asked,
        [
            "sandbox.permission.asked",
            "sandbox.permission.resolved",
            "sandbox.question.asked",
            "sandbox.question.resolved"
        ]
    );
    let permission = events
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::PermissionAsked(p) => Some(p.permission_id.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        string(&span.events[0].attributes, "sandbox.permission.id"),
        Some(permission.clone())
    );
    assert_eq!(
        string(&span.events[1].attributes, "sandbox.permission.id"),
        Some(permission)
    );
    assert_eq!(
        string(&span.events[1].attributes, "sandbox.permission.outcome").as_deref(),
        Some("once")
    );
    assert!(value(&span.events[1].attributes, "sandbox.wait.duration").is_some());
    assert_eq!(
        string(&span.events[3].attributes, "sandbox.question.outcome").as_deref(),
        Some("answered")
    );

    // No content unless asked; the headers, the resource.
    let everything = format!("{spans:?}");
    assert!(
        !everything.contains(MARKER),
        "content in spans: {everything}"
    );
    assert!(value(&span.attributes, "gen_ai.input.messages").is_none());
    let export = &collector.exports()[0];
    assert_eq!(export.content_type, "application/x-protobuf");
    assert_eq!(export.headers["authorization"], "Bearer collector-key");
    assert_eq!(export.service_name.as_deref(), Some("sandbox-daemon"));
    terminate(daemon).await;
}

#[tokio::test]
async fn a_traceparent_makes_the_turn_a_child_of_the_callers_span() {
    let collector = Collector::start().await;
    let dir = tempfile::tempdir().unwrap();
    // Through the variables this time, and as OTLP/JSON.
    let daemon = daemon(
        dir.path(),
        &[],
        &[
            SOON,
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_SERVICE_NAME", "traced-daemon"),
        ],
    );
    let client = Client::new(&daemon.url, None).unwrap();
    create_mock(&client, "child").await;
    let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    let headers = [
        ("traceparent", traceparent.as_str()),
        ("tracestate", "vendor=abc"),
    ];
    let (with_parent, _) = turn(&client, &daemon.url, "child", "use a tool", &headers).await;
    let (without, _) = turn(&client, &daemon.url, "child", "hello", &[]).await;
    // Malformed: ignored, never refused.
    let bad = [("traceparent", "00-not-a-trace-01")];
    let (malformed, _) = turn(&client, &daemon.url, "child", "hello", &bad).await;
    let spans = collector
        .wait("three turns", |s| {
            s.iter().filter(|s| s.name == "invoke_agent mock").count() == 3
        })
        .await;
    let span = turn_span(&spans, &with_parent);
    assert_eq!(hex(&span.trace_id), TRACE_ID);
    assert_eq!(hex(&span.parent_span_id), PARENT_ID);
    assert_eq!(span.trace_state, "vendor=abc");
    let tool = spans
        .iter()
        .find(|s| s.name == "execute_tool mock_search")
        .unwrap();
    assert_eq!(hex(&tool.trace_id), TRACE_ID);
    assert_eq!(tool.parent_span_id, span.span_id);
    for other in [&without, &malformed] {
        let span = turn_span(&spans, other);
        assert_ne!(hex(&span.trace_id), TRACE_ID, "{other} is not the caller's");
        assert!(span.parent_span_id.is_empty(), "{other}");
    }
    let exports = collector.exports();
    assert!(exports.iter().all(|e| e.content_type == "application/json"));
    assert_eq!(exports[0].service_name.as_deref(), Some("traced-daemon"));
    terminate(daemon).await;
}

#[tokio::test]
async fn content_goes_into_spans_only_when_captured() {
    let collector = Collector::start().await;
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon(
        dir.path(),
        &["--otlp-endpoint", &collector.url],
        &[
            SOON,
            ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"),
        ],
    );
    let client = Client::new(&daemon.url, None).unwrap();
    create_mock(&client, "content").await;
    let message = format!("{MARKER} tool");
    let (turn_id, _) = turn(&client, &daemon.url, "content", &message, &[]).await;
    let spans = collector
        .wait("the turn", |s| {
            s.iter().any(|s| s.name == "invoke_agent mock")
        })
        .await;
    let span = turn_span(&spans, &turn_id);
    let input: serde_json::Value =
        serde_json::from_str(&attr(span, "gen_ai.input.messages")).unwrap();
    assert_eq!(input[0]["role"], "user");
    assert_eq!(input[0]["parts"][0]["content"], message);
    let output = attr(span, "gen_ai.output.messages");
    assert!(output.contains(&format!("echo: {message}")), "{output}");
    let search = spans
        .iter()
        .find(|s| s.name == "execute_tool mock_search")
        .unwrap();
    assert!(attr(search, "gen_ai.tool.call.arguments").contains(MARKER));
    assert_eq!(
        attr(search, "gen_ai.tool.call.result"),
        "mock search found 1 result"
    );
    terminate(daemon).await;
}

#[tokio::test]
async fn spans_are_flushed_on_sigterm_and_a_cut_turn_ends_as_failed() {
    let collector = Collector::start().await;
    let dir = tempfile::tempdir().unwrap();
    // Batches wait 10 minutes: only the shutdown's flush sends them.
    let daemon = daemon(
        dir.path(),
        &["--otlp-endpoint", &collector.url],
        &[("OTEL_BSP_SCHEDULE_DELAY", "600000")],
    );
    let client = Client::new(&daemon.url, None).unwrap();
    create_mock(&client, "flush").await;
    let (done, _) = turn(&client, &daemon.url, "flush", "use a tool", &[]).await;
    // A turn still running at SIGTERM (`slow 500`: 10 s of deltas).
    let running = client
        .send_message("flush", "slow 500")
        .await
        .unwrap()
        .turn_id;
    let mut stream = client.stream_events("flush", None, false).await.unwrap();
    while let Some(event) = stream.next().await {
        if matches!(event.unwrap().payload, EventPayload::ItemDelta(_)) {
            break;
        }
    }
    assert!(collector.exports().is_empty(), "nothing before the flush");
    let (status, stderr) = stop(daemon).await;
    assert!(status.success(), "{stderr}");
    // Exported before the process exited: no waiting.
    let spans = collector.spans();
    assert!(!is_error(turn_span(&spans, &done)));
    let cut = turn_span(&spans, &running);
    assert!(is_error(cut), "the interrupted turn failed: {cut:?}");
    assert_eq!(attr(cut, "error.type"), "processExited");
}

#[tokio::test]
async fn a_failing_collector_costs_one_warning_and_no_turn() {
    let collector = Collector::on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), true)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let daemon = daemon(dir.path(), &["--otlp-endpoint", &collector.url], &[SOON]);
    let client = Client::new(&daemon.url, None).unwrap();
    create_mock(&client, "refused").await;
    for n in 1..=3 {
        turn(&client, &daemon.url, "refused", "use a tool", &[]).await;
        // Each turn's spans are one more refused export.
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while collector.exports().len() < n {
            assert!(tokio::time::Instant::now() < deadline, "no export {n}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let (status, stderr) = stop(daemon).await;
    assert!(status.success(), "{stderr}");
    let warnings = stderr.matches("traces could not be exported").count();
    assert_eq!(warnings, 1, "one warning a minute: {stderr}");
    assert!(stderr.contains("503"), "{stderr}");
}

#[tokio::test]
async fn nothing_is_sent_unless_configured() {
    let collector = Collector::start().await;
    // Where an exporter with no endpoint would send: the OTLP default.
    let default = Collector::on(SocketAddr::from((Ipv4Addr::LOCALHOST, 4318)), false)
        .await
        .ok();
    if default.is_none() {
        eprintln!("127.0.0.1:4318 is taken: the unconfigured case checks no default port");
    }
    let off: [&[(&str, &str)]; 3] = [
        &[SOON],
        &[
            SOON,
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url),
            ("OTEL_SDK_DISABLED", "true"),
        ],
        &[
            SOON,
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url),
            ("OTEL_TRACES_EXPORTER", "none"),
        ],
    ];
    for env in off {
        let dir = tempfile::tempdir().unwrap();
        let daemon = daemon(dir.path(), &[], env);
        let client = Client::new(&daemon.url, None).unwrap();
        create_mock(&client, "quiet").await;
        let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
        turn(
            &client,
            &daemon.url,
            "quiet",
            "use a tool",
            &[("traceparent", &traceparent)],
        )
        .await;
        // A shutdown flushes whatever there is.
        terminate(daemon).await;
    }
    assert!(collector.exports().is_empty(), "{:?}", collector.exports());
    if let Some(default) = default {
        assert!(default.exports().is_empty());
    }
}
