//! The session runner of an agent that runs as a local HTTP + SSE server shared by many
//! sessions (OpenCode): the agent's pool starts the server and routes each session's
//! share of its one event stream here ([`Route`]); the runner converts it through the
//! [`Protocol`], sends the HTTP calls the protocol asks for, taps both, and when the
//! server is lost reports it once; the next message starts a new server through the
//! lease. Nothing agent-specific lives here.

use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use reqwest::Method;
use sandbox_universal::{AgentError, AgentId, PermissionReply};
use serde_json::Value;

use super::protocol::{Gone, Protocol};
use super::tap::{Direction, Tap};
use crate::context::display_name;
use crate::transport::{HttpError, HttpPeer};
use crate::{AgentSession, EventSink, QuestionAnswer};

/// An HTTP call a protocol asks its runner to send.
pub trait Call: Send + Sync + 'static {
    /// The method.
    fn method(&self) -> Method;
    /// The path, with its query.
    fn path(&self) -> String;
    /// The JSON body, if any.
    fn body(&self) -> Option<&Value>;
}

/// Where one session's share of a shared server's event stream goes.
pub trait Route: Send + Sync + 'static {
    /// An event of the session (or of one of its child sessions).
    fn event(&self, payload: &Value);
    /// A payload of the stream that is not JSON (every session of the server hears it).
    fn not_json(&self, raw: &str, error: &str);
    /// The server is gone (its process exited or its stream broke).
    fn server_lost(&self, gone: &Gone);
}

/// One session's hold on the shared server of its agent.
#[async_trait]
pub trait ServerLease: Send + Sync + 'static {
    /// The agent's protocol.
    type Protocol: Protocol<Out: Call>;

    /// The agent (its name in messages comes from the manifest).
    const AGENT: AgentId;

    /// The server's HTTP client, starting the server when none runs.
    async fn peer(&self) -> Result<HttpPeer, AgentError>;

    /// Sends the events of the agent's session `native_id` to `route`.
    fn route(&self, native_id: &str, route: Arc<dyn Route>);

    /// Stops routing `native_id`'s events.
    fn unroute(&self, native_id: &str);

    /// Lets go of the server (stopping it when this was its last session).
    async fn release(self);
}

/// What the server's router shares with the session.
struct Shared<P> {
    protocol: Mutex<P>,
    sink: EventSink,
    tap: Option<Tap>,
    /// The server's client as of the last message: where the protocol's replies to
    /// events (e.g. the abort of a turn past `maxTurns`) go.
    peer: Mutex<Option<HttpPeer>>,
}

impl<P: Protocol> Shared<P> {
    fn protocol(&self) -> MutexGuard<'_, P> {
        self.protocol.lock().expect("protocol lock")
    }

    fn tap(&self, direction: Direction, via: Option<&str>, text: &dyn std::fmt::Display) {
        if let Some(tap) = &self.tap {
            tap.message(direction, via, text);
        }
    }
}

impl<P: Protocol<Out: Call>> Route for Shared<P> {
    fn event(&self, payload: &Value) {
        self.tap(Direction::FromAgent, None, payload);
        // The lock is held while emitting so events keep the server's order.
        let mut protocol = self.protocol();
        let converted = protocol.convert(payload, &self.sink);
        self.sink.emit_all(converted.events);
        if converted.replies.is_empty() {
            return;
        }
        let peer = self.peer.lock().expect("peer lock").clone();
        let (Some(peer), Ok(runtime)) = (peer, tokio::runtime::Handle::try_current()) else {
            tracing::warn!(
                "a server agent's protocol replied to an event with no server to send it to"
            );
            return;
        };
        let tap = self.tap.clone();
        runtime.spawn(async move {
            for call in converted.replies {
                let path = call.path();
                if let Some(tap) = &tap {
                    tap.http_request(call.method().as_str(), &path, call.body());
                }
                match peer.request(call.method(), &path, call.body()).await {
                    Ok(answer) => {
                        if let Some(tap) = &tap {
                            tap.http_answer(&answer);
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, path, "a reply to the agent's event failed");
                    }
                }
            }
        });
    }

    fn not_json(&self, raw: &str, error: &str) {
        self.tap(Direction::FromAgent, None, &raw);
        self.sink.emit_all(crate::items::unparsed_item(
            &self.sink,
            &Value::String(raw.to_string()),
            format!("an event of the agent's stream is not JSON: {error}"),
        ));
    }

    fn server_lost(&self, gone: &Gone) {
        let mut protocol = self.protocol();
        let events = protocol.gone(gone);
        self.sink.emit_all(events);
    }
}

/// One session on a shared server, held through `L`.
pub struct ServerSession<L: ServerLease> {
    lease: Option<L>,
    shared: Arc<Shared<L::Protocol>>,
    native_id: String,
}

impl<L: ServerLease> ServerSession<L> {
    /// The session `native_id` on the lease's server: its events are routed from now on.
    pub fn new(
        lease: L,
        protocol: L::Protocol,
        sink: EventSink,
        native_id: String,
        tap: Option<Tap>,
    ) -> Self {
        let shared = Arc::new(Shared {
            protocol: Mutex::new(protocol),
            sink,
            tap,
            peer: Mutex::new(None),
        });
        lease.route(&native_id, shared.clone());
        Self {
            lease: Some(lease),
            shared,
            native_id,
        }
    }

    async fn peer(&self) -> Result<HttpPeer, AgentError> {
        match &self.lease {
            Some(lease) => lease.peer().await,
            None => Err(AgentError::protocol("the session was shut down")),
        }
    }

    /// Sends one call to `peer`, tapping it and its answer.
    async fn send(
        &self,
        peer: &HttpPeer,
        call: &<L::Protocol as Protocol>::Out,
    ) -> Result<Value, HttpError> {
        let path = call.path();
        if let Some(tap) = &self.shared.tap {
            tap.http_request(call.method().as_str(), &path, call.body());
        }
        let answer = peer.request(call.method(), &path, call.body()).await;
        if let (Some(tap), Ok(answer)) = (&self.shared.tap, &answer) {
            tap.http_answer(answer);
        }
        answer
    }

    /// Sends calls that answer or cancel something: a request the agent no longer knows
    /// (404) is gone. Every call is sent; the first error is returned.
    async fn send_all(&self, calls: Vec<<L::Protocol as Protocol>::Out>) -> Result<(), AgentError> {
        if calls.is_empty() {
            return Ok(());
        }
        let peer = self.peer().await?;
        let mut first_error = None;
        for call in calls {
            if let Err(error) = self.send(&peer, &call).await {
                let error = match error.status() {
                    Some(404) => AgentError::RequestGone {
                        message: format!(
                            "{} no longer has this request (its server restarted or settled it): {error}",
                            display_name(L::AGENT)
                        ),
                    },
                    _ => error.into_agent_error(&format!("answering {}", display_name(L::AGENT))),
                };
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

#[async_trait]
impl<L: ServerLease> AgentSession for ServerSession<L> {
    fn native_session_id(&self) -> Option<String> {
        Some(self.native_id.clone())
    }

    async fn send_message(
        &mut self,
        turn_id: &str,
        message: &crate::UserMessage,
    ) -> Result<(), AgentError> {
        // Start the server first (a dead one is replaced) so no event of the turn is lost.
        let peer = self.peer().await?;
        *self.shared.peer.lock().expect("peer lock") = Some(peer.clone());
        let calls = self.shared.protocol().begin_turn(turn_id, message);
        for call in calls {
            if let Err(error) = self.send(&peer, &call).await {
                self.shared.protocol().turn_undelivered();
                return Err(error.into_agent_error(&format!(
                    "sending the message to {}",
                    display_name(L::AGENT)
                )));
            }
        }
        self.shared.protocol().turn_delivered(None);
        Ok(())
    }

    async fn cancel(&mut self) -> Result<(), AgentError> {
        let calls = self.shared.protocol().cancel();
        self.send_all(calls).await
    }

    async fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<(), AgentError> {
        let calls = self
            .shared
            .protocol()
            .reply_permission(permission_id, reply)?;
        self.send_all(calls).await
    }

    async fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<(), AgentError> {
        let calls = self.shared.protocol().reply_question(question_id, answer)?;
        self.send_all(calls).await
    }

    async fn shutdown(&mut self) {
        if self.lease.is_none() {
            return;
        }
        if self.shared.protocol().current_turn().is_some() {
            let _ = self.cancel().await;
        }
        if let Some(lease) = self.lease.take() {
            lease.unroute(&self.native_id);
            lease.release().await;
        }
    }
}
