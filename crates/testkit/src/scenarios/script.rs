//! The one scenario script, the same for every agent: start a session through the daemon's
//! own driver (from [`sandbox_agents::AgentRegistry`], set up offline by
//! [`crate::offline::driver_context`]) with a tap that appends every native message to the
//! scenario's [`Transcript`](crate::drivers::Transcript), send the scenario's prompt
//! through the universal [`AgentSession`], react to the universal events the session emits
//! — cancel on the first `itemDelta`, answer each `permissionAsked` as the scenario says,
//! answer each `questionAsked` with [`choose`] — until the turn's `turnEnded`, and after a
//! cancel run one more turn. The agent's native protocol is the driver's business. Before
//! the session is shut down, the agent's last native messages are let in (a daemon
//! session would go on hearing them): OpenCode's `session.idle` comes after the
//! `session.status` idle that ends the turn.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_agents::kernel::Tap;
use sandbox_agents::{
    AgentEvent, AgentRegistry, AgentSession, EventConsumer, EventSink, QuestionAnswer,
};
use sandbox_universal::{AgentError, EventPayload, Question, StopReason};
use tokio::sync::mpsc;

use super::{Ctx, START_LIMIT, Spec, TURN_LIMIT};
use crate::offline;

/// The prompt of the turn that follows a cancelled one.
pub const AFTER_CANCEL: &str = "say hi";

/// How long the transcript must stay quiet before a finished session is shut down.
const QUIET: Duration = Duration::from_millis(300);
/// The longest wait for that quiet.
const SETTLE_LIMIT: Duration = Duration::from_secs(3);

/// Why driving a session failed.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// The driver or the session refused a step.
    #[error("{step}: {error}")]
    Agent {
        /// What was being done (`start`, `send_message`, `cancel`, ...).
        step: &'static str,
        /// The session's error.
        error: AgentError,
    },
    /// Nothing expected arrived in time.
    #[error("timed out after {:.1} s waiting for {what}", .after.as_secs_f64())]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long.
        after: Duration,
    },
}

/// The labels the script picks for a question: the second option, or the first two when
/// several may be chosen.
pub fn choose(question: &Question) -> Vec<String> {
    let labels = question.options.iter().map(|o| o.label.clone());
    if question.multi_select {
        labels.take(2).collect()
    } else {
        labels.skip(1).take(1).collect()
    }
}

/// An [`EventConsumer`] that keeps every event and hands each to the script as it comes.
struct Collector {
    all: Mutex<Vec<AgentEvent>>,
    next: mpsc::UnboundedSender<AgentEvent>,
    ids: AtomicU64,
}

impl EventConsumer for Collector {
    fn emit(&self, event: AgentEvent) {
        self.all
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(event.clone());
        let _ = self.next.send(event);
    }

    fn set_native_session_id(&self, _id: &str) {}

    fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}_{}", self.ids.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// A session's events, in order, as the script waits for them.
struct Events {
    collector: Arc<Collector>,
    next: mpsc::UnboundedReceiver<AgentEvent>,
}

impl Events {
    fn new() -> (Self, EventSink) {
        let (tx, next) = mpsc::unbounded_channel();
        let collector = Arc::new(Collector {
            all: Mutex::default(),
            next: tx,
            ids: AtomicU64::new(0),
        });
        let sink = EventSink::new(collector.clone());
        (Self { collector, next }, sink)
    }

    /// The next event, waiting until `deadline`.
    async fn next(
        &mut self,
        what: &str,
        deadline: Instant,
        limit: Duration,
    ) -> Result<AgentEvent, DriveError> {
        let timeout = || DriveError::Timeout {
            what: what.to_owned(),
            after: limit,
        };
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, self.next.recv()).await {
            Ok(Some(event)) => Ok(event),
            // The collector holds the sender: the channel never closes while we wait.
            Ok(None) | Err(_) => Err(timeout()),
        }
    }

    fn all(&self) -> Vec<AgentEvent> {
        self.collector
            .all
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn step(step: &'static str) -> impl FnOnce(AgentError) -> DriveError {
    move |error| DriveError::Agent { step, error }
}

/// Runs `spec` on `ctx`'s agent through the daemon's driver; returns every universal event
/// the session emitted (also when driving failed) and how driving ended.
pub(super) async fn drive(spec: &Spec, ctx: &Ctx) -> (Vec<AgentEvent>, Result<(), DriveError>) {
    let context = offline::driver_context(ctx.agent, &ctx.exe, &ctx.sandbox, &ctx.provider_url);
    let driver = AgentRegistry::new(Arc::new(context)).get(ctx.agent.agent_id());
    let tap = Tap::new(Arc::new(ctx.transcript.clone()));
    let config = offline::session_config(
        ctx.agent,
        &ctx.sandbox,
        spec.mode,
        ctx.model.clone(),
        Some(tap),
    );
    let (mut events, sink) = Events::new();
    let started = match tokio::time::timeout(START_LIMIT, driver.start(config, sink)).await {
        Ok(started) => started.map_err(step("start")),
        Err(_) => Err(DriveError::Timeout {
            what: "the session to start".into(),
            after: START_LIMIT,
        }),
    };
    let mut session = match started {
        Ok(session) => session,
        Err(error) => return (events.all(), Err(error)),
    };
    let mut driven = turn(&mut *session, &mut events, spec, "turn_1", spec.prompt).await;
    if driven.is_ok() && spec.cancel {
        driven = turn(&mut *session, &mut events, spec, "turn_2", AFTER_CANCEL).await;
    }
    if driven.is_ok() {
        settle(&ctx.transcript).await;
    }
    session.shutdown().await;
    (events.all(), driven.map(drop))
}

/// Waits until nothing was tapped for [`QUIET`] (at most [`SETTLE_LIMIT`]).
async fn settle(transcript: &crate::drivers::Transcript) {
    let deadline = Instant::now() + SETTLE_LIMIT;
    let mut seen = transcript.len();
    while Instant::now() < deadline {
        tokio::time::sleep(QUIET).await;
        let now = transcript.len();
        if now == seen {
            return;
        }
        seen = now;
    }
}

/// One turn: sends `prompt` and reacts to the session's events until the turn's
/// `turnEnded`; returns its stop reason.
async fn turn(
    session: &mut dyn AgentSession,
    events: &mut Events,
    spec: &Spec,
    turn_id: &str,
    prompt: &str,
) -> Result<StopReason, DriveError> {
    session
        .send_message(turn_id, &prompt.into())
        .await
        .map_err(step("send_message"))?;
    let deadline = Instant::now() + TURN_LIMIT;
    let mut cancel = spec.cancel && turn_id == "turn_1";
    loop {
        let event = events
            .next(&format!("the turnEnded of {turn_id}"), deadline, TURN_LIMIT)
            .await?;
        match &event.payload {
            EventPayload::ItemDelta(_) if cancel => {
                cancel = false;
                session.cancel().await.map_err(step("cancel"))?;
            }
            EventPayload::PermissionAsked(asked) => session
                .reply_permission(&asked.permission_id, spec.permission)
                .await
                .map_err(step("reply_permission"))?,
            EventPayload::QuestionAsked(asked) => {
                let answers = asked.questions.iter().map(choose).collect();
                session
                    .reply_question(&asked.question_id, QuestionAnswer::Answered(answers))
                    .await
                    .map_err(step("reply_question"))?;
            }
            EventPayload::TurnEnded(ended) if ended.turn_id == turn_id => {
                return Ok(ended.stop_reason);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandbox_universal::QuestionOption;

    #[test]
    fn choices() {
        let mut question = Question {
            question: "Q".into(),
            header: None,
            options: ["A", "B", "C"]
                .map(|label| QuestionOption {
                    label: label.into(),
                    description: None,
                })
                .to_vec(),
            multi_select: false,
            allow_custom: false,
        };
        assert_eq!(choose(&question), ["B"]);
        question.multi_select = true;
        assert_eq!(choose(&question), ["A", "B"]);
    }
}
