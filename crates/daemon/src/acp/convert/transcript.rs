//! [`UpdateConverter`]: one session's universal events → ACP `session/update`s.

use std::collections::HashMap;

use agent_client_protocol::v1::schema as acp;
use sandbox_universal::{
    ContentPart, EventPayload, Item, ItemDelta, ItemKind, ItemRole, PlanEntryStatus, UniversalEvent,
};

use super::tools::ToolCalls;

/// Which chunk a text item streams as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// `agent_message_chunk`.
    Agent,
    /// `user_message_chunk`.
    User,
    /// `agent_thought_chunk`.
    Thought,
}

/// The text of an item the editor was sent so far.
struct TextStream {
    chunk: Chunk,
    sent: String,
}

/// Turns the events of one session, in order, into the `session/update`s an editor shows.
///
/// Text items (messages, reasoning, plan text) stream as chunks: deltas as they come, and
/// of a started or completed item only what was not sent yet (nothing when its text no
/// longer starts with what was sent). Tool-like items become tool calls, each sent whole
/// once and then updated with what changed. Plans are sent whole when they change.
/// Lifecycle, HITL and error events give nothing, except that the end of a turn completes
/// the tool calls that never got a result.
pub struct UpdateConverter {
    replay_user_messages: bool,
    texts: HashMap<String, TextStream>,
    tools: ToolCalls,
    /// The plan last sent.
    plan: Option<Vec<acp::PlanEntry>>,
}

impl UpdateConverter {
    /// A converter for a fresh stream. `replay_user_messages`: also send the user's messages
    /// (for `session/load`, which replays the whole history; during a live prompt the
    /// editor already shows its own prompt).
    pub fn new(replay_user_messages: bool) -> Self {
        Self {
            replay_user_messages,
            texts: HashMap::new(),
            tools: ToolCalls::default(),
            plan: None,
        }
    }

    /// The updates for the next event of the session.
    pub fn updates(&mut self, event: &UniversalEvent) -> Vec<acp::SessionUpdate> {
        match &event.payload {
            EventPayload::ItemStarted(started) => self.item(&started.item, false),
            EventPayload::ItemCompleted(completed) => self.item(&completed.item, true),
            EventPayload::ItemDelta(delta) => self.delta(delta),
            EventPayload::TurnEnded(_) | EventPayload::SessionEnded(_) => self.tools.settle(),
            _ => Vec::new(),
        }
    }

    fn item(&mut self, item: &Item, completed: bool) -> Vec<acp::SessionUpdate> {
        match item.kind {
            ItemKind::Message => self.message(item, completed),
            ItemKind::Reasoning => self.text(&item.item_id, Chunk::Thought, &item.text()),
            ItemKind::ToolCall => self.tools.call(item, completed),
            ItemKind::ToolResult if completed => self.tools.result(item),
            ItemKind::ToolResult => Vec::new(),
            ItemKind::CommandExecution => self.tools.command(item, completed),
            ItemKind::FileChange => self.tools.file_change(item, completed),
            ItemKind::Plan => self.plan(item),
            ItemKind::Status | ItemKind::Unparsed => {
                tracing::debug!(item = %item.item_id, kind = ?item.kind, "item not shown over ACP");
                Vec::new()
            }
        }
    }

    /// A message: the assistant's as agent chunks; the user's as user chunks (text, then
    /// its inline images once it completes) only when replaying; others not at all.
    fn message(&mut self, item: &Item, completed: bool) -> Vec<acp::SessionUpdate> {
        match item.role {
            Some(ItemRole::Assistant) | None => {
                self.text(&item.item_id, Chunk::Agent, &item.text())
            }
            Some(ItemRole::User) if self.replay_user_messages => {
                let mut updates = self.text(&item.item_id, Chunk::User, &item.text());
                if completed {
                    let images = item.content.iter().filter_map(|part| match part {
                        ContentPart::Image {
                            media_type,
                            data: Some(data),
                            ..
                        } => Some(acp::ContentBlock::Image(acp::ImageContent::new(
                            data.clone(),
                            media_type.clone(),
                        ))),
                        _ => None,
                    });
                    updates.extend(images.map(|image| chunk(Chunk::User, &item.item_id, image)));
                }
                updates
            }
            Some(role) => {
                tracing::debug!(item = %item.item_id, ?role, "message not shown over ACP");
                Vec::new()
            }
        }
    }

    /// A plan: its entries as the session's plan, when it has entries (or is empty with no
    /// text: a cleared list) and they changed; a plan made only of text streams as an
    /// agent message.
    fn plan(&mut self, item: &Item) -> Vec<acp::SessionUpdate> {
        let mut entries = Vec::new();
        let mut text: Option<String> = None;
        let mut any = false;
        for part in &item.content {
            if let ContentPart::Plan {
                entries: steps,
                text: more,
            } = part
            {
                any = true;
                entries.extend(steps.iter().map(|step| {
                    let status = match step.status {
                        PlanEntryStatus::Pending => acp::PlanEntryStatus::Pending,
                        PlanEntryStatus::InProgress => acp::PlanEntryStatus::InProgress,
                        PlanEntryStatus::Completed => acp::PlanEntryStatus::Completed,
                    };
                    acp::PlanEntry::new(
                        step.content.clone(),
                        acp::PlanEntryPriority::Medium,
                        status,
                    )
                }));
                if let Some(more) = more {
                    text.get_or_insert_with(String::new).push_str(more);
                }
            }
        }
        if !any {
            return Vec::new();
        }
        if let (true, Some(text)) = (entries.is_empty(), text) {
            return self.text(&item.item_id, Chunk::Agent, &text);
        }
        if self.plan.as_ref() == Some(&entries) {
            return Vec::new();
        }
        self.plan = Some(entries.clone());
        vec![acp::SessionUpdate::Plan(acp::Plan::new(entries))]
    }

    /// The part of a text item's `full` text not sent yet, if it extends what was sent.
    fn text(&mut self, item_id: &str, kind: Chunk, full: &str) -> Vec<acp::SessionUpdate> {
        let stream = self
            .texts
            .entry(item_id.to_string())
            .or_insert_with(|| TextStream {
                chunk: kind,
                sent: String::new(),
            });
        let Some(rest) = full.strip_prefix(stream.sent.as_str()) else {
            return Vec::new();
        };
        if rest.is_empty() {
            return Vec::new();
        }
        let update = chunk(stream.chunk, item_id, rest.into());
        full.clone_into(&mut stream.sent);
        vec![update]
    }

    fn delta(&mut self, delta: &ItemDelta) -> Vec<acp::SessionUpdate> {
        let Some(stream) = self.texts.get_mut(&delta.item_id) else {
            return self.tools.delta(delta);
        };
        if delta.delta.is_empty() {
            return Vec::new();
        }
        stream.sent.push_str(&delta.delta);
        vec![chunk(
            stream.chunk,
            &delta.item_id,
            delta.delta.clone().into(),
        )]
    }
}

/// A chunk of the message `item_id` (its id is the chunk's `messageId`).
fn chunk(kind: Chunk, item_id: &str, content: acp::ContentBlock) -> acp::SessionUpdate {
    let chunk = acp::ContentChunk::new(content).message_id(acp::MessageId::new(item_id));
    match kind {
        Chunk::Agent => acp::SessionUpdate::AgentMessageChunk(chunk),
        Chunk::User => acp::SessionUpdate::UserMessageChunk(chunk),
        Chunk::Thought => acp::SessionUpdate::AgentThoughtChunk(chunk),
    }
}
