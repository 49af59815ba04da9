//! Message parts → items. Text and reasoning parts start on their first update, grow with
//! `message.part.delta` and complete when their `time.end` is set (or their message ends);
//! tool parts are tracked here and converted in [`super::calls`]. Parts of user messages,
//! synthetic text and `step-*`, `subtask`, `agent`, `snapshot`, `patch`, `retry` and
//! `compaction` parts make no items (usage comes from the messages; retries and compaction
//! from the session events; a step's `patch` summary repeats the tools' own file changes);
//! a `file` part of an assistant message is a `status` item naming the file.

use sandbox_universal::{
    ContentPart, EventPayload, Item, ItemDelta, ItemEvent, ItemKind, ItemRole, ItemStatus,
};
use serde::Deserialize;
use serde_json::Value;

use super::tools::ToolKind;
use super::{Converter, event, status_item};
use crate::opencode::native::{FilePart, Part, PartDelta, PartUpdated, TextPart};
use crate::{AgentEvent, SessionIds};

/// What a tracked part is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PartKind {
    /// A text part: a `message` item.
    Text,
    /// A reasoning part: a `reasoning` item.
    Reasoning,
    /// A tool part.
    Tool {
        /// The tool's name.
        name: String,
        /// The model's call id.
        call_id: String,
        /// What its item is, fixed when it starts.
        kind: Option<ToolKind>,
    },
}

/// A part that is an open item, or a tool part seen only `pending` so far.
#[derive(Debug, Clone)]
pub(super) struct Tracked {
    /// The part id (`call:<message>:<call>` for a call a permission or question announced
    /// before its part).
    pub key: String,
    /// Its OpenCode session.
    pub session: String,
    /// Its message.
    pub message: String,
    pub kind: PartKind,
    /// The item, once started.
    pub item: Option<Item>,
    /// Text (or command output) sent as deltas so far.
    pub streamed: String,
    /// The latest tool input.
    pub input: Value,
    /// The diff an `edit` permission showed for this call (a `write` has no other).
    pub diff: Option<String>,
}

impl Tracked {
    /// The tool's name, for tool parts.
    pub fn tool_name(&self) -> Option<&str> {
        match &self.kind {
            PartKind::Tool { name, .. } => Some(name),
            _ => None,
        }
    }

    /// A tool call not started yet.
    pub fn tool(key: String, session: String, message: String, name: &str, call: &str) -> Self {
        Self {
            key,
            session,
            message,
            kind: PartKind::Tool {
                name: name.to_string(),
                call_id: call.to_string(),
                kind: None,
            },
            item: None,
            streamed: String::new(),
            input: Value::Null,
            diff: None,
        }
    }
}

impl Converter {
    pub(super) fn position(&self, key: &str) -> Option<usize> {
        self.open.iter().position(|t| t.key == key)
    }

    /// The tracked tool call `(message, call)`.
    pub(super) fn call_position(&self, message: &str, call: &str) -> Option<usize> {
        self.open.iter().position(|t| {
            t.message == message
                && matches!(&t.kind, PartKind::Tool { call_id, .. } if call_id == call)
        })
    }

    pub(super) fn is_done(&self, key: &str) -> bool {
        self.done.contains(key) || self.done_before.contains(key)
    }

    pub(super) fn session_or_root(&mut self, session: Option<String>) -> String {
        self.is_root(session.as_deref());
        session.or_else(|| self.root.clone()).unwrap_or_default()
    }

    pub(super) fn part_updated(
        &mut self,
        ids: &dyn SessionIds,
        updated: &PartUpdated,
        raw: &Value,
    ) -> Result<Vec<AgentEvent>, String> {
        let part = Part::deserialize(&updated.part).map_err(|e| format!("malformed part: {e}"))?;
        let session = updated
            .session_id
            .clone()
            .or_else(|| updated.part["sessionID"].as_str().map(str::to_string));
        let session = self.session_or_root(session);
        Ok(match part {
            Part::Text(text) => self.text_part(ids, text, ItemKind::Message, session, raw),
            Part::Reasoning(text) => self.text_part(ids, text, ItemKind::Reasoning, session, raw),
            Part::Tool(tool) => self.tool_part(ids, tool, session, raw)?,
            Part::File(file) => self.file_part(ids, &file, &session, raw),
            Part::StepStart
            | Part::StepFinish
            | Part::Subtask
            | Part::Agent
            | Part::Snapshot
            | Part::Patch
            | Part::Retry
            | Part::Compaction => Vec::new(),
            Part::Unknown => {
                return Err(format!(
                    "unknown part type `{}`",
                    updated.part["type"].as_str().unwrap_or_default()
                ));
            }
        })
    }

    /// Whether a part belongs to a user message. A part can come before its message
    /// (PROTOCOLS.md §3.4): then a text part without `time` is the user's (the model's
    /// text parts always have `time.start`).
    pub(super) fn of_user(&self, message: &str, untimed_text: bool) -> bool {
        match self.messages.get(message) {
            Some(m) => !m.assistant,
            None => untimed_text,
        }
    }

    fn text_part(
        &mut self,
        ids: &dyn SessionIds,
        part: TextPart,
        kind: ItemKind,
        session: String,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let untimed_text = kind == ItemKind::Message && part.time.is_none();
        if self.of_user(&part.message_id, untimed_text)
            || part.synthetic
            || part.ignored
            || self.is_done(&part.id)
        {
            return Vec::new();
        }
        let mut events = Vec::new();
        let index = match self.position(&part.id) {
            Some(index) => index,
            None => {
                let mut item = Item::new(ids.next_id("itm"), kind, ItemStatus::InProgress)
                    .with_role(ItemRole::Assistant)
                    .with_native_id(part.id.clone())
                    .with_content(text_content(kind, String::new()));
                item.parent_id = self.parent_of(Some(&session));
                events.push(event(
                    EventPayload::ItemStarted(ItemEvent { item: item.clone() }),
                    raw,
                ));
                self.open.push(Tracked {
                    key: part.id.clone(),
                    session,
                    message: part.message_id.clone(),
                    kind: if kind == ItemKind::Message {
                        PartKind::Text
                    } else {
                        PartKind::Reasoning
                    },
                    item: Some(item),
                    streamed: String::new(),
                    input: Value::Null,
                    diff: None,
                });
                let index = self.open.len() - 1;
                if let Some(early) = self.early.remove(&part.id) {
                    events.push(self.append(index, &early, raw));
                }
                index
            }
        };
        if part.ended() {
            let cut = self.cutting()
                || self
                    .messages
                    .get(&part.message_id)
                    .is_some_and(|m| m.error.is_some());
            let status = if cut {
                ItemStatus::Failed
            } else {
                ItemStatus::Completed
            };
            events.push(self.complete_text(index, Some(&part.text), status, raw));
        } else {
            let streamed = &self.open[index].streamed;
            if part.text.len() > streamed.len() && part.text.starts_with(streamed.as_str()) {
                let rest = part.text[streamed.len()..].to_string();
                events.push(self.append(index, &rest, raw));
            }
        }
        events
    }

    /// Appends text to an open text or reasoning item.
    fn append(&mut self, index: usize, delta: &str, raw: &Value) -> AgentEvent {
        let tracked = &mut self.open[index];
        tracked.streamed.push_str(delta);
        let item = tracked
            .item
            .as_mut()
            .expect("text items start with their part");
        for part in &mut item.content {
            if let ContentPart::Text { text } | ContentPart::Reasoning { text } = part {
                text.push_str(delta);
            }
        }
        event(
            EventPayload::ItemDelta(ItemDelta {
                item_id: item.item_id.clone(),
                delta: delta.to_string(),
            }),
            raw,
        )
    }

    /// Completes a text or reasoning item with its final text (`None`: what it has).
    fn complete_text(
        &mut self,
        index: usize,
        text: Option<&str>,
        status: ItemStatus,
        raw: &Value,
    ) -> AgentEvent {
        let tracked = self.open.remove(index);
        let mut item = tracked.item.expect("text items start with their part");
        let text = match text {
            // OpenCode may trim the final text: the streamed text stays its start.
            Some(text)
                if !text.starts_with(tracked.streamed.as_str())
                    && tracked.streamed.starts_with(text) =>
            {
                tracked.streamed
            }
            Some(text) => text.to_string(),
            None => tracked.streamed,
        };
        item.content = vec![text_content(item.kind, text)];
        item.status = status;
        self.done.insert(tracked.key);
        event(EventPayload::ItemCompleted(ItemEvent { item }), raw)
    }

    pub(super) fn part_delta(&mut self, delta: &PartDelta, raw: &Value) -> Vec<AgentEvent> {
        // Only text streams (for text and reasoning parts alike); tool parts arrive whole.
        // An empty delta (OpenCode ends an Anthropic reasoning part with one) says nothing.
        if delta.field != "text" || delta.delta.is_empty() {
            return Vec::new();
        }
        match self.position(&delta.part_id) {
            Some(index)
                if matches!(self.open[index].kind, PartKind::Text | PartKind::Reasoning) =>
            {
                vec![self.append(index, &delta.delta, raw)]
            }
            Some(_) => Vec::new(),
            None if self.is_done(&delta.part_id) => Vec::new(),
            None => {
                // Before its part (upstream #26924): kept until the part starts.
                self.early
                    .entry(delta.part_id.clone())
                    .or_default()
                    .push_str(&delta.delta);
                Vec::new()
            }
        }
    }

    fn file_part(
        &mut self,
        ids: &dyn SessionIds,
        file: &FilePart,
        session: &str,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        if self.of_user(&file.message_id, true) || self.is_done(&file.id) {
            return Vec::new();
        }
        self.done.insert(file.id.clone());
        let name = file.filename.clone().unwrap_or_else(|| "file".into());
        let detail = format!("{name} ({})", file.mime);
        status_item(
            ids,
            "file",
            Some(detail),
            self.parent_of(Some(session)),
            raw,
        )
    }

    /// Completes the open parts of a message that just finished: text keeps what it has,
    /// with `status`; a tool call that never reached a final state failed.
    pub(super) fn close_message(
        &mut self,
        message: &str,
        status: ItemStatus,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let mut events = Vec::new();
        while let Some(index) = self.open.iter().position(|t| t.message == message) {
            match self.open[index].kind {
                PartKind::Text | PartKind::Reasoning => {
                    events.push(self.complete_text(index, None, status, raw));
                }
                PartKind::Tool { .. } => {
                    let tracked = self.open.remove(index);
                    if let Some(mut item) = tracked.item {
                        item.status = ItemStatus::Failed;
                        self.done.insert(tracked.key);
                        events.push(event(EventPayload::ItemCompleted(ItemEvent { item }), raw));
                    }
                }
            }
        }
        events
    }

    /// Completes every open item (turn end, lost server), as synthetic events.
    pub(super) fn close_all(&mut self, status: ItemStatus) -> Vec<AgentEvent> {
        let mut events = Vec::new();
        for tracked in std::mem::take(&mut self.open) {
            if let Some(mut item) = tracked.item {
                item.status = status;
                self.done.insert(tracked.key);
                events.push(AgentEvent::synthetic(EventPayload::ItemCompleted(
                    ItemEvent { item },
                )));
            }
        }
        events
    }
}

fn text_content(kind: ItemKind, text: String) -> ContentPart {
    if kind == ItemKind::Reasoning {
        ContentPart::Reasoning { text }
    } else {
        ContentPart::Text { text }
    }
}
