//! The session runner of an agent that runs one process per turn (Amp): the prompt goes to
//! the turn's process on stdin, its stdout is converted as it comes, questions its helper
//! asks beside the stream (a side channel of JSON asks, each answered with JSON) go
//! through the same [`Protocol`], cancel stops the process, and a process that exits
//! without ending its turn ends that turn — never a later one. Nothing agent-specific
//! lives here.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use sandbox_universal::{AgentError, AgentId, PermissionReply};
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::protocol::{Gone, Protocol};
use super::tap::{Direction, Tap};
use crate::context::display_name;
use crate::process::{AgentProcess, ProcessSpec, Signaller};
use crate::transport::Line;
use crate::{AgentSession, EventSink, QuestionAnswer};

/// A native message to a process-per-turn agent.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOut {
    /// The prompt: written to the turn's process's stdin, which is then closed.
    Prompt(String),
    /// The answer to the side-channel ask `key` (see [`Ask`]).
    Answer {
        /// The ask's key, as the runner put it in the ask's native message (`"ask"`).
        key: String,
        /// The answer, as the agent's helper reads it.
        answer: Value,
    },
    /// Stop the turn's process (an agent with no other way to cancel).
    Stop,
}

/// A question the agent's helper asks beside the turn's stream.
#[derive(Debug)]
pub struct Ask {
    /// The question (a JSON object); the runner adds its key as `"ask"`.
    pub native: Value,
    /// Where the answer goes (dropped: the helper is told the turn ended).
    pub answer: oneshot::Sender<Value>,
}

/// How one agent's turn processes are started.
pub trait TurnLaunch: Send + Sync + 'static {
    /// The agent's protocol.
    type Protocol: Protocol<Out = TurnOut>;

    /// The agent (its name in messages comes from the manifest).
    const AGENT: AgentId;

    /// The process of one turn, continuing the conversation `native_id` when there is one.
    fn spec(&self, native_id: Option<&str>) -> ProcessSpec;

    /// The conversation's id as the protocol learnt it from the agent.
    fn native_id(protocol: &Self::Protocol) -> Option<&str>;
}

/// How long a finished turn's process may take to exit before the next turn kills it.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// What the reader tasks share with the session.
struct Shared<P> {
    protocol: Mutex<P>,
    sink: EventSink,
    /// Open asks by key.
    asks: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    next_ask: AtomicU64,
    native_id: Mutex<Option<String>>,
    tap: Option<Tap>,
}

impl<P: Protocol<Out = TurnOut>> Shared<P> {
    fn protocol(&self) -> MutexGuard<'_, P> {
        self.protocol.lock().expect("protocol lock")
    }

    /// Converts one native message, holding the protocol's lock while emitting so events
    /// keep the agent's order; notes the conversation id when it is new.
    fn convert<L: TurnLaunch<Protocol = P>>(&self, native: &Value) {
        let mut protocol = self.protocol();
        let converted = protocol.convert(native, &self.sink);
        if let Some(id) = L::native_id(&protocol) {
            let mut known = self.native_id.lock().expect("id lock");
            if known.as_deref() != Some(id) {
                self.sink.set_native_session_id(id);
                *known = Some(id.to_string());
            }
        }
        self.sink.emit_all(converted.events);
        drop(protocol);
        if !converted.replies.is_empty() {
            tracing::warn!(
                agent = %L::AGENT,
                "a turn process reads nothing after its prompt"
            );
        }
    }

    fn line<L: TurnLaunch<Protocol = P>>(&self, text: String) {
        if let Some(tap) = &self.tap {
            tap.line(Direction::FromAgent, &text);
        }
        match Line::parse(text) {
            Line::Json(value) => self.convert::<L>(&value),
            not_json => self.sink.emit_all(not_json.unparsed(&self.sink)),
        }
    }

    fn ask<L: TurnLaunch<Protocol = P>>(&self, ask: Ask) {
        let key = format!("ask_{}", self.next_ask.fetch_add(1, Ordering::Relaxed) + 1);
        let mut native = ask.native;
        if let Value::Object(map) = &mut native {
            map.insert("ask".into(), Value::String(key.clone()));
        }
        if let Some(tap) = &self.tap {
            tap.message(Direction::FromAgent, Some("ask"), &native);
        }
        self.asks.lock().expect("asks lock").insert(key, ask.answer);
        self.convert::<L>(&native);
    }

    /// Answers an ask; an unknown key means its turn ended (the helper was told so).
    fn answer(&self, key: &str, answer: Value) -> Result<(), AgentError> {
        let gone = || AgentError::RequestGone {
            message: format!("the agent stopped waiting for `{key}` (its turn ended)"),
        };
        let sender = self
            .asks
            .lock()
            .expect("asks lock")
            .remove(key)
            .ok_or_else(gone)?;
        if let Some(tap) = &self.tap {
            tap.message(Direction::ToAgent, Some("ask"), &answer);
        }
        sender.send(answer).map_err(|_| gone())
    }
}

/// The process of the last turn and the task that reads it.
struct Running {
    process: Signaller,
    reader: JoinHandle<()>,
}

/// One session of a process-per-turn agent started as `L` describes.
pub struct TurnSession<L: TurnLaunch> {
    shared: Arc<Shared<L::Protocol>>,
    launch: L,
    asks: Option<JoinHandle<()>>,
    running: Option<Running>,
}

impl<L: TurnLaunch> TurnSession<L> {
    /// A session whose first turn starts a conversation, or continues `native_id` (after
    /// a daemon restart). `asks` are the questions of the agent's helper, if it has one.
    pub fn new(
        launch: L,
        protocol: L::Protocol,
        sink: EventSink,
        native_id: Option<String>,
        asks: Option<mpsc::Receiver<Ask>>,
        tap: Option<Tap>,
    ) -> Self {
        let shared = Arc::new(Shared {
            protocol: Mutex::new(protocol),
            sink,
            asks: Mutex::new(HashMap::new()),
            next_ask: AtomicU64::new(0),
            native_id: Mutex::new(native_id),
            tap,
        });
        let asks = asks.map(|mut asks| {
            let shared = shared.clone();
            tokio::spawn(async move {
                while let Some(ask) = asks.recv().await {
                    shared.ask::<L>(ask);
                }
            })
        });
        Self {
            shared,
            launch,
            asks,
            running: None,
        }
    }

    /// Sends what the protocol asked for to the turn's process (`stdin`) or its helper.
    async fn deliver(
        &self,
        outgoing: Vec<TurnOut>,
        mut stdin: Option<&mut Option<tokio::process::ChildStdin>>,
    ) -> Result<(), AgentError> {
        for message in outgoing {
            match message {
                TurnOut::Prompt(text) => {
                    let Some(stdin) = stdin.as_mut().and_then(|s| s.take()) else {
                        return Err(AgentError::protocol("a prompt outside a turn's start"));
                    };
                    if let Some(tap) = &self.shared.tap {
                        tap.line(Direction::ToAgent, &text);
                    }
                    let mut stdin = stdin;
                    // A failed write shows as the process's exit, with its stderr.
                    let _ = stdin.write_all(text.as_bytes()).await;
                }
                TurnOut::Answer { key, answer } => self.shared.answer(&key, answer)?,
                TurnOut::Stop => {
                    if let Some(running) = &self.running {
                        running.process.kill();
                    }
                }
            }
        }
        Ok(())
    }

    /// Lets the last turn's process finish (it printed its end and is exiting), killing
    /// it after a grace period.
    async fn finish_last(&mut self) {
        if let Some(mut last) = self.running.take()
            && tokio::time::timeout(EXIT_GRACE, &mut last.reader)
                .await
                .is_err()
        {
            last.process.kill();
            let _ = last.reader.await;
        }
    }
}

impl<L: TurnLaunch> Drop for TurnSession<L> {
    fn drop(&mut self) {
        if let Some(asks) = &self.asks {
            asks.abort();
        }
        if let Some(running) = &self.running {
            running.process.kill();
        }
    }
}

#[async_trait]
impl<L: TurnLaunch> AgentSession for TurnSession<L> {
    fn native_session_id(&self) -> Option<String> {
        self.shared.native_id.lock().expect("id lock").clone()
    }

    async fn send_message(
        &mut self,
        turn_id: &str,
        message: &crate::UserMessage,
    ) -> Result<(), AgentError> {
        self.finish_last().await;
        let outgoing = self.shared.protocol().begin_turn(turn_id, message);
        let spec = self.launch.spec(self.native_session_id().as_deref());
        let (mut process, mut lines) = match AgentProcess::spawn(&spec) {
            Ok(spawned) => spawned,
            Err(error) => {
                self.shared.protocol().turn_undelivered();
                return Err(crate::transport::spawn_error(&spec, &error));
            }
        };
        let mut stdin = process.take_stdin();
        if let Err(error) = self.deliver(outgoing, Some(&mut stdin)).await {
            self.shared.protocol().turn_undelivered();
            process.signaller().kill();
            return Err(error);
        }
        drop(stdin);
        self.shared.protocol().turn_delivered(None);
        let signaller = process.signaller();
        let shared = self.shared.clone();
        let turn = turn_id.to_string();
        let reader = tokio::spawn(async move {
            while let Ok(Some(text)) = lines.next_line().await {
                if !text.trim().is_empty() {
                    shared.line::<L>(text);
                }
            }
            let exit = process.wait().await;
            let mut protocol = shared.protocol();
            if protocol.current_turn() == Some(turn.as_str()) {
                let gone = Gone {
                    why: format!("{} exited ({})", display_name(L::AGENT), exit.describe()),
                    exit,
                };
                let events = protocol.gone(&gone);
                shared.sink.emit_all(events);
            }
            drop(protocol);
            // Asks of a finished turn are refused (dropping their answers).
            shared.asks.lock().expect("asks lock").clear();
        });
        self.running = Some(Running {
            process: signaller,
            reader,
        });
        Ok(())
    }

    async fn cancel(&mut self) -> Result<(), AgentError> {
        let outgoing = self.shared.protocol().cancel();
        self.deliver(outgoing, None).await
    }

    async fn reply_permission(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<(), AgentError> {
        let outgoing = self
            .shared
            .protocol()
            .reply_permission(permission_id, reply)?;
        self.deliver(outgoing, None).await
    }

    async fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<(), AgentError> {
        let outgoing = self.shared.protocol().reply_question(question_id, answer)?;
        self.deliver(outgoing, None).await
    }

    async fn shutdown(&mut self) {
        if self.running.is_some() {
            drop(self.shared.protocol().cancel());
        }
        if let Some(running) = self.running.take() {
            running.process.kill();
        }
        if let Some(asks) = self.asks.take() {
            asks.abort();
        }
        self.shared.asks.lock().expect("asks lock").clear();
    }
}
