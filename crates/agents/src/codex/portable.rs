//! A Codex thread as it moves between daemons: its rollout, the JSON-lines file Codex
//! keeps under `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl` and
//! replays on `thread/resume`. Nothing else of `CODEX_HOME` is needed: Codex rebuilds its
//! SQLite indexes from the rollout.
//!
//! The rollout records the working directory in many places (`session_meta.cwd`, each
//! `turn_context`, the `<environment_context>` message, the world state, command items);
//! an import into another directory rewrites every one of them
//! ([`crate::relocate::rewrite_paths`]), and `thread/resume` passes the session's cwd too.

use std::path::{Path, PathBuf};

use sandbox_universal::AgentError;
use serde_json::Value;

use crate::portable::{NativeState, write_private};
use crate::relocate::rewrite_paths;

/// The name of the rollout in a [`NativeState`].
pub const ROLLOUT_FILE: &str = "rollout.jsonl";

/// Every rollout under `codex_home/sessions`.
fn rollouts(codex_home: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![codex_home.join("sessions")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => {
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    if name.starts_with("rollout-") && name.ends_with(".jsonl") {
                        found.push(path);
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// The rollout of thread `thread_id` (without an id: the only rollout there is).
pub fn find_rollout(codex_home: &Path, thread_id: Option<&str>) -> Result<PathBuf, AgentError> {
    let all = rollouts(codex_home);
    let mut matching: Vec<PathBuf> = match thread_id {
        Some(id) => all
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(&format!("-{id}.jsonl")))
            })
            .collect(),
        None => all,
    };
    match (matching.len(), thread_id) {
        (1, _) => Ok(matching.remove(0)),
        (0, Some(id)) => Err(AgentError::protocol(format!(
            "codex keeps no rollout of thread {id} in {}",
            codex_home.display()
        ))),
        (0, None) => Err(AgentError::protocol("the Codex session has no rollout yet")),
        (_, _) => Err(AgentError::protocol(format!(
            "{} rollouts match the Codex session; cannot tell which to export",
            matching.len()
        ))),
    }
}

/// The thread id and start time a rollout's first line (`session_meta`) names.
fn session_meta(rollout: &str) -> Result<(String, Option<String>), AgentError> {
    let first = rollout.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line: Value = serde_json::from_str(first)
        .map_err(|e| AgentError::protocol(format!("the rollout's first line is not JSON: {e}")))?;
    if line["type"] != "session_meta" {
        return Err(AgentError::protocol(
            "the rollout does not start with its session_meta",
        ));
    }
    let id = line["payload"]["id"]
        .as_str()
        .filter(|id| is_thread_id(id))
        .ok_or_else(|| AgentError::protocol("the rollout's session_meta has no thread id"))?;
    let time = line["payload"]["timestamp"]
        .as_str()
        .or(line["timestamp"].as_str())
        .map(str::to_string);
    Ok((id.to_string(), time))
}

/// Whether `id` looks like a Codex thread id (a UUID): it becomes part of a file name.
fn is_thread_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// The rollout of `thread_id` in `codex_home`, for the directory `cwd`.
pub fn export(
    codex_home: &Path,
    thread_id: Option<&str>,
    cwd: &str,
) -> Result<NativeState, AgentError> {
    let path = find_rollout(codex_home, thread_id)?;
    let bytes = std::fs::read(&path)
        .map_err(|e| AgentError::protocol(format!("reading {}: {e}", path.display())))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| AgentError::protocol("the Codex rollout is not UTF-8"))?;
    let (id, _) = session_meta(text)?;
    Ok(NativeState::single(Some(id), cwd, ROLLOUT_FILE, bytes))
}

/// `rollout` (written for the directory `from`) for the directory `to`: the lines that
/// mention `from` rewritten, the others kept byte for byte.
pub fn relocate(rollout: &str, from: &str, to: &str) -> Result<String, AgentError> {
    let mut out = String::with_capacity(rollout.len());
    for (n, line) in rollout.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut value: Value = serde_json::from_str(line).map_err(|e| {
            AgentError::protocol(format!("rollout line {} is not JSON: {e}", n + 1))
        })?;
        if rewrite_paths(&mut value, from, to) > 0 {
            out.push_str(&value.to_string());
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    Ok(out)
}

/// Files the rollout of `state` under `codex_home/sessions` (dated by the thread's start,
/// as Codex files it), rewritten for `cwd`, replacing any rollout of the same thread.
/// Answers the thread id.
pub fn import(codex_home: &Path, state: &NativeState, cwd: &str) -> Result<String, AgentError> {
    let bytes = state.require(ROLLOUT_FILE)?;
    let text = std::str::from_utf8(bytes)
        .map_err(|_| AgentError::protocol("the Codex rollout is not UTF-8"))?;
    let (id, time) = session_meta(text)?;
    let rollout = relocate(text, &state.cwd, cwd)?;
    let started = time
        .as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(chrono::Utc::now);
    let path = rollout_path(codex_home, &id, started);
    for old in rollouts(codex_home) {
        if old != path
            && old
                .file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(&format!("-{id}.jsonl")))
        {
            std::fs::remove_file(&old)
                .map_err(|e| AgentError::protocol(format!("removing {}: {e}", old.display())))?;
        }
    }
    write_private(&path, rollout.as_bytes())
        .map_err(|e| AgentError::protocol(format!("writing {}: {e}", path.display())))?;
    Ok(id)
}

/// Where Codex files the rollout of a thread started at `started`.
pub fn rollout_path(
    codex_home: &Path,
    thread_id: &str,
    started: chrono::DateTime<chrono::Utc>,
) -> PathBuf {
    codex_home
        .join("sessions")
        .join(started.format("%Y/%m/%d").to_string())
        .join(format!(
            "rollout-{}-{thread_id}.jsonl",
            started.format("%Y-%m-%dT%H-%M-%S")
        ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Lines as the real Codex 0.169 wrote them (`thread/start` + one `USE_TOOL` turn in
    /// `/tmp/wtb/ws`), shortened.
    fn rollout() -> String {
        [
            json!({"timestamp":"2026-11-27T05:37:33.118Z","ordinal":0,"type":"session_meta","payload":{"session_id":"01a21b82-495d-7853-99bb-2bc10e37bbf3","id":"01a21b82-495d-7853-99bb-2bc10e37bbf3","timestamp":"2026-11-27T05:37:33.029Z","cwd":"/tmp/wtb/ws","runtime_workspace_roots":["/tmp/wtb/ws"],"originator":"sandbox-daemon","cli_version":"0.169.0","source":"vscode","model_provider":"sandbox_daemon","history_mode":"paginated"}}),
            json!({"timestamp":"2026-11-27T05:37:33.147Z","ordinal":7,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/tmp/wtb/ws</cwd>\n  <filesystem><workspace_roots><root>/tmp/wtb/ws</root></workspace_roots></filesystem>\n</environment_context>"}]}}),
            json!({"timestamp":"2026-11-27T05:37:33.150Z","ordinal":9,"type":"turn_context","payload":{"turn_id":"01a21b82-49b6","cwd":"/tmp/wtb/ws","approval_policy":"never","model":"gpt-6.1-sol"}}),
            json!({"timestamp":"2026-11-27T05:37:33.162Z","ordinal":11,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"remember ZEBRAWORD please USE_TOOL"}]}}),
            json!({"timestamp":"2026-11-27T05:37:33.452Z","ordinal":15,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","cwd":"file:///tmp/wtb/ws","aggregated_output":"fake-tool-ran\n","exit_code":0}}}),
        ]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect()
    }

    #[test]
    fn a_rollout_moves_to_a_fresh_codex_home_and_another_directory() {
        let from = tempfile::tempdir().unwrap();
        let id = "01a21b82-495d-7853-99bb-2bc10e37bbf3";
        let original = rollout_path(
            from.path(),
            id,
            chrono::DateTime::parse_from_rfc3339("2026-11-27T05:37:33Z")
                .unwrap()
                .into(),
        );
        write_private(&original, rollout().as_bytes()).unwrap();
        let state = export(from.path(), Some(id), "/tmp/wtb/ws").unwrap();
        assert_eq!(state.native_session_id.as_deref(), Some(id));
        assert_eq!(export(from.path(), None, "/x").unwrap().files, state.files);
        assert!(export(from.path(), Some("0000"), "/x").is_err());

        let to = tempfile::tempdir().unwrap();
        assert_eq!(import(to.path(), &state, "/srv/other").unwrap(), id);
        let filed = find_rollout(to.path(), Some(id)).unwrap();
        assert_eq!(
            filed.strip_prefix(to.path()).unwrap(),
            Path::new(
                "sessions/2026/11/27/rollout-2026-11-27T05-37-33-01a21b82-495d-7853-99bb-2bc10e37bbf3.jsonl"
            )
        );
        let text = std::fs::read_to_string(&filed).unwrap();
        assert!(!text.contains("/tmp/wtb/ws"), "{text}");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["payload"]["cwd"], "/srv/other");
        assert_eq!(
            lines[0]["payload"]["runtime_workspace_roots"],
            json!(["/srv/other"])
        );
        assert!(
            lines[1]["payload"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("<cwd>/srv/other</cwd>")
        );
        assert_eq!(lines[2]["payload"]["cwd"], "/srv/other");
        assert_eq!(
            text.lines().nth(3).unwrap(),
            rollout().lines().nth(3).unwrap()
        );
        assert_eq!(
            lines[4]["payload"]["item"]["cwd"], "file:///srv/other",
            "command items too"
        );
        // Importing again replaces the thread's rollout.
        import(to.path(), &state, "/srv/third").unwrap();
        let again = std::fs::read_to_string(find_rollout(to.path(), Some(id)).unwrap()).unwrap();
        assert!(again.contains("/srv/third") && !again.contains("/srv/other"));
    }

    #[test]
    fn a_rollout_without_its_session_meta_or_a_safe_id_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let bad = |text: &str| {
            let state = NativeState::single(None, "/w", ROLLOUT_FILE, text.as_bytes().to_vec());
            import(home.path(), &state, "/w").unwrap_err().to_string()
        };
        assert!(bad("{\"type\":\"response_item\"}\n").contains("session_meta"));
        assert!(
            bad("{\"type\":\"session_meta\",\"payload\":{\"id\":\"../../x\"}}\n")
                .contains("thread id")
        );
        let none = NativeState::single(None, "/w", "other.json", Vec::new());
        assert!(import(home.path(), &none, "/w").is_err());
    }
}
