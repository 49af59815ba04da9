//! Pi's portable state: its session file, `<timestamp>_<session id>.jsonl` in the session
//! dir the driver passes with `--session-dir` (the session's private `pi-sessions`). Its
//! first line is the header `{"type":"session","version":3,"id","timestamp","cwd"}`; the
//! entries after it form a tree (`id` / `parentId`), messages as `{"type":"message",
//! "message":{role: user | assistant | toolResult, ...}}` (the shapes of Pi's
//! `dist/core/session-manager.js` and of files the CLI writes).
//!
//! - Export copies the file (`session.jsonl` in the [`NativeState`]).
//! - Import files it under its own name in the new session dir with the header's `cwd`
//!   set to the new directory (Pi runs a resumed session in the header's directory, and
//!   refuses one whose directory does not exist), and the old directory's paths in the
//!   entries (tool arguments and outputs) moved there too. The id stays; `--session <id>`
//!   resumes it.
//! - [`native_history`] writes a session file of another agent's conversation (see
//!   [`crate::replay`]): shell commands as Pi's `bash` tool calls with their results,
//!   other tools' calls under their own names (Pi replays any tool call it finds).

use std::path::{Path, PathBuf};

use sandbox_universal::AgentError;
use sandbox_universal::history::History;
use serde_json::{Value, json};

use super::launch::PiDirs;
use crate::portable::{NativeState, write_private};
use crate::relocate::rewrite_paths;
use crate::replay::{self, Block, Message, Target};

/// The session file's name in a [`NativeState`].
pub const SESSION_FILE: &str = "session.jsonl";

/// The session file format Pi writes (`CURRENT_SESSION_VERSION`).
const SESSION_VERSION: u64 = 3;

/// The `api` of the assistant messages Pi did not write: no provider's, so Pi treats them
/// as another model's (their tool call ids are normalised for the model it runs).
const HISTORY_API: &str = "sandbox-daemon-history";

/// The session file of Pi's session `id` in the session dir `sessions`: the one named
/// after the id, else the one whose header has it.
pub fn find_session(sessions: &Path, id: &str) -> Option<PathBuf> {
    let files: Vec<PathBuf> = std::fs::read_dir(sessions)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    let suffix = format!("_{id}.jsonl");
    files
        .iter()
        .find(|path| path.to_string_lossy().ends_with(&suffix))
        .or_else(|| {
            files.iter().find(|path| {
                std::fs::read(path)
                    .ok()
                    .and_then(|bytes| header(&bytes).ok())
                    .is_some_and(|header| header["id"] == id)
            })
        })
        .cloned()
}

/// The native state of Pi's session `id` (run in `cwd`, private state in `state_dir`).
pub fn export(state_dir: &Path, cwd: &str, id: Option<&str>) -> Result<NativeState, AgentError> {
    let id = id.ok_or_else(|| {
        AgentError::protocol("Pi never reported a session id, so there is nothing to export")
    })?;
    let sessions = PiDirs::new(state_dir).sessions;
    let path = find_session(&sessions, id).ok_or_else(|| {
        AgentError::protocol(format!(
            "Pi's session file of {id} is not in {} (Pi writes it once the model answered)",
            sessions.display()
        ))
    })?;
    let bytes = std::fs::read(&path).map_err(|e| {
        AgentError::protocol(format!("reading Pi's session file {}: {e}", path.display()))
    })?;
    Ok(NativeState::single(
        Some(id.to_string()),
        cwd,
        SESSION_FILE,
        bytes,
    ))
}

/// Files `state` in the session dir of the session whose private state is `state_dir`,
/// its header moved to `cwd`; answers the session id to resume (the header's).
pub fn import(state_dir: &Path, cwd: &str, state: &NativeState) -> Result<String, AgentError> {
    let bytes = state.require(SESSION_FILE)?;
    let mut head = header(bytes).map_err(AgentError::protocol)?;
    let id = head["id"]
        .as_str()
        .filter(|id| {
            !id.is_empty()
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        .ok_or_else(|| {
            AgentError::protocol(format!(
                "the Pi session header has no usable id: {}",
                head["id"]
            ))
        })?
        .to_string();
    if let Some(expected) = &state.native_session_id
        && *expected != id
    {
        return Err(AgentError::protocol(format!(
            "the Pi session file is session {id}, not {expected}"
        )));
    }
    let stamp = head["timestamp"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(now);
    head["cwd"] = Value::String(cwd.to_string());
    let mut moved = serde_json::to_vec(&head).expect("JSON values serialise");
    moved.push(b'\n');
    moved.extend(relocate(bytes, &state.cwd, cwd));
    let path = PiDirs::new(state_dir).sessions.join(file_name(&stamp, &id));
    write_private(&path, &moved).map_err(|e| {
        AgentError::protocol(format!("writing Pi's session file {}: {e}", path.display()))
    })?;
    Ok(id)
}

/// The entries (the lines after the header) with every path in `from` moved to `to`, so
/// the conversation names the directory the session now runs in; lines that mention none
/// (or do not parse) are kept byte for byte.
fn relocate(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split(|b| *b == b'\n').skip(1) {
        if line.is_empty() {
            continue;
        }
        let moved = serde_json::from_slice::<Value>(line)
            .ok()
            .and_then(|mut value| {
                (rewrite_paths(&mut value, from, to) > 0).then(|| value.to_string())
            });
        out.extend_from_slice(moved.as_ref().map_or(line, |m| m.as_bytes()));
        out.push(b'\n');
    }
    out
}

/// The header (first line) of a session file.
fn header(bytes: &[u8]) -> Result<Value, String> {
    let first = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    let head: Value = serde_json::from_slice(first)
        .map_err(|e| format!("the Pi session file does not open with a JSON header: {e}"))?;
    if head["type"] != "session" {
        return Err(format!(
            "the Pi session file does not open with a session header: {head}"
        ));
    }
    Ok(head)
}

/// The name Pi gives a session file: the header's timestamp (`:` and `.` as `-`), `_`, id.
fn file_name(timestamp: &str, id: &str) -> String {
    format!("{}_{id}.jsonl", timestamp.replace([':', '.'], "-"))
}

fn now() -> String {
    stamp(chrono::Utc::now())
}

fn stamp(time: chrono::DateTime<chrono::Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `history` as the session file of a new Pi session in `cwd` (its id is the state's
/// native id). `model` (`provider/id`, the model the session runs) is named on the
/// assistant messages, so a resumed Pi keeps it when no `--model` is passed.
pub fn native_history(history: &History, cwd: &str, model: Option<&str>) -> NativeState {
    let id = uuid::Uuid::new_v4().to_string();
    let mut new_id = || format!("call_{}", &uuid::Uuid::new_v4().simple().to_string()[..24]);
    let messages = replay::messages(
        history,
        Target {
            shell: "bash",
            new_id: &mut new_id,
        },
    );
    let (provider, model) = model
        .and_then(|m| m.split_once('/'))
        .unwrap_or(("sandbox-daemon", "history"));
    let mut file = SessionFile {
        clock: chrono::Utc::now(),
        parent: None,
        ids: std::collections::HashSet::new(),
        bytes: Vec::new(),
        provider,
        model,
    };
    let header = json!({
        "type": "session",
        "version": SESSION_VERSION,
        "id": id,
        "timestamp": stamp(file.clock),
        "cwd": cwd,
    });
    file.line(&header);
    for message in &messages {
        let message = file.message(message);
        file.entry(message);
    }
    NativeState::single(Some(id), cwd, SESSION_FILE, file.bytes)
}

/// A session file being written.
struct SessionFile<'a> {
    clock: chrono::DateTime<chrono::Utc>,
    parent: Option<String>,
    ids: std::collections::HashSet<String>,
    bytes: Vec<u8>,
    provider: &'a str,
    model: &'a str,
}

impl SessionFile<'_> {
    fn line(&mut self, value: &Value) {
        serde_json::to_writer(&mut self.bytes, value).expect("JSON values serialise");
        self.bytes.push(b'\n');
    }

    /// Appends a message entry (a child of the last one).
    fn entry(&mut self, message: Value) {
        let id = loop {
            let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
            if self.ids.insert(id.clone()) {
                break id;
            }
        };
        let entry = json!({
            "type": "message",
            "id": id,
            "parentId": self.parent,
            "timestamp": stamp(self.clock),
            "message": message,
        });
        self.line(&entry);
        self.parent = Some(id);
    }

    /// A message in Pi's form; each one a millisecond after the last.
    fn message(&mut self, message: &Message) -> Value {
        self.clock += chrono::Duration::milliseconds(1);
        let timestamp = self.clock.timestamp_millis();
        match message {
            Message::User(text) => json!({
                "role": "user",
                "content": [{"type": "text", "text": text}],
                "timestamp": timestamp,
            }),
            Message::ToolResult(result) => json!({
                "role": "toolResult",
                "toolCallId": result.call_id,
                "toolName": result.name,
                "content": [{"type": "text", "text": result.text}],
                "isError": result.is_error,
                "timestamp": timestamp,
            }),
            Message::Assistant(blocks) => {
                let content: Vec<Value> = blocks
                    .iter()
                    .map(|block| match block {
                        Block::Text(text) => json!({"type": "text", "text": text}),
                        Block::Call(call) => json!({
                            "type": "toolCall",
                            "id": call.id,
                            "name": call.name,
                            "arguments": call.input,
                        }),
                    })
                    .collect();
                let calls = matches!(blocks.last(), Some(Block::Call(_)));
                json!({
                    "role": "assistant",
                    "content": content,
                    "api": HISTORY_API,
                    "provider": self.provider,
                    "model": self.model,
                    "usage": {
                        "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                    },
                    "stopReason": if calls { "toolUse" } else { "stop" },
                    "timestamp": timestamp,
                })
            }
        }
    }
}

#[cfg(test)]
#[path = "portable_tests.rs"]
mod tests;
