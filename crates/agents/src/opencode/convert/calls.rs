//! Tool parts → items: a call starts on `running`, on the permission or question it asks
//! (see [`super::hitl`]) or on its final state; a running `bash` streams its output as
//! deltas; a `task` names its child session; `completed` / `error` finish it (see
//! [`super::tools`]).

use sandbox_universal::{
    ContentPart, EventPayload, Item, ItemDelta, ItemEvent, ItemKind, ItemRole, ItemStatus,
};
use serde_json::Value;

use super::parts::{PartKind, Tracked};
use super::tools::{self, ToolKind};
use super::{Converter, event};
use crate::items::finished_item;
use crate::opencode::native::{ToolPart, ToolState};
use crate::{AgentEvent, SessionIds};

impl Converter {
    pub(super) fn tool_part(
        &mut self,
        ids: &dyn SessionIds,
        part: ToolPart,
        session: String,
        raw: &Value,
    ) -> Result<Vec<AgentEvent>, String> {
        if self.is_done(&part.id) {
            return Ok(Vec::new());
        }
        let index = match self
            .position(&part.id)
            .or_else(|| self.call_position(&part.message_id, &part.call_id))
        {
            Some(index) => {
                let tracked = &mut self.open[index];
                tracked.key = part.id.clone();
                if let PartKind::Tool { name, .. } = &mut tracked.kind {
                    name.clone_from(&part.tool);
                }
                index
            }
            None => {
                self.open.push(Tracked::tool(
                    part.id.clone(),
                    session,
                    part.message_id.clone(),
                    &part.tool,
                    &part.call_id,
                ));
                self.open.len() - 1
            }
        };
        let input = part.state.input();
        if input.as_object().is_some_and(|o| !o.is_empty()) {
            self.open[index].input = input.clone();
        }
        let metadata = part.state.metadata();
        let mut events = Vec::new();
        match &part.state {
            ToolState::Pending => {}
            ToolState::Unknown => return Err("unknown tool state".into()),
            ToolState::Running { .. } => {
                events.extend(self.start_tool(ids, index, metadata, raw));
                events.extend(self.tool_progress(index, metadata, raw));
            }
            ToolState::Completed { .. } | ToolState::Error { .. } => {
                events.extend(self.start_tool(ids, index, metadata, raw));
                events.extend(self.finish_tool(ids, index, &part.state, raw));
            }
        }
        Ok(events)
    }

    /// Where a message's tools run.
    fn cwd_of(&self, message: &str) -> String {
        self.messages
            .get(message)
            .and_then(|m| m.cwd.clone())
            .unwrap_or_else(|| self.cwd.clone())
    }

    /// Starts the tracked tool call's item if it has not started; `metadata` is the state's
    /// (or the permission's) metadata.
    pub(super) fn start_tool(
        &mut self,
        ids: &dyn SessionIds,
        index: usize,
        metadata: &Value,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        if self.open[index].item.is_some() {
            return Vec::new();
        }
        let cwd = self.cwd_of(&self.open[index].message.clone());
        let parent = self.parent_of(Some(&self.open[index].session.clone()));
        let item_id = ids.next_id("itm");
        let mcp = self.open[index]
            .tool_name()
            .and_then(|name| self.mcp_tool(name));
        let tracked = &mut self.open[index];
        let PartKind::Tool {
            name,
            call_id,
            kind,
        } = &mut tracked.kind
        else {
            return Vec::new();
        };
        let tool_kind = tools::kind_of(name);
        *kind = Some(tool_kind);
        let mut item = Item::new(item_id, tool_kind.item_kind(), ItemStatus::InProgress)
            .with_role(ItemRole::Assistant)
            .with_native_id(call_id.clone());
        item.content = tools::content(
            tool_kind,
            name,
            call_id,
            &tracked.input,
            metadata,
            &cwd,
            tracked.diff.as_deref(),
        );
        tools::set_mcp(&mut item.content, mcp);
        item.parent_id = parent;
        tracked.item = Some(item.clone());
        vec![event(EventPayload::ItemStarted(ItemEvent { item }), raw)]
    }

    /// A running update: the command's new output as a delta; a task's child session.
    fn tool_progress(&mut self, index: usize, metadata: &Value, raw: &Value) -> Vec<AgentEvent> {
        let cwd = self.cwd_of(&self.open[index].message.clone());
        let tracked = &self.open[index];
        if tracked.tool_name() == Some("task")
            && let (Some(child), Some(item)) = (metadata["sessionId"].as_str(), &tracked.item)
        {
            self.children
                .insert(child.to_string(), Some(item.item_id.clone()));
        }
        let mcp = tracked.tool_name().and_then(|name| self.mcp_tool(name));
        let tracked = &mut self.open[index];
        let (
            Some(item),
            PartKind::Tool {
                name,
                call_id,
                kind: Some(kind),
            },
        ) = (&mut tracked.item, &tracked.kind)
        else {
            return Vec::new();
        };
        item.content = tools::content(
            *kind,
            name,
            call_id,
            &tracked.input,
            metadata,
            &cwd,
            tracked.diff.as_deref(),
        );
        tools::set_mcp(&mut item.content, mcp);
        if *kind != ToolKind::Command {
            return Vec::new();
        }
        // bash's `metadata.output` is the whole output so far.
        let output = metadata["output"].as_str().unwrap_or_default();
        let delta = output
            .strip_prefix(tracked.streamed.as_str())
            .filter(|rest| !rest.is_empty())
            .map(str::to_string);
        tracked.streamed = output.to_string();
        if let Some(ContentPart::CommandExecution { output: shown, .. }) = item.content.first_mut()
        {
            *shown = (!tracked.streamed.is_empty()).then(|| tracked.streamed.clone());
        }
        match delta {
            Some(delta) => vec![event(
                EventPayload::ItemDelta(ItemDelta {
                    item_id: item.item_id.clone(),
                    delta,
                }),
                raw,
            )],
            None => Vec::new(),
        }
    }

    fn finish_tool(
        &mut self,
        ids: &dyn SessionIds,
        index: usize,
        state: &ToolState,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let cwd = self.cwd_of(&self.open[index].message.clone());
        let tracked = self.open.remove(index);
        self.done.insert(tracked.key.clone());
        let (
            Some(mut item),
            PartKind::Tool {
                name,
                call_id,
                kind: Some(kind),
            },
        ) = (tracked.item, tracked.kind)
        else {
            return Vec::new();
        };
        let finished = tools::finish(kind, &name, &call_id, state, &cwd, tracked.diff.as_deref());
        item.content = finished.content;
        tools::set_mcp(&mut item.content, self.mcp_tool(&name));
        item.status = finished.status;
        let item_id = item.item_id.clone();
        let mut events = vec![event(EventPayload::ItemCompleted(ItemEvent { item }), raw)];
        if let Some((output, is_error)) = finished.result {
            let result = Item::new(
                ids.next_id("itm"),
                ItemKind::ToolResult,
                if is_error {
                    ItemStatus::Failed
                } else {
                    ItemStatus::Completed
                },
            )
            .with_role(ItemRole::Tool)
            .with_native_id(call_id.clone())
            .with_parent(item_id)
            .with_content(ContentPart::ToolResult {
                call_id,
                output,
                is_error,
            });
            events.extend(finished_item(result, raw));
        }
        events
    }
}
