//! One subcommand per HTTP endpoint, on top of `sandbox-client`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use futures::StreamExt;
use sandbox_client::{Client, ClientError, DEFAULT_ENDPOINT, EventsQuery, SessionsQuery};
use sandbox_universal::{CreateSessionRequest, PermissionMode, PermissionReply, SessionStatus};
use serde::Serialize;

fn parse_status(value: &str) -> Result<SessionStatus, String> {
    serde_json::from_value(serde_json::Value::String(value.to_string()))
        .map_err(|_| format!("`{value}` is not a status: idle, running or ended"))
}

/// Where the daemon is and how to authenticate.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// The daemon's base URL.
    #[arg(long, env = "SANDBOX_DAEMON_ENDPOINT", default_value = DEFAULT_ENDPOINT)]
    pub endpoint: String,
    /// Bearer token of the daemon.
    #[arg(long, env = "SANDBOX_DAEMON_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// `sandbox-daemon agents ...`.
#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// GET /agents: every agent with install status and capabilities.
    List(ClientArgs),
    /// GET /agents/{agent}/models.
    Models {
        /// Agent id.
        agent: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /agents/{agent}/modes.
    Modes {
        /// Agent id.
        agent: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /agents/{agent}/install: install an agent (progress bar on stderr, summary as
    /// JSON), through the daemon or, with `--local`, directly into a data dir.
    Install(Box<super::install::AgentInstallArgs>),
}

/// `sandbox-daemon sessions ...`.
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// GET /sessions: one page of sessions, oldest first (`--all` follows every page).
    List {
        /// The `nextCursor` of the previous page.
        #[arg(long)]
        cursor: Option<String>,
        /// Page size (1-1000).
        #[arg(long)]
        limit: Option<usize>,
        /// Only sessions with this status: idle, running or ended.
        #[arg(long, value_parser = parse_status)]
        status: Option<SessionStatus>,
        /// Every page, merged.
        #[arg(long, conflicts_with_all = ["cursor", "limit"])]
        all: bool,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}: create a session and start its agent.
    Create(Box<CreateArgs>),
    /// GET /sessions/{id}.
    Get {
        /// Session id.
        id: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/end: end the session (its events stay readable).
    End {
        /// Session id.
        id: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// DELETE /sessions/{id}: remove the session and all its events (the id becomes free).
    Delete {
        /// Session id.
        id: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/messages: send a message (starts a turn).
    SendMessage {
        /// Session id.
        id: String,
        /// The message.
        #[arg(long, short)]
        message: String,
        #[command(flatten)]
        images: super::policy::ImageArgs,
        /// `Idempotency-Key`: a retry with the same key gets the first answer (one turn).
        #[arg(long)]
        idempotency_key: Option<String>,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/cancel: cancel the running turn.
    Cancel {
        /// Session id.
        id: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /sessions/{id}/events: one page of events as JSON.
    GetMessages {
        /// Session id.
        id: String,
        #[command(flatten)]
        page: PageArgs,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /sessions/{id}/events/sse with --follow (one JSON event per line until the
    /// session ends); without --follow, every event so far, one per line.
    Events {
        /// Session id.
        id: String,
        /// Start after this sequence.
        #[arg(long)]
        offset: Option<u64>,
        /// Follow the live stream (SSE) until the session ends.
        #[arg(long)]
        follow: bool,
        /// Include native JSON.
        #[arg(long)]
        include_raw: bool,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /sessions/{id}/ui-stream: a turn as the AI SDK's UI message stream, one chunk
    /// (JSON) per line until the turn ends; without --turn-id the running turn (nothing
    /// when none runs).
    UiStream {
        /// Session id.
        id: String,
        /// The turn (`turn_1`, ...); default: the running turn.
        #[arg(long)]
        turn_id: Option<String>,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /sessions/{id}/turns/{turnId}/changes: the files a turn added, modified and
    /// deleted, with diffs (JSON).
    Changes {
        /// Session id.
        id: String,
        /// Turn id (`turn_1`, ...).
        turn: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Permission requests.
    #[command(subcommand)]
    Permissions(PermissionsCommand),
    /// Question requests.
    #[command(subcommand)]
    Questions(QuestionsCommand),
    /// Client host tool calls (`toolCallRequested`).
    #[command(subcommand)]
    ToolCalls(super::tool_calls::ToolCallsCommand),
    /// Moving a session to another daemon or agent.
    #[command(flatten)]
    Portable(super::portable::PortableCommand),
    /// The session's workspace files: list, read, write, delete, upload, archive.
    #[command(subcommand)]
    Files(super::files::FilesCommand),
    /// Processes beside the agent: run, start, list, get, delete, stop, kill, logs.
    #[command(subcommand)]
    Processes(super::processes::ProcessesCommand),
}

/// Paging of `get-messages`.
#[derive(Debug, Clone, Args)]
pub struct PageArgs {
    /// Events with sequence greater than this.
    #[arg(long)]
    pub offset: Option<u64>,
    /// At most this many (1-1000, default 100).
    #[arg(long)]
    pub limit: Option<u64>,
    /// Include native JSON.
    #[arg(long)]
    pub include_raw: bool,
}

/// Options of `sessions create`.
#[derive(Debug, Clone, Args)]
pub struct CreateArgs {
    /// Session id (client-chosen).
    pub id: String,
    /// Agent: claude, codex, opencode, amp, pi or mock.
    #[arg(long)]
    pub agent: String,
    /// Agent mode (see `agents modes`).
    #[arg(long)]
    pub agent_mode: Option<String>,
    /// Permission mode: default, plan, accept-edits or bypass.
    #[arg(long, value_parser = parse_permission_mode)]
    pub permission_mode: Option<PermissionMode>,
    /// Model id.
    #[arg(long)]
    pub model: Option<String>,
    /// Model variant (e.g. reasoning effort).
    #[arg(long)]
    pub variant: Option<String>,
    /// Provider credential for this session (the request's `token`).
    #[arg(long, env = "SANDBOX_DAEMON_AGENT_TOKEN", hide_env_values = true)]
    pub agent_token: Option<String>,
    /// Check the credential before answering.
    #[arg(long)]
    pub validate_token: bool,
    /// Let the agent act without asking.
    #[arg(long)]
    pub dangerously_skip_permissions: bool,
    /// Agent version.
    #[arg(long)]
    pub agent_version: Option<String>,
    /// Working directory (absolute).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    #[command(flatten)]
    pub policy: super::policy::PolicyArgs,
    /// `Idempotency-Key`: a retry with the same key gets the first answer.
    #[arg(long)]
    pub idempotency_key: Option<String>,
    #[command(flatten)]
    pub client: ClientArgs,
}

fn parse_permission_mode(text: &str) -> Result<PermissionMode, String> {
    match text {
        "default" => Ok(PermissionMode::Default),
        "plan" => Ok(PermissionMode::Plan),
        "accept-edits" | "acceptEdits" => Ok(PermissionMode::AcceptEdits),
        "bypass" => Ok(PermissionMode::Bypass),
        other => Err(format!(
            "unknown permission mode `{other}` (default, plan, accept-edits, bypass)"
        )),
    }
}

/// `sandbox-daemon sessions permissions ...`.
#[derive(Debug, Subcommand)]
pub enum PermissionsCommand {
    /// POST /sessions/{id}/permissions/{permissionId}/reply.
    Reply {
        /// Session id.
        id: String,
        /// Permission request id.
        permission_id: String,
        /// once, always or reject.
        #[arg(long, value_parser = parse_reply)]
        reply: PermissionReply,
        #[command(flatten)]
        client: ClientArgs,
    },
}

fn parse_reply(text: &str) -> Result<PermissionReply, String> {
    match text {
        "once" => Ok(PermissionReply::Once),
        "always" => Ok(PermissionReply::Always),
        "reject" => Ok(PermissionReply::Reject),
        other => Err(format!("unknown reply `{other}` (once, always, reject)")),
    }
}

/// `sandbox-daemon sessions questions ...`.
#[derive(Debug, Subcommand)]
pub enum QuestionsCommand {
    /// POST /sessions/{id}/questions/{questionId}/reply.
    Reply {
        /// Session id.
        id: String,
        /// Question request id.
        question_id: String,
        /// Answers as JSON: one array of selected labels per question, e.g.
        /// '[["Red"],["Cheese","Olives"]]'.
        #[arg(long, value_parser = parse_answers)]
        answers: Answers,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/questions/{questionId}/reject.
    Reject {
        /// Session id.
        id: String,
        /// Question request id.
        question_id: String,
        #[command(flatten)]
        client: ClientArgs,
    },
}

/// Parsed `--answers`.
#[derive(Debug, Clone)]
pub struct Answers(pub Vec<Vec<String>>);

fn parse_answers(text: &str) -> Result<Answers, String> {
    serde_json::from_str(text)
        .map(Answers)
        .map_err(|e| format!("--answers must be a JSON array of arrays of labels: {e}"))
}

pub(super) fn connect(args: &ClientArgs) -> Result<Client, ClientError> {
    Client::new(&args.endpoint, args.token.clone())
}

pub(super) fn print_json(value: &impl Serialize) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("responses serialize")
    );
}

/// Prints a result as JSON, or the error (problem details when the daemon sent them).
pub(super) fn finish<T: Serialize>(result: Result<T, ClientError>) -> ExitCode {
    match result {
        Ok(value) => {
            print_json(&value);
            ExitCode::SUCCESS
        }
        Err(error) => fail(error),
    }
}

/// A flag that cannot be used (before any request).
fn fail_usage(error: &str) -> ExitCode {
    eprintln!("error: {error}");
    ExitCode::from(2)
}

pub(super) fn fail(error: ClientError) -> ExitCode {
    match error.problem() {
        Some(problem) => eprintln!(
            "{}",
            serde_json::to_string_pretty(problem).expect("problems serialize")
        ),
        None => eprintln!("error: {error}"),
    }
    ExitCode::FAILURE
}

/// `health`.
pub async fn health(args: ClientArgs) -> ExitCode {
    match connect(&args) {
        Ok(client) => finish(client.health().await),
        Err(e) => fail(e),
    }
}

/// `openapi`.
pub async fn openapi(args: ClientArgs) -> ExitCode {
    match connect(&args) {
        Ok(client) => finish(client.openapi().await),
        Err(e) => fail(e),
    }
}

/// `agents ...`.
pub async fn agents(command: AgentsCommand) -> ExitCode {
    let args = match command {
        AgentsCommand::Install(args) => return super::install::run(*args).await,
        AgentsCommand::List(ref client) => client,
        AgentsCommand::Models { ref client, .. } | AgentsCommand::Modes { ref client, .. } => {
            client
        }
    };
    let client = match connect(args) {
        Ok(client) => client,
        Err(e) => return fail(e),
    };
    match &command {
        AgentsCommand::List(_) => finish(client.list_agents().await),
        AgentsCommand::Models { agent, .. } => finish(client.agent_models(agent).await),
        AgentsCommand::Modes { agent, .. } => finish(client.agent_modes(agent).await),
        AgentsCommand::Install(_) => unreachable!("handled above"),
    }
}

fn sessions_client_args(command: &SessionsCommand) -> &ClientArgs {
    match command {
        SessionsCommand::List { client, .. } => client,
        SessionsCommand::Create(args) => &args.client,
        SessionsCommand::Get { client, .. }
        | SessionsCommand::End { client, .. }
        | SessionsCommand::Delete { client, .. }
        | SessionsCommand::SendMessage { client, .. }
        | SessionsCommand::Cancel { client, .. }
        | SessionsCommand::GetMessages { client, .. }
        | SessionsCommand::Events { client, .. }
        | SessionsCommand::UiStream { client, .. }
        | SessionsCommand::Changes { client, .. } => client,
        SessionsCommand::Permissions(PermissionsCommand::Reply { client, .. }) => client,
        SessionsCommand::Questions(
            QuestionsCommand::Reply { client, .. } | QuestionsCommand::Reject { client, .. },
        ) => client,
        SessionsCommand::ToolCalls(command) => command.client(),
        SessionsCommand::Portable(command) => command.client(),
        SessionsCommand::Files(command) => command.client(),
        SessionsCommand::Processes(command) => command.client(),
    }
}

/// `sessions ...`.
pub async fn sessions(command: SessionsCommand) -> ExitCode {
    let client = match connect(sessions_client_args(&command)) {
        Ok(client) => client,
        Err(e) => return fail(e),
    };
    match command {
        SessionsCommand::List {
            cursor,
            limit,
            status,
            all: false,
            ..
        } => finish(
            client
                .list_sessions(&SessionsQuery {
                    cursor,
                    limit,
                    status,
                })
                .await,
        ),
        SessionsCommand::List { status, .. } => {
            finish(client.list_all_sessions().await.map(|mut all| {
                all.sessions
                    .retain(|s| status.is_none_or(|wanted| s.status == wanted));
                if status.is_some() {
                    all.unreadable.clear();
                }
                all
            }))
        }
        SessionsCommand::Create(args) => {
            let mut request = CreateSessionRequest {
                agent: args.agent,
                agent_mode: args.agent_mode,
                permission_mode: args.permission_mode,
                model: args.model,
                variant: args.variant,
                token: args.agent_token,
                validate_token: args.validate_token.then_some(true),
                dangerously_skip_permissions: args.dangerously_skip_permissions.then_some(true),
                agent_version: args.agent_version,
                cwd: args.cwd.map(|p| p.display().to_string()),
                ..CreateSessionRequest::default()
            };
            if let Err(e) = args.policy.apply(&mut request) {
                return fail_usage(&e);
            }
            let key = args.idempotency_key.as_deref();
            finish(client.create_session_keyed(&args.id, &request, key).await)
        }
        SessionsCommand::Get { id, .. } => finish(client.get_session(&id).await),
        SessionsCommand::End { id, .. } => finish(client.end_session(&id).await),
        SessionsCommand::Delete { id, .. } => finish(
            client
                .delete_session(&id)
                .await
                .map(|()| serde_json::json!({"deleted": id})),
        ),
        SessionsCommand::SendMessage {
            id,
            message,
            images,
            idempotency_key,
            ..
        } => match images.request(message) {
            Ok(request) => finish(
                client
                    .send_request_keyed(&id, &request, idempotency_key.as_deref())
                    .await,
            ),
            Err(e) => fail_usage(&e),
        },
        SessionsCommand::Cancel { id, .. } => finish(client.cancel(&id).await),
        SessionsCommand::Changes { id, turn, .. } => finish(client.turn_changes(&id, &turn).await),
        SessionsCommand::GetMessages { id, page, .. } => {
            let query = EventsQuery {
                offset: page.offset,
                limit: page.limit,
                include_raw: page.include_raw,
            };
            finish(client.get_events(&id, &query).await)
        }
        SessionsCommand::Events {
            id,
            offset,
            follow,
            include_raw,
            ..
        } => events(&client, &id, offset, follow, include_raw).await,
        SessionsCommand::UiStream { id, turn_id, .. } => {
            ui_stream(&client, &id, turn_id.as_deref()).await
        }
        SessionsCommand::Permissions(PermissionsCommand::Reply {
            id,
            permission_id,
            reply,
            ..
        }) => acknowledge(client.reply_permission(&id, &permission_id, reply).await),
        SessionsCommand::Questions(QuestionsCommand::Reply {
            id,
            question_id,
            answers,
            ..
        }) => acknowledge(client.reply_question(&id, &question_id, answers.0).await),
        SessionsCommand::Questions(QuestionsCommand::Reject {
            id, question_id, ..
        }) => acknowledge(client.reject_question(&id, &question_id).await),
        SessionsCommand::ToolCalls(command) => acknowledge(command.run(&client).await),
        SessionsCommand::Portable(command) => command.run(&client).await,
        SessionsCommand::Files(command) => command.run(&client).await,
        SessionsCommand::Processes(command) => command.run(&client).await,
    }
}

fn acknowledge(result: Result<(), ClientError>) -> ExitCode {
    finish(result.map(|()| serde_json::json!({"ok": true})))
}

/// Prints events one JSON object per line: the whole log so far, or (with `follow`) the
/// live SSE stream until the session ends.
async fn events(
    client: &Client,
    id: &str,
    offset: Option<u64>,
    follow: bool,
    include_raw: bool,
) -> ExitCode {
    if follow {
        let mut stream = match client.stream_events(id, offset, include_raw).await {
            Ok(stream) => stream,
            Err(e) => return fail(e),
        };
        while let Some(event) = stream.next().await {
            match event {
                Ok(event) => println!("{}", serde_json::to_string(&event).expect("serializes")),
                Err(e) => return fail(e),
            }
        }
        return ExitCode::SUCCESS;
    }
    let mut cursor = offset.unwrap_or(0);
    loop {
        let query = EventsQuery {
            offset: Some(cursor),
            limit: Some(1000),
            include_raw,
        };
        let page = match client.get_events(id, &query).await {
            Ok(page) => page,
            Err(e) => return fail(e),
        };
        for event in &page.events {
            println!("{}", serde_json::to_string(event).expect("serializes"));
            cursor = event.sequence;
        }
        if !page.has_more {
            return ExitCode::SUCCESS;
        }
    }
}

/// Prints a turn's UI message stream, one chunk (its JSON) per line, until `[DONE]`; a
/// session with no running turn (204) prints nothing.
async fn ui_stream(client: &Client, id: &str, turn_id: Option<&str>) -> ExitCode {
    let mut chunks = match client.ui_message_stream(id, turn_id).await {
        Ok(Some(chunks)) => chunks,
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => return fail(e),
    };
    while let Some(chunk) = chunks.next().await {
        match chunk {
            Ok(chunk) => println!("{chunk}"),
            Err(e) => return fail(e),
        }
    }
    ExitCode::SUCCESS
}
