//! An OpenCode session as it moves between daemons: the document `opencode export <id>`
//! prints (`{info, messages: [{info, parts}]}`), which `opencode import <file>` files in
//! another `opencode.db`.
//!
//! - Export reads the same document from the session's server (`GET /session/{id}` and
//!   `GET /session/{id}/message` answer exactly what `opencode export` prints).
//! - Import runs `opencode import` with the XDG directories of the server the session will
//!   run on (shared or its own), in the session's cwd: OpenCode itself then sets the
//!   session's `directory`, `path` and project from that cwd. Importing while that server
//!   runs is fine (SQLite in WAL mode; the server sees the session at once). Every other
//!   mention of the old cwd (each assistant message's `path.cwd`, tool inputs and outputs)
//!   is rewritten first ([`crate::relocate::rewrite_paths`]).
//! - The session keeps its id, unless that server's database already holds it (an export
//!   imported on the same daemon): then the copy gets new session, message and part ids,
//!   since `opencode import` would otherwise merge it into the original.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sandbox_universal::AgentError;
use serde_json::{Value, json};

use super::convert::NativeCall;
use super::history::new_id;
use super::launch::QUIET_ENV;
use crate::portable::{NativeState, write_private};
use crate::process::{ProcessSpec, base_env, run_to_end};
use crate::relocate::rewrite_paths;
use crate::transport::HttpPeer;

/// The name of the export document in a [`NativeState`].
pub const EXPORT_FILE: &str = "export.json";

/// How long one `opencode import` / `opencode db` run may take.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Whether `id` is an OpenCode id (`ses_…`, `msg_…`): letters, digits and `_` only.
pub fn is_id(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('_'))
        .is_some_and(|rest| {
            !rest.is_empty() && rest.len() <= 64 && rest.chars().all(|c| c.is_ascii_alphanumeric())
        })
}

/// `path` of the session's directory (OpenCode routes requests by directory).
fn in_directory(path: String, cwd: &str) -> String {
    NativeCall::post(path, None, cwd).path_with_directory()
}

/// The export document of session `native_id`, read from its server.
pub async fn export(
    peer: &HttpPeer,
    native_id: &str,
    cwd: &str,
) -> Result<NativeState, AgentError> {
    if !is_id(native_id, "ses") {
        return Err(AgentError::protocol(format!(
            "`{native_id}` is not an OpenCode session id"
        )));
    }
    let info = peer
        .get_json(&in_directory(format!("/session/{native_id}"), cwd))
        .await
        .map_err(|e| e.into_agent_error("reading the OpenCode session"))?;
    let messages = peer
        .get_json(&in_directory(format!("/session/{native_id}/message"), cwd))
        .await
        .map_err(|e| e.into_agent_error("reading the OpenCode session's messages"))?;
    if info["id"] != native_id || !messages.is_array() {
        return Err(AgentError::protocol(format!(
            "OpenCode answered no session {native_id}: {info}"
        )));
    }
    let document = json!({"info": info, "messages": messages});
    Ok(NativeState::single(
        Some(native_id.to_string()),
        cwd,
        EXPORT_FILE,
        serde_json::to_vec_pretty(&document).expect("JSON serializes"),
    ))
}

/// The export document of `state`, checked: a session id and an array of messages.
pub fn document(state: &NativeState) -> Result<Value, AgentError> {
    let document: Value = serde_json::from_slice(state.require(EXPORT_FILE)?)
        .map_err(|e| AgentError::protocol(format!("the OpenCode export is not JSON: {e}")))?;
    let id = document["info"]["id"].as_str().unwrap_or_default();
    if !is_id(id, "ses") {
        return Err(AgentError::protocol(
            "the OpenCode export names no session id",
        ));
    }
    if !document["messages"].is_array() {
        return Err(AgentError::protocol("the OpenCode export has no messages"));
    }
    Ok(document)
}

/// Gives the document's session, messages and parts new ids (in their order, so they sort
/// as before), keeping every reference between them. Answers the new session id.
pub fn with_new_ids(document: &mut Value) -> String {
    let session = new_id("ses", true);
    document["info"]["id"] = json!(session);
    let mut renamed = std::collections::HashMap::new();
    let messages = document["messages"].as_array_mut().into_iter().flatten();
    for message in messages {
        let old = message["info"]["id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let id = new_id("msg", false);
        renamed.insert(old, id.clone());
        message["info"]["id"] = json!(id);
        message["info"]["sessionID"] = json!(session);
        for part in message["parts"].as_array_mut().into_iter().flatten() {
            part["id"] = json!(new_id("prt", false));
            part["sessionID"] = json!(session);
            part["messageID"] = json!(id);
        }
    }
    for message in document["messages"].as_array_mut().into_iter().flatten() {
        if let Some(parent) = message["info"]["parentID"].as_str()
            && let Some(id) = renamed.get(parent)
        {
            message["info"]["parentID"] = json!(id);
        }
    }
    session
}

/// Runs `opencode` with the directories of one server (its HOME), as that server would.
pub struct OpenCodeCli {
    /// The binary.
    pub program: PathBuf,
    /// The server's HOME (its XDG directories are inside).
    pub home: PathBuf,
}

impl OpenCodeCli {
    fn spec(&self, args: Vec<String>, cwd: &Path) -> ProcessSpec {
        let mut env = base_env(&self.home);
        for (name, value) in QUIET_ENV {
            env.insert((*name).into(), (*value).into());
        }
        env.insert(
            "OPENCODE_CONFIG_CONTENT".into(),
            json!({"autoupdate": false, "share": "disabled"}).to_string(),
        );
        ProcessSpec {
            program: self.program.clone(),
            args: args.into_iter().map(Into::into).collect(),
            cwd: cwd.to_path_buf(),
            env,
        }
    }

    async fn run(&self, args: Vec<String>, cwd: &Path, what: &str) -> Result<String, AgentError> {
        let output = run_to_end(&self.spec(args, cwd), RUN_LIMIT)
            .await
            .map_err(|e| AgentError::protocol(format!("{what}: {e}")))?;
        if !output.status.success() {
            return Err(AgentError::protocol(format!(
                "{what} failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Whether the server's database holds session `id` (`opencode db`).
    pub async fn has_session(&self, id: &str) -> Result<bool, AgentError> {
        if !is_id(id, "ses") {
            return Err(AgentError::protocol(format!("`{id}` is not a session id")));
        }
        let query = format!("SELECT id FROM session WHERE id = '{id}'");
        let args = ["db", &query, "--format", "json"]
            .map(String::from)
            .to_vec();
        let out = self
            .run(args, &self.home, "looking for the OpenCode session")
            .await?;
        let rows: Value = serde_json::from_str(out.trim()).unwrap_or(Value::Null);
        Ok(rows.as_array().is_some_and(|rows| !rows.is_empty()))
    }

    /// Files `document` with `opencode import` run in `cwd`; answers the session id it
    /// reported.
    pub async fn import(&self, document: &Value, cwd: &Path) -> Result<String, AgentError> {
        let file = self.home.join(format!(
            ".sandbox-import-{}.json",
            uuid::Uuid::new_v4().simple()
        ));
        write_private(&file, document.to_string().as_bytes())
            .map_err(|e| AgentError::protocol(format!("writing {}: {e}", file.display())))?;
        let args = vec!["import".to_string(), file.display().to_string()];
        let ran = self.run(args, cwd, "opencode import").await;
        drop(std::fs::remove_file(&file));
        let out = ran?;
        out.lines()
            .find_map(|line| line.trim().strip_prefix("Imported session: "))
            .map(|id| id.trim().to_string())
            .ok_or_else(|| {
                AgentError::protocol(format!("opencode import did not import: {}", out.trim()))
            })
    }
}

/// Files `state` in the database of the server whose HOME `cli` names, for `cwd`;
/// answers the session id (the exported one, unless that database already holds it).
pub async fn import(
    cli: &OpenCodeCli,
    state: &NativeState,
    cwd: &Path,
) -> Result<String, AgentError> {
    let mut document = document(state)?;
    rewrite_paths(&mut document, &state.cwd, &cwd.display().to_string());
    let exported = document["info"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if cli.has_session(&exported).await? {
        with_new_ids(&mut document);
    }
    let id = document["info"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let imported = cli.import(&document, cwd).await?;
    if imported != id {
        return Err(AgentError::protocol(format!(
            "opencode import filed session {imported}, not {id}"
        )));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The export of a real OpenCode 1.18.33 session (one `USE_TOOL` turn in
    /// `/tmp/wtb/ws`), shortened.
    fn exported() -> Value {
        json!({
            "info": {"id": "ses_de47af362ffesiwu4LiM6Jl6PO", "slug": "witty-moon", "projectID": "global",
                     "directory": "/tmp/wtb/ws", "path": "tmp/wtb/ws", "title": "hello from fake model",
                     "version": "1.18.33", "time": {"created": 1795758034078_i64, "updated": 1795758037119_i64}},
            "messages": [
                {"info": {"role": "user", "time": {"created": 1795758034184_i64}, "agent": "build",
                          "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-6"},
                          "id": "msg_21b850d080015oSJO5qX4dTRRp", "sessionID": "ses_de47af362ffesiwu4LiM6Jl6PO"},
                 "parts": [{"type": "text", "text": "remember OKAPIWORD please USE_TOOL",
                            "id": "prt_21b850d150010PMtJjt2ZAaQrR", "sessionID": "ses_de47af362ffesiwu4LiM6Jl6PO",
                            "messageID": "msg_21b850d080015oSJO5qX4dTRRp"}]},
                {"info": {"parentID": "msg_21b850d080015oSJO5qX4dTRRp", "role": "assistant", "mode": "build",
                          "agent": "build", "path": {"cwd": "/tmp/wtb/ws", "root": "/"}, "finish": "tool-calls",
                          "id": "msg_21b8511e7001JYFUE57WetFEpX", "sessionID": "ses_de47af362ffesiwu4LiM6Jl6PO"},
                 "parts": [{"type": "tool", "tool": "bash", "callID": "toolu_fake000017",
                            "state": {"status": "completed", "input": {"command": "cat /tmp/wtb/ws/fake_tool_output.txt"},
                                      "output": "fake-tool-ran\n"},
                            "id": "prt_21b8516df001RVBbs1trpaUSsS", "sessionID": "ses_de47af362ffesiwu4LiM6Jl6PO",
                            "messageID": "msg_21b8511e7001JYFUE57WetFEpX"}]},
            ],
        })
    }

    fn state() -> NativeState {
        NativeState::single(
            Some("ses_de47af362ffesiwu4LiM6Jl6PO".into()),
            "/tmp/wtb/ws",
            EXPORT_FILE,
            exported().to_string().into_bytes(),
        )
    }

    #[test]
    fn the_document_is_checked_and_moves_to_another_directory() {
        let mut doc = document(&state()).unwrap();
        assert_eq!(rewrite_paths(&mut doc, "/tmp/wtb/ws", "/srv/b"), 3);
        assert_eq!(doc["info"]["directory"], "/srv/b");
        let assistant = &doc["messages"][1];
        assert_eq!(assistant["info"]["path"]["cwd"], "/srv/b");
        assert_eq!(assistant["info"]["path"]["root"], "/");
        assert_eq!(
            assistant["parts"][0]["state"]["input"]["command"],
            "cat /srv/b/fake_tool_output.txt"
        );
        let bad = NativeState::single(
            None,
            "/w",
            EXPORT_FILE,
            br#"{"info":{"id":"../x"},"messages":[]}"#.to_vec(),
        );
        assert!(
            document(&bad)
                .unwrap_err()
                .to_string()
                .contains("session id")
        );
        let empty = NativeState::single(None, "/w", "rollout.jsonl", Vec::new());
        assert!(document(&empty).is_err());
    }

    #[test]
    fn a_copy_gets_new_ids_and_keeps_its_references() {
        let mut doc = exported();
        let id = with_new_ids(&mut doc);
        assert!(is_id(&id, "ses") && id != "ses_de47af362ffesiwu4LiM6Jl6PO");
        assert_eq!(doc["info"]["id"], id);
        let user = &doc["messages"][0];
        let assistant = &doc["messages"][1];
        let user_id = user["info"]["id"].as_str().unwrap();
        assert!(is_id(user_id, "msg") && user_id != "msg_21b850d080015oSJO5qX4dTRRp");
        assert_eq!(assistant["info"]["parentID"], user_id);
        assert!(user_id < assistant["info"]["id"].as_str().unwrap());
        for message in [user, assistant] {
            assert_eq!(message["info"]["sessionID"], id);
            for part in message["parts"].as_array().unwrap() {
                assert_eq!(part["sessionID"], id);
                assert_eq!(part["messageID"], message["info"]["id"]);
                assert!(is_id(part["id"].as_str().unwrap(), "prt"));
            }
        }
        assert!(!doc.to_string().contains("21b850d15001"));
    }

    #[test]
    fn only_opencode_ids_pass() {
        assert!(is_id("ses_de47af362ffesiwu4LiM6Jl6PO", "ses"));
        assert!(!is_id("ses_", "ses"));
        assert!(!is_id("ses_a'b", "ses"));
        assert!(!is_id("msg_abc", "ses"));
    }
}
