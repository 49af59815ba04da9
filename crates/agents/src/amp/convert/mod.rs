//! Amp's stream JSON → universal events: Claude Code's format (`system` init, whole
//! `assistant` messages, `user` tool results, `result`), so Claude's converter runs it with
//! Amp's [`AMP`] dialect. What Amp does differently, from the pinned binary and
//! `@sourcegraph/amp-sdk`'s types:
//! - no `stream_event` lines (no token deltas): each text arrives whole, as one item;
//! - `assistant.message` has no `id` or `model`; `system/init` carries `agent_mode`;
//! - a failed `result` has `error` (not `result`) and no `usage`;
//! - its tools: `shell_command` (and the older `Bash`) run commands; `apply_patch` (a Codex
//!   patch in `patchText`), `create_file` and `edit_file` change files.

mod protocol;

pub use protocol::AmpProtocol;

use crate::claude::convert::{Converter, Dialect, FileTool};

/// Amp's tools.
pub const AMP: Dialect = Dialect {
    agent: sandbox_universal::AgentId::Amp,
    command_tools: &["shell_command", "Bash"],
    file_tools: &[
        FileTool {
            name: "apply_patch",
            path: &[],
            content: None,
            replace: None,
            patch: Some("patchText"),
        },
        FileTool {
            name: "create_file",
            path: &["path"],
            content: Some("content"),
            replace: None,
            patch: None,
        },
        FileTool {
            name: "edit_file",
            path: &["path"],
            content: None,
            replace: Some(("old_str", "new_str")),
            patch: None,
        },
    ],
    // What the pinned binary answers for a tool its permission rules or delegate program
    // refused (`A_e`, `F9t`): the tool did not run.
    not_run_prefixes: &["Tool rejected by plugin:", "Plugin error:"],
};

/// A converter for an Amp session working in `cwd`.
pub fn converter(cwd: impl Into<String>) -> Converter {
    Converter::with_dialect(cwd, &AMP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CollectingSink;
    use sandbox_universal::{ContentPart, EventPayload, ItemKind, StopReason};
    use serde_json::json;

    use crate::kernel::Protocol;

    #[test]
    fn a_documented_turn_with_a_command_and_a_patch() {
        let (_, sink) = CollectingSink::new();
        let mut converter = converter("/w");
        converter.begin_turn("turn_1", &"".into());
        converter.turn_delivered(None);
        let lines = [
            json!({"type": "system", "subtype": "init", "cwd": "/w", "session_id": "T-1",
                   "tools": ["shell_command", "apply_patch"], "mcp_servers": [], "agent_mode": "medium"}),
            json!({"type": "assistant", "session_id": "T-1", "parent_tool_use_id": null,
                   "message": {"type": "message", "role": "assistant", "stop_reason": "tool_use",
                   "content": [{"type": "text", "text": "Running it."},
                               {"type": "tool_use", "id": "toolu_1", "name": "shell_command",
                                "input": {"command": "echo hi", "workdir": "/w"}}]}}),
            json!({"type": "user", "session_id": "T-1", "parent_tool_use_id": null,
                   "message": {"role": "user", "content": [{"type": "tool_result",
                   "tool_use_id": "toolu_1", "content": "hi\n", "is_error": false}]}}),
            json!({"type": "assistant", "session_id": "T-1", "parent_tool_use_id": null,
                   "message": {"type": "message", "role": "assistant", "stop_reason": "tool_use",
                   "content": [{"type": "tool_use", "id": "toolu_2", "name": "apply_patch",
                                "input": {"patchText": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"}}]}}),
            json!({"type": "user", "session_id": "T-1", "parent_tool_use_id": null,
                   "message": {"role": "user", "content": [{"type": "tool_result",
                   "tool_use_id": "toolu_2", "content": "Done", "is_error": false}]}}),
            json!({"type": "result", "subtype": "success", "duration_ms": 900, "is_error": false,
                   "num_turns": 2, "result": "Running it.", "session_id": "T-1"}),
        ];
        let events: Vec<_> = lines
            .iter()
            .flat_map(|line| converter.convert(line, &sink).events)
            .collect();
        let kinds: Vec<ItemKind> = events
            .iter()
            .filter_map(|e| match &e.payload {
                EventPayload::ItemCompleted(i) => Some(i.item.kind),
                _ => None,
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ItemKind::Message,
                ItemKind::ToolCall,
                ItemKind::CommandExecution,
                ItemKind::ToolCall,
                ItemKind::FileChange
            ]
        );
        let change = events
            .iter()
            .find_map(|e| match &e.payload {
                EventPayload::ItemCompleted(i) if i.item.kind == ItemKind::FileChange => {
                    Some(i.item.clone())
                }
                _ => None,
            })
            .unwrap();
        assert!(
            matches!(&change.content[0], ContentPart::FileChange { path, .. } if path == "/w/a.txt")
        );
        let Some(EventPayload::TurnEnded(end)) = events.last().map(|e| &e.payload) else {
            panic!("{events:#?}")
        };
        assert_eq!(end.stop_reason, StopReason::Completed);
    }

    #[test]
    fn a_failed_run_reports_amps_error_text() {
        let (_, sink) = CollectingSink::new();
        let mut converter = converter("/w");
        converter.begin_turn("turn_1", &"".into());
        converter.turn_delivered(None);
        let line = json!({"type": "result", "subtype": "error_during_execution", "duration_ms": 10,
            "is_error": true, "num_turns": 0, "error": "Out of credits", "session_id": "T-1"});
        let events = converter.convert(&line, &sink).events;
        let error = events
            .iter()
            .find_map(|e| match &e.payload {
                EventPayload::Error(error) => Some(error.message().to_string()),
                _ => None,
            })
            .unwrap();
        assert_eq!(error, "Out of credits");
    }
}
