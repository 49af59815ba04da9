//! The session actor: one task per session that owns the agent session and carries out
//! the client's commands one at a time.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use sandbox_agents::{AgentSession, QuestionAnswer};
use sandbox_universal::{AgentError, PermissionReply, SessionEndReason, SessionEnded};
use tokio::sync::{mpsc, oneshot};

use super::SessionError;
use super::core::{CoreSignal, EventMeta, SessionCore};
use super::host_calls::DaemonAnswer;
use crate::store::StoreError;

/// A reply channel for a command's result.
pub type Respond<T> = oneshot::Sender<Result<T, SessionError>>;

/// What a client can ask of a session.
#[derive(Debug)]
pub enum Command {
    /// Start a turn with this message; answers the turn id.
    SendMessage {
        /// The user's message.
        message: super::message::Prepared,
        /// Where the result goes.
        respond: Respond<String>,
    },
    /// Cancel the running turn; answers its id.
    Cancel {
        /// Where the result goes.
        respond: Respond<String>,
    },
    /// Answer a permission request.
    ReplyPermission {
        /// The permission id.
        id: String,
        /// The answer.
        reply: PermissionReply,
        /// Where the result goes.
        respond: Respond<()>,
    },
    /// Answer or reject a question request.
    ReplyQuestion {
        /// The question id.
        id: String,
        /// The answer.
        answer: QuestionAnswer,
        /// Where the result goes.
        respond: Respond<()>,
    },
    /// Stop the agent and end the session.
    Shutdown {
        /// Where the result goes.
        respond: Respond<()>,
    },
    /// Stop the agent but keep the session for the next daemon start (daemon shutdown); a
    /// running turn ends with an error.
    Suspend {
        /// Where the result goes.
        respond: Respond<()>,
    },
}

/// The command channel of a running actor, `None` while the agent is stopped (idle, or
/// never started since the session was loaded). Commands are sent holding this lock, so an
/// actor that stops for idleness never leaves a command behind.
pub type ActorSlot = tokio::sync::Mutex<Option<mpsc::UnboundedSender<Command>>>;

/// Runs until the session ends (the client ends it, the agent ends it, or every handle is
/// dropped), another daemon takes it over, or the agent has been idle for `idle_timeout`:
/// then the agent is stopped and `slot` emptied, and the next command restores it.
pub async fn run_actor(
    core: Arc<SessionCore>,
    agent: Box<dyn AgentSession>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    mut signals: mpsc::UnboundedReceiver<CoreSignal>,
    slot: Arc<ActorSlot>,
    idle_timeout: Option<Duration>,
    after_turn: AfterTurn,
) {
    run_until_stopped(
        &core,
        agent,
        &mut commands,
        &mut signals,
        &slot,
        idle_timeout,
        &after_turn,
    )
    .await;
    after_turn.release().await;
}

/// What the actor does after each turn.
pub struct AfterTurn {
    /// Saves the agent's native state in a shared store.
    pub saver: Option<super::travel::NativeSaver>,
    /// Gives back what the agent refreshed of the stored login it was seeded with.
    pub login: Option<LoginKeeper>,
    /// Looks at the workspace as each turn starts and ends (what the turn changed).
    pub changes: Option<Arc<crate::changes::ChangeTracker>>,
}

impl AfterTurn {
    /// The agent process is gone: what it refreshed of its login goes back to the store,
    /// and its copy goes (again harmless).
    async fn release(&self) {
        if let Some(keeper) = &self.login {
            keeper.credentials.finish(&keeper.login).await;
        }
    }
}

/// A stored login seeded into the agent's home, and where to give its refreshes back.
pub struct LoginKeeper {
    /// The seeded login.
    pub login: Arc<sandbox_agents::login::SeededLogin>,
    /// The daemon's credentials.
    pub credentials: Arc<crate::credentials::Credentials>,
}

async fn run_until_stopped(
    core: &Arc<SessionCore>,
    mut agent: Box<dyn AgentSession>,
    commands: &mut mpsc::UnboundedReceiver<Command>,
    signals: &mut mpsc::UnboundedReceiver<CoreSignal>,
    slot: &Arc<ActorSlot>,
    idle_timeout: Option<Duration>,
    after_turn: &AfterTurn,
) {
    loop {
        let idle_check = async {
            match idle_timeout {
                Some(timeout) => tokio::time::sleep_until(core.quiet_since() + timeout).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            command = commands.recv() => {
                let Some(command) = command else {
                    terminate(core, agent.as_mut()).await;
                    return;
                };
                if handle(core, agent.as_mut(), command, after_turn).await.is_break() {
                    return;
                }
            }
            Some(signal) = signals.recv() => match signal {
                CoreSignal::AutoReply(id, reply) => {
                    if let Err(error) = agent.reply_permission(&id, reply).await {
                        core.record_error(error);
                    }
                }
                CoreSignal::EndTurn(turn) => {
                    if core.running_turn().is_ok_and(|running| running == turn) {
                        core.interrupt();
                        if let Err(error) = agent.cancel().await {
                            core.record_error(error);
                        }
                    }
                }
                CoreSignal::AgentEnded => {
                    core.interrupt();
                    agent.shutdown().await;
                    return;
                }
                CoreSignal::TurnEnding(turn) => {
                    let counts = match &after_turn.changes {
                        Some(tracker) => tracker
                            .end(&turn)
                            .await
                            .inspect_err(|error| {
                                tracing::warn!(session = %core.session_id(), turn, %error, "what the turn changed is not known");
                            })
                            .ok(),
                        None => None,
                    };
                    core.finish_turn(&turn, counts);
                }
                CoreSignal::TurnEnded => {
                    if let Some(saver) = &after_turn.saver {
                        saver.save(core).await;
                    }
                    if let Some(keeper) = &after_turn.login {
                        keeper.credentials.give_back(&keeper.login).await;
                    }
                }
                CoreSignal::Stop => {
                    let mut slot = slot.lock().await;
                    core.interrupt();
                    agent.shutdown().await;
                    *slot = None;
                    return;
                }
            },
            () = idle_check => {
                let Some(timeout) = idle_timeout else { continue };
                if !core.is_quiet() || core.quiet_since().elapsed() < timeout {
                    continue;
                }
                let mut slot = slot.lock().await;
                if !commands.is_empty() {
                    continue;
                }
                tracing::debug!(session = %core.session_id(), "stopping an idle agent");
                agent.shutdown().await;
                *slot = None;
                return;
            }
        }
    }
}

async fn terminate(core: &SessionCore, agent: &mut dyn AgentSession) {
    core.interrupt();
    agent.shutdown().await;
    core.end(
        SessionEnded {
            reason: SessionEndReason::Terminated,
            exit_code: None,
            stderr_tail: None,
        },
        EventMeta::daemon(false),
    );
}

/// Waits until the reply logged at `sequence` is durable before the agent acts on it. A
/// store outage does not stop the turn (the writer stores it later, the session's `error`
/// event says why it waits); a session another daemon took over does.
async fn settle(core: &SessionCore, sequence: u64) -> Result<(), SessionError> {
    match core.log().wait_durable(sequence).await {
        Ok(()) => Ok(()),
        Err(error @ StoreError::OwnedElsewhere(_)) => Err(error.into()),
        Err(error) => {
            tracing::debug!(session = %core.session_id(), %error, "acting on a reply not yet durable");
            Ok(())
        }
    }
}

/// Carries out one command; breaks when the session is over.
async fn handle(
    core: &SessionCore,
    agent: &mut dyn AgentSession,
    command: Command,
    after_turn: &AfterTurn,
) -> ControlFlow<()> {
    match command {
        Command::SendMessage { message, respond } => {
            let result = async {
                let turn_id = core.begin_turn(message.logged, message.trace)?;
                // The agent acts on a message only once it is durable: a message it acted
                // on is never lost, nor acted on by two daemons.
                if let Err(error) = core.log().flush().await {
                    core.fail_turn(&turn_id);
                    return Err(SessionError::from(error));
                }
                // The workspace as the turn starts, before the agent can change it.
                if let Some(tracker) = &after_turn.changes
                    && let Err(error) = tracker.begin(&turn_id).await
                {
                    tracing::warn!(session = %core.session_id(), turn = turn_id, %error, "what the turn changes will not be known");
                }
                if let Err(error) = agent.send_message(&turn_id, &message.message).await {
                    core.record_error(error.clone());
                    core.fail_turn(&turn_id);
                    return Err(SessionError::AgentCommand(error));
                }
                Ok(turn_id)
            }
            .await;
            let _ = respond.send(result);
        }
        Command::Cancel { respond } => {
            let result = async {
                let turn_id = core.running_turn()?;
                core.interrupt();
                agent.cancel().await.map_err(SessionError::AgentCommand)?;
                Ok(turn_id)
            }
            .await;
            let _ = respond.send(result);
        }
        Command::ReplyPermission { id, reply, respond } => {
            let result = async {
                let logged = core.resolve_permission(&id, reply)?;
                settle(core, logged).await?;
                if core.deliver(&id, DaemonAnswer::Permission(reply)) {
                    return Ok(());
                }
                agent
                    .reply_permission(&id, reply)
                    .await
                    .inspect_err(|error| record_reply_error(core, error))
                    .map_err(SessionError::AgentCommand)
            }
            .await;
            let _ = respond.send(result);
        }
        Command::ReplyQuestion {
            id,
            answer,
            respond,
        } => {
            let result = async {
                let answers = match &answer {
                    QuestionAnswer::Answered(answers) => Some(answers.as_slice()),
                    QuestionAnswer::Rejected => None,
                };
                let logged = core.resolve_question(&id, answers)?;
                settle(core, logged).await?;
                if core.deliver(&id, DaemonAnswer::Question(answers.map(<[_]>::to_vec))) {
                    return Ok(());
                }
                agent
                    .reply_question(&id, answer)
                    .await
                    .inspect_err(|error| record_reply_error(core, error))
                    .map_err(SessionError::AgentCommand)
            }
            .await;
            let _ = respond.send(result);
        }
        Command::Shutdown { respond } => {
            terminate(core, agent).await;
            after_turn.release().await;
            let _ = respond.send(Ok(()));
            return ControlFlow::Break(());
        }
        Command::Suspend { respond } => {
            if core.running_turn().is_ok() {
                core.record_error(AgentError::ProcessExited {
                    message: "the daemon is shutting down; the running turn is interrupted".into(),
                    exit_code: None,
                    signal: None,
                    stderr_tail: None,
                });
            }
            core.interrupt();
            agent.shutdown().await;
            core.fail_running_turn();
            after_turn.release().await;
            let _ = respond.send(Ok(()));
            return ControlFlow::Break(());
        }
    }
    ControlFlow::Continue(())
}

/// An answer the agent failed to take is an `error` event, unless the agent simply no
/// longer had the request (the client is told with a 409; the log has nothing to add).
fn record_reply_error(core: &SessionCore, error: &AgentError) {
    if !matches!(error, AgentError::RequestGone { .. }) {
        core.record_error(error.clone());
    }
}
