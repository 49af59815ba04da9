//! Tool-like items (`toolCall`, `toolResult`, `commandExecution`, `fileChange`) → ACP tool
//! calls, and the table that gives a tool name its ACP kind.
//!
//! Every tool call the editor knows is kept as the editor sees it, so an item only ever
//! sends what changed (`tool_call` the first time, then `tool_call_update`s with the changed
//! fields) and never repeats itself.

use std::collections::HashMap;

use agent_client_protocol::v1::schema as acp;
use sandbox_universal::{ContentPart, FileChangeKind, Item, ItemDelta, ItemStatus};
use serde_json::{Map, Value};

use super::diff::diff_texts;

/// The ACP kind of a tool, from its name: case, `_` and `-` do not count, and an MCP name
/// (`mcp__server__tool`) counts by its tool part. Unknown names are `Other`.
pub fn tool_kind(name: &str) -> acp::ToolKind {
    let tool = name.rsplit("__").next().unwrap_or(name);
    let key: String = tool
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    match key.as_str() {
        "read" | "readfile" | "view" | "viewimage" | "cat" | "open" | "notebookread" => {
            acp::ToolKind::Read
        }
        "glob" | "grep" | "search" | "ls" | "list" | "listdir" | "find" | "codesearch"
        | "toolsearch" => acp::ToolKind::Search,
        "edit" | "write" | "writefile" | "create" | "patch" | "applypatch" | "multiedit"
        | "notebookedit" | "strreplace" => acp::ToolKind::Edit,
        "delete" | "rm" | "remove" | "deletefile" => acp::ToolKind::Delete,
        "move" | "mv" | "rename" => acp::ToolKind::Move,
        "bash" | "shell" | "exec" | "execute" | "execcommand" | "command" | "shellcommand"
        | "run" | "terminal" | "killshell" | "bashoutput" => acp::ToolKind::Execute,
        "fetch" | "webfetch" | "websearch" => acp::ToolKind::Fetch,
        "think" | "todo" | "todowrite" | "todoread" | "updateplan" => acp::ToolKind::Think,
        "exitplanmode" | "enterplanmode" => acp::ToolKind::SwitchMode,
        _ => acp::ToolKind::Other,
    }
}

/// A tool call as the editor sees it.
struct Shown {
    call: acp::ToolCall,
    /// Whether it stands for a `toolCall` item (its results, commands and file changes are
    /// shown as updates of it).
    is_call_item: bool,
}

/// The tool calls of one session, as the editor sees them.
#[derive(Default)]
pub(super) struct ToolCalls {
    shown: HashMap<String, Shown>,
    /// `toolCall` items that completed without error and wait for their result; they are
    /// marked completed when the turn ends if no result came.
    awaiting: Vec<String>,
    /// The output so far of each running `commandExecution` item.
    output: HashMap<String, String>,
    /// The call each result, command and file change item shows as, and whether that is
    /// its parent's.
    targets: HashMap<String, (String, bool)>,
}

impl ToolCalls {
    /// A `toolCall` item: the call (in progress) when it starts; when it completes, its
    /// final input, and `failed` if it failed. A call that completed fine waits for its
    /// result (a `toolResult`, `commandExecution` or `fileChange` child) before it shows as
    /// completed, else it completes with the turn ([`Self::settle`]).
    pub fn call(&mut self, item: &Item, completed: bool) -> Vec<acp::SessionUpdate> {
        let call = item.content.iter().find_map(|part| match part {
            ContentPart::ToolCall {
                name,
                arguments,
                mcp,
                ..
            } => Some((name, arguments, mcp)),
            _ => None,
        });
        let mut fields = acp::ToolCallUpdateFields::new();
        if let Some((name, arguments, mcp)) = call {
            let (title, kind) = match mcp {
                Some(mcp) => (
                    format!("{}: {}", mcp.server, mcp.tool),
                    tool_kind(&mcp.tool),
                ),
                None => (name.clone(), tool_kind(name)),
            };
            fields = fields
                .title(title)
                .name(name.clone())
                .kind(kind)
                .raw_input(arguments.clone());
        } else if !self.shown.contains_key(&item.item_id) {
            fields = fields.title("Tool call".to_string());
        }
        let terminal = self.is_terminal(&item.item_id);
        match (completed, item.status) {
            (false, _) => fields = fields.status(acp::ToolCallStatus::InProgress),
            (true, ItemStatus::Failed) if !terminal => {
                self.awaiting.retain(|id| *id != item.item_id);
                fields = fields.status(acp::ToolCallStatus::Failed);
            }
            (true, ItemStatus::Completed)
                if !terminal && !self.awaiting.contains(&item.item_id) =>
            {
                self.awaiting.push(item.item_id.clone());
            }
            _ => {}
        }
        self.show(&item.item_id, fields, true).into_iter().collect()
    }

    /// A completed `toolResult` item: the output of its parent call (content, raw output,
    /// completed or failed), or a call of its own when the parent is unknown.
    pub fn result(&mut self, item: &Item) -> Vec<acp::SessionUpdate> {
        let (output, is_error) = item
            .content
            .iter()
            .find_map(|part| match part {
                ContentPart::ToolResult {
                    output, is_error, ..
                } => Some((output.as_str(), *is_error)),
                _ => None,
            })
            .unwrap_or(("", false));
        let status = if is_error || item.status == ItemStatus::Failed {
            acp::ToolCallStatus::Failed
        } else {
            acp::ToolCallStatus::Completed
        };
        let mut fields = acp::ToolCallUpdateFields::new()
            .status(status)
            .raw_output(Value::String(output.to_string()));
        if !output.is_empty() {
            fields = fields.content(vec![text_content(output)]);
        }
        let (target, merged) = self.target(item);
        if !merged {
            fields = fields
                .title("Tool result".to_string())
                .kind(acp::ToolKind::Other);
        }
        self.show(&target, fields, false).into_iter().collect()
    }

    /// A `commandExecution` item: an `execute` call titled by the command line, its output
    /// as content, completed when it exits 0 (or with no exit code) and did not fail.
    pub fn command(&mut self, item: &Item, completed: bool) -> Vec<acp::SessionUpdate> {
        let Some((command, cwd, output, exit_code)) =
            item.content.iter().find_map(|part| match part {
                ContentPart::CommandExecution {
                    command,
                    cwd,
                    output,
                    exit_code,
                } => Some((command, cwd, output, *exit_code)),
                _ => None,
            })
        else {
            tracing::debug!(item = %item.item_id, "commandExecution item without a command");
            return Vec::new();
        };
        let (target, merged) = self.target(item);
        let buffer = self.output.entry(item.item_id.clone()).or_default();
        if let Some(output) = output {
            output.clone_into(buffer);
        }
        let title = if command.is_empty() {
            "Command".to_string()
        } else {
            command.clone()
        };
        let mut fields = acp::ToolCallUpdateFields::new()
            .title(title)
            .kind(acp::ToolKind::Execute)
            .content(output_content(buffer));
        if !merged {
            let mut input = Map::new();
            input.insert("command".into(), Value::String(command.clone()));
            if let Some(cwd) = cwd {
                input.insert("cwd".into(), Value::String(cwd.clone()));
            }
            fields = fields.raw_input(Value::Object(input));
        }
        fields = fields.status(if !completed {
            acp::ToolCallStatus::InProgress
        } else if item.status == ItemStatus::Completed && exit_code.unwrap_or(0) == 0 {
            acp::ToolCallStatus::Completed
        } else {
            acp::ToolCallStatus::Failed
        });
        if completed {
            self.output.remove(&item.item_id);
            self.awaiting.retain(|id| *id != target);
        }
        self.show(&target, fields, false).into_iter().collect()
    }

    /// Output of a running `commandExecution` item: the whole output so far as the call's
    /// content (ACP replaces the content on each update). Deltas of other items: nothing.
    pub fn delta(&mut self, delta: &ItemDelta) -> Vec<acp::SessionUpdate> {
        let Some(buffer) = self.output.get_mut(&delta.item_id) else {
            tracing::debug!(item = %delta.item_id, "itemDelta of an item not shown as text");
            return Vec::new();
        };
        buffer.push_str(&delta.delta);
        let fields = acp::ToolCallUpdateFields::new().content(output_content(buffer));
        let target = self
            .targets
            .get(&delta.item_id)
            .map_or_else(|| delta.item_id.clone(), |(target, _)| target.clone());
        self.show(&target, fields, false).into_iter().collect()
    }

    /// A `fileChange` item: an `edit` call (`delete` when it only deletes) titled by the
    /// change, its paths as locations and one diff (or a line of text) per file.
    pub fn file_change(&mut self, item: &Item, completed: bool) -> Vec<acp::SessionUpdate> {
        let changes: Vec<_> = item
            .content
            .iter()
            .filter_map(|part| match part {
                ContentPart::FileChange {
                    path,
                    change_kind,
                    diff,
                } => Some((path.as_str(), *change_kind, diff.as_deref())),
                _ => None,
            })
            .collect();
        let only_deletes =
            !changes.is_empty() && changes.iter().all(|c| c.1 == FileChangeKind::Delete);
        let title = match changes.as_slice() {
            [] => "Edit files".to_string(),
            [(path, kind, _)] => format!("{} {path}", verb(*kind)),
            [.., (_, kind, _)] => {
                let kind = if only_deletes {
                    *kind
                } else {
                    FileChangeKind::Update
                };
                let paths: Vec<_> = changes.iter().map(|c| c.0).collect();
                format!("{} {}", verb(kind), paths.join(", "))
            }
        };
        let status = match (completed, item.status) {
            (false, _) => acp::ToolCallStatus::InProgress,
            (true, ItemStatus::Completed) => acp::ToolCallStatus::Completed,
            (true, _) => acp::ToolCallStatus::Failed,
        };
        let fields = acp::ToolCallUpdateFields::new()
            .title(title)
            .kind(if only_deletes {
                acp::ToolKind::Delete
            } else {
                acp::ToolKind::Edit
            })
            .status(status)
            .locations(
                changes
                    .iter()
                    .map(|c| acp::ToolCallLocation::new(c.0))
                    .collect::<Vec<_>>(),
            )
            .content(
                changes
                    .iter()
                    .map(|&(path, kind, diff)| change_content(path, kind, diff))
                    .collect::<Vec<_>>(),
            );
        let (target, _) = self.target(item);
        if completed {
            self.awaiting.retain(|id| *id != target);
        }
        self.show(&target, fields, false).into_iter().collect()
    }

    /// The turn (or session) ended: calls still waiting for a result are completed.
    pub fn settle(&mut self) -> Vec<acp::SessionUpdate> {
        let mut updates = Vec::new();
        for id in std::mem::take(&mut self.awaiting) {
            if self.is_terminal(&id) {
                continue;
            }
            let fields = acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::Completed);
            updates.extend(self.show(&id, fields, true));
        }
        updates
    }

    /// The tool call an item shows as: its parent when that is a known `toolCall` item
    /// (`true`), else its own; decided when the item is first seen.
    fn target(&mut self, item: &Item) -> (String, bool) {
        if let Some(target) = self.targets.get(&item.item_id) {
            return target.clone();
        }
        let target = match &item.parent_id {
            Some(parent) if self.shown.get(parent).is_some_and(|s| s.is_call_item) => {
                (parent.clone(), true)
            }
            _ => (item.item_id.clone(), false),
        };
        self.targets.insert(item.item_id.clone(), target.clone());
        target
    }

    fn is_terminal(&self, id: &str) -> bool {
        self.shown.get(id).is_some_and(|s| {
            matches!(
                s.call.status,
                acp::ToolCallStatus::Completed | acp::ToolCallStatus::Failed
            )
        })
    }

    /// Shows `fields` on the call `id`: the whole call the first time, then only what
    /// changed (nothing when nothing did).
    fn show(
        &mut self,
        id: &str,
        fields: acp::ToolCallUpdateFields,
        is_call_item: bool,
    ) -> Option<acp::SessionUpdate> {
        let Some(shown) = self.shown.get_mut(id) else {
            let title = fields.title.clone().unwrap_or_default();
            let mut call = acp::ToolCall::new(id.to_string(), title);
            call.update(fields);
            let shown = Shown {
                call: call.clone(),
                is_call_item,
            };
            self.shown.insert(id.to_string(), shown);
            return Some(acp::SessionUpdate::ToolCall(call));
        };
        let changes = changed_fields(&shown.call, fields);
        if changes == acp::ToolCallUpdateFields::default() {
            return None;
        }
        shown.call.update(changes.clone());
        Some(acp::SessionUpdate::ToolCallUpdate(
            acp::ToolCallUpdate::new(id.to_string(), changes),
        ))
    }
}

/// The fields of `wanted` that differ from what `shown` shows.
fn changed_fields(
    shown: &acp::ToolCall,
    wanted: acp::ToolCallUpdateFields,
) -> acp::ToolCallUpdateFields {
    let mut changes = acp::ToolCallUpdateFields::new();
    changes.kind = wanted.kind.filter(|kind| *kind != shown.kind);
    changes.status = wanted.status.filter(|status| *status != shown.status);
    changes.title = wanted.title.filter(|title| *title != shown.title);
    changes.name = wanted.name.filter(|name| shown.name.as_ref() != Some(name));
    changes.content = wanted.content.filter(|content| *content != shown.content);
    changes.locations = wanted
        .locations
        .filter(|locations| *locations != shown.locations);
    changes.raw_input = wanted
        .raw_input
        .filter(|input| shown.raw_input.as_ref() != Some(input));
    changes.raw_output = wanted
        .raw_output
        .filter(|output| shown.raw_output.as_ref() != Some(output));
    changes
}

/// A text block as tool call content.
pub(super) fn text_content(text: &str) -> acp::ToolCallContent {
    acp::ToolCallContent::Content(acp::Content::new(acp::ContentBlock::from(text.to_string())))
}

/// A command's output as content: one text block, or none while there is no output.
fn output_content(output: &str) -> Vec<acp::ToolCallContent> {
    if output.is_empty() {
        Vec::new()
    } else {
        vec![text_content(output)]
    }
}

fn verb(kind: FileChangeKind) -> &'static str {
    match kind {
        FileChangeKind::Add => "Create",
        FileChangeKind::Update => "Edit",
        FileChangeKind::Delete => "Delete",
    }
}

/// One file's change as content: a diff rebuilt from its unified diff; the file's text
/// when the "diff" of an added (or deleted) file is its content; else a line saying what
/// happened to it.
fn change_content(path: &str, kind: FileChangeKind, diff: Option<&str>) -> acp::ToolCallContent {
    let diff_content = match (diff, diff.and_then(diff_texts)) {
        (_, Some(texts)) => Some(acp::Diff::new(path, texts.new_text).old_text(texts.old_text)),
        (Some(text), None) if kind == FileChangeKind::Add => Some(acp::Diff::new(path, text)),
        (Some(text), None) if kind == FileChangeKind::Delete => {
            Some(acp::Diff::new(path, String::new()).old_text(text.to_string()))
        }
        _ => None,
    };
    match diff_content {
        Some(diff) => acp::ToolCallContent::Diff(diff),
        None => text_content(&format!(
            "{} {path}",
            match kind {
                FileChangeKind::Add => "Created",
                FileChangeKind::Update => "Edited",
                FileChangeKind::Delete => "Deleted",
            }
        )),
    }
}
