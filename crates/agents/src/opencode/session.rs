//! One universal session on an OpenCode server: its OpenCode session (created in the
//! session's cwd with the rules of its permission mode), prompts, cancel, replies, and the
//! share of the server's events that is its own.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use sandbox_universal::{AgentError, PermissionReply};
use serde_json::{Value, json};

use super::convert::{Converter, NativeCall};
use super::pool::{Lease, SessionRoute};
use crate::process::ExitInfo;
use crate::transport::{HttpError, HttpPeer};
use crate::{AgentSession, EventSink, QuestionAnswer};

/// What every prompt of a session carries besides the text.
#[derive(Debug, Clone, Default)]
pub struct PromptSettings {
    /// `(providerID, modelID)`, when the session names a model.
    pub model: Option<(String, String)>,
    /// OpenCode's agent (`build`, `plan`, ...).
    pub agent: Option<String>,
    /// The model variant (checked against the model's metadata before).
    pub variant: Option<String>,
}

impl PromptSettings {
    /// The `prompt_async` body for `text`.
    pub fn body(&self, text: &str) -> Value {
        let mut body = json!({"parts": [{"type": "text", "text": text}]});
        if let Some((provider, model)) = &self.model {
            body["model"] = json!({"providerID": provider, "modelID": model});
        }
        if let Some(agent) = &self.agent {
            body["agent"] = json!(agent);
        }
        if let Some(variant) = &self.variant {
            body["variant"] = json!(variant);
        }
        body
    }
}

/// The converter and the sink, shared with the server's event router.
struct Shared {
    sink: EventSink,
    converter: Mutex<Converter>,
}

impl Shared {
    fn converter(&self) -> std::sync::MutexGuard<'_, Converter> {
        self.converter.lock().expect("converter lock")
    }
}

impl SessionRoute for Shared {
    fn event(&self, payload: &Value) {
        // The lock is held while emitting so events keep the server's order.
        let mut converter = self.converter();
        let events = converter.event(payload, &self.sink);
        self.sink.emit_all(events);
    }

    fn not_json(&self, raw: &str, error: &str) {
        self.sink.emit_all(crate::items::unparsed_item(
            &self.sink,
            &Value::String(raw.to_string()),
            format!("an event of opencode's stream is not JSON: {error}"),
        ));
    }

    fn server_lost(&self, why: &str, exit: Option<&ExitInfo>) {
        let message = format!("{why}; the next message continues the session on a new server");
        let error = match exit {
            Some(exit) => exit.error(message),
            None => AgentError::ProcessExited {
                message,
                exit_code: None,
                signal: None,
                stderr_tail: None,
            },
        };
        let mut converter = self.converter();
        let events = converter.server_lost(error);
        self.sink.emit_all(events);
    }
}

/// One universal session on a (shared) OpenCode server.
pub struct OpenCodeSession {
    lease: Option<Lease>,
    shared: Arc<Shared>,
    native_id: String,
    cwd: String,
    prompt: PromptSettings,
}

impl OpenCodeSession {
    /// Creates the OpenCode session in `cwd` with `rules` (its permission mode's) on the
    /// lease's server, and routes its events to `sink`.
    pub async fn create(
        lease: Lease,
        sink: EventSink,
        cwd: String,
        rules: Value,
        prompt: PromptSettings,
    ) -> Result<Self, AgentError> {
        let peer = lease.peer().await?;
        let created = peer
            .post_json(
                &with_directory("/session", &cwd),
                &json!({"permission": rules}),
            )
            .await
            .map_err(|e| e.into_agent_error("creating the OpenCode session"))?;
        let native_id = created["id"]
            .as_str()
            .ok_or_else(|| AgentError::protocol(format!("a session without an id: {created}")))?
            .to_string();
        Ok(Self::restored(lease, sink, cwd, native_id, prompt))
    }

    /// A session whose OpenCode session `native_id` already exists (after a daemon
    /// restart): its events are routed from now on, the next message continues it.
    pub fn restored(
        lease: Lease,
        sink: EventSink,
        cwd: String,
        native_id: String,
        prompt: PromptSettings,
    ) -> Self {
        let mut converter = Converter::new(cwd.clone());
        converter.set_native_session_id(&native_id);
        let shared = Arc::new(Shared {
            sink,
            converter: Mutex::new(converter),
        });
        lease.route(&native_id, shared.clone());
        Self {
            lease: Some(lease),
            shared,
            native_id,
            cwd,
            prompt,
        }
    }

    async fn peer(&self) -> Result<HttpPeer, AgentError> {
        match &self.lease {
            Some(lease) => lease.peer().await,
            None => Err(AgentError::protocol("the session was shut down")),
        }
    }

    /// Sends a call the converter asked for; a request OpenCode no longer knows is said so.
    async fn send(&self, call: NativeCall) -> Result<Value, AgentError> {
        let peer = self.peer().await?;
        peer.request(
            call.method.clone(),
            &call.path_with_directory(),
            call.body.as_ref(),
        )
        .await
        .map_err(|error| match error.status() {
            Some(404) => AgentError::RequestGone {
                message: format!(
                    "OpenCode no longer has this request (its server restarted or settled it): {error}"
                ),
            },
            _ => error.into_agent_error("answering OpenCode"),
        })
    }
}

/// `path?directory=<dir>`: OpenCode routes requests by directory.
fn with_directory(path: &str, directory: &str) -> String {
    NativeCall {
        method: reqwest::Method::POST,
        path: path.to_string(),
        body: None,
        directory: directory.to_string(),
    }
    .path_with_directory()
}

#[async_trait]
impl AgentSession for OpenCodeSession {
    fn native_session_id(&self) -> Option<String> {
        Some(self.native_id.clone())
    }

    async fn send_message(&mut self, turn_id: &str, message: &str) -> Result<(), AgentError> {
        let peer = self.peer().await?;
        self.shared.converter().begin_turn(turn_id);
        let path = with_directory(
            &format!("/session/{}/prompt_async", self.native_id),
            &self.cwd,
        );
        if let Err(error) = peer.post_json(&path, &self.prompt.body(message)).await {
            self.shared.converter().take_turn();
            return Err(error_of_prompt(error));
        }
        Ok(())
    }

    async fn cancel(&mut self) -> Result<(), AgentError> {
        let calls = self.shared.converter().cancel_requested();
        let mut first_error = None;
        for call in calls {
            if let Err(error) = self.send(call).await {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    async fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<(), AgentError> {
        let call = self
            .shared
            .converter()
            .permission_reply(permission_id, reply)?;
        self.send(call).await.map(drop)
    }

    async fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<(), AgentError> {
        let call = self
            .shared
            .converter()
            .question_reply(question_id, answer)?;
        self.send(call).await.map(drop)
    }

    async fn shutdown(&mut self) {
        if self.lease.is_none() {
            return;
        }
        if self.shared.converter().current_turn().is_some() {
            let _ = self.cancel().await;
        }
        if let Some(lease) = self.lease.take() {
            lease.unroute(&self.native_id);
            lease.release().await;
        }
    }
}

fn error_of_prompt(error: HttpError) -> AgentError {
    error.into_agent_error("sending the message to OpenCode")
}
