//! The ACP agent the editor talks to: one handler per ACP method, each turned into calls
//! of the daemon's HTTP API. An ACP session is the daemon session of the same id. Handlers
//! run one at a time in the connection's loop, so a prompt runs in a task of its own
//! (`prompt.rs`) and everything else answers from the daemon's replies.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as s;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{self as acp, Agent, Client, Stdio};
use sandbox_client::{Client as DaemonClient, ClientError, SessionsQuery};
use sandbox_universal::{PermissionMode, SessionStatus};
use tokio::sync::watch;

use super::prompt;
use super::sessions::{create, reconfigure, replay, session_state};

/// What a new session gets unless the editor picks otherwise.
#[derive(Debug, Clone)]
pub struct Defaults {
    /// The agent every session drives.
    pub agent: String,
    /// Its model.
    pub model: Option<String>,
    /// The model's variant.
    pub variant: Option<String>,
    /// Its agent mode.
    pub agent_mode: Option<String>,
    /// Its permission mode.
    pub permission_mode: Option<PermissionMode>,
}

/// The bridge's state, shared by its handlers.
pub struct Bridge {
    /// The daemon.
    pub daemon: DaemonClient,
    /// What new sessions get.
    pub defaults: Defaults,
    /// Whether the editor answers `elicitation/create` forms (said in `initialize`).
    pub elicitation: Mutex<bool>,
    /// The cancel signal of each session's running prompt.
    prompts: Mutex<HashMap<String, watch::Sender<bool>>>,
    /// The MCP servers each session of this connection was created with (ACP sends them
    /// with `session/new` only; a session created again for another mode or model keeps
    /// them).
    pub(super) servers: Mutex<HashMap<String, Vec<s::McpServer>>>,
}

impl Bridge {
    /// A bridge to `daemon`.
    pub fn new(daemon: DaemonClient, defaults: Defaults) -> Arc<Self> {
        Arc::new(Self {
            daemon,
            defaults,
            elicitation: Mutex::new(false),
            prompts: Mutex::new(HashMap::new()),
            servers: Mutex::new(HashMap::new()),
        })
    }

    /// Registers a prompt of `session` and answers its cancel signal.
    pub fn arm(&self, session: &str) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        self.prompts
            .lock()
            .expect("prompts")
            .insert(session.to_string(), tx);
        rx
    }

    /// Signals the running prompt of `session`, if any.
    fn cancel(&self, session: &str) {
        if let Some(tx) = self.prompts.lock().expect("prompts").get(session) {
            let _ = tx.send(true);
        }
    }

    /// Forgets `session`'s prompt once it has answered.
    pub fn disarm(&self, session: &str) {
        self.prompts.lock().expect("prompts").remove(session);
    }
}

/// A daemon error as an ACP error: an unknown session is `resource not found`, a problem
/// the request caused `invalid params`, anything else an internal error; the problem's
/// detail is the message.
pub fn acp_error(error: ClientError) -> acp::Error {
    let Some(problem) = error.problem() else {
        return acp::Error::new(acp::ErrorCode::INTERNAL_ERROR, error.to_string());
    };
    let code = match problem.status {
        404 => acp::ErrorCode::RESOURCE_NOT_FOUND,
        400..=499 => acp::ErrorCode::INVALID_PARAMS,
        _ => acp::ErrorCode::INTERNAL_ERROR,
    };
    acp::Error::new(code, format!("{}: {}", problem.title, problem.detail))
}

/// An absolute working directory, as a string.
fn cwd(path: &std::path::Path) -> Result<String, acp::Error> {
    if !path.is_absolute() {
        return Err(
            acp::Error::invalid_params().data(format!("cwd must be absolute: {}", path.display()))
        );
    }
    path.to_str()
        .map(String::from)
        .ok_or_else(|| acp::Error::invalid_params().data("cwd must be UTF-8"))
}

/// The agent's capabilities as ACP says them.
fn capabilities() -> s::AgentCapabilities {
    s::AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(
            s::PromptCapabilities::new()
                .image(true)
                .embedded_context(true),
        )
        .mcp_capabilities(s::McpCapabilities::new().http(true))
        .session_capabilities(
            s::SessionCapabilities::new()
                .list(s::SessionListCapabilities::new())
                .close(s::SessionCloseCapabilities::new())
                .resume(s::SessionResumeCapabilities::new())
                .delete(s::SessionDeleteCapabilities::new()),
        )
}

/// Serves ACP on stdin and stdout until the editor closes stdin.
pub async fn serve(bridge: Arc<Bridge>) -> acp::Result<()> {
    Agent
        .v1()
        .name("sandbox-daemon")
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: s::InitializeRequest,
                            responder: Responder<s::InitializeResponse>,
                            _cx: ConnectionTo<Client>| {
                    let forms = request
                        .client_capabilities
                        .elicitation
                        .as_ref()
                        .is_some_and(|e| e.supports_form());
                    *bridge.elicitation.lock().expect("elicitation") = forms;
                    responder.respond(
                        s::InitializeResponse::new(ProtocolVersion::V1)
                            .agent_capabilities(capabilities())
                            .agent_info(
                                s::Implementation::new("sandbox-daemon", env!("CARGO_PKG_VERSION"))
                                    .title(format!("sandbox-daemon ({})", bridge.defaults.agent)),
                            ),
                    )
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: s::NewSessionRequest,
                            responder: Responder<s::NewSessionResponse>,
                            _cx: ConnectionTo<Client>| {
                    let result = async {
                        let id = format!("acp-{}", uuid::Uuid::new_v4().simple());
                        let info = create(
                            &bridge,
                            &id,
                            cwd(&request.cwd)?,
                            &request.mcp_servers,
                            None,
                            None,
                        )
                        .await?;
                        bridge
                            .servers
                            .lock()
                            .expect("servers")
                            .insert(id.clone(), request.mcp_servers.clone());
                        let (modes, options) = session_state(&bridge, &info).await;
                        Ok::<_, acp::Error>(
                            s::NewSessionResponse::new(id)
                                .modes(modes)
                                .config_options(options),
                        )
                    }
                    .await;
                    responder.respond_with_result(result)
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: s::PromptRequest,
                            responder: Responder<s::PromptResponse>,
                            cx: ConnectionTo<Client>| {
                    let session = request.session_id.to_string();
                    let cancel = bridge.arm(&session);
                    let bridge = bridge.clone();
                    let task_cx = cx.clone();
                    cx.spawn(async move {
                        let result =
                            prompt::run(&bridge, &task_cx, &session, &request.prompt, cancel).await;
                        bridge.disarm(&session);
                        responder.respond_with_result(result)
                    })
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let bridge = bridge.clone();
                async move |notification: s::CancelNotification, _cx: ConnectionTo<Client>| {
                    bridge.cancel(&notification.session_id.to_string());
                    Ok(())
                }
            },
            acp::on_receive_notification!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: s::LoadSessionRequest,
                            responder: Responder<s::LoadSessionResponse>,
                            cx: ConnectionTo<Client>| {
                    let session = request.session_id.to_string();
                    let result = async {
                        let info = bridge
                            .daemon
                            .get_session(&session)
                            .await
                            .map_err(acp_error)?;
                        let replayed = replay(&bridge, &cx, &session).await?;
                        let (modes, options) = session_state(&bridge, &info).await;
                        if info.status == SessionStatus::Running {
                            // Where the replay ended, with what it sent of each item.
                            prompt::follow(bridge.clone(), cx.clone(), session.clone(), replayed)?;
                        }
                        Ok::<_, acp::Error>(
                            s::LoadSessionResponse::new()
                                .modes(modes)
                                .config_options(options),
                        )
                    }
                    .await;
                    responder.respond_with_result(result)
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: s::ResumeSessionRequest,
                            responder: Responder<s::ResumeSessionResponse>,
                            _cx: ConnectionTo<Client>| {
                    let result = async {
                        let info = bridge
                            .daemon
                            .get_session(&request.session_id.to_string())
                            .await
                            .map_err(acp_error)?;
                        let (modes, options) = session_state(&bridge, &info).await;
                        Ok::<_, acp::Error>(
                            s::ResumeSessionResponse::new()
                                .modes(modes)
                                .config_options(options),
                        )
                    }
                    .await;
                    responder.respond_with_result(result)
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: s::ListSessionsRequest,
                            responder: Responder<s::ListSessionsResponse>,
                            _cx: ConnectionTo<Client>| {
                    let result = async {
                        let query = SessionsQuery {
                            cursor: request.cursor.clone(),
                            limit: Some(200),
                            ..SessionsQuery::default()
                        };
                        let page = bridge
                            .daemon
                            .list_sessions(&query)
                            .await
                            .map_err(acp_error)?;
                        let wanted = request.cwd.as_deref().and_then(|p| p.to_str());
                        let sessions = page
                            .sessions
                            .iter()
                            .filter(|info| info.agent.as_str() == bridge.defaults.agent)
                            .filter(|info| wanted.is_none_or(|cwd| info.cwd == cwd))
                            .map(|info| {
                                s::SessionInfo::new(info.session_id.clone(), info.cwd.clone())
                                    .updated_at(info.updated_at.to_rfc3339())
                            })
                            .collect();
                        Ok::<_, acp::Error>(
                            s::ListSessionsResponse::new(sessions)
                                .next_cursor(page.next_cursor.clone()),
                        )
                    }
                    .await;
                    responder.respond_with_result(result)
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: s::CloseSessionRequest,
                            responder: Responder<s::CloseSessionResponse>,
                            _cx: ConnectionTo<Client>| {
                    // Closing stops what runs; the daemon session stays, to load again later.
                    let session = request.session_id.to_string();
                    bridge.cancel(&session);
                    let result = match bridge.daemon.get_session(&session).await {
                        Ok(_) => Ok(s::CloseSessionResponse::new()),
                        Err(e) => Err(acp_error(e)),
                    };
                    responder.respond_with_result(result)
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: s::DeleteSessionRequest,
                            responder: Responder<s::DeleteSessionResponse>,
                            _cx: ConnectionTo<Client>| {
                    let session = request.session_id.to_string();
                    bridge.cancel(&session);
                    let result = bridge
                        .daemon
                        .delete_session(&session)
                        .await
                        .map(|()| s::DeleteSessionResponse::new())
                        .map_err(acp_error);
                    responder.respond_with_result(result)
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: s::SetSessionModeRequest,
                            responder: Responder<s::SetSessionModeResponse>,
                            cx: ConnectionTo<Client>| {
                    let session = request.session_id.to_string();
                    let result =
                        reconfigure(&bridge, &session, Some(request.mode_id.to_string()), None)
                            .await;
                    if result.is_ok() {
                        let update = s::SessionUpdate::CurrentModeUpdate(
                            s::CurrentModeUpdate::new(request.mode_id.clone()),
                        );
                        cx.send_notification(s::SessionNotification::new(
                            request.session_id.clone(),
                            update,
                        ))?;
                    }
                    responder.respond_with_result(result.map(|_| s::SetSessionModeResponse::new()))
                }
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: s::SetSessionConfigOptionRequest,
                            responder: Responder<s::SetSessionConfigOptionResponse>,
                            _cx: ConnectionTo<Client>| {
                    let session = request.session_id.to_string();
                    let result = async {
                        if request.config_id.to_string() != "model" {
                            return Err(acp::Error::invalid_params().data(format!(
                                "unknown configuration option {}",
                                request.config_id
                            )));
                        }
                        let Some(model) = request.value.as_value_id() else {
                            return Err(
                                acp::Error::invalid_params().data("the model is chosen by its id")
                            );
                        };
                        let info =
                            reconfigure(&bridge, &session, None, Some(model.to_string())).await?;
                        Ok(s::SetSessionConfigOptionResponse::new(
                            session_state(&bridge, &info).await.1,
                        ))
                    }
                    .await;
                    responder.respond_with_result(result)
                }
            },
            acp::on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
}
