//! Claude Code's portable state: the session's transcript,
//! `$CLAUDE_CONFIG_DIR/projects/<key of the cwd>/<session id>.jsonl` (the config dir is the
//! session's private `home/.claude`), one JSON line per entry.
//!
//! - Export copies the transcript (`transcript.jsonl` in the [`NativeState`]).
//! - Import files it under the key of the new cwd with the `cwd` field of every line
//!   moved to the new directory (lines keep everything else: Claude itself notices the
//!   move from its environment snapshots and tells the model the working directory
//!   changed). The session keeps its id; `--resume <id>` continues it.
//! - [`native_history`] writes a transcript of another agent's conversation: user and
//!   assistant lines chained by `uuid` / `parentUuid`, messages in Anthropic Messages
//!   form (see [`crate::replay`]: shell commands as `Bash` `tool_use` + `tool_result`,
//!   other tools' calls under their own names, which the CLI passes through as they are).

use std::path::{Path, PathBuf};

use sandbox_universal::AgentError;
use sandbox_universal::history::History;
use serde_json::{Value, json};

use super::launch;
use crate::portable::{NativeState, write_private};
use crate::replay::{self, Block, Message, Target};

/// The transcript's name in a [`NativeState`].
pub const TRANSCRIPT_FILE: &str = "transcript.jsonl";

/// The longest project key the CLI keeps whole; longer ones are cut and get a hash.
const KEY_LIMIT: usize = 200;

/// The model named on the assistant lines Claude did not write (the CLI's own marker for
/// messages no model produced).
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// The project directory name Claude keys a working directory by: every character but
/// ASCII letters and digits becomes `-` (one per UTF-16 unit, as the CLI counts), and a
/// key over 200 characters keeps its first 200 and gains `-<base 36 hash of the cwd>`.
pub fn project_key(cwd: &str) -> String {
    let mut key = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            key.push(c);
        } else {
            (0..c.len_utf16()).for_each(|_| key.push('-'));
        }
    }
    if key.len() <= KEY_LIMIT {
        return key;
    }
    key.truncate(KEY_LIMIT);
    let hash = cwd.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_shl(5)
            .wrapping_sub(h)
            .wrapping_add(i32::from(unit))
    });
    format!("{key}-{}", base36(i64::from(hash).unsigned_abs()))
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

/// The transcript of session `id` of a session whose private state is `state_dir`, filed
/// for `cwd`.
pub fn transcript_path(state_dir: &Path, cwd: &str, id: &str) -> PathBuf {
    launch::config_dir(&launch::home_dir(state_dir))
        .join("projects")
        .join(project_key(cwd))
        .join(format!("{id}.jsonl"))
}

/// Where the transcript of session `id` is: under the key of `cwd`, else under any
/// project key (`--resume` finds it there too).
pub fn find_transcript(state_dir: &Path, cwd: &str, id: &str) -> Option<PathBuf> {
    let filed = transcript_path(state_dir, cwd, id);
    if filed.is_file() {
        return Some(filed);
    }
    let projects = launch::config_dir(&launch::home_dir(state_dir)).join("projects");
    std::fs::read_dir(projects)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path().join(format!("{id}.jsonl")))
        .find(|path| path.is_file())
}

/// The native state of session `id` (run in `cwd` with its private state in `state_dir`).
pub fn export(state_dir: &Path, cwd: &str, id: Option<&str>) -> Result<NativeState, AgentError> {
    let id = id.ok_or_else(|| {
        AgentError::protocol("no Claude session id was recorded, so there is nothing to export")
    })?;
    let path = find_transcript(state_dir, cwd, id).ok_or_else(|| {
        AgentError::protocol(format!(
            "Claude's transcript of session {id} is not in the session's state (no message reached it yet?)"
        ))
    })?;
    let bytes = std::fs::read(&path).map_err(|e| {
        AgentError::protocol(format!(
            "reading Claude's transcript {}: {e}",
            path.display()
        ))
    })?;
    Ok(NativeState::single(
        Some(id.to_string()),
        cwd,
        TRANSCRIPT_FILE,
        bytes,
    ))
}

/// Files `state` (a transcript written for `state.cwd`) in the session whose private
/// state is `state_dir`, for `cwd`; answers the session id to resume.
pub fn import(state_dir: &Path, cwd: &str, state: &NativeState) -> Result<String, AgentError> {
    let bytes = state.require(TRANSCRIPT_FILE)?;
    let id = match &state.native_session_id {
        Some(id) => id.clone(),
        None => session_id_of(bytes)
            .ok_or_else(|| AgentError::protocol("the Claude transcript names no session id"))?,
    };
    if uuid::Uuid::parse_str(&id).is_err() {
        return Err(AgentError::protocol(format!(
            "`{id}` is not a Claude session id (a UUID)"
        )));
    }
    let moved = move_cwd(bytes, &state.cwd, cwd);
    let path = transcript_path(state_dir, cwd, &id);
    write_private(&path, &moved).map_err(|e| {
        AgentError::protocol(format!(
            "writing Claude's transcript {}: {e}",
            path.display()
        ))
    })?;
    Ok(id)
}

/// The first `sessionId` of a transcript.
fn session_id_of(bytes: &[u8]) -> Option<String> {
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .find_map(|line| line["sessionId"].as_str().map(str::to_string))
}

/// The transcript with every line's `cwd` inside `from` moved to `to` (lines without one,
/// or that do not parse, unchanged).
pub fn move_cwd(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let moved = serde_json::from_slice::<Value>(line)
            .ok()
            .and_then(|mut value| {
                let cwd = value.get("cwd")?.as_str()?;
                let rest = cwd.strip_prefix(from)?;
                if !(rest.is_empty() || rest.starts_with('/')) || from == to {
                    return None;
                }
                value["cwd"] = Value::String(format!("{to}{rest}"));
                serde_json::to_vec(&value).ok()
            });
        out.extend_from_slice(moved.as_deref().unwrap_or(line));
    }
    out
}

/// `history` as the transcript of a new session (its id is the state's native id) in
/// `cwd`.
pub fn native_history(history: &History, cwd: &str) -> NativeState {
    let id = uuid::Uuid::new_v4().to_string();
    let mut new_id = || format!("toolu_{}", uuid::Uuid::new_v4().simple());
    let messages = replay::messages(
        history,
        Target {
            shell: "Bash",
            new_id: &mut new_id,
        },
    );
    let mut transcript = Transcript::new(&id, cwd);
    for message in &messages {
        transcript.push(message);
    }
    let bytes = transcript.bytes;
    NativeState::single(Some(id), cwd, TRANSCRIPT_FILE, bytes)
}

/// A transcript being written.
struct Transcript<'a> {
    session_id: &'a str,
    cwd: &'a str,
    parent: Option<String>,
    clock: chrono::DateTime<chrono::Utc>,
    bytes: Vec<u8>,
}

impl<'a> Transcript<'a> {
    fn new(session_id: &'a str, cwd: &'a str) -> Self {
        Self {
            session_id,
            cwd,
            parent: None,
            clock: chrono::Utc::now(),
            bytes: Vec::new(),
        }
    }

    fn push(&mut self, message: &Message) {
        let (kind, message) = match message {
            Message::User(text) => ("user", json!({"role": "user", "content": text})),
            Message::ToolResult(result) => (
                "user",
                json!({"role": "user", "content": [{
                    "type": "tool_result",
                    "tool_use_id": result.call_id,
                    "content": result.text,
                    "is_error": result.is_error,
                }]}),
            ),
            Message::Assistant(blocks) => ("assistant", assistant(blocks)),
        };
        let uuid = uuid::Uuid::new_v4().to_string();
        // One millisecond apart, in order.
        self.clock += chrono::Duration::milliseconds(1);
        let line = json!({
            "parentUuid": self.parent,
            "isSidechain": false,
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": self.clock.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
        });
        serde_json::to_writer(&mut self.bytes, &line).expect("JSON values serialise");
        self.bytes.push(b'\n');
        self.parent = Some(uuid);
    }
}

/// An assistant message in Anthropic Messages form.
fn assistant(blocks: &[Block]) -> Value {
    let content: Vec<Value> = blocks
        .iter()
        .map(|block| match block {
            Block::Text(text) => json!({"type": "text", "text": text}),
            Block::Call(call) => json!({
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": call.input,
            }),
        })
        .collect();
    let calls = matches!(blocks.last(), Some(Block::Call(_)));
    json!({
        "id": format!("msg_{}", uuid::Uuid::new_v4().simple()),
        "type": "message",
        "role": "assistant",
        "model": SYNTHETIC_MODEL,
        "content": content,
        "stop_reason": if calls { "tool_use" } else { "end_turn" },
        "stop_sequence": null,
        "usage": {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    })
}

#[cfg(test)]
#[path = "portable_tests.rs"]
mod tests;
