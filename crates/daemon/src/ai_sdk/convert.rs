//! One turn's universal events → the chunks of its assistant message.
//!
//! The converter is pure and deterministic: the same events give the same chunks, so a
//! turn replayed from the log gives byte for byte what was streamed live. It starts at
//! the turn's `turnStarted`, ends at its `turnEnded` (or the session's end), and skips
//! whatever it has no chunk for.

use std::collections::{HashMap, HashSet};

use sandbox_universal::{
    AgentError, EventPayload, Item, ItemKind, ItemRole, QuestionRequest, QuestionResolved,
    SessionEndReason, StopReason, TurnEnded, UniversalEvent,
};
use serde_json::{Value, json};

use super::chunks::{FinishReason, UiChunk};
use super::tools::Tools;

/// The assistant message id of a turn: the same on every replay.
pub fn message_id(turn_id: &str) -> String {
    format!("msg_{turn_id}")
}

/// The AI SDK's finish reason of a turn that was not cancelled.
///
/// - `completed` → `stop`;
/// - `maxTokens` → `length`: the model hit its output limit;
/// - `toolStop` → `tool-calls`: a host tool ended the turn on purpose;
/// - `error` → `error`;
/// - `maxTurns`, `maxBudget` → `other`: a limit of the agent's own, which the AI SDK has
///   no word for;
/// - `cancelled` → `other` (the stream says `abort` instead of finishing).
pub fn finish_reason(reason: StopReason) -> FinishReason {
    match reason {
        StopReason::Completed => FinishReason::Stop,
        StopReason::MaxTokens => FinishReason::Length,
        StopReason::ToolStop => FinishReason::ToolCalls,
        StopReason::Error => FinishReason::Error,
        StopReason::MaxTurns | StopReason::MaxBudget | StopReason::Cancelled => FinishReason::Other,
    }
}

/// A one-line text of an agent error: its message and kind.
pub fn error_text(error: &AgentError) -> String {
    format!("{} ({})", error.message(), error.kind())
}

/// Where the converter is in its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the turn's `turnStarted`.
    Waiting,
    /// Between its `turnStarted` and its end.
    Streaming,
    /// After its end: nothing more is sent.
    Ended,
}

/// An open text or reasoning part and the text sent for it.
#[derive(Debug)]
struct TextPart {
    reasoning: bool,
    sent: String,
}

/// Converts the events of one turn into the chunks of its assistant message.
#[derive(Debug)]
pub struct TurnConverter {
    turn_id: String,
    phase: Phase,
    texts: HashMap<String, TextPart>,
    /// Open text part ids, in the order they were opened.
    text_order: Vec<String>,
    /// Text parts that ended (a late delta or a second completion is ignored).
    closed: HashSet<String>,
    tools: Tools,
    questions: HashMap<String, QuestionRequest>,
}

impl TurnConverter {
    /// A converter of turn `turn_id`.
    pub fn new(turn_id: &str) -> Self {
        Self {
            turn_id: turn_id.to_string(),
            phase: Phase::Waiting,
            texts: HashMap::new(),
            text_order: Vec::new(),
            closed: HashSet::new(),
            tools: Tools::default(),
            questions: HashMap::new(),
        }
    }

    /// Whether the turn has ended: its last chunk was sent.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Ended
    }

    /// The chunks of one event of the session's log (none for an event outside the turn
    /// or without a chunk).
    pub fn convert(&mut self, event: &UniversalEvent) -> Vec<UiChunk> {
        let mut out = Vec::new();
        match (&event.payload, self.phase) {
            (EventPayload::TurnStarted(started), Phase::Waiting)
                if started.turn_id == self.turn_id =>
            {
                self.phase = Phase::Streaming;
                out.push(UiChunk::Start {
                    message_id: message_id(&self.turn_id),
                    message_metadata: json!({ "turnId": self.turn_id }),
                });
                out.push(UiChunk::StartStep);
            }
            (payload, Phase::Streaming) => self.streaming(payload, &mut out),
            _ => {}
        }
        out
    }

    fn streaming(&mut self, payload: &EventPayload, out: &mut Vec<UiChunk>) {
        match payload {
            EventPayload::ItemStarted(event) => self.item(&event.item, false, out),
            EventPayload::ItemCompleted(event) => self.item(&event.item, true, out),
            EventPayload::ItemDelta(delta) => {
                if let Some(part) = self.texts.get_mut(&delta.item_id) {
                    part.sent.push_str(&delta.delta);
                    out.push(text_delta(part.reasoning, &delta.item_id, &delta.delta));
                } else {
                    self.tools.command_delta(&delta.item_id, &delta.delta);
                }
            }
            EventPayload::PermissionAsked(request) => self.tools.asked(request, false, out),
            EventPayload::PermissionResolved(resolved) => self.tools.resolved(resolved, out),
            EventPayload::QuestionAsked(request) => {
                self.questions
                    .insert(request.question_id.clone(), request.clone());
                out.push(UiChunk::DataQuestion {
                    id: request.question_id.clone(),
                    data: question_data(Some(request), None),
                });
            }
            EventPayload::QuestionResolved(resolved) => {
                let request = self.questions.get(&resolved.question_id);
                out.push(UiChunk::DataQuestion {
                    id: resolved.question_id.clone(),
                    data: question_data(request, Some(resolved)),
                });
            }
            EventPayload::ToolCallRequested(request) => self.tools.host_call(request, out),
            EventPayload::ToolCallResolved(resolved) => self.tools.host_resolved(resolved, out),
            EventPayload::Error(error) => out.push(UiChunk::Error {
                error_text: error_text(error),
            }),
            EventPayload::TurnEnded(ended) if ended.turn_id == self.turn_id => {
                self.end(Some(ended), None, out);
            }
            EventPayload::SessionEnded(ended) => self.end(None, Some(ended.reason), out),
            _ => {}
        }
    }

    fn item(&mut self, item: &Item, completed: bool, out: &mut Vec<UiChunk>) {
        match item.kind {
            ItemKind::Message if is_assistant(item) => self.text(item, false, completed, out),
            ItemKind::Reasoning => self.text(item, true, completed, out),
            ItemKind::ToolCall => self.tools.call(item, completed, out),
            ItemKind::ToolResult if completed => self.tools.result(item, out),
            ItemKind::CommandExecution => self.tools.command(item, completed, out),
            ItemKind::FileChange => self.tools.file_change(item, completed, out),
            _ => {}
        }
    }

    /// A message or reasoning item: its part opens with the text it starts with; when it
    /// completes, whatever of its final text was not sent yet (all of it, when no delta
    /// came), then its end.
    fn text(&mut self, item: &Item, reasoning: bool, completed: bool, out: &mut Vec<UiChunk>) {
        let id = &item.item_id;
        if self.closed.contains(id) {
            return;
        }
        if !self.texts.contains_key(id) {
            out.push(if reasoning {
                UiChunk::ReasoningStart { id: id.clone() }
            } else {
                UiChunk::TextStart { id: id.clone() }
            });
            self.texts.insert(
                id.clone(),
                TextPart {
                    reasoning,
                    sent: String::new(),
                },
            );
            self.text_order.push(id.clone());
        }
        let text = item.text();
        let part = self.texts.get_mut(id).expect("inserted above");
        if let Some(rest) = text.strip_prefix(part.sent.as_str())
            && !rest.is_empty()
            && (completed || part.sent.is_empty())
        {
            out.push(text_delta(reasoning, id, rest));
            part.sent = text;
        }
        if completed {
            self.end_text(id, out);
        }
    }

    fn end_text(&mut self, id: &str, out: &mut Vec<UiChunk>) {
        let Some(part) = self.texts.remove(id) else {
            return;
        };
        self.text_order.retain(|open| open != id);
        self.closed.insert(id.to_string());
        out.push(if part.reasoning {
            UiChunk::ReasoningEnd { id: id.to_string() }
        } else {
            UiChunk::TextEnd { id: id.to_string() }
        });
    }

    /// The turn's end (or the session's, which ends it): every open part closed, the
    /// step finished, then `finish` with the reason and the turn's metadata, or `abort`
    /// (after the metadata) when it was cancelled.
    fn end(
        &mut self,
        ended: Option<&TurnEnded>,
        session_end: Option<SessionEndReason>,
        out: &mut Vec<UiChunk>,
    ) {
        for id in self.text_order.clone() {
            self.end_text(&id, out);
        }
        self.tools.close(out);
        out.push(UiChunk::FinishStep);
        self.phase = Phase::Ended;
        let mut metadata = json!({ "turnId": self.turn_id });
        let reason = match (ended, session_end) {
            (Some(ended), _) => {
                metadata["stopReason"] = json!(ended.stop_reason);
                if let Some(usage) = &ended.usage {
                    metadata["usage"] = json!(usage);
                }
                if let Some(changes) = &ended.changes {
                    metadata["changes"] = json!(changes);
                }
                ended.stop_reason
            }
            (None, Some(SessionEndReason::Terminated)) => StopReason::Cancelled,
            (None, Some(SessionEndReason::Error)) => StopReason::Error,
            (None, _) => StopReason::Completed,
        };
        if reason == StopReason::Cancelled {
            out.push(UiChunk::MessageMetadata {
                message_metadata: metadata,
            });
            out.push(UiChunk::Abort {
                reason: "cancelled".into(),
            });
        } else {
            out.push(UiChunk::Finish {
                finish_reason: finish_reason(reason),
                message_metadata: metadata,
            });
        }
    }
}

/// Whether a message item is the assistant's (not the user's or a system notice).
fn is_assistant(item: &Item) -> bool {
    matches!(item.role, None | Some(ItemRole::Assistant))
}

fn text_delta(reasoning: bool, id: &str, delta: &str) -> UiChunk {
    if reasoning {
        UiChunk::ReasoningDelta {
            id: id.to_string(),
            delta: delta.to_string(),
        }
    } else {
        UiChunk::TextDelta {
            id: id.to_string(),
            delta: delta.to_string(),
        }
    }
}

/// The data of a `data-question` part: the request (`questionId`, `questions`, `itemId`)
/// with its `status` (`pending`, `answered`, `rejected`, `cancelled`) and, once answered,
/// its `answers`.
fn question_data(request: Option<&QuestionRequest>, resolved: Option<&QuestionResolved>) -> Value {
    let mut data = match (request, resolved) {
        (Some(request), _) => json!(request),
        (None, Some(resolved)) => json!({ "questionId": resolved.question_id }),
        (None, None) => json!({}),
    };
    match resolved {
        None => data["status"] = json!("pending"),
        Some(resolved) => {
            data["status"] = json!(resolved.outcome);
            if let Some(answers) = &resolved.answers {
                data["answers"] = json!(answers);
            }
        }
    }
    data
}
