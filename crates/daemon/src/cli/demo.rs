//! `sandbox-daemon demo`: a whole mock session over real HTTP + SSE, in one process.

use std::process::ExitCode;

use futures::StreamExt;
use sandbox_agents::ProviderEnv;
use sandbox_agents::locate::BinaryLocator;
use sandbox_client::Client;
use sandbox_universal::{CreateSessionRequest, EventPayload, PermissionReply, UniversalEvent};

use crate::app::HttpSettings;
use crate::server::{ServerConfig, start};
use crate::session::SessionSettings;

/// The message the demo sends: it asks the mock for a tool call, a permission and a
/// question.
pub const DEMO_MESSAGE: &str = "use a tool, ask permission, then a question";

/// Starts a daemon on a free port, runs one mock turn, answers its permission request and
/// questions as a client would, and prints the event stream.
pub async fn run() -> ExitCode {
    match demo().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("demo failed: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn demo() -> Result<(), String> {
    let data_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let server = start(ServerConfig {
        install: None,
        auto_install: false,
        shutdown_timeout: crate::server::DEFAULT_SHUTDOWN_TIMEOUT,
        host: "127.0.0.1".into(),
        port: 0,
        http: HttpSettings::default(),
        sessions: SessionSettings::new(
            data_dir.path().to_path_buf(),
            std::env::current_dir().map_err(|e| e.to_string())?,
        ),
        store: None,
        store_options: crate::store::StoreOptions::new(),
        provider_env: ProviderEnv::default(),
        locator: BinaryLocator::default(),
        executable: None,
    })
    .await
    .map_err(|e| format!("starting the daemon: {e}"))?;
    println!(
        "daemon listening on {} (mock agent, no API keys)",
        server.url()
    );
    let client = Client::new(&server.url(), None).map_err(|e| e.to_string())?;
    let request = CreateSessionRequest {
        agent: "mock".into(),
        ..CreateSessionRequest::default()
    };
    let created = client
        .create_session("demo", &request)
        .await
        .map_err(|e| e.to_string())?;
    println!("POST /sessions/demo -> healthy: {}", created.healthy);
    let mut events = client
        .stream_events("demo", None, false)
        .await
        .map_err(|e| e.to_string())?;
    client
        .send_message("demo", DEMO_MESSAGE)
        .await
        .map_err(|e| e.to_string())?;
    println!("POST /sessions/demo/messages {DEMO_MESSAGE:?}");
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| e.to_string())?;
        println!("{}", summary(&event));
        match &event.payload {
            EventPayload::PermissionAsked(request) => {
                println!("  -> replying `once` to {}", request.permission_id);
                client
                    .reply_permission("demo", &request.permission_id, PermissionReply::Once)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            EventPayload::QuestionAsked(request) => {
                let answers: Vec<Vec<String>> = request
                    .questions
                    .iter()
                    .map(|q| {
                        q.options
                            .iter()
                            .take(1 + usize::from(q.multi_select))
                            .map(|o| o.label.clone())
                            .collect()
                    })
                    .collect();
                println!("  -> answering {} with {answers:?}", request.question_id);
                client
                    .reply_question("demo", &request.question_id, answers)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            EventPayload::TurnEnded(_) => {
                println!("DELETE /sessions/demo");
                client
                    .end_session("demo")
                    .await
                    .map_err(|e| e.to_string())?;
            }
            _ => {}
        }
    }
    server.stop().await.map_err(|e| e.to_string())?;
    Ok(())
}

/// One line per event: sequence, type and the gist of its data.
fn summary(event: &UniversalEvent) -> String {
    let gist = match &event.payload {
        EventPayload::ItemStarted(e) | EventPayload::ItemCompleted(e) => {
            let text = e.item.text();
            format!(
                "{} {:?} {:?}{}",
                e.item.item_id,
                e.item.kind,
                e.item.status,
                if text.is_empty() {
                    String::new()
                } else {
                    format!(" {text:?}")
                }
            )
        }
        EventPayload::ItemDelta(d) => format!("{} {:?}", d.item_id, d.delta),
        EventPayload::PermissionAsked(p) => format!("{} {}", p.permission_id, p.title),
        EventPayload::PermissionResolved(p) => format!("{} {:?}", p.permission_id, p.outcome),
        EventPayload::QuestionAsked(q) => {
            format!("{} {} question(s)", q.question_id, q.questions.len())
        }
        EventPayload::QuestionResolved(q) => {
            format!("{} {:?} {:?}", q.question_id, q.outcome, q.answers)
        }
        EventPayload::ToolCallRequested(c) => format!("{} {} {}", c.call_id, c.tool, c.input),
        EventPayload::ToolCallResolved(c) => format!("{} {:?}", c.call_id, c.outcome),
        EventPayload::SessionHandedOver(h) => {
            format!("{} → {} ({} turns)", h.from_agent, h.to_agent, h.turns)
        }
        EventPayload::TurnStarted(t) => t.turn_id.clone(),
        EventPayload::TurnEnded(t) => format!("{} {:?}", t.turn_id, t.stop_reason),
        EventPayload::SessionStarted(s) => format!("{} {:?}", s.agent, s.model),
        EventPayload::SessionEnded(s) => format!("{:?}", s.reason),
        EventPayload::Error(e) => e.to_string(),
        EventPayload::Unknown(u) => format!("{:?} {}", u.reason, u.stored_type),
    };
    format!(
        "{:>4} {:<18} {gist}",
        event.sequence,
        event.payload.event_type().as_str()
    )
}
