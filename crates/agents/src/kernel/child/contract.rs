//! What a child agent brings to the stdio runner: its protocol's framing of the daemon's
//! own requests ([`LineProtocol`]), how its process starts and what it is told first
//! ([`ChildLaunch`], given a [`Link`] to the new process), and the native messages
//! ([`Outgoing`]).

use std::time::Duration;

use async_trait::async_trait;
use sandbox_universal::{AgentError, AgentId};
use serde_json::Value;

use super::ChildSession;
use crate::kernel::Protocol;
use crate::process::ProcessSpec;

/// A native message to a child agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// A line written as it is (a user message, a reply, a notification).
    Line(Value),
    /// A request: framed with a fresh id by [`LineProtocol::frame`], and its answer
    /// awaited (see [`ChildSession::request`]).
    Request {
        /// The request's name (Codex's JSON-RPC method, Claude's control `subtype`,
        /// Pi's command `type`).
        method: &'static str,
        /// Its parameters.
        params: Value,
    },
}

impl Outgoing {
    /// The line, when this is one.
    pub fn line(&self) -> Option<&Value> {
        match self {
            Self::Line(line) => Some(line),
            Self::Request { .. } => None,
        }
    }
}

/// A [`Protocol`] spoken over stdio lines: how the daemon's own requests are framed and
/// their answers recognised.
pub trait LineProtocol: Protocol<Out = Outgoing> {
    /// The agent (its name in messages comes from the manifest).
    const AGENT: AgentId;

    /// The line of request number `id`, and the key its answer will carry.
    fn frame(&mut self, id: u64, method: &str, params: Value) -> (String, Value);

    /// When `native` answers one of the daemon's requests: its key, and the result or
    /// the agent's refusal.
    fn answer(&mut self, native: &Value) -> Option<(String, Result<Value, AgentError>)>;
}

/// What the runner knows when it starts a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spawn {
    /// The session was restored after a daemon restart (its conversation exists).
    pub restored: bool,
    /// Processes started for the session before this one.
    pub earlier: u32,
    /// Turns delivered to the agent so far (by any process).
    pub delivered: u64,
}

/// How one agent's process is started, and what it is told before it takes turns.
#[async_trait]
pub trait ChildLaunch: Sized + Send + Sync + 'static {
    /// The agent's protocol.
    type Protocol: LineProtocol;

    /// The process to start.
    fn spec(&self, protocol: &Self::Protocol, spawn: Spawn) -> ProcessSpec;

    /// Runs the handshake on a new process (initialize, log in, start or resume the
    /// conversation) and returns what the driver needs from it (versions, models).
    async fn handshake(&mut self, link: &Link<'_, Self>, spawn: Spawn)
    -> Result<Value, AgentError>;

    /// The agent's own session id, once known.
    fn native_id(&self) -> Option<String>;

    /// How long a request of the daemon's may wait for its answer.
    fn request_timeout(&self) -> Duration {
        Duration::from_secs(60)
    }
}

/// A running process's writer and requests, handed to [`ChildLaunch::handshake`].
pub struct Link<'a, L: ChildLaunch> {
    pub(super) session: &'a ChildSession<L>,
}

impl<L: ChildLaunch> Link<'_, L> {
    /// Sends a request and waits for its answer.
    pub async fn request(
        &self,
        method: &'static str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, AgentError> {
        self.session.request(method, params, limit).await
    }

    /// Writes a line that needs no answer.
    pub async fn send(&self, line: Value) -> Result<(), AgentError> {
        self.session.write(line).await
    }
}
