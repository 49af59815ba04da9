//! Thread items → universal items: `item/started`, deltas, `item/completed`.

use sandbox_universal::{
    ContentPart, EventPayload, FileChangeKind, Item, ItemDelta, ItemEvent, ItemKind, ItemRole,
    ItemStatus, McpToolRef,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Converter, OpenItem, event};
use crate::codex::native::{
    FileUpdateChange, PatchChangeKind, PatchUpdated, ThreadItem, ToolStatus,
};
use crate::items::finished_item;
use crate::{AgentEvent, SessionIds};

/// What a native item becomes.
enum Mapped {
    /// Nothing: `userMessage` (the daemon logs the user's message itself).
    Skip,
    /// A universal item.
    Item(Item),
}

impl Converter {
    pub(super) fn item_started(
        &mut self,
        ids: &dyn SessionIds,
        native: &Value,
        raw: &Value,
    ) -> Result<Vec<AgentEvent>, String> {
        let parsed = parse_item(native)?;
        let native_id = native_id(&parsed);
        if self.open.iter().any(|o| o.native_id == native_id) {
            return Ok(Vec::new());
        }
        let Mapped::Item(mut item) = map_item(&parsed, ids.next_id("itm")) else {
            return Ok(Vec::new());
        };
        item.status = ItemStatus::InProgress;
        self.open.push(OpenItem {
            native_id,
            item: item.clone(),
        });
        Ok(vec![event(
            EventPayload::ItemStarted(ItemEvent { item }),
            raw,
        )])
    }

    pub(super) fn item_completed(
        &mut self,
        ids: &dyn SessionIds,
        native: &Value,
        raw: &Value,
    ) -> Result<Vec<AgentEvent>, String> {
        let parsed = parse_item(native)?;
        let native_id = native_id(&parsed);
        let opened = self
            .open
            .iter()
            .position(|o| o.native_id == native_id)
            .map(|i| self.open.remove(i));
        let item_id = match &opened {
            Some(open) => open.item.item_id.clone(),
            None => ids.next_id("itm"),
        };
        let Mapped::Item(item) = map_item(&parsed, item_id) else {
            return Ok(Vec::new());
        };
        let mut events = Vec::new();
        if opened.is_none() {
            // Completed without a start (not seen from the pinned version): keep the
            // lifecycle whole.
            let started = Item {
                status: ItemStatus::InProgress,
                ..item.clone()
            };
            events.push(event(
                EventPayload::ItemStarted(ItemEvent { item: started }),
                raw,
            ));
        }
        let result = tool_result(&parsed, &item.item_id, || ids.next_id("itm"));
        events.push(event(EventPayload::ItemCompleted(ItemEvent { item }), raw));
        if let Some(result) = result {
            events.extend(finished_item(result, raw));
        }
        Ok(events)
    }

    /// Appends a text delta to an open message, reasoning, plan or command item.
    pub(super) fn delta(
        &mut self,
        native_id: &str,
        delta: &str,
        raw: &Value,
    ) -> Result<Vec<AgentEvent>, String> {
        let open = self
            .open
            .iter_mut()
            .find(|o| o.native_id == native_id)
            .ok_or_else(|| format!("delta for item `{native_id}`, which is not open"))?;
        append_text(&mut open.item, delta);
        Ok(vec![event(
            EventPayload::ItemDelta(ItemDelta {
                item_id: open.item.item_id.clone(),
                delta: delta.to_string(),
            }),
            raw,
        )])
    }

    /// Streams of a patch being written update the open item (no event: the completed
    /// item carries the final changes).
    pub(super) fn patch_updated(&mut self, patch: &PatchUpdated) {
        if let Some(open) = self.open.iter_mut().find(|o| o.native_id == patch.item_id) {
            open.item.content = patch.changes.iter().map(file_change).collect();
        }
    }

    /// The open item with this native id.
    pub(super) fn open_item(&self, native_id: &str) -> Option<&Item> {
        self.open
            .iter()
            .find(|o| o.native_id == native_id)
            .map(|o| &o.item)
    }
}

fn parse_item(native: &Value) -> Result<ThreadItem, String> {
    ThreadItem::deserialize(native).map_err(|e| format!("unknown or malformed Codex item: {e}"))
}

fn native_id(item: &ThreadItem) -> String {
    match item {
        ThreadItem::UserMessage { id }
        | ThreadItem::AgentMessage { id, .. }
        | ThreadItem::Plan { id, .. }
        | ThreadItem::Reasoning { id, .. }
        | ThreadItem::CommandExecution { id, .. }
        | ThreadItem::FileChange { id, .. }
        | ThreadItem::McpToolCall { id, .. }
        | ThreadItem::DynamicToolCall { id, .. }
        | ThreadItem::WebSearch { id, .. }
        | ThreadItem::ImageView { id, .. }
        | ThreadItem::ContextCompaction { id }
        | ThreadItem::EnteredReviewMode { id, .. }
        | ThreadItem::ExitedReviewMode { id, .. } => id.clone(),
    }
}

fn tool_status(status: ToolStatus) -> ItemStatus {
    match status {
        ToolStatus::InProgress => ItemStatus::InProgress,
        ToolStatus::Failed | ToolStatus::Declined => ItemStatus::Failed,
        ToolStatus::Completed | ToolStatus::Unknown => ItemStatus::Completed,
    }
}

/// The universal item of a native item, in the native item's state.
fn map_item(native: &ThreadItem, item_id: String) -> Mapped {
    let new =
        |kind, status| Item::new(item_id.clone(), kind, status).with_role(ItemRole::Assistant);
    let item = match native {
        ThreadItem::UserMessage { .. } => return Mapped::Skip,
        ThreadItem::AgentMessage { id, text } => new(ItemKind::Message, ItemStatus::Completed)
            .with_native_id(id)
            .with_content(ContentPart::Text { text: text.clone() }),
        ThreadItem::Plan { id, text } => new(ItemKind::Plan, ItemStatus::Completed)
            .with_native_id(id)
            .with_content(ContentPart::Plan {
                entries: Vec::new(),
                text: Some(text.clone()),
            }),
        ThreadItem::Reasoning {
            id,
            summary,
            content,
        } => {
            let parts = if summary.is_empty() { content } else { summary };
            new(ItemKind::Reasoning, ItemStatus::Completed)
                .with_native_id(id)
                .with_content(ContentPart::Reasoning {
                    text: parts.join("\n\n"),
                })
        }
        ThreadItem::CommandExecution {
            id,
            command,
            cwd,
            status,
            aggregated_output,
            exit_code,
        } => new(ItemKind::CommandExecution, tool_status(*status))
            .with_native_id(id)
            .with_content(ContentPart::CommandExecution {
                command: command.clone(),
                cwd: cwd.clone(),
                output: aggregated_output.clone(),
                exit_code: *exit_code,
            }),
        ThreadItem::FileChange {
            id,
            changes,
            status,
        } => {
            let mut item = new(ItemKind::FileChange, tool_status(*status)).with_native_id(id);
            item.content = changes.iter().map(file_change).collect();
            item
        }
        ThreadItem::McpToolCall {
            id,
            server,
            tool,
            arguments,
            status,
            ..
        } => new(ItemKind::ToolCall, tool_status(*status))
            .with_native_id(id)
            .with_content(ContentPart::ToolCall {
                call_id: id.to_string(),
                name: mcp_tool_name(server, tool),
                arguments: arguments.clone(),
                mcp: Some(McpToolRef {
                    server: server.clone(),
                    tool: tool.clone(),
                }),
            }),
        ThreadItem::DynamicToolCall {
            id,
            tool,
            arguments,
            status,
            ..
        } => tool_call(
            new(ItemKind::ToolCall, tool_status(*status)),
            id,
            tool,
            arguments.clone(),
        ),
        ThreadItem::WebSearch { id, query, action } => tool_call(
            new(ItemKind::ToolCall, ItemStatus::Completed),
            id,
            "web_search",
            json!({"query": query, "action": action}),
        ),
        ThreadItem::ImageView { id, path } => tool_call(
            new(ItemKind::ToolCall, ItemStatus::Completed),
            id,
            "view_image",
            json!({"path": path}),
        ),
        ThreadItem::ContextCompaction { id } => status(
            new(ItemKind::Status, ItemStatus::Completed),
            id,
            "contextCompaction",
            None,
        ),
        ThreadItem::EnteredReviewMode { id, review } => status(
            new(ItemKind::Status, ItemStatus::Completed),
            id,
            "enteredReviewMode",
            Some(review.clone()),
        ),
        ThreadItem::ExitedReviewMode { id, review } => status(
            new(ItemKind::Status, ItemStatus::Completed),
            id,
            "exitedReviewMode",
            Some(review.clone()),
        ),
    };
    Mapped::Item(item)
}

/// Codex's name for an MCP server's tool (`mcp__<server>__<tool>`).
pub(super) fn mcp_tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

fn tool_call(item: Item, id: &str, name: &str, arguments: Value) -> Item {
    item.with_native_id(id).with_content(ContentPart::ToolCall {
        call_id: id.to_string(),
        name: name.to_string(),
        arguments,
        mcp: None,
    })
}

fn status(item: Item, id: &str, label: &str, detail: Option<String>) -> Item {
    item.with_native_id(id)
        .with_role(ItemRole::System)
        .with_content(ContentPart::Status {
            label: label.to_string(),
            detail,
        })
}

/// The `toolResult` item that follows a completed MCP or dynamic tool call.
fn tool_result(
    native: &ThreadItem,
    call_item: &str,
    item_id: impl FnOnce() -> String,
) -> Option<Item> {
    let (id, output, is_error) = match native {
        ThreadItem::McpToolCall {
            id,
            result,
            error,
            status,
            ..
        } => {
            let output = match (error, result) {
                (Some(error), _) => error.get("message").cloned().unwrap_or(error.clone()),
                (None, Some(result)) => result.get("content").cloned().unwrap_or(result.clone()),
                (None, None) => Value::Null,
            };
            (id, output, error.is_some() || *status == ToolStatus::Failed)
        }
        ThreadItem::DynamicToolCall {
            id,
            content_items,
            success,
            ..
        } => (
            id,
            content_items.clone().unwrap_or_default(),
            *success == Some(false),
        ),
        _ => return None,
    };
    let output = match output {
        Value::String(text) => text,
        Value::Null => String::new(),
        other => other.to_string(),
    };
    Some(
        Item::new(item_id(), ItemKind::ToolResult, ItemStatus::Completed)
            .with_role(ItemRole::Tool)
            .with_parent(call_item)
            .with_content(ContentPart::ToolResult {
                call_id: id.clone(),
                output,
                is_error,
            }),
    )
}

fn file_change(change: &FileUpdateChange) -> ContentPart {
    ContentPart::FileChange {
        path: change.path.clone(),
        change_kind: match change.kind {
            PatchChangeKind::Add => FileChangeKind::Add,
            PatchChangeKind::Delete => FileChangeKind::Delete,
            PatchChangeKind::Update => FileChangeKind::Update,
        },
        diff: (!change.diff.is_empty()).then(|| change.diff.clone()),
    }
}

/// Appends delta text to the item's last text-like part (message or plan text, reasoning,
/// command output).
fn append_text(item: &mut Item, text: &str) {
    for part in item.content.iter_mut().rev() {
        match part {
            ContentPart::Text { text: t } | ContentPart::Reasoning { text: t } => {
                t.push_str(text);
                return;
            }
            ContentPart::Plan { text: t, .. } => {
                t.get_or_insert_with(String::new).push_str(text);
                return;
            }
            ContentPart::CommandExecution { output, .. } => {
                output.get_or_insert_with(String::new).push_str(text);
                return;
            }
            _ => {}
        }
    }
    item.content.push(ContentPart::Text {
        text: text.to_string(),
    });
}
