//! Processes beside the agent: run one to its end, or start long-running ones and read,
//! follow (SSE, resumable), stop, kill, list and delete them (`processes/`).

use std::collections::BTreeMap;
use std::time::Duration;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use sandbox_agents::process::{ProcessSpec, base_env, is_protected_for_process};
use sandbox_universal::{
    ProblemDetails, ProcessInfo, ProcessList, ProcessLogs, ProcessOutput, ProcessRequest,
    SessionStatus,
};
use serde::Deserialize;
use utoipa::IntoParams;

use super::AppState;
use crate::error::ApiError;
use crate::extract::{ApiEmpty, ApiJson, ApiPath, ApiQuery};
use crate::processes::{DEFAULT_OUTPUT_BYTES, DEFAULT_TIMEOUT, Launch, Managed, home_of, run};
use crate::session::{SessionError, SessionId};
use crate::workspace::{Workspace, WorkspaceError, WorkspacePath};

/// The most chunks one page of `GET .../logs` answers.
const PAGE_CHUNKS: usize = 1000;

/// Path of a process's routes.
#[derive(Debug, Deserialize)]
pub struct ProcessPath {
    /// The session.
    #[serde(rename = "sessionId")]
    pub session_id: SessionId,
    /// The process (`p1`, `p2`, ...).
    #[serde(rename = "processId")]
    pub process_id: String,
}

/// Query of `GET .../processes/{processId}/logs`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LogsQuery {
    /// Chunks with a sequence above this (default 0: from the start; with `follow`, a
    /// `Last-Event-ID` header wins).
    #[param(minimum = 0)]
    pub offset: Option<u64>,
    /// Stream the log as SSE: what is kept, then live, until the process ends.
    pub follow: Option<bool>,
}

/// What a process start needs: its launch, built from the request for the session.
async fn launch(state: &AppState, id: &str, request: ProcessRequest) -> Result<Launch, ApiError> {
    let handle = state.sessions.open(id).await?;
    if handle.info().status == SessionStatus::Ended {
        return Err(SessionError::Ended(id.to_string()).into());
    }
    if let Some(name) = request
        .env
        .keys()
        .find(|name| is_protected_for_process(name))
    {
        return Err(ApiError::InvalidBody(format!(
            "`env.{name}`: the daemon sets this variable itself (or it is a credential); it cannot be given"
        )));
    }
    let settings = state.sessions.settings();
    let relative = WorkspacePath::parse(request.cwd.as_deref().unwrap_or(""))?;
    let workspace = Workspace::new(handle.record.cwd.clone(), settings.agent_user.clone());
    let checked = relative.clone();
    workspace
        .run(move |dir| {
            let shown = format!("`{}`", checked.display());
            let meta = dir
                .metadata(checked.relative())
                .map_err(|e| WorkspaceError::from_io(&shown, e))?;
            if meta.is_dir() {
                Ok(())
            } else {
                Err(WorkspaceError::WrongKind(format!(
                    "{shown} is not a directory"
                )))
            }
        })
        .await?;
    let session_dir = settings.data_dir.join("sessions").join(id);
    let home = home_of(&session_dir);
    if !home.exists() {
        crate::private::ensure_dir(&home, 0o700)
            .and_then(|()| match &settings.agent_user {
                Some(user) => user.own_tree(&home),
                None => Ok(()),
            })
            .map_err(|e| ApiError::Internal(format!("making the processes' HOME: {e}")))?;
    }
    let mut env: BTreeMap<String, String> = base_env(&home);
    if request.tty {
        // What a terminal emulator (a browser's xterm.js, the CLI's own) understands.
        env.insert("TERM".into(), "xterm-256color".into());
    }
    env.extend(request.env);
    Ok(Launch {
        spec: ProcessSpec {
            program: request.command.clone().into(),
            args: request.args.iter().map(Into::into).collect(),
            cwd: workspace.root().join(relative.relative()),
            env,
        },
        command: request.command,
        args: request.args,
        cwd: relative.display(),
        tty: request.tty.then(|| request.size.unwrap_or_default()),
    })
}

/// Runs a program in the session's workspace to its end and answers its exit and output:
/// the agents' allow-listed environment (plus `env`), a private HOME, the agent user; its
/// whole process group killed past `timeoutMs` or when the client goes away. Output past
/// `maxOutputBytes` per stream is read and dropped (`stdoutTruncated`).
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/processes/run",
    operation_id = "runProcess",
    tag = "processes",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id")),
    request_body = ProcessRequest,
    responses(
        (status = 200, description = "It ended (or was killed at its timeout: `timedOut`)", body = ProcessOutput),
        (status = 400, description = "A bad session id, malformed JSON, or a `cwd` holding a name over 255 bytes (`invalid-path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 403, description = "The `cwd` leads outside the workspace (`outside-workspace`) or the agent user may not enter it", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session, or no such `cwd` (`file-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The session has ended, `--max-processes` run already (`too-many-processes`), the `cwd` is not a directory, or another daemon sharing the store owns the session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The body breaks its schema (a `cwd` that is absolute or names `..` among it) or sets a protected variable (`invalid-body`), or the program cannot be started (`process-not-started`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn run_process(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiJson(request): ApiJson<ProcessRequest>,
) -> Result<Json<ProcessOutput>, ApiError> {
    let table = state.sessions.settings().processes.clone();
    let limits = *table.limits();
    // Longer or larger asks are cut to the daemon's limits.
    let timeout = request
        .timeout_ms
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_TIMEOUT)
        .min(limits.max_timeout);
    let max_output = request
        .max_output_bytes
        .unwrap_or(DEFAULT_OUTPUT_BYTES)
        .min(limits.max_output_bytes);
    if request.tty || request.size.is_some() {
        return Err(ApiError::InvalidBody(
            "`tty` and `size` are for long-running processes (POST .../processes); a run has no terminal".into(),
        ));
    }
    let launch = launch(&state, &session_id, request).await?;
    let _slot = table.begin_run(&session_id)?;
    Ok(Json(run::run(&launch, timeout, max_output).await?))
}

/// Starts a long-running program in the session's workspace (as `run` does) and answers
/// at once; its output is logged (`GET .../logs`, or followed as SSE) until it ends. It
/// ends with the session and with the daemon.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/processes",
    operation_id = "startProcess",
    tag = "processes",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id")),
    request_body = ProcessRequest,
    responses(
        (status = 201, description = "Started", body = ProcessInfo),
        (status = 400, description = "A bad session id, malformed JSON, or a `cwd` holding a name over 255 bytes (`invalid-path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 403, description = "The `cwd` leads outside the workspace (`outside-workspace`) or the agent user may not enter it", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session, or no such `cwd` (`file-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The session has ended, `--max-processes` run already (`too-many-processes`), the `cwd` is not a directory, or another daemon sharing the store owns the session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The body breaks its schema (a `cwd` that is absolute or names `..` among it) or sets a protected variable (`invalid-body`), or the program cannot be started (`process-not-started`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn start_process(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiJson(request): ApiJson<ProcessRequest>,
) -> Result<(StatusCode, Json<ProcessInfo>), ApiError> {
    if request.size.is_some() && !request.tty {
        return Err(ApiError::InvalidBody(
            "`size` is the terminal's: it needs `tty: true`".into(),
        ));
    }
    let launch = launch(&state, &session_id, request).await?;
    let table = &state.sessions.settings().processes;
    Ok((StatusCode::CREATED, Json(table.start(&session_id, launch)?)))
}

/// The session's long-running processes, oldest first, running and exited (until deleted,
/// or the session is).
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/processes",
    operation_id = "listProcesses",
    tag = "processes",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id")),
    responses(
        (status = 200, description = "Its processes", body = ProcessList),
        (status = 404, description = "Unknown session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn list_processes(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
) -> Result<Json<ProcessList>, ApiError> {
    state.sessions.info(&session_id).await?;
    let processes = state.sessions.settings().processes.list(&session_id);
    Ok(Json(ProcessList { processes }))
}

/// The process a route names, once its session is known.
pub(super) async fn process(
    state: &AppState,
    path: &ProcessPath,
) -> Result<std::sync::Arc<Managed>, ApiError> {
    state.sessions.info(&path.session_id).await?;
    Ok(state
        .sessions
        .settings()
        .processes
        .get(&path.session_id, &path.process_id)?)
}

/// One long-running process.
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/processes/{processId}",
    operation_id = "getProcess",
    tag = "processes",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("processId" = String, Path, description = "Process id")
    ),
    responses(
        (status = 200, description = "The process", body = ProcessInfo),
        (status = 404, description = "Unknown session or process (`process-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn get_process(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<ProcessPath>,
) -> Result<Json<ProcessInfo>, ApiError> {
    Ok(Json(process(&state, &path).await?.info()))
}

/// Forgets an exited process and its log.
#[utoipa::path(
    delete,
    path = "/sessions/{sessionId}/processes/{processId}",
    operation_id = "deleteProcess",
    tag = "processes",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("processId" = String, Path, description = "Process id")
    ),
    responses(
        (status = 204, description = "Forgotten"),
        (status = 404, description = "Unknown session or process (`process-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "It is still running (`process-running`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn delete_process(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<ProcessPath>,
) -> Result<StatusCode, ApiError> {
    state.sessions.info(&path.session_id).await?;
    state
        .sessions
        .settings()
        .processes
        .remove(&path.session_id, &path.process_id)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Asks a process to stop: SIGTERM to its process group (nothing if it has ended); a
/// terminal's process is hung up first (SIGHUP), and every process group on its terminal
/// is signalled.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/processes/{processId}/stop",
    operation_id = "stopProcess",
    tag = "processes",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("processId" = String, Path, description = "Process id")
    ),
    responses(
        (status = 200, description = "Signalled; the process as it stands (its end shows in its log and info)", body = ProcessInfo),
        (status = 404, description = "Unknown session or process (`process-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn stop_process(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<ProcessPath>,
    _body: ApiEmpty,
) -> Result<Json<ProcessInfo>, ApiError> {
    let process = process(&state, &path).await?;
    process.stop();
    Ok(Json(process.info()))
}

/// Kills a process: SIGKILL to its process group (nothing if it has ended); for a
/// terminal's process, to every process group on its terminal.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/processes/{processId}/kill",
    operation_id = "killProcess",
    tag = "processes",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("processId" = String, Path, description = "Process id")
    ),
    responses(
        (status = 200, description = "Signalled; the process as it stands", body = ProcessInfo),
        (status = 404, description = "Unknown session or process (`process-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn kill_process(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<ProcessPath>,
    _body: ApiEmpty,
) -> Result<Json<ProcessInfo>, ApiError> {
    let process = process(&state, &path).await?;
    process.kill();
    Ok(Json(process.info()))
}

/// A process's log after `offset` (up to 1,000 chunks a page), or with `follow=true` an
/// SSE stream: each chunk as `event: log` with its sequence as `id` (a reconnect with
/// `Last-Event-ID` resumes after it, with no gap or duplicate), `event: gap` when chunks
/// asked for were dropped to keep the log bounded (its `id` the last of them), and
/// `event: exit` (the process) last.
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/processes/{processId}/logs",
    operation_id = "processLogs",
    tag = "processes",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("processId" = String, Path, description = "Process id"),
        LogsQuery,
        ("Last-Event-ID" = Option<String>, Header, description = "With `follow`: the last sequence seen")
    ),
    responses(
        (status = 200, description = "The log after `offset`; with `follow=true` an SSE stream of `log` (a LogChunk), `gap` (`{from, to}`) and `exit` (a ProcessInfo) frames", content(
            (ProcessLogs = "application/json"),
            (String = "text/event-stream")
        )),
        (status = 400, description = "A bad query or `Last-Event-ID`, or a follow from past the log's last sequence", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session or process (`process-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn process_logs(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<ProcessPath>,
    ApiQuery(query): ApiQuery<LogsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let process = process(&state, &path).await?;
    let mut offset = query.offset.unwrap_or(0);
    if !query.follow.unwrap_or(false) {
        let page = process.page(offset, PAGE_CHUNKS);
        return Ok(Json(ProcessLogs {
            chunks: page.chunks,
            first_kept: page.first_kept,
            process: page.info,
        })
        .into_response());
    }
    if let Some(last) = headers.get("last-event-id") {
        offset = last
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| {
                ApiError::InvalidParameter("Last-Event-ID must be a log sequence".into())
            })?;
    }
    let last = process.info().last_sequence;
    if offset > last {
        return Err(ApiError::InvalidParameter(format!(
            "the log has {last} chunks so far; a follow starts at or before the last"
        )));
    }
    let frames = follow(process, offset, state.sse_keep_alive);
    let mut response = Response::new(Body::from_stream(
        frames.map(Ok::<_, std::convert::Infallible>),
    ));
    let out = response.headers_mut();
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

/// The SSE frames of a followed log: what is kept after `offset`, then live chunks, a
/// keep-alive comment after `keep_alive` of quiet, and `exit` when the process has ended
/// and every chunk was sent.
fn follow(
    process: std::sync::Arc<Managed>,
    offset: u64,
    keep_alive: Duration,
) -> impl futures::Stream<Item = Bytes> {
    let changed = process.subscribe();
    futures::stream::unfold(Some((process, changed, offset)), move |state| async move {
        let (process, mut changed, offset) = state?;
        loop {
            changed.borrow_and_update();
            let page = process.page(offset, PAGE_CHUNKS);
            let mut frames = String::new();
            let mut last = offset;
            if page.first_kept > offset + 1 && page.info.last_sequence > offset {
                let to = page.first_kept - 1;
                // Its id is the last chunk it stands for: a reconnect resumes after it.
                frames.push_str(&frame(
                    "gap",
                    Some(to),
                    &serde_json::json!({"from": offset + 1, "to": to}),
                ));
                last = to;
            }
            for chunk in &page.chunks {
                frames.push_str(&frame("log", Some(chunk.sequence), chunk));
                last = chunk.sequence;
            }
            if !frames.is_empty() {
                return Some((Bytes::from(frames), Some((process, changed, last))));
            }
            if page.info.status == sandbox_universal::ProcessStatus::Exited {
                let end = frame("exit", None, &page.info);
                return Some((Bytes::from(end), None));
            }
            match tokio::time::timeout(keep_alive, changed.changed()).await {
                Ok(Ok(())) => continue,
                // Its sender lives as long as the process this stream holds: never.
                Ok(Err(_)) => return None,
                Err(_) => {
                    return Some((
                        Bytes::from_static(b": running\n\n"),
                        Some((process, changed, offset)),
                    ));
                }
            }
        }
    })
}

/// One SSE frame.
fn frame(event: &str, id: Option<u64>, data: &impl serde::Serialize) -> String {
    let json = serde_json::to_string(data).expect("log frames serialize");
    match id {
        Some(id) => format!("event: {event}\nid: {id}\ndata: {json}\n\n"),
        None => format!("event: {event}\ndata: {json}\n\n"),
    }
}
