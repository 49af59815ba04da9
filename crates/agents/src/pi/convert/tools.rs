//! Tool executions → the result item of each call, a child of its `toolCall` item:
//! - `bash` → `commandExecution`, started at `tool_execution_start`, its output streamed
//!   as deltas from `tool_execution_update` (whose `partialResult` is the output so far).
//!   Pi reports no exit code on success (it is 0) and fails the call with
//!   `…\n\nCommand exited with code N` otherwise, which gives the code (an abort or a
//!   timeout has none);
//! - `write` / `edit` that succeeded → `fileChange`: `write` creates or overwrites (Pi does
//!   not say which: it reads as `add`, with a diff of the whole content); `edit`'s diff is
//!   rebuilt as a unified diff from the numbered diff Pi returns in `details.diff`, or from
//!   the call's `edits` when there is none;
//! - anything else (and a failed `write` / `edit`, which changed nothing) → `toolResult`.
//!
//! A failed call (`isError`) ends `failed`.

use sandbox_universal::{
    ContentPart, EventPayload, FileChangeKind, Item, ItemDelta, ItemEvent, ItemKind, ItemRole,
    ItemStatus,
};
use serde_json::Value;

use super::{Converter, Running, event};
use crate::items::finished_item;
use crate::pi::native::{ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate, content_text};
use crate::{AgentEvent, SessionIds};

impl Converter {
    pub(super) fn tool_start(
        &mut self,
        ids: &dyn SessionIds,
        start: ToolExecutionStart,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let mut running = Running {
            call_id: start.tool_call_id,
            name: start.tool_name,
            args: start.args,
            item: None,
            streamed: String::new(),
        };
        let mut events = Vec::new();
        if running.name == "bash" {
            let item = self.command_item(ids, &running);
            events.push(event(
                EventPayload::ItemStarted(ItemEvent { item: item.clone() }),
                raw,
            ));
            running.item = Some(item);
        }
        self.running.push(running);
        events
    }

    fn command_item(&self, ids: &dyn SessionIds, running: &Running) -> Item {
        let command = running.args["command"].as_str().unwrap_or_default();
        let mut item = Item::new(
            ids.next_id("itm"),
            ItemKind::CommandExecution,
            ItemStatus::InProgress,
        )
        .with_role(ItemRole::Assistant)
        .with_native_id(running.call_id.clone())
        .with_content(ContentPart::CommandExecution {
            command: command.to_string(),
            cwd: Some(self.cwd.clone()),
            output: None,
            exit_code: None,
        });
        item.parent_id = self.calls.get(&running.call_id).map(|c| c.item_id.clone());
        item
    }

    pub(super) fn tool_update(
        &mut self,
        update: ToolExecutionUpdate,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let Some(running) = self
            .running
            .iter_mut()
            .find(|r| r.call_id == update.tool_call_id)
        else {
            return Vec::new();
        };
        let Some(item) = &mut running.item else {
            return Vec::new();
        };
        let output = content_text(&update.partial_result.content);
        // A truncated output keeps its tail only: then nothing is appended.
        let delta = output
            .strip_prefix(running.streamed.as_str())
            .filter(|rest| !rest.is_empty())
            .map(str::to_string);
        running.streamed = output;
        if let Some(ContentPart::CommandExecution { output, .. }) = item.content.first_mut() {
            *output = Some(running.streamed.clone());
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

    pub(super) fn tool_end(
        &mut self,
        ids: &dyn SessionIds,
        end: ToolExecutionEnd,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let running = match self
            .running
            .iter()
            .position(|r| r.call_id == end.tool_call_id)
        {
            Some(index) => self.running.remove(index),
            None => Running {
                args: self
                    .calls
                    .get(&end.tool_call_id)
                    .map(|c| c.arguments.clone())
                    .unwrap_or_default(),
                call_id: end.tool_call_id.clone(),
                name: end.tool_name.clone(),
                item: None,
                streamed: String::new(),
            },
        };
        let parent = self.calls.get(&running.call_id).map(|c| c.item_id.clone());
        let output = content_text(&end.result.content);
        let status = if end.is_error {
            ItemStatus::Failed
        } else {
            ItemStatus::Completed
        };
        if running.name == "bash" {
            let mut events = Vec::new();
            let mut item = match running.item.clone() {
                Some(item) => item,
                None => {
                    let item = self.command_item(ids, &running);
                    events.push(event(
                        EventPayload::ItemStarted(ItemEvent { item: item.clone() }),
                        raw,
                    ));
                    item
                }
            };
            let (output, exit_code) = command_outcome(&output, end.is_error);
            if let Some(ContentPart::CommandExecution {
                output: shown,
                exit_code: code,
                ..
            }) = item.content.first_mut()
            {
                *shown = Some(output);
                *code = exit_code;
            }
            item.status = status;
            events.push(event(EventPayload::ItemCompleted(ItemEvent { item }), raw));
            return events;
        }
        let id = ids.next_id("itm");
        let change = match running.name.as_str() {
            "write" | "edit" if !end.is_error => {
                file_change(&running.name, &running.args, &end.result.details, &self.cwd)
            }
            _ => None,
        };
        let mut item = match change {
            Some(change) => Item::new(id, ItemKind::FileChange, status)
                .with_role(ItemRole::Assistant)
                .with_content(change),
            None => Item::new(id, ItemKind::ToolResult, status)
                .with_role(ItemRole::Tool)
                .with_content(ContentPart::ToolResult {
                    call_id: running.call_id.clone(),
                    output,
                    is_error: end.is_error,
                }),
        }
        .with_native_id(running.call_id);
        item.parent_id = parent;
        finished_item(item, raw)
    }
}

/// A `bash` result's output and exit code (see the module docs).
pub(super) fn command_outcome(output: &str, is_error: bool) -> (String, Option<i32>) {
    if !is_error {
        // Pi tells the model "(no output)" for an empty output.
        let output = if output == "(no output)" { "" } else { output };
        return (output.to_string(), Some(0));
    }
    let (head, status) = match output.rsplit_once("\n\n") {
        Some((head, status)) => (head, status),
        None => ("", output),
    };
    match status
        .strip_prefix("Command exited with code ")
        .and_then(|code| code.trim().parse().ok())
    {
        Some(code) => (head.to_string(), Some(code)),
        None => (output.to_string(), None),
    }
}

/// Where a path argument points (Pi resolves relative paths against its cwd).
fn resolve(path: &str, cwd: &str) -> String {
    if path.starts_with('/') || path.starts_with('~') || cwd.is_empty() {
        path.to_string()
    } else {
        format!("{}/{path}", cwd.trim_end_matches('/'))
    }
}

/// The `fileChange` part of a successful `write` or `edit`.
pub(super) fn file_change(
    tool: &str,
    args: &Value,
    details: &Value,
    cwd: &str,
) -> Option<ContentPart> {
    let path = resolve(args["path"].as_str()?, cwd);
    let (change_kind, diff) = if tool == "write" {
        let content = args["content"].as_str().unwrap_or_default();
        (FileChangeKind::Add, Some(creation_diff(&path, content)))
    } else {
        let diff = details["diff"]
            .as_str()
            .and_then(|numbered| numbered_diff(&path, numbered))
            .or_else(|| edits_diff(&path, args));
        (FileChangeKind::Update, diff)
    };
    Some(ContentPart::FileChange {
        path,
        change_kind,
        diff,
    })
}

fn header(path: &str, created: bool) -> String {
    let path = path.trim_start_matches('/');
    let old = if created {
        "/dev/null".to_string()
    } else {
        format!("a/{path}")
    };
    format!("--- {old}\n+++ b/{path}\n")
}

/// A unified diff that creates `path` with `content`.
pub(super) fn creation_diff(path: &str, content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let mut diff = header(path, true);
    diff.push_str(&format!("@@ -0,0 +1,{} @@\n", lines.len()));
    for line in lines {
        diff.push('+');
        diff.push_str(line);
        diff.push('\n');
    }
    diff
}

/// One hunk being rebuilt.
#[derive(Default)]
struct Hunk {
    old_start: i64,
    new_start: i64,
    old_lines: i64,
    new_lines: i64,
    lines: String,
}

/// A unified diff from Pi's numbered edit diff (`generateDiffString`): lines `+N text`
/// (N in the new file), `-N text` and ` N text` (N in the old file), and ` ...` between
/// hunks. `None` when it does not read as one.
pub(super) fn numbered_diff(path: &str, numbered: &str) -> Option<String> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current: Option<Hunk> = None;
    // New line number minus old line number, before the current line.
    let mut offset: i64 = 0;
    for line in numbered.lines() {
        let mut chars = line.chars();
        let sign = chars.next()?;
        let rest = chars.as_str().trim_start();
        if sign == ' ' && rest == "..." {
            hunks.extend(current.take());
            continue;
        }
        let (number, text) = rest.split_once(' ').unwrap_or((rest, ""));
        let number: i64 = number.parse().ok()?;
        let hunk = current.get_or_insert_with(|| {
            let (old_start, new_start) = match sign {
                '+' => (number - offset, number),
                _ => (number, number + offset),
            };
            Hunk {
                old_start,
                new_start,
                ..Hunk::default()
            }
        });
        match sign {
            '+' => {
                hunk.new_lines += 1;
                offset += 1;
            }
            '-' => {
                hunk.old_lines += 1;
                offset -= 1;
            }
            ' ' => {
                hunk.old_lines += 1;
                hunk.new_lines += 1;
            }
            _ => return None,
        }
        hunk.lines.push(sign);
        hunk.lines.push_str(text);
        hunk.lines.push('\n');
    }
    hunks.extend(current);
    if hunks.is_empty() {
        return None;
    }
    let mut diff = header(path, false);
    for hunk in hunks {
        diff.push_str(&format!(
            "@@ -{},{} +{},{} @@\n{}",
            hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines, hunk.lines
        ));
    }
    Some(diff)
}

/// A diff of an edit's input (`edits: [{oldText, newText}]`, or the older single
/// `oldText` / `newText`), without line numbers.
pub(super) fn edits_diff(path: &str, args: &Value) -> Option<String> {
    let edits: Vec<&Value> = match args["edits"].as_array() {
        Some(edits) => edits.iter().collect(),
        None => vec![args],
    };
    let mut diff = header(path, false);
    let mut any = false;
    for edit in edits {
        let (Some(old), Some(new)) = (edit["oldText"].as_str(), edit["newText"].as_str()) else {
            continue;
        };
        any = true;
        diff.push_str("@@\n");
        for line in old.lines() {
            diff.push_str(&format!("-{line}\n"));
        }
        for line in new.lines() {
            diff.push_str(&format!("+{line}\n"));
        }
    }
    any.then_some(diff)
}
