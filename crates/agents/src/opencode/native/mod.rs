//! Wire types of `opencode serve` (pinned: opencode-ai 1.18.33), the older ("v1") event
//! family the pinned server publishes for prompts sent with `prompt_async`.
//!
//! One event stream per server: `GET /global/event`, whose SSE data are [`GlobalEvent`]s
//! (`{directory?, project?, payload: {id, type, properties}}`); `GET /event` carries the
//! bare payloads of one directory. [`classify`] tells the driver which OpenCode session a
//! payload belongs to, or that it is about the server and carries nothing for any session.
//!
//! Only the fields the daemon reads are typed; every struct is `#[serde(default)]` and
//! ignores unknown fields, so a newer server degrades to `unparsed` items (unknown event
//! or part types) instead of failing. The `session.next.*`, `permission.v2.*` and
//! `question.v2.*` families of the `/api/*` runtime are not typed: that runtime does not
//! run in the pin (it never starts a model call), see the converter's ignored list.

mod events;
mod parts;

use serde::Deserialize;
use serde_json::Value;

pub use events::{
    MessageError, MessageInfo, MessagePath, MessageTime, MessageUpdated, PartDelta, PartUpdated,
    PermissionAsked, PermissionReplied, QuestionAsked, QuestionInfo, QuestionOption,
    QuestionRejected, QuestionReplied, SessionCreated, SessionError, SessionInfo, SessionRef,
    SessionStatus, Status, TokenCache, Tokens, ToolRef,
};
pub use parts::{FilePart, Part, PartTime, TextPart, ToolPart, ToolState};

/// One SSE data payload of `GET /global/event`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct GlobalEvent {
    /// The directory (instance) the event comes from: the session's directory for session
    /// events, `"global"` for project events, absent for `server.*`.
    pub directory: Option<String>,
    /// The project id, when the event is about one.
    pub project: Option<String>,
    /// The event itself: `{id, type, properties}` (what `GET /event` sends bare).
    pub payload: Value,
}

impl GlobalEvent {
    /// Parses one SSE `data:` line of `GET /global/event`.
    pub fn parse(data: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(data)
    }

    /// The event's `type`.
    pub fn kind(&self) -> &str {
        event_type(&self.payload)
    }
}

/// The `type` of an event payload (`""` when missing).
pub fn event_type(payload: &Value) -> &str {
    payload["type"].as_str().unwrap_or_default()
}

/// Events about the server, its instances, projects, plugins, files, terminals or the
/// TUI: they name no session and carry nothing for one, so no session sees them (they never
/// become `unparsed`). From the pinned server's `GET /doc` event union (those without a
/// `sessionID`), plus `server.heartbeat` (every 10 s) and `sync` (the `/global/event`
/// duplicate of every durable event, `{type: "sync", syncEvent}`).
pub const SERVER_EVENTS: &[&str] = &[
    "server.connected",
    "server.heartbeat",
    "server.instance.disposed",
    "global.disposed",
    "sync",
    "models-dev.refreshed",
    "catalog.updated",
    "reference.updated",
    "integration.updated",
    "integration.connection.updated",
    "installation.updated",
    "installation.update-available",
    "plugin.added",
    "project.updated",
    "project.directories.updated",
    "file.edited",
    "file.watcher.updated",
    "lsp.updated",
    "mcp.tools.changed",
    "mcp.browser.open.failed",
    "vcs.branch.updated",
    "pty.created",
    "pty.updated",
    "pty.exited",
    "pty.deleted",
    "tui.prompt.append",
    "tui.command.execute",
    "tui.toast.show",
    "workspace.ready",
    "workspace.failed",
    "workspace.status",
    "worktree.ready",
    "worktree.failed",
];

/// Whether an event type is about the server rather than a session ([`SERVER_EVENTS`]).
pub fn is_server_event(kind: &str) -> bool {
    SERVER_EVENTS.contains(&kind)
}

/// Where an event belongs, for the driver's demultiplexing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// About the server: no session sees it.
    Server,
    /// About one OpenCode session.
    Session {
        /// The OpenCode session id (`ses_…`).
        id: String,
        /// The parent session, when the event describes a child session (`session.created`
        /// of a subagent's session has `info.parentID`): the child belongs to the parent's
        /// universal session.
        parent: Option<String>,
    },
    /// Names no session and is not known to be about the server: `session.error` without
    /// a `sessionID` (allowed by the schema), or an event type newer than the pin.
    Unscoped,
}

/// The session an event payload (`{type, properties}`) belongs to: `properties.sessionID`,
/// else `properties.info.sessionID` / `properties.part.sessionID`, else (`session.*`
/// events) `properties.info.id`.
pub fn classify(payload: &Value) -> Scope {
    let kind = event_type(payload);
    if is_server_event(kind) {
        return Scope::Server;
    }
    let p = &payload["properties"];
    let id = p["sessionID"]
        .as_str()
        .or_else(|| p["info"]["sessionID"].as_str())
        .or_else(|| p["part"]["sessionID"].as_str())
        .or_else(|| {
            kind.starts_with("session.")
                .then(|| p["info"]["id"].as_str())
                .flatten()
        });
    match id {
        Some(id) => Scope::Session {
            id: id.to_string(),
            parent: kind
                .starts_with("session.")
                .then(|| p["info"]["parentID"].as_str().map(str::to_string))
                .flatten(),
        },
        None => Scope::Unscoped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_sessions_children_and_the_server() {
        let part = json!({"type": "message.part.updated", "properties": {
            "sessionID": "ses_a", "part": {"sessionID": "ses_a"}}});
        assert_eq!(
            classify(&part),
            Scope::Session {
                id: "ses_a".into(),
                parent: None
            }
        );
        let child = json!({"type": "session.created", "properties": {
            "sessionID": "ses_c", "info": {"id": "ses_c", "parentID": "ses_a"}}});
        assert_eq!(
            classify(&child),
            Scope::Session {
                id: "ses_c".into(),
                parent: Some("ses_a".into())
            }
        );
        let info_only = json!({"type": "message.updated", "properties": {
            "info": {"sessionID": "ses_b"}}});
        assert!(matches!(classify(&info_only), Scope::Session { id, .. } if id == "ses_b"));
        for server in ["server.heartbeat", "plugin.added", "sync", "file.edited"] {
            let event = json!({"type": server, "properties": {"file": "/x"}});
            assert_eq!(classify(&event), Scope::Server, "{server}");
        }
        let orphan = json!({"type": "session.error", "properties": {"error": {}}});
        assert_eq!(classify(&orphan), Scope::Unscoped);
    }

    #[test]
    fn the_global_envelope_parses() {
        let data = r#"{"directory":"/w","project":"global","payload":
            {"id":"evt_1","type":"session.idle","properties":{"sessionID":"ses_a"}}}"#;
        let event = GlobalEvent::parse(data).unwrap();
        assert_eq!(event.directory.as_deref(), Some("/w"));
        assert_eq!(event.kind(), "session.idle");
        let bare = GlobalEvent::parse(r#"{"payload":{"type":"server.connected"}}"#).unwrap();
        assert_eq!(bare.directory, None);
        assert_eq!(classify(&bare.payload), Scope::Server);
    }
}
