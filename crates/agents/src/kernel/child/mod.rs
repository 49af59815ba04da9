//! The session runner of every agent that is one child process speaking JSON lines or
//! JSON-RPC on stdio (Claude Code, Codex's app-server, Pi): it spawns the process the
//! agent's [`ChildLaunch`] describes, runs its handshake, owns the one read loop (answers
//! to the daemon's requests go to their waiters, every other line through the
//! [`Protocol`]), writes what the protocol asks, taps every line both ways, and when the
//! process dies reports it once and starts a new one — resuming the conversation — at
//! the next message. Nothing agent-specific lives here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use sandbox_universal::{AgentError, PermissionReply};
use serde_json::Value;
use tokio::io::{BufReader, Lines};
use tokio::process::ChildStdout;
use tokio::sync::watch;
use tokio::task::JoinHandle;

mod contract;

pub use contract::{ChildLaunch, LineProtocol, Link, Outgoing, Spawn};

use super::protocol::{Gone, Protocol};
use super::tap::{Direction, Tap};
use crate::context::display_name;
use crate::process::{AgentProcess, ExitInfo, ProcessSpec, Signaller};
use crate::transport::{
    Line, LineWriter, Pending, not_running, spawn_error, wait_exit, with_stderr,
};
use crate::{AgentEvent, AgentSession, EventSink, QuestionAnswer};

/// How long an interrupted turn may take to end before its process is killed.
pub const CANCEL_GRACE: Duration = Duration::from_secs(10);
/// How long `shutdown` waits after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// What the reader task shares with the session.
struct Shared<P> {
    protocol: Mutex<P>,
    sink: Option<EventSink>,
    waiting: Pending<String, Result<Value, AgentError>>,
    /// Events converted before `sessionStarted` was emitted wait here.
    held: Mutex<Option<Vec<AgentEvent>>>,
    tap: Option<Tap>,
}

impl<P: LineProtocol> Shared<P> {
    fn protocol(&self) -> MutexGuard<'_, P> {
        self.protocol.lock().expect("protocol lock")
    }

    fn emit(&self, events: Vec<AgentEvent>) {
        let Some(sink) = &self.sink else { return };
        let mut held = self.held.lock().expect("held lock");
        match held.as_mut() {
            Some(buffer) => buffer.extend(events),
            None => sink.emit_all(events),
        }
    }

    fn tap(&self, direction: Direction, text: &dyn std::fmt::Display) {
        if let Some(tap) = &self.tap {
            tap.line(direction, text);
        }
    }

    /// One line of stdout. The protocol's lock is held while emitting, so events keep
    /// the agent's order.
    fn line(&self, line: Line, writer: &LineWriter) {
        let value = match line {
            Line::Json(value) => value,
            not_json => {
                if let Some(sink) = &self.sink {
                    self.emit(not_json.unparsed(sink));
                }
                return;
            }
        };
        let mut protocol = self.protocol();
        if let Some((key, answer)) = protocol.answer(&value) {
            drop(protocol);
            if !self.waiting.resolve(&key, answer) {
                tracing::debug!(agent = %P::AGENT, %key, "an answer nobody waits for");
            }
            return;
        }
        let Some(sink) = &self.sink else { return };
        let converted = protocol.convert(&value, sink);
        self.emit(converted.events);
        drop(protocol);
        for reply in converted.replies {
            let Outgoing::Line(line) = reply else {
                tracing::warn!(
                    agent = %P::AGENT,
                    "a protocol asked for a request as a reply"
                );
                continue;
            };
            self.tap(Direction::ToAgent, &line);
            if writer.send(line).is_err() {
                tracing::warn!(
                    agent = %P::AGENT,
                    "a reply could not be written: stdin is closed"
                );
            }
        }
    }
}

/// The running process.
struct Running {
    process: AgentProcess,
    writer: LineWriter,
    signaller: Signaller,
    exit: watch::Receiver<Option<ExitInfo>>,
    /// The exit is the daemon's doing (a failed start, a stop): nothing is reported.
    quiet: Arc<AtomicBool>,
    reader: JoinHandle<()>,
}

impl Running {
    fn exited(&self) -> bool {
        self.exit.borrow().is_some()
    }
}

/// One session of a child agent started as `L` describes.
pub struct ChildSession<L: ChildLaunch> {
    shared: Arc<Shared<L::Protocol>>,
    launch: Option<L>,
    running: Option<Running>,
    spawn: Spawn,
    requests: std::sync::atomic::AtomicU64,
}

impl<L: ChildLaunch> ChildSession<L> {
    fn new(
        launch: L,
        protocol: L::Protocol,
        sink: Option<EventSink>,
        restored: bool,
        tap: Option<Tap>,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                protocol: Mutex::new(protocol),
                sink,
                waiting: Pending::default(),
                held: Mutex::new((!restored).then(Vec::new)),
                tap,
            }),
            launch: Some(launch),
            running: None,
            spawn: Spawn {
                restored,
                earlier: 0,
                delivered: 0,
            },
            requests: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Starts the agent for a new session and runs its handshake. Its events are held
    /// until [`ChildSession::started`]; returns the handshake's answer.
    pub async fn start(
        launch: L,
        protocol: L::Protocol,
        sink: Option<EventSink>,
        tap: Option<Tap>,
    ) -> Result<(Self, Value), AgentError> {
        let mut session = Self::new(launch, protocol, sink, false, tap);
        let answer = session.spawn().await?;
        Ok((session, answer))
    }

    /// A session restored after a daemon restart: nothing runs until the next message,
    /// which starts a process resuming the conversation.
    pub fn restored(launch: L, protocol: L::Protocol, sink: EventSink, tap: Option<Tap>) -> Self {
        Self::new(launch, protocol, Some(sink), true, tap)
    }

    /// Emits `session_started` and then everything converted before it.
    pub fn started(&self, session_started: AgentEvent) {
        let Some(sink) = &self.shared.sink else {
            return;
        };
        let mut held = self.shared.held.lock().expect("held lock");
        sink.emit(session_started);
        sink.emit_all(held.take().unwrap_or_default());
    }

    /// The launch.
    pub fn launch(&self) -> &L {
        self.launch.as_ref().expect("launch")
    }

    /// Runs `f` on the protocol (never across an await).
    pub fn with_protocol<T>(&self, f: impl FnOnce(&mut L::Protocol) -> T) -> T {
        f(&mut self.shared.protocol())
    }

    /// The pid of the current process, if one runs.
    pub fn pid(&self) -> Option<u32> {
        self.running
            .as_ref()
            .filter(|r| !r.exited())
            .map(|r| r.signaller.pid())
    }

    /// Starts a process and runs the handshake; the exit of a process whose handshake
    /// failed is not reported (the failure is returned).
    async fn spawn(&mut self) -> Result<Value, AgentError> {
        let mut launch = self.launch.take().expect("launch");
        let spec = launch.spec(&self.shared.protocol(), self.spawn);
        let result = self.spawn_with(&mut launch, &spec).await;
        self.launch = Some(launch);
        match result {
            Ok(answer) => {
                self.spawn.earlier += 1;
                if let Some(running) = &self.running {
                    running.quiet.store(false, Ordering::SeqCst);
                }
                Ok(answer)
            }
            Err(error) => {
                let exit = self.stop(Duration::ZERO).await;
                Err(with_stderr(error, exit.as_ref()))
            }
        }
    }

    async fn spawn_with(
        &mut self,
        launch: &mut L,
        spec: &ProcessSpec,
    ) -> Result<Value, AgentError> {
        let (mut process, lines) = AgentProcess::spawn(spec).map_err(|e| spawn_error(spec, &e))?;
        let stdin = process
            .take_stdin()
            .ok_or_else(|| not_running(format!("{} has no stdin", agent::<L>())))?;
        let writer = LineWriter::spawn(stdin);
        let quiet = Arc::new(AtomicBool::new(true));
        let reader = tokio::spawn(read_loop(
            lines,
            self.shared.clone(),
            writer.clone(),
            quiet.clone(),
            process.exit_watch(),
        ));
        self.running = Some(Running {
            signaller: process.signaller(),
            exit: process.exit_watch(),
            process,
            writer,
            quiet,
            reader,
        });
        let spawn = self.spawn;
        launch.handshake(&Link { session: self }, spawn).await
    }

    /// Makes sure a live process runs: waits for a dead one's reader to finish (so its
    /// exit is reported first) and starts a new one, resuming the conversation.
    async fn ensure_running(&mut self) -> Result<(), AgentError> {
        if self.running.as_ref().is_some_and(|r| !r.exited()) {
            return Ok(());
        }
        if let Some(dead) = self.running.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), dead.reader).await;
        }
        self.spawn().await.map(drop)
    }

    fn live(&self) -> Result<&Running, AgentError> {
        self.running
            .as_ref()
            .ok_or_else(|| not_running(format!("{} is not running", agent::<L>())))
    }

    /// Writes `line` and waits until it was written.
    async fn write(&self, line: Value) -> Result<(), AgentError> {
        let running = self.live()?;
        self.shared.tap(Direction::ToAgent, &line);
        running
            .writer
            .write(line)
            .await
            .map_err(|e| not_running(format!("writing to {} failed: {e}", agent::<L>())))
    }

    /// Sends one of the daemon's requests and waits for its answer, the process's exit
    /// or `limit`.
    pub async fn request(
        &self,
        method: &'static str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, AgentError> {
        let id = self.requests.fetch_add(1, Ordering::Relaxed) + 1;
        let (key, line) = self.shared.protocol().frame(id, method, params);
        let running = self.live()?;
        let answer = self
            .shared
            .waiting
            .register(key.clone())
            .ok_or_else(|| not_running(format!("{} is gone", agent::<L>())))?;
        let mut exit = running.exit.clone();
        if let Err(error) = self.write(line).await {
            self.shared.waiting.forget(&key);
            // Usually the process died before reading: report how it ended.
            let ended = tokio::time::timeout(Duration::from_secs(5), wait_exit(&mut exit))
                .await
                .ok();
            return Err(match ended {
                Some(info) => exited(agent::<L>(), &info, method),
                None => error,
            });
        }
        let outcome = tokio::time::timeout(limit, async {
            tokio::select! {
                answer = answer => answer.ok(),
                _ = exit.wait_for(Option::is_some) => None,
            }
        })
        .await;
        match outcome {
            Ok(Some(answer)) => answer,
            Ok(None) => Err(exited(agent::<L>(), &running.process.wait().await, method)),
            Err(_) => {
                self.shared.waiting.forget(&key);
                Err(AgentError::Timeout {
                    message: format!(
                        "{} did not answer `{method}` within {} s",
                        agent::<L>(),
                        limit.as_secs()
                    ),
                })
            }
        }
    }

    /// Sends what the protocol asked for; returns the answer to the last request.
    async fn deliver(&self, outgoing: Vec<Outgoing>) -> Result<Option<Value>, AgentError> {
        let mut answer = None;
        for message in outgoing {
            answer = match message {
                Outgoing::Line(line) => {
                    self.write(line).await?;
                    None
                }
                Outgoing::Request { method, params } => {
                    let limit = self.launch().request_timeout();
                    Some(self.request(method, params, limit).await?)
                }
            };
        }
        Ok(answer)
    }

    /// Stops the process on purpose (nothing is reported); how it ended, if one ran.
    async fn stop(&mut self, grace: Duration) -> Option<ExitInfo> {
        let mut running = self.running.take()?;
        running.quiet.store(true, Ordering::SeqCst);
        let exit = running.process.stop(grace).await;
        let _ = tokio::time::timeout(Duration::from_secs(5), running.reader).await;
        Some(exit)
    }
}

impl<L: ChildLaunch> Drop for ChildSession<L> {
    /// A session dropped without `shutdown` still takes its process (and the tools it
    /// started) down.
    fn drop(&mut self) {
        if let Some(running) = &self.running
            && !running.exited()
        {
            running.quiet.store(true, Ordering::SeqCst);
            running.signaller.kill();
        }
    }
}

#[async_trait]
impl<L: ChildLaunch> AgentSession for ChildSession<L> {
    fn native_session_id(&self) -> Option<String> {
        self.launch().native_id()
    }

    async fn send_message(
        &mut self,
        turn_id: &str,
        message: &crate::UserMessage,
    ) -> Result<(), AgentError> {
        self.ensure_running().await?;
        self.wait_until_ready().await;
        let outgoing = self.shared.protocol().begin_turn(turn_id, message);
        let mut delivered = self.deliver(outgoing.clone()).await;
        if delivered.is_err() && self.running.as_ref().is_some_and(Running::exited) {
            // The process died between the check and the write: start a new one and
            // retry once.
            self.shared.protocol().turn_undelivered();
            self.ensure_running().await?;
            let outgoing = self.shared.protocol().begin_turn(turn_id, message);
            delivered = self.deliver(outgoing).await;
        }
        match delivered {
            Ok(answer) => {
                self.shared.protocol().turn_delivered(answer.as_ref());
                self.spawn.delivered += 1;
                Ok(())
            }
            Err(error) => {
                self.shared.protocol().turn_undelivered();
                Err(error)
            }
        }
    }

    async fn cancel(&mut self) -> Result<(), AgentError> {
        let Some(turn) = self.shared.protocol().current_turn().map(str::to_string) else {
            return Ok(());
        };
        let Some(running) = self.running.as_ref().filter(|r| !r.exited()) else {
            return Ok(());
        };
        let signaller = running.signaller.clone();
        let outgoing = self.shared.protocol().cancel();
        let sent = self.deliver(outgoing).await;
        // If the agent does not end the turn in time, kill it: the turn then ends as
        // cancelled and the next message resumes the conversation.
        let shared = self.shared.clone();
        tokio::spawn(async move {
            tokio::time::sleep(CANCEL_GRACE).await;
            if shared.protocol().current_turn() == Some(turn.as_str()) {
                tracing::warn!(
                    agent = agent::<L>(),
                    pid = signaller.pid(),
                    "the agent ignored the cancel; killing it"
                );
                signaller.kill();
            }
        });
        match sent {
            // The turn may have finished on its own meanwhile.
            Err(_) if self.shared.protocol().current_turn().is_none() => Ok(()),
            other => other.map(drop),
        }
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
        if !outgoing.is_empty() {
            self.live()?;
        }
        self.deliver(outgoing).await.map(drop)
    }

    async fn reply_question(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<(), AgentError> {
        let outgoing = self.shared.protocol().reply_question(question_id, answer)?;
        if !outgoing.is_empty() {
            self.live()?;
        }
        self.deliver(outgoing).await.map(drop)
    }

    async fn shutdown(&mut self) {
        self.stop(STOP_GRACE).await;
        self.shared.waiting.close();
    }
}

/// Reads stdout until the process ends, then reports the exit unless it was quiet.
async fn read_loop<P: LineProtocol>(
    lines: Lines<BufReader<ChildStdout>>,
    shared: Arc<Shared<P>>,
    writer: LineWriter,
    quiet: Arc<AtomicBool>,
    mut exit: watch::Receiver<Option<ExitInfo>>,
) {
    let mut lines = lines;
    while let Ok(Some(text)) = lines.next_line().await {
        if text.trim().is_empty() {
            continue;
        }
        shared.tap(Direction::FromAgent, &text);
        shared.line(Line::parse(text), &writer);
    }
    let info = wait_exit(&mut exit).await;
    shared.waiting.fail_waiting();
    let gone = Gone {
        why: format!("{} exited ({})", display_name(P::AGENT), info.describe()),
        exit: info,
    };
    let events = shared.protocol().gone(&gone);
    if !quiet.load(Ordering::SeqCst) {
        shared.emit(events);
    }
}

/// The name of `L`'s agent.
fn agent<L: ChildLaunch>() -> &'static str {
    display_name(<L::Protocol as LineProtocol>::AGENT)
}

fn exited(agent: &str, info: &ExitInfo, method: &str) -> AgentError {
    info.error(format!(
        "{agent} exited ({}) before answering `{method}`",
        info.describe()
    ))
}

/// How long a turn waits for an agent still setting up what the session asked for
/// ([`Protocol::ready_for_turn`]); then it goes ahead as the agent is.
const SETUP_WAIT: Duration = Duration::from_secs(60);

impl<L: ChildLaunch> ChildSession<L> {
    /// Waits (at most [`SETUP_WAIT`]) until the protocol says the agent has what a turn
    /// needs.
    async fn wait_until_ready(&self) {
        let deadline = tokio::time::Instant::now() + SETUP_WAIT;
        while !self.shared.protocol().ready_for_turn() {
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(
                    agent = agent::<L>(),
                    "the agent is still setting up after {SETUP_WAIT:?}; the turn goes ahead"
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}
