//! One ACP prompt: the message goes to the daemon, and the turn's events come back as
//! `session/update`s until its `turnEnded`, whose stop reason answers the prompt. The
//! agent's permission requests become `session/request_permission`, its questions
//! `elicitation/create` forms (or, when the editor has no forms, are rejected with a
//! notice), and `session/cancel` cancels the turn, which then ends `cancelled`.

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as s;
use agent_client_protocol::{self as acp, Client};
use futures::StreamExt;
use sandbox_client::EventStream;
use sandbox_universal::{
    EventPayload, PermissionRequest, QuestionRequest, StopReason, UniversalEvent,
};
use tokio::sync::watch;

use super::bridge::{Bridge, acp_error};
use super::convert;
use super::sessions::Replayed;

/// How many times a dropped event stream is resumed before the prompt fails.
const RESUMES: u32 = 5;

/// The session's events after `offset`, resumed after a dropped connection.
struct Events<'a> {
    bridge: &'a Bridge,
    session: &'a str,
    stream: EventStream,
    last: u64,
    resumes: u32,
}

impl<'a> Events<'a> {
    async fn open(bridge: &'a Bridge, session: &'a str, offset: u64) -> Result<Self, acp::Error> {
        let stream = bridge
            .daemon
            .stream_events(session, Some(offset), false)
            .await
            .map_err(acp_error)?;
        Ok(Self {
            bridge,
            session,
            stream,
            last: offset,
            resumes: 0,
        })
    }

    /// The next event; `None` once the session has ended and every event was read.
    async fn next(&mut self) -> Result<Option<UniversalEvent>, acp::Error> {
        loop {
            match self.stream.next().await {
                Some(Ok(event)) if event.sequence <= self.last => continue,
                Some(Ok(event)) => {
                    self.last = event.sequence;
                    return Ok(Some(event));
                }
                None => return Ok(None),
                Some(Err(error)) => {
                    self.resumes += 1;
                    if self.resumes > RESUMES {
                        return Err(acp_error(error));
                    }
                    tracing::warn!(session = self.session, %error, "the event stream dropped; resuming");
                    tokio::time::sleep(std::time::Duration::from_millis(
                        200 * u64::from(self.resumes),
                    ))
                    .await;
                    self.stream = self
                        .bridge
                        .daemon
                        .resume_events(self.session, self.last, false)
                        .await
                        .map_err(acp_error)?;
                }
            }
        }
    }
}

/// Sends updates for one event of `session`.
fn send(
    cx: &ConnectionTo<Client>,
    session: &s::SessionId,
    updates: Vec<s::SessionUpdate>,
) -> Result<(), acp::Error> {
    for update in updates {
        cx.send_notification(s::SessionNotification::new(session.clone(), update))?;
    }
    Ok(())
}

/// Runs one prompt to its turn's end; `cancel` turns true on `session/cancel`.
pub async fn run(
    bridge: &Arc<Bridge>,
    cx: &ConnectionTo<Client>,
    session: &str,
    prompt: &[s::ContentBlock],
    mut cancel: watch::Receiver<bool>,
) -> Result<s::PromptResponse, acp::Error> {
    let info = bridge
        .daemon
        .get_session(session)
        .await
        .map_err(acp_error)?;
    // Listen first, so nothing of the turn is missed; what came before is not this prompt's.
    let mut events = Events::open(bridge, session, info.event_count).await?;
    let message = convert::message_from_prompt(prompt);
    let turn = bridge
        .daemon
        .send_request(session, &message)
        .await
        .map_err(acp_error)?
        .turn_id;
    let id = s::SessionId::from(session.to_string());
    let mut converter = convert::UpdateConverter::new(false);
    let mut last_error = None;
    let mut cancelled = false;
    loop {
        let event = tokio::select! {
            event = events.next() => event?,
            changed = cancel.changed(), if !cancelled => {
                cancelled = true;
                if changed.is_ok() {
                    // The turn ends `cancelled`; its events keep coming until then.
                    if let Err(error) = bridge.daemon.cancel(session).await {
                        tracing::warn!(session, %error, "cancelling the turn");
                    }
                }
                continue;
            }
        };
        let Some(event) = event else {
            return Err(acp::Error::internal_error().data("the session ended during the prompt"));
        };
        send(cx, &id, converter.updates(&event))?;
        match &event.payload {
            EventPayload::PermissionAsked(request) => {
                let reply = ask_permission(cx, &id, request, &mut cancel).await;
                if let Err(error) = bridge
                    .daemon
                    .reply_permission(session, &request.permission_id, reply)
                    .await
                {
                    tracing::warn!(session, %error, "answering a permission request");
                }
            }
            EventPayload::QuestionAsked(request) => {
                answer_question(bridge, cx, &id, session, request, &mut cancel).await?;
            }
            EventPayload::Error(error) => last_error = Some(convert::error_text(error)),
            EventPayload::TurnEnded(end) if end.turn_id == turn => {
                if end.stop_reason == StopReason::Error {
                    let message = last_error.unwrap_or_else(|| "the agent's turn failed".into());
                    return Err(acp::Error::internal_error().data(message));
                }
                let reason = if cancelled {
                    s::StopReason::Cancelled
                } else {
                    convert::stop_reason(end.stop_reason)
                };
                return Ok(s::PromptResponse::new(reason));
            }
            _ => {}
        }
    }
}

/// Asks the editor about a permission request; a cancelled prompt rejects it.
async fn ask_permission(
    cx: &ConnectionTo<Client>,
    session: &s::SessionId,
    request: &PermissionRequest,
    cancel: &mut watch::Receiver<bool>,
) -> sandbox_universal::PermissionReply {
    let asked = cx.send_request(s::RequestPermissionRequest::new(
        session.clone(),
        convert::permission_tool_call(request),
        convert::permission_options(request),
    ));
    if *cancel.borrow() {
        return sandbox_universal::PermissionReply::Reject;
    }
    tokio::select! {
        answer = asked.block_task() => match answer {
            Ok(answer) => convert::permission_reply(&answer.outcome),
            Err(error) => {
                tracing::warn!(%error, "the editor did not answer a permission request");
                sandbox_universal::PermissionReply::Reject
            }
        },
        // Dropping the request tells the editor it is no longer asked.
        _ = cancel.changed() => sandbox_universal::PermissionReply::Reject,
    }
}

/// Answers a question with the editor's form, or rejects it when the editor has none (with
/// a notice in the conversation) or the user declines.
async fn answer_question(
    bridge: &Bridge,
    cx: &ConnectionTo<Client>,
    id: &s::SessionId,
    session: &str,
    request: &QuestionRequest,
    cancel: &mut watch::Receiver<bool>,
) -> Result<(), acp::Error> {
    let forms = *bridge.elicitation.lock().expect("elicitation");
    let answers = if forms && !*cancel.borrow() {
        let (message, schema) = convert::question_form(request);
        let scope = s::ElicitationSessionScope::new(id.clone());
        let asked = cx.send_request(s::CreateElicitationRequest::new(
            s::ElicitationFormMode::new(scope, schema),
            message,
        ));
        tokio::select! {
            answer = asked.block_task() => match answer {
                Ok(answer) => match answer.action {
                    s::ElicitationAction::Accept(accept) => match convert::question_answers(request, &accept) {
                        Ok(answers) => Some(answers),
                        Err(problem) => {
                            tracing::warn!(session, problem, "an answer that does not fit the question");
                            None
                        }
                    },
                    _ => None,
                },
                Err(error) => {
                    tracing::warn!(%error, "the editor did not answer a question");
                    None
                }
            },
            _ = cancel.changed() => None,
        }
    } else {
        if !forms {
            let text = format!(
                "\n\n(The agent asked: {}. This editor cannot show questions, so it was declined.)\n\n",
                request
                    .questions
                    .iter()
                    .map(|q| q.question.as_str())
                    .collect::<Vec<_>>()
                    .join(" / ")
            );
            let update = s::SessionUpdate::AgentMessageChunk(s::ContentChunk::new(text.into()));
            cx.send_notification(s::SessionNotification::new(id.clone(), update))?;
        }
        None
    };
    let result = match answers {
        Some(answers) => {
            bridge
                .daemon
                .reply_question(session, &request.question_id, answers)
                .await
        }
        None => {
            bridge
                .daemon
                .reject_question(session, &request.question_id)
                .await
        }
    };
    if let Err(error) = result {
        tracing::warn!(session, %error, "answering a question");
    }
    Ok(())
}

/// After `session/load` of a session whose turn is still running: sends that turn's
/// further events as updates until it ends, from where the replay ended and with its
/// converter, so no text is sent twice (its permissions and questions wait for whoever
/// answers them through the daemon).
pub fn follow(
    bridge: Arc<Bridge>,
    cx: ConnectionTo<Client>,
    session: String,
    replayed: Replayed,
) -> Result<(), acp::Error> {
    let task_cx = cx.clone();
    cx.spawn(async move {
        let id = s::SessionId::from(session.clone());
        let Replayed {
            mut converter,
            last,
        } = replayed;
        let Ok(mut events) = Events::open(&bridge, &session, last).await else {
            return Ok(());
        };
        while let Ok(Some(event)) = events.next().await {
            if send(&task_cx, &id, converter.updates(&event)).is_err() {
                break;
            }
            if matches!(
                event.payload,
                EventPayload::TurnEnded(_) | EventPayload::SessionEnded(_)
            ) {
                break;
            }
        }
        Ok(())
    })
}
