//! A process's terminal over a WebSocket: a ticket minted over the authenticated API
//! (`POST .../terminal-ticket`), then `GET .../terminal?ticket=` upgraded to a socket
//! carrying the terminal's bytes both ways and JSON control frames (resize, exit).
//!
//! Invariants: the WebSocket route is the only one the bearer check lets through without
//! the token, and only with a `ticket`, which it redeems before anything else; a socket
//! replays the output still kept, then follows live, so a reconnect redraws the screen;
//! closing the socket leaves the process running (stop or kill end it).

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::http::StatusCode;
use axum::response::Response;
use chrono::Utc;
use futures::{SinkExt, StreamExt};
use sandbox_universal::{
    ProblemDetails, ProcessStatus, TerminalMessage, TerminalSize, TerminalTicket,
};
use serde::Deserialize;
use tokio::sync::mpsc;
use utoipa::IntoParams;

use super::AppState;
use super::processes::{ProcessPath, process};
use crate::error::ApiError;
use crate::extract::{ApiEmpty, ApiPath, ApiQuery};
use crate::processes::pty::Pty;
use crate::processes::tickets::TICKET_LIFETIME;
use crate::processes::{Managed, ProcessError};

/// The most log chunks one wake of a socket sends.
const CHUNKS_PER_WAKE: usize = 256;

/// Query of `GET .../terminal`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TerminalQuery {
    /// A ticket from `POST .../terminal-ticket` (needed unless the request carries the
    /// daemon's token, or the daemon runs with `--no-token`).
    pub ticket: Option<String>,
}

/// Mints a ticket that opens the process's terminal once, within 30 seconds: a browser's
/// WebSocket cannot send the `Authorization` header, and the daemon's token never goes in
/// a URL.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/processes/{processId}/terminal-ticket",
    operation_id = "createTerminalTicket",
    tag = "processes",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("processId" = String, Path, description = "Process id")
    ),
    responses(
        (status = 201, description = "A ticket for `GET .../terminal?ticket=`", body = TerminalTicket),
        (status = 404, description = "Unknown session or process (`process-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The process runs without a terminal (`not-a-terminal`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn create_terminal_ticket(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<ProcessPath>,
    _body: ApiEmpty,
) -> Result<(StatusCode, Json<TerminalTicket>), ApiError> {
    state.sessions.info(&path.session_id).await?;
    let ticket = state
        .sessions
        .settings()
        .processes
        .mint_ticket(&path.session_id, &path.process_id)?;
    let expires_at = Utc::now()
        + chrono::Duration::from_std(TICKET_LIFETIME).expect("the lifetime fits a duration");
    let path = format!(
        "/sessions/{}/processes/{}/terminal?ticket={ticket}",
        &*path.session_id, path.process_id
    );
    Ok((
        StatusCode::CREATED,
        Json(TerminalTicket {
            ticket,
            expires_at,
            path,
        }),
    ))
}

/// The process's terminal as a WebSocket. Binary frames carry bytes: the terminal's
/// output from the daemon (first what its log still keeps, then live), input to it from
/// the client. Text frames carry JSON (`TerminalMessage`): `input` and `resize` from the
/// client, `exit` from the daemon when the process ends (it then closes the socket), and
/// `error` for a frame it could not act on. Closing the socket leaves the process running.
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/processes/{processId}/terminal",
    operation_id = "openTerminal",
    tag = "processes",
    security((), ("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("processId" = String, Path, description = "Process id"),
        TerminalQuery
    ),
    responses(
        (status = 101, description = "Switched to the WebSocket protocol: the terminal, as described above"),
        (status = 400, description = "Not a WebSocket handshake (`websocket-required`), or a bad query", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "Neither the daemon's token nor a good ticket (`terminal-ticket-refused`: unknown, used, expired or for another process)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session or process (`process-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The process runs without a terminal (`not-a-terminal`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn open_terminal(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<ProcessPath>,
    ApiQuery(query): ApiQuery<TerminalQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let table = &state.sessions.settings().processes;
    // The bearer check let this request through for its ticket (when it has no token).
    // Without a token (`--no-token`) nothing is checked, a ticket neither.
    if state.token_required
        && let Some(ticket) = &query.ticket
        && !table.redeem_ticket(ticket, &path.session_id, &path.process_id)
    {
        return Err(ProcessError::TicketRefused.into());
    }
    let process = process(&state, &path).await?;
    let pty = process
        .terminal()
        .cloned()
        .ok_or_else(|| ProcessError::NotATerminal(path.process_id.clone()))?;
    let upgrade = upgrade.map_err(|e| ProcessError::NotWebSocket(e.body_text()))?;
    let keep_alive = state.sse_keep_alive;
    Ok(upgrade.on_upgrade(move |socket| attach(socket, process, pty, keep_alive)))
}

/// Runs one socket: output out, input and control in, until either side ends.
async fn attach(socket: WebSocket, process: Arc<Managed>, pty: Arc<Pty>, keep_alive: Duration) {
    let (sink, mut incoming) = socket.split();
    // Answers to bad frames go out through the one writer.
    let (errors, error_rx) = mpsc::channel::<String>(16);
    let writer = write_output(sink, process, error_rx, keep_alive);
    let reader = async move {
        while let Some(Ok(message)) = incoming.next().await {
            match message {
                Message::Binary(bytes) => {
                    // Input to a terminal whose process is gone goes nowhere.
                    let _ = pty.write_all(&bytes).await;
                }
                Message::Text(text) => {
                    if let Err(problem) = control(&pty, text.as_str()).await
                        && errors.send(problem).await.is_err()
                    {
                        break;
                    }
                }
                Message::Close(_) => break,
                Message::Ping(_) | Message::Pong(_) => {}
            }
        }
    };
    tokio::select! {
        () = writer => {}
        () = reader => {}
    }
}

/// Acts on a client's text frame.
async fn control(pty: &Pty, text: &str) -> Result<(), String> {
    match serde_json::from_str::<TerminalMessage>(text) {
        Ok(TerminalMessage::Input { data }) => {
            let _ = pty.write_all(data.as_bytes()).await;
            Ok(())
        }
        Ok(TerminalMessage::Resize { cols, rows }) => {
            if !(1..=1000).contains(&cols) || !(1..=1000).contains(&rows) {
                return Err("`cols` and `rows` are whole numbers from 1 to 1000".into());
            }
            pty.resize(TerminalSize {
                cols: cols as u16,
                rows: rows as u16,
            })
            .map_err(|e| format!("resizing the terminal: {e}"))
        }
        Ok(TerminalMessage::Exit { .. } | TerminalMessage::Error { .. }) => {
            Err("`exit` and `error` frames come from the daemon; send `input` or `resize`".into())
        }
        Err(e) => Err(format!(
            "a text frame is a JSON `input` or `resize` message: {e}"
        )),
    }
}

/// Sends the terminal's output (what is kept, then live), answers to bad frames, a ping
/// after `keep_alive` of quiet, and `exit` then a close once the process has ended.
async fn write_output(
    mut sink: futures::stream::SplitSink<WebSocket, Message>,
    process: Arc<Managed>,
    mut errors: mpsc::Receiver<String>,
    keep_alive: Duration,
) {
    let mut changed = process.subscribe();
    let mut offset = 0;
    loop {
        changed.borrow_and_update();
        let page = process.page(offset, CHUNKS_PER_WAKE);
        let more = !page.chunks.is_empty();
        for chunk in page.chunks {
            offset = chunk.sequence;
            if sink
                .send(Message::Binary(chunk.data.into_bytes().into()))
                .await
                .is_err()
            {
                return;
            }
        }
        if more {
            continue;
        }
        if page.info.status == ProcessStatus::Exited {
            let exit = TerminalMessage::Exit {
                exit_code: page.info.exit_code,
                signal: page.info.signal,
            };
            let _ = sink.send(text(&exit)).await;
            let _ = sink
                .send(Message::Close(Some(CloseFrame {
                    code: close_code::NORMAL,
                    reason: "the process ended".into(),
                })))
                .await;
            return;
        }
        tokio::select! {
            changed = changed.changed() => {
                // Its sender lives as long as the process this task holds.
                if changed.is_err() {
                    return;
                }
            }
            Some(message) = errors.recv() => {
                if sink.send(text(&TerminalMessage::Error { message })).await.is_err() {
                    return;
                }
            }
            () = tokio::time::sleep(keep_alive) => {
                if sink.send(Message::Ping(Default::default())).await.is_err() {
                    return;
                }
            }
        }
    }
}

fn text(message: &TerminalMessage) -> Message {
    Message::Text(
        serde_json::to_string(message)
            .expect("terminal messages serialize")
            .into(),
    )
}
