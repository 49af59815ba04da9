//! Tool results: the dialect's command tools (Claude's `Bash`) → `commandExecution` (command,
//! output, exit code), its file tools (Claude's Write / Edit / MultiEdit / NotebookEdit) →
//! `fileChange` (path, kind, unified diff), anything else (and tools that did not run, e.g.
//! a denied permission) → `toolResult`.

use sandbox_universal::{ContentPart, FileChangeKind, Item, ItemKind, ItemRole, ItemStatus};
use serde_json::Value;

use super::dialect::{Dialect, FileTool};
use super::items::{Call, Items};
use crate::claude::native::{Block, UserLine};
use crate::items::finished_item;
use crate::{AgentEvent, SessionIds};

/// Converts one `tool_result` block of a `user` line.
pub fn tool_result(
    block: &Value,
    line: &UserLine,
    (items, dialect): (&Items, &Dialect),
    cwd: &str,
    raw: &Value,
    ids: &dyn SessionIds,
) -> Result<Vec<AgentEvent>, String> {
    let Block::ToolResult {
        tool_use_id,
        content,
        is_error,
    } = serde_json::from_value(block.clone()).map_err(|e| format!("bad tool_result block: {e}"))?
    else {
        return Err("expected a tool_result block".into());
    };
    let output = content_text(&content);
    let ran = !line
        .tool_result_meta
        .iter()
        .any(|m| m.id == tool_use_id && m.non_execution_kind.is_some())
        && !dialect.not_run(&output);
    let structured = line.tool_use_result.as_ref();
    let call = items.call(&tool_use_id);
    let status = if is_error {
        ItemStatus::Failed
    } else {
        ItemStatus::Completed
    };
    let id = ids.next_id("itm");
    let item = match call {
        Some(call) if ran && dialect.is_command(&call.name) => {
            command_item(id, call, &output, is_error, structured, cwd)
        }
        Some(call) if ran && !is_error && dialect.file_tool(&call.name).is_some() => {
            let tool = dialect.file_tool(&call.name).expect("a file tool");
            file_change_item(id, call, tool, structured, cwd)
        }
        _ if !ran => Item::new(id, ItemKind::ToolResult, ItemStatus::Failed)
            .with_role(ItemRole::Tool)
            .with_content(ContentPart::ToolResult {
                call_id: tool_use_id.clone(),
                output,
                is_error: true,
            }),
        _ => Item::new(id, ItemKind::ToolResult, status)
            .with_role(ItemRole::Tool)
            .with_content(ContentPart::ToolResult {
                call_id: tool_use_id.clone(),
                output,
                is_error,
            }),
    };
    let failed = item.status == ItemStatus::Failed;
    let mut item = item.with_native_id(tool_use_id);
    item.status = if failed { ItemStatus::Failed } else { status };
    item.parent_id = call.map(|c| c.item_id.clone());
    Ok(finished_item(item, raw))
}

/// The text of a tool result's content (a string or text blocks; a `tool_reference`
/// block, which `ToolSearch` returns for each tool it loaded, reads as the tool's name).
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p["type"].as_str() {
                Some("tool_reference") => p["tool_name"].as_str(),
                _ => p["text"].as_str(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn command_item(
    id: String,
    call: &Call,
    output: &str,
    is_error: bool,
    structured: Option<&Value>,
    cwd: &str,
) -> Item {
    let command = call.input["command"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // Amp's `shell_command` may run elsewhere than the session's cwd.
    let cwd = call.input["workdir"].as_str().unwrap_or(cwd);
    let (code, rest) = split_exit_code(output);
    let text = match structured {
        Some(Value::Object(result)) if result.contains_key("stdout") => {
            let stdout = result["stdout"].as_str().unwrap_or_default();
            let stderr = result["stderr"].as_str().unwrap_or_default();
            match (stdout.is_empty(), stderr.is_empty()) {
                (_, true) => stdout.to_string(),
                (true, false) => stderr.to_string(),
                (false, false) => format!("{stdout}\n{stderr}"),
            }
        }
        _ => rest.to_string(),
    };
    let interrupted = structured.is_some_and(|s| s["interrupted"] == true);
    let exit_code = match (is_error, interrupted) {
        (_, true) => None,
        (true, false) => code,
        (false, false) => Some(0),
    };
    Item::new(id, ItemKind::CommandExecution, ItemStatus::Completed)
        .with_role(ItemRole::Assistant)
        .with_content(ContentPart::CommandExecution {
            command,
            cwd: Some(cwd.to_string()),
            output: Some(text),
            exit_code,
        })
}

/// Splits Claude's `Exit code N\n` prefix off a failed command's output.
fn split_exit_code(output: &str) -> (Option<i32>, &str) {
    let Some(rest) = output.strip_prefix("Exit code ") else {
        return (None, output);
    };
    let (number, tail) = rest.split_once('\n').unwrap_or((rest, ""));
    match number.trim().parse() {
        Ok(code) => (Some(code), tail),
        Err(_) => (None, output),
    }
}

fn file_change_item(
    id: String,
    call: &Call,
    tool: &FileTool,
    structured: Option<&Value>,
    cwd: &str,
) -> Item {
    let input = &call.input;
    if let Some(patch) = tool.patch.and_then(|key| input[key].as_str()) {
        let mut item = Item::new(id, ItemKind::FileChange, ItemStatus::Completed)
            .with_role(ItemRole::Assistant);
        item.content = super::patch::file_changes(patch, cwd);
        return item;
    }
    let path = tool
        .path
        .iter()
        .find_map(|key| input[*key].as_str())
        .unwrap_or_default()
        .to_string();
    let created = structured.is_some_and(|s| s["type"] == "create");
    let hunks = structured
        .and_then(|s| s["structuredPatch"].as_array())
        .filter(|h| !h.is_empty());
    let diff = match (hunks, tool.content, tool.replace) {
        (Some(hunks), _, _) => Some(render_patch(&path, hunks, created)),
        (None, Some(content), _) => input[content]
            .as_str()
            .map(|content| creation_diff(&path, content)),
        (None, None, Some(keys)) => edit_diff(&path, input, keys),
        (None, None, None) => None,
    };
    Item::new(id, ItemKind::FileChange, ItemStatus::Completed)
        .with_role(ItemRole::Assistant)
        .with_content(ContentPart::FileChange {
            path,
            change_kind: if created {
                FileChangeKind::Add
            } else {
                FileChangeKind::Update
            },
            diff,
        })
}

fn header(path: &str, created: bool) -> String {
    let old = if created {
        "/dev/null".to_string()
    } else {
        format!("a/{}", path.trim_start_matches('/'))
    };
    format!("--- {old}\n+++ b/{}\n", path.trim_start_matches('/'))
}

/// A unified diff from the CLI's `structuredPatch` hunks.
fn render_patch(path: &str, hunks: &[Value], created: bool) -> String {
    let mut diff = header(path, created);
    for hunk in hunks {
        let n = |k: &str| hunk[k].as_u64().unwrap_or(0);
        diff.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            n("oldStart"),
            n("oldLines"),
            n("newStart"),
            n("newLines")
        ));
        for line in hunk["lines"].as_array().into_iter().flatten() {
            diff.push_str(line.as_str().unwrap_or_default());
            diff.push('\n');
        }
    }
    diff
}

/// A unified diff that creates `path` with `content`.
pub fn creation_diff(path: &str, content: &str) -> String {
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

/// A diff of an edit's input (`(old, new)` keys, or an `edits` array of them) when the CLI
/// gave no hunks (no line numbers).
fn edit_diff(path: &str, input: &Value, (old_key, new_key): (&str, &str)) -> Option<String> {
    let edits: Vec<&Value> = match input["edits"].as_array() {
        Some(edits) => edits.iter().collect(),
        None => vec![input],
    };
    let mut diff = header(path, false);
    let mut any = false;
    for edit in edits {
        let (Some(old), Some(new)) = (edit[old_key].as_str(), edit[new_key].as_str()) else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exit_code_prefix_is_split_off() {
        assert_eq!(split_exit_code("Exit code 2\nboom"), (Some(2), "boom"));
        assert_eq!(split_exit_code("plain"), (None, "plain"));
        assert_eq!(split_exit_code("Exit code x\ny"), (None, "Exit code x\ny"));
    }

    #[test]
    fn tool_search_results_name_the_loaded_tools() {
        let loaded = json!([{"type": "tool_reference", "tool_name": "ExitPlanMode"},
            {"type": "tool_reference", "tool_name": "WebFetch"}]);
        assert_eq!(content_text(&loaded), "ExitPlanMode\nWebFetch");
        let text = json!([{"type": "text", "text": "a"}, {"type": "image"}]);
        assert_eq!(content_text(&text), "a");
    }

    #[test]
    fn diffs_from_hunks_content_and_edits() {
        let hunks = vec![
            json!({"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
            "lines": ["-a", "+b"]}),
        ];
        assert_eq!(
            render_patch("/w/f.txt", &hunks, false),
            "--- a/w/f.txt\n+++ b/w/f.txt\n@@ -1,1 +1,1 @@\n-a\n+b\n"
        );
        assert_eq!(
            creation_diff("/w/n.txt", "x\ny\n"),
            "--- /dev/null\n+++ b/w/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n"
        );
        let multi = json!({"file_path": "/w/f", "edits": [
            {"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]});
        assert_eq!(
            edit_diff("/w/f", &multi, ("old_string", "new_string")).unwrap(),
            "--- a/w/f\n+++ b/w/f\n@@\n-a\n+b\n@@\n-c\n+d\n"
        );
        assert_eq!(
            edit_diff(
                "/w/f",
                &json!({"file_path": "/w/f"}),
                ("old_string", "new_string")
            ),
            None
        );
    }
}
