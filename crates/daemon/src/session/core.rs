//! A session's state and log, updated atomically with every event.
//!
//! [`SessionCore`] is what drivers write to (it implements [`EventConsumer`]) and what the
//! session actor and routes read. Every event passes through one mutex so the state
//! (running turn, pending permissions and questions, `always` scopes) always matches the
//! log.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use chrono::Utc;
use sandbox_agents::{AgentEvent, EventConsumer};
use sandbox_universal::{
    ContentPart, EventPayload, EventSource, Item, ItemEvent, ItemKind, ItemRole, ItemStatus,
    PermissionOutcome, PermissionReply, PermissionRequest, PermissionResolved, QuestionOutcome,
    QuestionRequest, QuestionResolved, SessionEndReason, SessionEnded, SessionStatus, StopReason,
    TurnEnded, TurnStarted, UniversalEvent,
};
use tokio::sync::mpsc;

use super::state::CoreState;
use crate::error::ApiError;
use crate::log::EventLog;

/// What the core asks of the session actor on its own initiative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreSignal {
    /// Answer a permission request the daemon approved because of an earlier `always`.
    AutoApprove(String),
    /// The agent ended the session by itself; release its resources.
    AgentEnded,
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
    /// Why it ended.
    pub end_reason: Option<SessionEndReason>,
    /// Number of events.
    pub event_count: u64,
}

/// One session's log plus the state derived from it.
pub struct SessionCore {
    session_id: String,
    log: Arc<dyn EventLog>,
    state: Mutex<CoreState>,
    ids: AtomicU64,
    signals: OnceLock<mpsc::UnboundedSender<CoreSignal>>,
}

impl SessionCore {
    /// A new, idle session core over `log`.
    pub fn new(session_id: impl Into<String>, log: Arc<dyn EventLog>) -> Self {
        Self {
            session_id: session_id.into(),
            log,
            state: Mutex::new(CoreState::default()),
            ids: AtomicU64::new(0),
            signals: OnceLock::new(),
        }
    }

    /// A core over a log that already holds a session's history (after a daemon restart):
    /// the state is rebuilt by replaying the log, and the id counter continues past every
    /// id in it.
    pub fn restore(session_id: impl Into<String>, log: Arc<dyn EventLog>) -> Self {
        let events: Vec<_> = log.read(0, usize::MAX);
        let (state, max_id) = CoreState::replay(events.iter().map(|e| &e.event));
        Self {
            session_id: session_id.into(),
            log,
            state: Mutex::new(state),
            ids: AtomicU64::new(max_id),
            signals: OnceLock::new(),
        }
    }

    /// Ends whatever turn is running with stop reason `error` (the daemon stopped or
    /// restarted mid-turn). Returns whether a turn was running.
    pub fn fail_running_turn(&self) -> bool {
        let mut state = self.lock();
        let Some(turn_id) = state.current_turn.clone() else {
            return false;
        };
        self.end_turn(
            &mut state,
            TurnEnded {
                turn_id,
                stop_reason: StopReason::Error,
                usage: None,
            },
            EventMeta::daemon(true),
        );
        true
    }

    /// Connects the core to its actor.
    pub fn connect_actor(&self, signals: mpsc::UnboundedSender<CoreSignal>) {
        let _ = self.signals.set(signals);
    }

    /// The session's log.
    pub fn log(&self) -> &Arc<dyn EventLog> {
        &self.log
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The current state.
    pub fn snapshot(&self) -> CoreSnapshot {
        let state = self.lock();
        CoreSnapshot {
            status: state.status.unwrap_or(SessionStatus::Idle),
            current_turn: state.current_turn.clone(),
            native_session_id: state.native_session_id.clone(),
            pending_permissions: state.pending_permissions.clone(),
            pending_questions: state.pending_questions.clone(),
            end_reason: state.end_reason,
            event_count: self.log.last_sequence(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CoreState> {
        self.state.lock().expect("session state lock")
    }

    fn signal(&self, signal: CoreSignal) {
        if let Some(tx) = self.signals.get() {
            let _ = tx.send(signal);
        }
    }

    fn append(&self, state: &CoreState, payload: EventPayload, event: EventMeta) {
        self.log.append(UniversalEvent {
            sequence: 0,
            time: Utc::now(),
            session_id: self.session_id.clone(),
            native_session_id: state.native_session_id.clone(),
            source: event.source,
            synthetic: event.synthetic,
            payload,
            raw: event.raw,
        });
    }

    /// Starts a turn for a user message: checks the session can take it, marks it running
    /// and logs `turnStarted` and the user's message item. Returns the turn id.
    pub fn begin_turn(&self, message: &str) -> Result<String, ApiError> {
        let mut state = self.lock();
        match (state.status, &state.current_turn) {
            (Some(SessionStatus::Ended), _) => {
                return Err(ApiError::SessionEnded(self.session_id.clone()));
            }
            (_, Some(turn)) => {
                return Err(ApiError::TurnInProgress {
                    session: self.session_id.clone(),
                    turn: turn.clone(),
                });
            }
            _ => {}
        }
        state.turn_counter += 1;
        let turn_id = format!("turn_{}", state.turn_counter);
        state.status = Some(SessionStatus::Running);
        state.current_turn = Some(turn_id.clone());
        let daemon = EventMeta::daemon(true);
        self.append(
            &state,
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
        .with_role(ItemRole::User)
        .with_content(ContentPart::Text {
            text: message.to_string(),
        });
        let started = Item {
            status: ItemStatus::InProgress,
            ..item.clone()
        };
        self.append(
            &state,
            EventPayload::ItemStarted(ItemEvent { item: started }),
            daemon.clone(),
        );
        self.append(
            &state,
            EventPayload::ItemCompleted(ItemEvent { item }),
            daemon,
        );
        Ok(turn_id)
    }

    /// The running turn, or an error saying why there is none.
    pub fn running_turn(&self) -> Result<String, ApiError> {
        let state = self.lock();
        if state.status == Some(SessionStatus::Ended) {
            return Err(ApiError::SessionEnded(self.session_id.clone()));
        }
        state
            .current_turn
            .clone()
            .ok_or_else(|| ApiError::NoActiveTurn(self.session_id.clone()))
    }

    /// Fails if the session has ended.
    pub fn ensure_open(&self) -> Result<(), ApiError> {
        if self.lock().status == Some(SessionStatus::Ended) {
            return Err(ApiError::SessionEnded(self.session_id.clone()));
        }
        Ok(())
    }

    /// Records the client's answer to a pending permission request and logs
    /// `permissionResolved`.
    pub fn resolve_permission(&self, id: &str, reply: PermissionReply) -> Result<(), ApiError> {
        let mut state = self.lock();
        if state.status == Some(SessionStatus::Ended) {
            return Err(ApiError::SessionEnded(self.session_id.clone()));
        }
        let Some(index) = state
            .pending_permissions
            .iter()
            .position(|p| p.permission_id == id)
        else {
            return Err(if state.resolved_permissions.contains(id) {
                ApiError::PermissionResolved(id.to_string())
            } else {
                ApiError::PermissionNotFound {
                    session: self.session_id.clone(),
                    id: id.to_string(),
                }
            });
        };
        let request = state.pending_permissions.remove(index);
        state.resolved_permissions.insert(id.to_string());
        if reply == PermissionReply::Always
            && let Some(scope) = &request.always_scope
        {
            state.always_scopes.insert(scope.clone());
        }
        self.append(
            &state,
            EventPayload::PermissionResolved(PermissionResolved {
                permission_id: id.to_string(),
                outcome: reply.into(),
                automatic: false,
                request: None,
            }),
            EventMeta::daemon(false),
        );
        Ok(())
    }

    /// Records the client's answer (or rejection) of a pending question request and logs
    /// `questionResolved`. Answers must fit the questions.
    pub fn resolve_question(
        &self,
        id: &str,
        answers: Option<&[Vec<String>]>,
    ) -> Result<(), ApiError> {
        let mut state = self.lock();
        if state.status == Some(SessionStatus::Ended) {
            return Err(ApiError::SessionEnded(self.session_id.clone()));
        }
        let Some(index) = state
            .pending_questions
            .iter()
            .position(|q| q.question_id == id)
        else {
            return Err(if state.resolved_questions.contains(id) {
                ApiError::QuestionResolved(id.to_string())
            } else {
                ApiError::QuestionNotFound {
                    session: self.session_id.clone(),
                    id: id.to_string(),
                }
            });
        };
        if let Some(answers) = answers {
            validate_answers(&state.pending_questions[index], answers)?;
        }
        state.pending_questions.remove(index);
        state.resolved_questions.insert(id.to_string());
        self.append(
            &state,
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
        Ok(())
    }

    /// Logs an error the daemon met while talking to the agent.
    pub fn record_error(&self, error: sandbox_universal::AgentError) {
        let state = self.lock();
        if state.status == Some(SessionStatus::Ended) {
            return;
        }
        self.append(&state, EventPayload::Error(error), EventMeta::daemon(false));
    }

    /// Ends the running turn with an error when the agent could not take the message.
    pub fn fail_turn(&self, turn_id: &str) {
        let mut state = self.lock();
        if state.current_turn.as_deref() == Some(turn_id) {
            self.end_turn(
                &mut state,
                TurnEnded {
                    turn_id: turn_id.to_string(),
                    stop_reason: StopReason::Error,
                    usage: None,
                },
                EventMeta::daemon(true),
            );
        }
    }

    /// Ends the session (idempotent): closes a running turn and logs `sessionEnded`.
    /// Returns false when it had already ended.
    pub fn end(&self, ended: SessionEnded, meta: EventMeta) -> bool {
        let mut state = self.lock();
        self.end_locked(&mut state, ended, meta)
    }

    fn end_locked(&self, state: &mut CoreState, ended: SessionEnded, meta: EventMeta) -> bool {
        if state.status == Some(SessionStatus::Ended) {
            return false;
        }
        if let Some(turn_id) = state.current_turn.clone() {
            self.end_turn(
                state,
                TurnEnded {
                    turn_id,
                    stop_reason: match ended.reason {
                        SessionEndReason::Terminated => StopReason::Cancelled,
                        _ => StopReason::Error,
                    },
                    usage: None,
                },
                EventMeta::daemon(true),
            );
        }
        state.status = Some(SessionStatus::Ended);
        state.end_reason = Some(ended.reason);
        self.append(state, EventPayload::SessionEnded(ended), meta);
        true
    }

    /// Cancels pending HITL requests, logs `turnEnded` and marks the session idle.
    fn end_turn(&self, state: &mut CoreState, ended: TurnEnded, meta: EventMeta) {
        for request in std::mem::take(&mut state.pending_permissions) {
            state
                .resolved_permissions
                .insert(request.permission_id.clone());
            self.append(
                state,
                EventPayload::PermissionResolved(PermissionResolved {
                    permission_id: request.permission_id,
                    outcome: PermissionOutcome::Cancelled,
                    automatic: false,
                    request: None,
                }),
                EventMeta::daemon(true),
            );
        }
        for request in std::mem::take(&mut state.pending_questions) {
            state.resolved_questions.insert(request.question_id.clone());
            self.append(
                state,
                EventPayload::QuestionResolved(QuestionResolved {
                    question_id: request.question_id,
                    outcome: QuestionOutcome::Cancelled,
                    answers: None,
                }),
                EventMeta::daemon(true),
            );
        }
        state.current_turn = None;
        if state.status != Some(SessionStatus::Ended) {
            state.status = Some(SessionStatus::Idle);
        }
        self.append(state, EventPayload::TurnEnded(ended), meta);
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

fn validate_answers(request: &QuestionRequest, answers: &[Vec<String>]) -> Result<(), ApiError> {
    if answers.len() != request.questions.len() {
        return Err(ApiError::InvalidAnswers(format!(
            "question request `{}` has {} question(s) but {} answer array(s) were sent",
            request.question_id,
            request.questions.len(),
            answers.len()
        )));
    }
    for (index, (question, selected)) in request.questions.iter().zip(answers).enumerate() {
        if !question.multi_select && selected.len() > 1 {
            return Err(ApiError::InvalidAnswers(format!(
                "question {index} (`{}`) takes one answer, got {}",
                question.question,
                selected.len()
            )));
        }
        if question.allow_custom || question.options.is_empty() {
            continue;
        }
        if let Some(unknown) = selected
            .iter()
            .find(|label| !question.options.iter().any(|o| &o.label == *label))
        {
            let labels: Vec<&str> = question.options.iter().map(|o| o.label.as_str()).collect();
            return Err(ApiError::InvalidAnswers(format!(
                "`{unknown}` is not an option of question {index} (`{}`); options: {}",
                question.question,
                labels.join(", ")
            )));
        }
    }
    Ok(())
}

impl EventConsumer for SessionCore {
    fn emit(&self, event: AgentEvent) {
        let meta = EventMeta {
            source: event.source,
            synthetic: event.synthetic,
            raw: event.raw,
        };
        let mut state = self.lock();
        if state.status == Some(SessionStatus::Ended) {
            tracing::debug!(session = %self.session_id, "dropping an event after sessionEnded");
            return;
        }
        match event.payload {
            EventPayload::PermissionAsked(request) => {
                let remembered = request
                    .always_scope
                    .as_ref()
                    .is_some_and(|scope| state.always_scopes.contains(scope));
                if remembered {
                    let id = request.permission_id.clone();
                    state.resolved_permissions.insert(id.clone());
                    self.append(
                        &state,
                        EventPayload::PermissionResolved(PermissionResolved {
                            permission_id: id.clone(),
                            outcome: PermissionOutcome::Always,
                            automatic: true,
                            request: Some(request),
                        }),
                        EventMeta {
                            source: EventSource::Daemon,
                            synthetic: true,
                            raw: meta.raw,
                        },
                    );
                    drop(state);
                    self.signal(CoreSignal::AutoApprove(id));
                } else {
                    state.pending_permissions.push(request.clone());
                    self.append(&state, EventPayload::PermissionAsked(request), meta);
                }
            }
            EventPayload::QuestionAsked(request) => {
                state.pending_questions.push(request.clone());
                self.append(&state, EventPayload::QuestionAsked(request), meta);
            }
            EventPayload::TurnEnded(ended) => match state.current_turn.clone() {
                Some(turn_id) => {
                    if turn_id != ended.turn_id {
                        tracing::warn!(
                            session = %self.session_id,
                            expected = %turn_id,
                            got = %ended.turn_id,
                            "the agent ended another turn than the running one"
                        );
                    }
                    self.end_turn(&mut state, TurnEnded { turn_id, ..ended }, meta);
                }
                None => {
                    tracing::debug!(session = %self.session_id, "dropping turnEnded: no turn is running");
                }
            },
            EventPayload::SessionEnded(ended) => {
                if self.end_locked(&mut state, ended, meta) {
                    drop(state);
                    self.signal(CoreSignal::AgentEnded);
                }
            }
            payload => self.append(&state, payload, meta),
        }
    }

    fn set_native_session_id(&self, id: &str) {
        self.lock().native_session_id = Some(id.to_string());
    }

    fn next_id(&self, prefix: &str) -> String {
        let n = self.ids.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}_{n}")
    }
}
