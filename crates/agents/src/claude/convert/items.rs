//! Assistant content: streamed text and thinking blocks become message and reasoning
//! items (started at `content_block_start`, extended by deltas, completed by the
//! `assistant` line that carries the finished block); tool calls become `toolCall` items.

use std::collections::HashMap;

use sandbox_universal::{
    ContentPart, EventPayload, Item, ItemDelta, ItemEvent, ItemKind, ItemRole, ItemStatus,
    McpToolRef,
};
use serde::Deserialize;
use serde_json::Value;

use crate::claude::native::{AssistantLine, Block, Delta};
use crate::items::{finished_item, unparsed_item};
use crate::{AgentEvent, SessionIds};

/// A tool call the model made.
#[derive(Debug, Clone)]
pub struct Call {
    /// The universal `toolCall` item.
    pub item_id: String,
    /// Tool name.
    pub name: String,
    /// Tool input.
    pub input: Value,
}

#[derive(Debug)]
struct OpenBlock {
    message_id: String,
    index: u64,
    item: Item,
}

/// Open streamed blocks and known tool calls.
#[derive(Debug, Default)]
pub struct Items {
    current_message: Option<String>,
    open: Vec<OpenBlock>,
    calls: HashMap<String, Call>,
    /// The session's MCP servers (their tools are `mcp__<server>__<tool>`).
    mcp_servers: Vec<String>,
}

impl Items {
    /// Names the session's MCP servers.
    pub fn set_mcp_servers(&mut self, servers: Vec<String>) {
        self.mcp_servers = servers;
    }

    /// The session MCP server and tool of a tool name, if it is one.
    pub fn mcp_tool(&self, name: &str) -> Option<McpToolRef> {
        crate::mcp::tool_ref(name, &self.mcp_servers)
    }

    /// The tool call with this native id.
    pub fn call(&self, tool_use_id: &str) -> Option<&Call> {
        self.calls.get(tool_use_id)
    }

    /// The item of a tool call named `name` with exactly this input (for agents that ask
    /// permission without naming the call, like Amp's delegate program).
    pub fn call_with(&self, name: &str, input: &Value) -> Option<&Call> {
        self.calls
            .values()
            .filter(|c| c.name == name && &c.input == input)
            .max_by(|a, b| a.item_id.cmp(&b.item_id))
    }

    /// `message_start`.
    pub fn message_started(&mut self, id: &str) {
        self.current_message = Some(id.to_string());
    }

    fn message_id(&self, explicit: Option<&str>) -> String {
        explicit
            .map(str::to_string)
            .or_else(|| self.current_message.clone())
            .unwrap_or_default()
    }

    /// `content_block_start`: text and thinking blocks open an item.
    pub fn block_started(
        &mut self,
        message: Option<&str>,
        index: u64,
        block: &Value,
        raw: &Value,
        ids: &dyn SessionIds,
    ) -> Vec<AgentEvent> {
        let (kind, part) = match block["type"].as_str() {
            Some("text") => (
                ItemKind::Message,
                ContentPart::Text {
                    text: String::new(),
                },
            ),
            Some("thinking") => (
                ItemKind::Reasoning,
                ContentPart::Reasoning {
                    text: String::new(),
                },
            ),
            // Tool calls arrive complete in the `assistant` line.
            _ => return Vec::new(),
        };
        let message_id = self.message_id(message);
        let item = Item::new(ids.next_id("itm"), kind, ItemStatus::InProgress)
            .with_role(ItemRole::Assistant)
            .with_native_id(message_id.clone())
            .with_content(part);
        let event = AgentEvent::native(
            EventPayload::ItemStarted(ItemEvent { item: item.clone() }),
            Some(raw.clone()),
        );
        self.open.push(OpenBlock {
            message_id,
            index,
            item,
        });
        vec![event]
    }

    /// `content_block_delta`: text and thinking deltas extend the open item.
    pub fn block_delta(
        &mut self,
        message: Option<&str>,
        index: u64,
        delta: Delta,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let text = match delta {
            Delta::TextDelta { text } => text,
            Delta::ThinkingDelta { thinking } => thinking,
            Delta::InputJsonDelta {} | Delta::SignatureDelta {} | Delta::CitationsDelta {} => {
                return Vec::new();
            }
        };
        let message_id = self.message_id(message);
        let Some(open) = self
            .open
            .iter_mut()
            .find(|b| b.message_id == message_id && b.index == index)
        else {
            return Vec::new();
        };
        for part in &mut open.item.content {
            if let ContentPart::Text { text: t } | ContentPart::Reasoning { text: t } = part {
                t.push_str(&text);
            }
        }
        vec![AgentEvent::native(
            EventPayload::ItemDelta(ItemDelta {
                item_id: open.item.item_id.clone(),
                delta: text,
            }),
            Some(raw.clone()),
        )]
    }

    /// `message_stop`: completes blocks of the message no `assistant` line completed.
    pub fn message_stopped(&mut self, message: Option<&str>) -> Vec<AgentEvent> {
        let message_id = self.message_id(message);
        let (done, open): (Vec<_>, Vec<_>) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|b| b.message_id == message_id);
        self.open = open;
        done.into_iter()
            .map(|b| completed(b.item, ItemStatus::Completed))
            .collect()
    }

    /// Closes every open item (end of turn, interrupt, crash).
    pub fn close_all(&mut self, success: bool) -> Vec<AgentEvent> {
        let status = if success {
            ItemStatus::Completed
        } else {
            ItemStatus::Failed
        };
        std::mem::take(&mut self.open)
            .into_iter()
            .map(|b| completed(b.item, status))
            .collect()
    }

    /// An `assistant` line: completes the streamed block it finishes (or emits the block
    /// whole when nothing was streamed) and records tool calls. When the line comes after
    /// an interrupt (`cut_short`), a block that was still streaming was cut off: it ends
    /// `failed` with the text it had, as every agent's interrupted item does.
    pub fn assistant(
        &mut self,
        line: &AssistantLine,
        raw: &Value,
        ids: &dyn SessionIds,
        cut_short: bool,
    ) -> Vec<AgentEvent> {
        let streamed = if cut_short {
            ItemStatus::Failed
        } else {
            ItemStatus::Completed
        };
        let message_id = line.message.id.clone().unwrap_or_default();
        let parent = line
            .parent_tool_use_id
            .as_deref()
            .and_then(|id| self.calls.get(id))
            .map(|c| c.item_id.clone());
        let mut events = Vec::new();
        for value in &line.message.content {
            let block: Block = match Block::deserialize(value) {
                Ok(block) => block,
                Err(error) => {
                    events.extend(unparsed_item(
                        ids,
                        raw,
                        format!("unknown assistant content block: {error}"),
                    ));
                    continue;
                }
            };
            match block {
                Block::Text { text } => events.extend(self.finish(
                    (&message_id, ItemKind::Message),
                    ContentPart::Text { text },
                    streamed,
                    parent.as_deref(),
                    raw,
                    ids,
                )),
                Block::Thinking { thinking } => events.extend(self.finish(
                    (&message_id, ItemKind::Reasoning),
                    ContentPart::Reasoning { text: thinking },
                    streamed,
                    parent.as_deref(),
                    raw,
                    ids,
                )),
                Block::ToolUse { id, name, input } | Block::ServerToolUse { id, name, input } => {
                    let mut item = Item::new(
                        ids.next_id("itm"),
                        ItemKind::ToolCall,
                        ItemStatus::Completed,
                    )
                    .with_role(ItemRole::Assistant)
                    .with_native_id(id.clone())
                    .with_content(ContentPart::ToolCall {
                        call_id: id.clone(),
                        name: name.clone(),
                        arguments: input.clone(),
                        mcp: self.mcp_tool(&name),
                    });
                    item.parent_id = parent.clone();
                    self.calls.insert(
                        id,
                        Call {
                            item_id: item.item_id.clone(),
                            name,
                            input,
                        },
                    );
                    events.extend(finished_item(item, raw));
                }
                Block::RedactedThinking {} | Block::Image {} => {}
                Block::ToolResult { .. } => events.extend(unparsed_item(
                    ids,
                    raw,
                    "a tool_result block in an assistant message",
                )),
            }
        }
        events
    }

    /// Completes the open streamed item of this message and kind with its final content,
    /// or emits a finished item when nothing was streamed.
    /// Completes the open block `(message id, kind)` with `status`, or emits it whole
    /// (completed) when it was not streamed.
    fn finish(
        &mut self,
        (message_id, kind): (&str, ItemKind),
        part: ContentPart,
        status: ItemStatus,
        parent: Option<&str>,
        raw: &Value,
        ids: &dyn SessionIds,
    ) -> Vec<AgentEvent> {
        let position = self
            .open
            .iter()
            .position(|b| b.message_id == message_id && b.item.kind == kind);
        if let Some(position) = position {
            let mut item = self.open.remove(position).item;
            item.content = vec![part];
            let mut event = completed(item, status);
            event.raw = Some(raw.clone());
            return vec![event];
        }
        let mut item = Item::new(ids.next_id("itm"), kind, ItemStatus::Completed)
            .with_role(ItemRole::Assistant)
            .with_content(part);
        // Amp's messages have no id.
        if !message_id.is_empty() {
            item = item.with_native_id(message_id);
        }
        item.parent_id = parent.map(str::to_string);
        finished_item(item, raw)
    }
}

fn completed(mut item: Item, status: ItemStatus) -> AgentEvent {
    item.status = status;
    AgentEvent::native(EventPayload::ItemCompleted(ItemEvent { item }), None)
}
