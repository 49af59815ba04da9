//! A running Codex session: turns, cancel, HITL replies, and resuming the thread in a new
//! app-server after the old one died.

pub mod connection;
pub mod rpc;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sandbox_universal::{AgentError, PermissionReply};
use serde_json::{Value, json};

use self::connection::{Connection, Launch, Shared, ThreadChoice};
use crate::codex::launch::Policy;
use crate::codex::native::method;
use crate::{AgentSession, QuestionAnswer, SessionConfig};

/// How long `turn/start` and `turn/interrupt` may take to be acknowledged.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What every turn sends besides the input.
#[derive(Debug, Clone)]
pub struct TurnSettings {
    /// Approval and sandbox policy of the permission mode.
    pub policy: Policy,
    /// Reasoning effort (the session's `variant`).
    pub effort: Option<String>,
    /// Working directory.
    pub cwd: String,
    /// Model override.
    pub model: Option<String>,
}

impl TurnSettings {
    /// The settings of a session: its permission mode's policy, variant, cwd and model.
    pub fn new(session: &SessionConfig) -> Self {
        Self {
            policy: crate::codex::launch::policy(session.permission_mode),
            effort: session.variant.clone(),
            cwd: session.cwd.display().to_string(),
            model: session.model.clone(),
        }
    }

    /// `thread/start` params.
    pub fn thread_start(&self) -> Value {
        let mut params = json!({"cwd": self.cwd, "approvalPolicy": self.policy.approval});
        if let Some(model) = &self.model {
            params["model"] = json!(model);
        }
        params
    }

    /// `thread/resume` params for `thread_id`.
    pub fn thread_resume(&self, thread_id: &str) -> Value {
        let mut params = self.thread_start();
        params["threadId"] = json!(thread_id);
        params
    }

    /// `turn/start` params.
    pub fn turn_start(&self, thread_id: &str, message: &str) -> Value {
        let mut params = json!({
            "threadId": thread_id,
            "input": [{"type": "text", "text": message}],
            "approvalPolicy": self.policy.approval,
            "sandboxPolicy": self.policy.sandbox,
        });
        if let Some(effort) = &self.effort {
            params["effort"] = json!(effort);
        }
        params
    }
}

/// One Codex session.
pub struct CodexSession {
    shared: Arc<Shared>,
    launch: Launch,
    settings: TurnSettings,
    thread_id: String,
    connection: Option<Connection>,
}

impl CodexSession {
    /// A session over an open connection.
    pub fn new(
        shared: Arc<Shared>,
        launch: Launch,
        settings: TurnSettings,
        connection: Connection,
    ) -> Self {
        Self {
            shared,
            launch,
            settings,
            thread_id: connection.thread_id.clone(),
            connection: Some(connection),
        }
    }

    /// A session restored after a daemon restart: the first message resumes `thread_id`
    /// in a new app-server.
    pub fn restored(
        shared: Arc<Shared>,
        launch: Launch,
        settings: TurnSettings,
        thread_id: String,
    ) -> Self {
        Self {
            shared,
            launch,
            settings,
            thread_id,
            connection: None,
        }
    }

    /// The live connection, resuming the thread in a new app-server when the last one
    /// died.
    async fn connected(&mut self) -> Result<&Connection, AgentError> {
        if let Some(connection) = self.connection.take_if(|c| c.is_dead()) {
            // Let the reader report the exit before anything of the new process.
            connection.finish().await;
        }
        if self.connection.is_none() {
            let params = self.settings.thread_resume(&self.thread_id);
            let connection = Connection::open(
                &self.launch,
                Some(self.shared.clone()),
                ThreadChoice::Resume(params),
            )
            .await?;
            tracing::info!(target: "codex", thread = %self.thread_id, "resumed the thread in a new app-server");
            self.connection = Some(connection);
        }
        Ok(self.connection.as_ref().expect("connected"))
    }

    fn live(&self) -> Result<&Connection, AgentError> {
        self.connection
            .as_ref()
            .filter(|c| !c.is_dead())
            .ok_or_else(|| crate::transport::not_running("the codex app-server is not running"))
    }
}

#[async_trait]
impl AgentSession for CodexSession {
    fn native_session_id(&self) -> Option<String> {
        Some(self.thread_id.clone())
    }

    async fn send_message(&mut self, turn_id: &str, message: &str) -> Result<(), AgentError> {
        let params = self.settings.turn_start(&self.thread_id, message);
        let shared = self.shared.clone();
        let connection = self.connected().await?;
        shared.converter(|c| c.begin_turn(turn_id));
        match connection
            .rpc()
            .call(method::TURN_START, params, REQUEST_TIMEOUT)
            .await
        {
            Ok(result) => {
                shared.converter(|c| c.turn_accepted(&result));
                Ok(())
            }
            Err(error) => {
                shared.converter(|c| c.abort_turn());
                Err(error)
            }
        }
    }

    async fn cancel(&mut self) -> Result<(), AgentError> {
        let Some((_, Some(codex_turn))) = self.shared.converter(|c| c.running_turn()) else {
            return Ok(());
        };
        let params = json!({"threadId": self.thread_id, "turnId": codex_turn});
        let result = self
            .live()?
            .rpc()
            .call(method::TURN_INTERRUPT, params, REQUEST_TIMEOUT)
            .await;
        match result {
            // The turn may have finished on its own meanwhile.
            Err(_) if self.shared.converter(|c| c.running_turn()).is_none() => Ok(()),
            other => other.map(|_| ()),
        }
    }

    async fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<(), AgentError> {
        let response = self
            .shared
            .converter(|c| c.permission_reply(permission_id, reply))?;
        self.live()?.rpc().send(response)
    }

    async fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<(), AgentError> {
        let response = self
            .shared
            .converter(|c| c.question_reply(question_id, answer))?;
        self.live()?.rpc().send(response)
    }

    async fn shutdown(&mut self) {
        if let Some(mut connection) = self.connection.take() {
            connection.stop().await;
        }
    }
}
