//! OpenCode server events → universal events, and universal replies → OpenCode HTTP calls.
//!
//! One [`Converter`] per universal session. The driver demultiplexes the server's one event
//! stream ([`super::native::classify`]) and hands this converter every event of the
//! session's OpenCode session (the *root*) and of the child sessions its subagents create
//! (their items get `parentId` = the `task` tool item). The converter is pure: it returns
//! universal events and the [`NativeCall`]s the driver must make; ids come from the session
//! ([`crate::SessionIds`]).
//!
//! The turn ends (`turnEnded`, exactly once) when both hold: the root session went idle
//! after this turn's prompt loop ran (`busy`, `retry`, an error or a new assistant message
//! was seen since `begin_turn`; an idle without them is the spurious one `abort` publishes,
//! or the late second idle of the previous turn), and every assistant message the turn
//! created is completed or failed. On an error or a cancel the server goes idle *before*
//! the final text and the failed message arrive (and idles again after them): the turn
//! ends when the failed message arrives, with the partial text kept on a `failed` item.
//! A child session's idle never ends the turn.
//!
//! Events handled without universal events are listed in [`IGNORED_EVENTS`] (and
//! [`super::native::SERVER_EVENTS`] for events about the server); anything else unknown
//! becomes an `unparsed` item with the raw JSON.

mod calls;
mod hitl;
mod parts;
mod protocol;
mod tools;
mod turn;

use std::collections::{HashMap, HashSet};

use reqwest::Method;
use serde_json::Value;

use self::parts::Tracked;
use super::native::{
    self, MessageError, MessageUpdated, SessionCreated, SessionError, SessionRef, SessionStatus,
    Tokens,
};
use crate::items::{finished_item, native_event as event, parse, unparsed_item};
use crate::{AgentEvent, SessionIds};

pub use hitl::always_scope;
pub use protocol::PromptSettings;

/// Session-level events that carry nothing the universal log needs, ignored on purpose:
/// - `session.updated`: title, summary and cumulative tokens (usage comes from the turn's
///   assistant messages); `session.deleted`: the driver deletes nothing mid-session;
/// - `session.diff`: the session's aggregated diff (`fileChange` items carry each file's);
/// - `message.removed`, `message.part.removed`: reverts, which the daemon never requests;
/// - `todo.updated`: the `todowrite` tool part becomes the `plan` item;
/// - `command.executed`: slash commands, which the daemon never sends;
/// - `tui.session.select`: the terminal UI's navigation;
/// - `permission.v2.*`, `question.v2.*`, `session.next.*` ([`IGNORED_PREFIXES`]): the
///   event family of the `/api/*` runtime, which does not run in the pin (and which older
///   builds published next to these events, as duplicates).
pub const IGNORED_EVENTS: &[&str] = &[
    "session.updated",
    "session.deleted",
    "session.diff",
    "message.removed",
    "message.part.removed",
    "todo.updated",
    "command.executed",
    "tui.session.select",
    "permission.v2.asked",
    "permission.v2.replied",
    "question.v2.asked",
    "question.v2.replied",
    "question.v2.rejected",
];

/// Prefixes of ignored event families (see [`IGNORED_EVENTS`]).
pub const IGNORED_PREFIXES: &[&str] = &["session.next."];

/// An HTTP request the driver must send to the session's server.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeCall {
    /// The method (always `POST` today).
    pub method: Method,
    /// The route, without query (`/permission/per_…/reply`).
    pub path: String,
    /// The JSON body; `None` sends no body.
    pub body: Option<Value>,
    /// The session's directory. OpenCode routes requests by directory: send it as
    /// `?directory=` ([`NativeCall::path_with_directory`]) or as the
    /// `x-opencode-directory` header, or a session outside the server's cwd gets 404.
    pub directory: String,
}

impl NativeCall {
    pub(crate) fn post(path: String, body: Option<Value>, directory: &str) -> Self {
        Self {
            method: Method::POST,
            path,
            body,
            directory: directory.to_string(),
        }
    }

    /// The path with `?directory=<percent-encoded directory>`.
    pub fn path_with_directory(&self) -> String {
        let mut encoded = String::new();
        for byte in self.directory.bytes() {
            if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
                encoded.push(char::from(byte));
            } else {
                encoded.push_str(&format!("%{byte:02X}"));
            }
        }
        format!("{}?directory={encoded}", self.path)
    }
}

/// The turn the daemon is running.
#[derive(Debug, Default)]
struct Turn {
    id: String,
    /// The daemon asked to cancel (abort sent).
    cancelling: bool,
    /// The root's prompt loop ran since `begin_turn`: its idle counts.
    live: bool,
    /// The root went idle (and was not busy again since).
    idle: bool,
    /// OpenCode reported the loop aborted (`MessageAbortedError`).
    aborted: bool,
    /// Another error failed the turn.
    failed: bool,
    /// An `error` event was emitted for this turn.
    error_reported: bool,
    /// The root's assistant messages created during the turn, in order.
    messages: Vec<String>,
}

/// What the converter knows of a message.
#[derive(Debug, Clone, Default)]
struct Message {
    assistant: bool,
    finished: bool,
    /// The `begin_turn` generation it was first seen in (old ones are forgotten).
    generation: u64,
    tokens: Option<Tokens>,
    cost: Option<f64>,
    finish: Option<String>,
    error: Option<MessageError>,
    /// Where its tools run.
    cwd: Option<String>,
}

/// The conversion state of one universal session.
#[derive(Debug, Default)]
pub struct Converter {
    cwd: String,
    /// The session's own OpenCode session.
    root: Option<String>,
    /// Child sessions (transitively) → the `task` tool item they report to, once known.
    children: HashMap<String, Option<String>>,
    turn: Option<Turn>,
    generation: u64,
    messages: HashMap<String, Message>,
    /// Parts that are items (open), or tool parts seen pending, in start order.
    open: Vec<Tracked>,
    /// Parts whose item completed (this and the previous generation).
    done: HashSet<String>,
    done_before: HashSet<String>,
    /// Deltas of parts not seen yet, by part id.
    early: HashMap<String, String>,
    permissions: Vec<hitl::PendingPermission>,
    questions: Vec<hitl::PendingQuestion>,
    approved: Vec<hitl::Approved>,
    /// What every prompt carries besides the text.
    prompt: PromptSettings,
    /// The session's MCP servers, by name.
    mcp_servers: Vec<String>,
    /// The session's `maxTurns`: model calls (assistant messages) of a turn.
    limit: crate::kernel::StepLimit,
    /// The turn went past the limit: cancel it (once).
    over_limit: bool,
}

impl Converter {
    /// A converter for a session working in `cwd` (where its OpenCode session was created).
    pub fn new(cwd: impl Into<String>) -> Self {
        Self {
            cwd: cwd.into(),
            ..Self::default()
        }
    }

    /// The session's OpenCode session (`ses_…`), created by the driver.
    pub fn set_native_session_id(&mut self, id: &str) {
        self.root = Some(id.to_string());
    }

    /// The session's OpenCode session, once known.
    pub fn native_session_id(&self) -> Option<&str> {
        self.root.as_deref()
    }

    /// Whether events of OpenCode session `id` belong to this converter: its own session or
    /// a child session it learned of (from `session.created` or a `task` tool's metadata).
    /// The driver routes `session.created` of a child to the converter that owns its
    /// parent.
    pub fn owns(&self, id: &str) -> bool {
        self.root.as_deref() == Some(id) || self.children.contains_key(id)
    }

    /// Converts one event payload (`{id, type, properties}`: the `payload` of a
    /// `/global/event` envelope). Anything not understood becomes an `unparsed` item.
    fn event(&mut self, payload: &Value, ids: &dyn SessionIds) -> Vec<AgentEvent> {
        let kind = native::event_type(payload);
        match self.dispatch(kind, payload, ids) {
            Ok(events) => events,
            Err(error) => unparsed_item(ids, payload, format!("`{kind}`: {error}")),
        }
    }

    fn dispatch(
        &mut self,
        kind: &str,
        raw: &Value,
        ids: &dyn SessionIds,
    ) -> Result<Vec<AgentEvent>, String> {
        if native::is_server_event(kind)
            || IGNORED_EVENTS.contains(&kind)
            || IGNORED_PREFIXES.iter().any(|p| kind.starts_with(p))
        {
            return Ok(Vec::new());
        }
        let props = &raw["properties"];
        let events = match kind {
            "session.created" => {
                self.session_created(&parse::<SessionCreated>(props)?);
                Vec::new()
            }
            "session.status" => self.status(ids, parse::<SessionStatus>(props)?, raw)?,
            "session.idle" => {
                let idle: SessionRef = parse(props)?;
                if self.is_root(idle.session_id.as_deref()) {
                    self.idle(raw)
                } else {
                    Vec::new()
                }
            }
            "session.error" => self.session_error(parse::<SessionError>(props)?, raw),
            "session.compacted" => {
                let compacted: SessionRef = parse(props)?;
                let parent = self.parent_of(compacted.session_id.as_deref());
                status_item(ids, "compacted", None, parent, raw)
            }
            "message.updated" => self.message_updated(parse::<MessageUpdated>(props)?, raw),
            "message.part.updated" => self.part_updated(ids, &parse(props)?, raw)?,
            "message.part.delta" => self.part_delta(&parse(props)?, raw),
            "permission.asked" => self.permission_asked(ids, parse(props)?, raw),
            "permission.replied" => self.permission_replied(&parse(props)?, raw),
            "question.asked" => self.question_asked(ids, parse(props)?, raw),
            "question.replied" => self.question_replied(&parse(props)?, raw),
            "question.rejected" => self.question_rejected(&parse(props)?, raw),
            "" => return Err("an event without a type".into()),
            _ => return Err("unknown OpenCode event".into()),
        };
        Ok(events)
    }

    /// Whether `session` (absent: the root, as for a `session.error` without one) is the
    /// root. The first session seen becomes the root when the driver did not name one.
    fn is_root(&mut self, session: Option<&str>) -> bool {
        match (session, &self.root) {
            (None, _) => true,
            (Some(id), Some(root)) => id == root,
            (Some(id), None) if !self.children.contains_key(id) => {
                self.root = Some(id.to_string());
                true
            }
            (Some(_), None) => false,
        }
    }

    /// The `task` item a session's items belong under (`None` for the root).
    fn parent_of(&self, session: Option<&str>) -> Option<String> {
        session.and_then(|s| self.children.get(s).cloned().flatten())
    }

    fn session_created(&mut self, created: &SessionCreated) {
        let info = &created.info;
        let Some(parent) = &info.parent_id else {
            return;
        };
        if !self.owns(parent) || self.children.contains_key(&info.id) {
            return;
        }
        // The task part names its child session only after `session.created`: until then
        // the child reports to the parent's latest running task call not yet linked.
        let linked: HashSet<&String> = self.children.values().flatten().collect();
        let task = self
            .open
            .iter()
            .rev()
            .filter(|t| t.session == *parent && t.tool_name() == Some("task"))
            .filter_map(|t| t.item.as_ref().map(|i| &i.item_id))
            .find(|id| !linked.contains(id))
            .cloned();
        self.children.insert(info.id.clone(), task);
    }
}

/// A finished `status` item (retries, compaction).
fn status_item(
    ids: &dyn SessionIds,
    label: &str,
    detail: Option<String>,
    parent: Option<String>,
    raw: &Value,
) -> Vec<AgentEvent> {
    let mut item = crate::items::status(ids, label, detail);
    item.parent_id = parent;
    finished_item(item, raw)
}

#[cfg(test)]
mod tests;
