//! The mock's conversation memory: the user's messages of every turn, kept in a file of
//! the session's private state (`mock-memory.jsonl`, a JSON string per line), so the mock,
//! like a real agent, remembers across restarts, exports and handovers. A message with the
//! keyword `recall` is answered with what it remembers (`recalled: a | b`).

use std::path::{Path, PathBuf};

use sandbox_universal::history::History;

use crate::portable::{NativeState, write_private};

/// The memory file's name, in the state directory and in the native state.
pub const MEMORY_FILE: &str = "mock-memory.jsonl";

/// The memory file of a session whose private state is `state_dir`.
pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join(MEMORY_FILE)
}

/// What the memory at `path` holds (nothing when there is no file).
pub fn load(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Adds `message` to the memory at `path` (one appended line).
pub fn remember(path: &Path, message: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(&encode(&[message.to_string()]))
}

/// Files a memory exported elsewhere at `path`.
pub fn import(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_private(path, bytes)
}

/// The answer to `recall`.
pub fn recall(path: &Path) -> String {
    format!("recalled: {}", load(path).join(" | "))
}

/// The memory of a conversation: its user messages.
pub fn of_history(history: &History) -> Vec<u8> {
    encode(
        &history
            .turns
            .iter()
            .map(|turn| turn.user_text())
            .collect::<Vec<_>>(),
    )
}

/// The native state of a session whose memory is at `path`.
pub fn export(path: &Path, cwd: &str) -> std::io::Result<NativeState> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => encode(&[]),
        Err(e) => return Err(e),
    };
    Ok(NativeState::single(None, cwd, MEMORY_FILE, bytes))
}

fn encode(messages: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for message in messages {
        serde_json::to_writer(&mut out, message).expect("strings serialise");
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_appends_recalls_and_comes_from_a_history() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path());
        assert_eq!(recall(&file), "recalled: ");
        remember(&file, "one\ntwo").unwrap();
        remember(&file, "three").unwrap();
        assert_eq!(load(&file), ["one\ntwo", "three"]);
        assert_eq!(recall(&file), "recalled: one\ntwo | three");
        let exported = export(&file, "/w").unwrap();
        import(
            &path(&dir.path().join("b")),
            exported.require(MEMORY_FILE).unwrap(),
        )
        .unwrap();
        assert_eq!(load(&path(&dir.path().join("b"))), load(&file));
    }
}
