//! Assistant messages → items: `text_*` → `message`, `thinking_*` → `reasoning`,
//! `toolcall_*` → `toolCall` (arguments arrive whole at `toolcall_end`; the argument JSON
//! deltas are not item text). `message_end` completes what is still open (`failed` when
//! the message was aborted or failed, with the text so far) and adds the blocks of a
//! message that did not stream.

use sandbox_universal::{
    ContentPart, EventPayload, Item, ItemDelta, ItemEvent, ItemKind, ItemRole, ItemStatus,
};
use serde_json::{Value, json};

use super::{Call, Converter, OpenBlock, event};
use crate::items::finished_item;
use crate::pi::native::{AssistantEvent, Block, MessageEvent, MessageUpdate, StopReason};
use crate::{AgentEvent, SessionIds};

fn text_content(kind: ItemKind, text: String) -> ContentPart {
    if kind == ItemKind::Reasoning {
        ContentPart::Reasoning { text }
    } else {
        ContentPart::Text { text }
    }
}

impl Converter {
    /// A tool call's part, naming the MCP server and tool of a bridged MCP tool.
    fn call_content(&self, id: &str, name: &str, arguments: Value) -> ContentPart {
        ContentPart::ToolCall {
            call_id: id.to_string(),
            name: name.to_string(),
            arguments,
            mcp: self.mcp_tool(name),
        }
    }

    pub(super) fn message_update(
        &mut self,
        ids: &dyn SessionIds,
        update: MessageUpdate,
        raw: &Value,
    ) -> Result<Vec<AgentEvent>, String> {
        use AssistantEvent as E;
        let events = match update.assistant_message_event {
            E::TextStart { content_index } => {
                self.open_text(ids, content_index, ItemKind::Message, raw)
            }
            E::ThinkingStart { content_index } => {
                self.open_text(ids, content_index, ItemKind::Reasoning, raw)
            }
            E::TextDelta {
                content_index,
                delta,
            } => self.append(ids, content_index, ItemKind::Message, &delta, raw),
            E::ThinkingDelta {
                content_index,
                delta,
            } => self.append(ids, content_index, ItemKind::Reasoning, &delta, raw),
            E::TextEnd {
                content_index,
                content,
            } => {
                let mut events = self.open_text(ids, content_index, ItemKind::Message, raw);
                events.extend(self.complete(
                    content_index,
                    Some(content),
                    ItemStatus::Completed,
                    raw,
                ));
                events
            }
            E::ThinkingEnd {
                content_index,
                content,
            } => {
                let mut events = self.open_text(ids, content_index, ItemKind::Reasoning, raw);
                events.extend(self.complete(
                    content_index,
                    Some(content),
                    ItemStatus::Completed,
                    raw,
                ));
                events
            }
            E::ToolcallStart {
                content_index,
                partial,
            } => match partial.block(content_index) {
                Some(Block::ToolCall { id, name, .. }) => {
                    self.open_call(ids, content_index, &id, &name, raw)
                }
                _ => return Err("a toolcall_start without its toolCall block".into()),
            },
            E::ToolcallDelta { .. } | E::Start | E::Done | E::Error => Vec::new(),
            E::ToolcallEnd {
                content_index,
                tool_call:
                    Block::ToolCall {
                        id,
                        name,
                        arguments,
                    },
            } => {
                let mut events = self.open_call(ids, content_index, &id, &name, raw);
                events.extend(self.complete_call(content_index, &id, &name, arguments, raw));
                events
            }
            E::ToolcallEnd { .. } => return Err("a toolcall_end without its call".into()),
            E::Unknown => return Err("unknown assistantMessageEvent type".into()),
        };
        Ok(events)
    }

    fn position(&self, index: usize) -> Option<usize> {
        self.blocks.iter().position(|b| b.index == index)
    }

    /// Starts the item of text or thinking block `index` unless it is open.
    fn open_text(
        &mut self,
        ids: &dyn SessionIds,
        index: usize,
        kind: ItemKind,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        if self.position(index).is_some() {
            return Vec::new();
        }
        let item = Item::new(ids.next_id("itm"), kind, ItemStatus::InProgress)
            .with_role(ItemRole::Assistant)
            .with_content(text_content(kind, String::new()));
        self.open(index, item, raw)
    }

    fn open_call(
        &mut self,
        ids: &dyn SessionIds,
        index: usize,
        id: &str,
        name: &str,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        if self.position(index).is_some() {
            return Vec::new();
        }
        let item = Item::new(
            ids.next_id("itm"),
            ItemKind::ToolCall,
            ItemStatus::InProgress,
        )
        .with_role(ItemRole::Assistant)
        .with_native_id(id)
        .with_content(self.call_content(id, name, json!({})));
        self.open(index, item, raw)
    }

    fn open(&mut self, index: usize, item: Item, raw: &Value) -> Vec<AgentEvent> {
        self.seen.insert(index);
        self.blocks.push(OpenBlock {
            index,
            item: item.clone(),
            streamed: String::new(),
        });
        vec![event(EventPayload::ItemStarted(ItemEvent { item }), raw)]
    }

    fn append(
        &mut self,
        ids: &dyn SessionIds,
        index: usize,
        kind: ItemKind,
        delta: &str,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let mut events = self.open_text(ids, index, kind, raw);
        if delta.is_empty() {
            return events;
        }
        let position = self.position(index).expect("opened above");
        let block = &mut self.blocks[position];
        block.streamed.push_str(delta);
        block.item.content = vec![text_content(block.item.kind, block.streamed.clone())];
        events.push(event(
            EventPayload::ItemDelta(ItemDelta {
                item_id: block.item.item_id.clone(),
                delta: delta.to_string(),
            }),
            raw,
        ));
        events
    }

    /// Completes text or thinking block `index` with its final text (`None`: what it has).
    fn complete(
        &mut self,
        index: usize,
        text: Option<String>,
        status: ItemStatus,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let Some(position) = self.position(index) else {
            return Vec::new();
        };
        let block = self.blocks.remove(position);
        let mut item = block.item;
        let text = match text {
            // The deltas stay the start of the final text.
            Some(text) if text.starts_with(block.streamed.as_str()) => text,
            _ => block.streamed,
        };
        item.content = vec![text_content(item.kind, text)];
        item.status = status;
        vec![event(EventPayload::ItemCompleted(ItemEvent { item }), raw)]
    }

    fn complete_call(
        &mut self,
        index: usize,
        id: &str,
        name: &str,
        arguments: Value,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let Some(position) = self.position(index) else {
            return Vec::new();
        };
        let mut item = self.blocks.remove(position).item;
        item.content = vec![self.call_content(id, name, arguments.clone())];
        item.status = ItemStatus::Completed;
        self.calls.insert(
            id.to_string(),
            Call {
                item_id: item.item_id.clone(),
                arguments,
            },
        );
        vec![event(EventPayload::ItemCompleted(ItemEvent { item }), raw)]
    }

    /// `message_end` of an assistant message: open blocks complete (text with the
    /// message's, `failed` when it was aborted or failed; a call still streaming failed),
    /// and blocks that never streamed become whole items.
    pub(super) fn message_end(
        &mut self,
        ids: &dyn SessionIds,
        ended: MessageEvent,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let message = ended.message;
        if !message.is_assistant() {
            return Vec::new();
        }
        let cut = matches!(
            message.stop_reason,
            Some(StopReason::Aborted | StopReason::Error)
        );
        let status = if cut {
            ItemStatus::Failed
        } else {
            ItemStatus::Completed
        };
        let mut events = Vec::new();
        while let Some(block) = self.blocks.first() {
            let index = block.index;
            if block.item.kind == ItemKind::ToolCall {
                let mut item = self.blocks.remove(0).item;
                item.status = ItemStatus::Failed;
                events.push(event(EventPayload::ItemCompleted(ItemEvent { item }), raw));
                continue;
            }
            let text = match message.block(index) {
                Some(Block::Text { text } | Block::Thinking { thinking: text }) => Some(text),
                _ => None,
            };
            events.extend(self.complete(index, text, status, raw));
        }
        let seen = std::mem::take(&mut self.seen);
        let count = message.content.as_array().map_or(0, Vec::len);
        for index in (0..count).filter(|i| !seen.contains(i)) {
            events.extend(self.whole_block(ids, message.block(index), status, raw));
        }
        events
    }

    /// The item of a block that arrived whole (a provider that does not stream).
    fn whole_block(
        &mut self,
        ids: &dyn SessionIds,
        block: Option<Block>,
        status: ItemStatus,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let (kind, content, call) = match block {
            Some(Block::Text { text }) if !text.is_empty() => (
                ItemKind::Message,
                text_content(ItemKind::Message, text),
                None,
            ),
            Some(Block::Thinking { thinking }) if !thinking.is_empty() => (
                ItemKind::Reasoning,
                text_content(ItemKind::Reasoning, thinking),
                None,
            ),
            Some(Block::ToolCall {
                id,
                name,
                arguments,
            }) => (
                ItemKind::ToolCall,
                self.call_content(&id, &name, arguments.clone()),
                Some((id, arguments)),
            ),
            _ => return Vec::new(),
        };
        let mut item = Item::new(ids.next_id("itm"), kind, status)
            .with_role(ItemRole::Assistant)
            .with_content(content);
        if let Some((id, arguments)) = call {
            item.status = ItemStatus::Completed;
            item.native_item_id = Some(id.clone());
            self.calls.insert(
                id,
                Call {
                    item_id: item.item_id.clone(),
                    arguments,
                },
            );
        }
        finished_item(item, raw)
    }
}
