//! Tool calls → items: `bash` → `commandExecution` (command, output, exit code from
//! `metadata.exit`); `write` / `edit` / `apply_patch` → `fileChange` (one part per file,
//! with a unified diff); `todowrite` → `plan`; any other tool (read, glob, grep, list,
//! webfetch, websearch, skill, lsp, question, task, invalid, MCP tools) → `toolCall`
//! followed by a `toolResult`. A call that failed (or was refused, or aborted) ends
//! `failed`, followed by a `toolResult` with the error the model read.

use sandbox_universal::{
    ContentPart, FileChangeKind, ItemKind, ItemStatus, PlanEntry, PlanEntryStatus,
};
use serde_json::{Value, json};

use crate::opencode::native::ToolState;

/// What a tool call's item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ToolKind {
    /// `bash`.
    Command,
    /// `write`, `edit`, `multiedit`, `apply_patch`, `patch`.
    FileChange,
    /// `todowrite`.
    Plan,
    /// Anything else.
    Call,
}

impl ToolKind {
    /// The universal item kind.
    pub fn item_kind(self) -> ItemKind {
        match self {
            Self::Command => ItemKind::CommandExecution,
            Self::FileChange => ItemKind::FileChange,
            Self::Plan => ItemKind::Plan,
            Self::Call => ItemKind::ToolCall,
        }
    }
}

/// The item kind of a tool, by name.
pub(super) fn kind_of(tool: &str) -> ToolKind {
    match tool {
        "bash" => ToolKind::Command,
        "write" | "edit" | "multiedit" | "apply_patch" | "patch" => ToolKind::FileChange,
        "todowrite" => ToolKind::Plan,
        _ => ToolKind::Call,
    }
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value[key].as_str()
}

/// The item's content while the call runs: from its input, the running state's metadata
/// (or the permission's: `command`, `filepath`, `diff`), and the diff a permission showed.
/// A command's output is filled in by its deltas.
pub(super) fn content(
    kind: ToolKind,
    tool: &str,
    call_id: &str,
    input: &Value,
    metadata: &Value,
    cwd: &str,
    diff: Option<&str>,
) -> Vec<ContentPart> {
    match kind {
        ToolKind::Command => vec![ContentPart::CommandExecution {
            command: text(input, "command")
                .or_else(|| text(metadata, "command"))
                .unwrap_or_default()
                .to_string(),
            cwd: Some(cwd.to_string()),
            output: None,
            exit_code: None,
        }],
        ToolKind::FileChange => file_changes(input, metadata, diff),
        ToolKind::Plan => vec![plan(input, metadata)],
        ToolKind::Call => vec![ContentPart::ToolCall {
            call_id: call_id.to_string(),
            name: tool.to_string(),
            arguments: if input.is_null() {
                json!({})
            } else {
                input.clone()
            },
            mcp: None,
        }],
    }
}

/// Names the MCP server and tool of a `toolCall` part (a call of a session MCP server's
/// tool).
pub(super) fn set_mcp(content: &mut [ContentPart], tool: Option<sandbox_universal::McpToolRef>) {
    if let Some(tool) = tool {
        for part in content {
            if let ContentPart::ToolCall { mcp, .. } = part {
                *mcp = Some(tool.clone());
            }
        }
    }
}

/// A finished call: the item's status and content, and the `toolResult` (output, whether
/// it is an error) that follows it, if any.
pub(super) struct Finished {
    pub status: ItemStatus,
    pub content: Vec<ContentPart>,
    pub result: Option<(String, bool)>,
}

/// The final item of a call in its final `state`.
pub(super) fn finish(
    kind: ToolKind,
    tool: &str,
    call_id: &str,
    state: &ToolState,
    cwd: &str,
    diff: Option<&str>,
) -> Finished {
    let (input, metadata) = (state.input(), state.metadata());
    let (output, error) = match state {
        ToolState::Completed { output, .. } => (Some(output.as_str()), None),
        ToolState::Error { error, .. } => (None, Some(error.clone())),
        _ => (None, None),
    };
    let failed = error.is_some();
    let mut status = if failed {
        ItemStatus::Failed
    } else {
        ItemStatus::Completed
    };
    let content = match kind {
        ToolKind::Command => {
            let exit_code = metadata["exit"]
                .as_i64()
                .and_then(|c| i32::try_from(c).ok());
            if exit_code.is_some_and(|c| c != 0) {
                status = ItemStatus::Failed;
            }
            let output = output
                .filter(|o| !o.is_empty())
                .or_else(|| text(metadata, "output"))
                .filter(|o| !o.is_empty() || !failed)
                .map(str::to_string);
            vec![ContentPart::CommandExecution {
                command: text(input, "command").unwrap_or_default().to_string(),
                cwd: Some(cwd.to_string()),
                output,
                exit_code,
            }]
        }
        _ => content(kind, tool, call_id, input, metadata, cwd, diff),
    };
    let result = match (kind, error) {
        (_, Some(error)) => Some((error, true)),
        (ToolKind::Call, None) => Some((output.unwrap_or_default().to_string(), false)),
        _ => None,
    };
    Finished {
        status,
        content,
        result,
    }
}

/// The files of a `write` / `edit` / `apply_patch` call.
fn file_changes(
    input: &Value,
    metadata: &Value,
    permission_diff: Option<&str>,
) -> Vec<ContentPart> {
    if let Some(files) = metadata["files"].as_array() {
        // apply_patch: {filePath, type: add|update|move|delete, patch, movePath?}.
        return files
            .iter()
            .filter_map(|file| {
                let path = text(file, "movePath")
                    .filter(|_| file["type"] == "move")
                    .or_else(|| text(file, "filePath"))?;
                Some(ContentPart::FileChange {
                    path: path.to_string(),
                    change_kind: match text(file, "type") {
                        Some("add") => FileChangeKind::Add,
                        Some("delete") => FileChangeKind::Delete,
                        _ => FileChangeKind::Update,
                    },
                    diff: text(file, "patch")
                        .filter(|p| !p.is_empty())
                        .map(str::to_string),
                })
            })
            .collect();
    }
    let Some(path) = text(input, "filePath")
        .or_else(|| text(&metadata["filediff"], "file"))
        .or_else(|| text(metadata, "filepath"))
    else {
        return Vec::new();
    };
    let exists = metadata["exists"].as_bool();
    let diff = text(&metadata["filediff"], "patch")
        .or_else(|| text(metadata, "diff"))
        .or(permission_diff)
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .or_else(|| {
            // A write that created the file (allowed without asking: no diff was shown).
            (exists == Some(false))
                .then(|| text(input, "content"))
                .flatten()
                .map(|content| creation_diff(path, content))
        });
    let change_kind = match exists {
        Some(true) => FileChangeKind::Update,
        Some(false) => FileChangeKind::Add,
        None if diff.as_deref().is_some_and(creates) => FileChangeKind::Add,
        None => FileChangeKind::Update,
    };
    vec![ContentPart::FileChange {
        path: path.to_string(),
        change_kind,
        diff,
    }]
}

/// Whether a unified diff creates its file (its only hunk starts at `-0,0`).
fn creates(diff: &str) -> bool {
    let hunks: Vec<&str> = diff.lines().filter(|l| l.starts_with("@@")).collect();
    !hunks.is_empty() && hunks.iter().all(|h| h.starts_with("@@ -0,0 "))
}

/// A unified diff that creates `path` with `content`.
pub(super) fn creation_diff(path: &str, content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let mut diff = format!("--- /dev/null\n+++ {path}\n@@ -0,0 +1,{} @@\n", lines.len());
    for line in lines {
        diff.push('+');
        diff.push_str(line);
        diff.push('\n');
    }
    diff
}

/// A `todowrite` list: `todos[{content, status, priority}]`. A `cancelled` entry is no
/// longer to do: it reads as completed (the universal plan has no cancelled state).
fn plan(input: &Value, metadata: &Value) -> ContentPart {
    let todos = input["todos"]
        .as_array()
        .or_else(|| metadata["todos"].as_array());
    let entries = todos
        .into_iter()
        .flatten()
        .map(|todo| PlanEntry {
            content: text(todo, "content").unwrap_or_default().to_string(),
            status: match text(todo, "status") {
                Some("in_progress") => PlanEntryStatus::InProgress,
                Some("completed" | "cancelled") => PlanEntryStatus::Completed,
                _ => PlanEntryStatus::Pending,
            },
        })
        .collect();
    ContentPart::Plan {
        entries,
        text: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_tools_carry_diffs() {
        let write = json!({"filePath": "/w/new.txt", "content": "a\nb\n"});
        let created = json!({"filepath": "/w/new.txt", "exists": false});
        assert_eq!(
            file_changes(&write, &created, None),
            vec![ContentPart::FileChange {
                path: "/w/new.txt".into(),
                change_kind: FileChangeKind::Add,
                diff: Some("--- /dev/null\n+++ /w/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n".into()),
            }]
        );
        let updated = json!({"filepath": "/w/new.txt", "exists": true});
        let shown = "--- /w/new.txt\n+++ /w/new.txt\n@@ -1,1 +1,1 @@\n-x\n+a\n";
        let ContentPart::FileChange {
            change_kind, diff, ..
        } = &file_changes(&write, &updated, Some(shown))[0]
        else {
            unreachable!()
        };
        assert_eq!(
            (*change_kind, diff.as_deref()),
            (FileChangeKind::Update, Some(shown))
        );
        let edit = json!({"filediff": {"file": "/w/f.rs", "patch": "@@ -1 +1 @@\n-a\n+b\n"}});
        assert!(matches!(&file_changes(&json!({}), &edit, None)[0],
            ContentPart::FileChange { path, change_kind: FileChangeKind::Update, diff: Some(d) }
                if path == "/w/f.rs" && d.contains("+b")));
        let patch = json!({"files": [
            {"filePath": "/w/a", "type": "add", "patch": "+x"},
            {"filePath": "/w/b", "type": "delete", "patch": ""},
            {"filePath": "/w/c", "type": "move", "movePath": "/w/d", "patch": "-y\n+z"}]});
        let files = file_changes(&json!({}), &patch, None);
        let kinds: Vec<_> = files
            .iter()
            .map(|f| match f {
                ContentPart::FileChange {
                    path, change_kind, ..
                } => (path.as_str(), *change_kind),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("/w/a", FileChangeKind::Add),
                ("/w/b", FileChangeKind::Delete),
                ("/w/d", FileChangeKind::Update)
            ]
        );
    }

    #[test]
    fn todos_become_plan_entries() {
        let input = json!({"todos": [
            {"content": "a", "status": "completed", "priority": "high"},
            {"content": "b", "status": "in_progress"},
            {"content": "c", "status": "pending"},
            {"content": "d", "status": "cancelled"}]});
        let ContentPart::Plan { entries, .. } = plan(&input, &Value::Null) else {
            unreachable!()
        };
        let statuses: Vec<_> = entries.iter().map(|e| e.status).collect();
        assert_eq!(
            statuses,
            [
                PlanEntryStatus::Completed,
                PlanEntryStatus::InProgress,
                PlanEntryStatus::Pending,
                PlanEntryStatus::Completed
            ]
        );
    }

    #[test]
    fn a_failing_command_keeps_its_exit_code() {
        let state: ToolState = serde_json::from_value(json!({"status": "completed",
            "input": {"command": "false"}, "output": "", "metadata": {"output": "", "exit": 1}}))
        .unwrap();
        let done = finish(ToolKind::Command, "bash", "c1", &state, "/w", None);
        assert_eq!(done.status, ItemStatus::Failed);
        assert!(matches!(
            &done.content[0],
            ContentPart::CommandExecution {
                exit_code: Some(1),
                ..
            }
        ));
        assert!(done.result.is_none());
    }
}
