//! A session's state and log, updated atomically with every event.
//!
//! [`SessionCore`] is what drivers write to (it implements [`EventConsumer`]) and what the
//! session actor and routes read. Every event passes through one mutex: the event gets the
//! next sequence, the reducer ([`CoreState::apply`]) updates the state, and the log takes
//! the event, so state and log never disagree. The lifecycle rules (what the daemon closes
//! itself) are in `lifecycle.rs`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use chrono::{SubsecRound, Utc};
use sandbox_agents::EventConsumer;
use sandbox_universal::{
    ContentPart, EventPayload, EventSource, Item, ItemEvent, ItemKind, ItemRole, ItemStatus,
    PermissionReply, PermissionRequest, PermissionResolved, QuestionOutcome, QuestionRequest,
    QuestionResolved, SessionEndReason, SessionStatus, ToolName, TurnEnded, TurnStarted,
    UniversalEvent,
};
use tokio::sync::mpsc;

use super::SessionError;
use super::answers::validate_answers;
use super::state::CoreState;
use crate::log::SessionLog;
use crate::telemetry::{EventObserver, TraceParent};

mod agent_events;

/// A state snapshot is stored at least every this many events, so reopening a session
/// replays few events whatever its history.
const SNAPSHOT_EVERY: u64 = 4096;

/// What the core asks of the session actor on its own initiative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreSignal {
    /// Answer a permission request the daemon answered itself: `always` for a scope
    /// approved earlier, `reject` for a tool the session's `tools` refuse, `once` for a
    /// tool of the daemon's host tool server (whose tools ask by themselves where they
    /// need approval).
    AutoReply(String, PermissionReply),
    /// End this turn: a host tool with `endsTurn` returned (`stopReason: toolStop`).
    EndTurn(String),
    /// The agent ended the session by itself; release its resources.
    AgentEnded,
    /// Another daemon took the session over: stop the agent without ending the session.
    Stop,
    /// A turn ended (the agent's native state may be saved for other daemons).
    TurnEnded,
    /// The agent ended this turn: look at the workspace, then `finish_turn`.
    TurnEnding(String),
}

/// A snapshot of the session's state.
#[derive(Debug, Clone)]
pub struct CoreSnapshot {
    /// Idle, running or ended.
    pub status: SessionStatus,
    /// The running turn.
    pub current_turn: Option<String>,
    /// The agent's session id.
    pub native_session_id: Option<String>,
    /// Waiting permission requests.
    pub pending_permissions: Vec<PermissionRequest>,
    /// Waiting question requests.
    pub pending_questions: Vec<QuestionRequest>,
    /// Host tool calls waiting for the client.
    pub pending_tool_calls: Vec<sandbox_universal::ToolCallRequest>,
    /// Why it ended.
    pub end_reason: Option<SessionEndReason>,
    /// Number of events.
    pub event_count: u64,
}

impl CoreSnapshot {
    pub(crate) fn of(state: &CoreState) -> Self {
        Self {
            status: state.status(),
            current_turn: state.current_turn.clone(),
            native_session_id: state.native_session_id.clone(),
            pending_permissions: state.pending_permissions.clone(),
            pending_questions: state.pending_questions.clone(),
            pending_tool_calls: state.pending_tool_calls.clone(),
            end_reason: state.end_reason,
            event_count: state.sequence,
        }
    }
}

/// The state under the core's lock.
#[derive(Debug)]
pub(super) struct Live {
    pub(super) state: CoreState,
    /// Items the daemon failed itself; the agent's late events for them are dropped.
    pub(super) force_closed: HashSet<String>,
    since_snapshot: u64,
    /// When the last event was logged (or the core was made).
    last_event: tokio::time::Instant,
    /// The agent's end of the running turn, held while the workspace is looked at.
    pub(super) ending: Option<(TurnEnded, EventMeta)>,
}

/// One session's log plus the state derived from it.
pub struct SessionCore {
    pub(super) session_id: String,
    log: Arc<SessionLog>,
    live: Mutex<Live>,
    ids: AtomicU64,
    /// Set while the running turn is being cancelled or the agent stopped, and once the
    /// session has ended: the agent's
    /// events then skip the store's back-pressure (up to its hard limit), so the agent
    /// reaches its end even while the store cannot write. Cleared when a turn begins.
    interrupted: AtomicBool,
    /// The running actor's signal channel (replaced when the agent is restored).
    signals: Mutex<Option<mpsc::UnboundedSender<CoreSignal>>>,
    /// The tools the session's policy takes away and the agent cannot: the daemon rejects
    /// their permission requests itself (set when the agent starts).
    refused: Mutex<Vec<ToolName>>,
    /// The requests the daemon asked itself (host tools) and waits for.
    pub(super) waiters: super::host_calls::Waiters,
    /// Whether the agent's turn ends wait for a look at the workspace (changes tracked).
    pub(super) defer_turn_ends: AtomicBool,
    /// What watches every event logged (the session's trace spans), when telemetry is on.
    observer: OnceLock<Box<dyn EventObserver>>,
}

impl SessionCore {
    /// A core over `log`, whose events `state` reflects (the default state for a new
    /// session). New ids continue past every id in the log.
    pub(crate) fn new(session_id: &str, log: Arc<SessionLog>, state: CoreState) -> Arc<Self> {
        let core = Arc::new(Self {
            session_id: session_id.to_string(),
            ids: AtomicU64::new(state.max_id),
            interrupted: AtomicBool::new(false),
            log,
            live: Mutex::new(Live {
                state,
                force_closed: HashSet::new(),
                since_snapshot: 0,
                last_event: tokio::time::Instant::now(),
                ending: None,
            }),
            signals: Mutex::new(None),
            refused: Mutex::new(Vec::new()),
            waiters: Default::default(),
            defer_turn_ends: AtomicBool::new(false),
            observer: OnceLock::new(),
        });
        let hooks: Arc<dyn crate::log::LogHooks> = core.clone();
        core.log.set_hooks(Arc::downgrade(&hooks));
        core
    }

    /// Marks the running turn as being cancelled, or the agent as being stopped, before the
    /// agent is told: an agent waiting for the store to take its events goes on, so it can
    /// stop even while the store cannot write (what it still emits is written when the
    /// store recovers).
    pub fn interrupt(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        self.log.store().wake_producers();
    }

    /// The tools whose permission requests the daemon rejects itself.
    pub fn refuse_tools(&self, tools: Vec<ToolName>) {
        *self.refused.lock().expect("refused lock") = tools;
    }

    /// Whether the session's policy refuses what `request` asks.
    fn refuses(&self, request: &PermissionRequest) -> bool {
        let refused = self.refused.lock().expect("refused lock");
        !refused.is_empty()
            && sandbox_universal::permission_tools(request.kind)
                .iter()
                .any(|tool| refused.contains(tool))
    }

    /// Hands every event logged from now on to `observer` too (once; set before the
    /// first event).
    pub fn observe_with(&self, observer: Box<dyn EventObserver>) {
        let _ = self.observer.set(observer);
    }

    /// Connects the core to its (new) actor.
    pub fn connect_actor(&self, signals: mpsc::UnboundedSender<CoreSignal>) {
        *self.signals.lock().expect("signals lock") = Some(signals);
    }

    /// The session's log.
    pub fn log(&self) -> &Arc<SessionLog> {
        &self.log
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The current state.
    pub fn snapshot(&self) -> CoreSnapshot {
        CoreSnapshot::of(&self.lock().state)
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().expect("session state lock")
    }

    pub(super) fn signal(&self, signal: CoreSignal) {
        if let Some(tx) = self.signals.lock().expect("signals lock").as_ref() {
            let _ = tx.send(signal);
        }
    }

    /// Logs a permission request the daemon answers itself as resolved automatically
    /// (the request carried in the resolution); answers its id.
    pub(super) fn answer_itself(
        &self,
        live: &mut Live,
        request: PermissionRequest,
        reply: PermissionReply,
        raw: Option<serde_json::Value>,
    ) -> String {
        let id = request.permission_id.clone();
        self.append(
            live,
            EventPayload::PermissionResolved(PermissionResolved {
                permission_id: id.clone(),
                outcome: reply.into(),
                automatic: true,
                request: Some(request),
            }),
            EventMeta {
                source: EventSource::Daemon,
                synthetic: true,
                raw,
            },
        );
        id
    }

    /// Logs one event: the next sequence, the reducer, the log, and a state snapshot when
    /// the state changed.
    pub(super) fn append(&self, live: &mut Live, payload: EventPayload, meta: EventMeta) {
        let event = UniversalEvent {
            sequence: live.state.sequence + 1,
            // To the µs, as stored: a session's `updatedAt` is exactly its last event's time.
            time: Utc::now().trunc_subsecs(6),
            session_id: self.session_id.clone(),
            native_session_id: live.state.native_session_id.clone(),
            source: meta.source,
            synthetic: meta.synthetic,
            payload,
            raw: meta.raw,
        };
        let changed = live.state.apply(&event);
        if let Some(observer) = self.observer.get() {
            observer.observe(&event);
        }
        self.log.append(event);
        live.last_event = tokio::time::Instant::now();
        live.since_snapshot += 1;
        if changed || live.since_snapshot >= SNAPSHOT_EVERY {
            self.save_state(live);
        }
    }

    pub(super) fn save_state(&self, live: &mut Live) {
        live.since_snapshot = 0;
        self.log.save_state(live.state.snapshot());
    }

    /// Starts a turn for a user message: checks the session can take it, marks it running
    /// and logs `turnStarted` and the user's message item. Returns the turn id (its events
    /// are the last ones logged). `parent` is the caller's trace context, which this
    /// turn's span (and no other) continues.
    pub fn begin_turn(
        &self,
        message: Vec<ContentPart>,
        parent: Option<TraceParent>,
    ) -> Result<String, SessionError> {
        let mut live = self.lock();
        match (live.state.status(), &live.state.current_turn) {
            (SessionStatus::Ended, _) => {
                return Err(SessionError::Ended(self.session_id.clone()));
            }
            (_, Some(turn)) => {
                return Err(SessionError::TurnRunning {
                    session: self.session_id.clone(),
                    turn: turn.clone(),
                });
            }
            _ => {}
        }
        live.force_closed.clear();
        self.clear_tool_stop();
        self.interrupted.store(false, Ordering::SeqCst);
        let turn_id = format!("turn_{}", live.state.turn_counter + 1);
        // Under the lock, right before its `turnStarted`: no other turn can take it.
        if let (Some(observer), Some(parent)) = (self.observer.get(), parent) {
            observer.parent_turn(&turn_id, parent);
        }
        let daemon = EventMeta::daemon(true);
        self.append(
            &mut live,
            EventPayload::TurnStarted(TurnStarted {
                turn_id: turn_id.clone(),
            }),
            daemon.clone(),
        );
        let item = Item::new(
            self.next_id("itm"),
            ItemKind::Message,
            ItemStatus::Completed,
        )
        .with_role(ItemRole::User);
        let item = Item {
            content: message,
            ..item
        };
        let started = Item {
            status: ItemStatus::InProgress,
            ..item.clone()
        };
        self.append(
            &mut live,
            EventPayload::ItemStarted(ItemEvent { item: started }),
            daemon.clone(),
        );
        self.append(
            &mut live,
            EventPayload::ItemCompleted(ItemEvent { item }),
            daemon,
        );
        Ok(turn_id)
    }

    /// The running turn, or an error saying why there is none.
    pub fn running_turn(&self) -> Result<String, SessionError> {
        let live = self.lock();
        if live.state.status() == SessionStatus::Ended {
            return Err(SessionError::Ended(self.session_id.clone()));
        }
        // A turn the agent has ended (its end awaits the look at the workspace) is over.
        live.state
            .current_turn
            .clone()
            .filter(|_| live.ending.is_none())
            .ok_or_else(|| SessionError::NotRunning(self.session_id.clone()))
    }

    /// Fails if the session has ended.
    pub fn ensure_open(&self) -> Result<(), SessionError> {
        if self.is_ended() {
            return Err(SessionError::Ended(self.session_id.clone()));
        }
        Ok(())
    }

    /// Whether a turn ever started.
    pub fn has_turns(&self) -> bool {
        self.lock().state.turn_counter > 0
    }

    /// Whether the session has ended.
    pub fn is_ended(&self) -> bool {
        self.lock().state.status() == SessionStatus::Ended
    }

    /// Whether nothing is running or waiting (no turn, no open item, no pending request).
    pub fn is_quiet(&self) -> bool {
        !self.lock().state.has_open_work()
    }

    /// When the last event was logged: with [`SessionCore::is_quiet`], how long the agent
    /// has been idle.
    pub fn quiet_since(&self) -> tokio::time::Instant {
        self.lock().last_event
    }

    /// Records the client's answer to a pending permission request and logs
    /// `permissionResolved`; answers its sequence.
    pub fn resolve_permission(
        &self,
        id: &str,
        reply: PermissionReply,
    ) -> Result<u64, SessionError> {
        let mut live = self.lock();
        let state = &live.state;
        if state.status() == SessionStatus::Ended {
            return Err(SessionError::Ended(self.session_id.clone()));
        }
        if !state
            .pending_permissions
            .iter()
            .any(|p| p.permission_id == id)
        {
            return Err(if state.resolved_permissions.contains(id) {
                SessionError::PermissionAnswered(id.to_string())
            } else {
                SessionError::PermissionNotFound {
                    session: self.session_id.clone(),
                    id: id.to_string(),
                }
            });
        }
        self.append(
            &mut live,
            EventPayload::PermissionResolved(PermissionResolved {
                permission_id: id.to_string(),
                outcome: reply.into(),
                automatic: false,
                request: None,
            }),
            EventMeta::daemon(false),
        );
        Ok(live.state.sequence)
    }

    /// Records the client's answer (or rejection) of a pending question request and logs
    /// `questionResolved`; answers its sequence. Answers must fit the questions.
    pub fn resolve_question(
        &self,
        id: &str,
        answers: Option<&[Vec<String>]>,
    ) -> Result<u64, SessionError> {
        let mut live = self.lock();
        let state = &live.state;
        if state.status() == SessionStatus::Ended {
            return Err(SessionError::Ended(self.session_id.clone()));
        }
        let Some(request) = state.pending_questions.iter().find(|q| q.question_id == id) else {
            return Err(if state.resolved_questions.contains(id) {
                SessionError::QuestionAnswered(id.to_string())
            } else {
                SessionError::QuestionNotFound {
                    session: self.session_id.clone(),
                    id: id.to_string(),
                }
            });
        };
        if let Some(answers) = answers {
            validate_answers(request, answers)?;
        }
        self.append(
            &mut live,
            EventPayload::QuestionResolved(QuestionResolved {
                question_id: id.to_string(),
                outcome: if answers.is_some() {
                    QuestionOutcome::Answered
                } else {
                    QuestionOutcome::Rejected
                },
                answers: answers.map(<[Vec<String>]>::to_vec),
            }),
            EventMeta::daemon(false),
        );
        Ok(live.state.sequence)
    }

    /// Logs an error the daemon met while talking to the agent.
    pub fn record_error(&self, error: sandbox_universal::AgentError) {
        let mut live = self.lock();
        if live.state.status() == SessionStatus::Ended {
            return;
        }
        self.append(
            &mut live,
            EventPayload::Error(error),
            EventMeta::daemon(false),
        );
    }
}

/// Who produced an event and whether it is synthetic, plus its raw native JSON.
#[derive(Debug, Clone)]
pub struct EventMeta {
    source: EventSource,
    synthetic: bool,
    raw: Option<serde_json::Value>,
}

impl EventMeta {
    /// An event of the daemon's own.
    pub fn daemon(synthetic: bool) -> Self {
        Self {
            source: EventSource::Daemon,
            synthetic,
            raw: None,
        }
    }
}
