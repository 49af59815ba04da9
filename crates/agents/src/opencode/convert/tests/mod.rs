//! Converter cases the recorded fixtures do not cover, shaped after the pinned server's
//! events (fixtures and the survey's probes): `always` scopes, question bodies, the two
//! idles of a cancel, child sessions, streamed bash output, file changes, unknown and
//! server-level events, a lost server.

use sandbox_universal::{EventPayload, Item, PermissionRequest};
use serde_json::{Value, json};

use super::Converter;
use crate::kernel::Protocol;
use crate::{AgentEvent, CollectingSink, EventSink};

mod hitl;
mod items;
mod policy;
mod turns;

const ROOT: &str = "ses_root";

struct Session {
    converter: Converter,
    ids: EventSink,
}

impl Session {
    fn new() -> Self {
        let mut converter = Converter::new("/w");
        converter.set_native_session_id(ROOT);
        Self {
            converter,
            ids: CollectingSink::new().1,
        }
    }

    fn feed(&mut self, kind: &str, properties: Value) -> Vec<AgentEvent> {
        let payload = json!({"id": "evt_1", "type": kind, "properties": properties});
        self.converter.convert(&payload, &self.ids).events
    }

    fn status(&mut self, session: &str, status: &str) -> Vec<AgentEvent> {
        self.feed(
            "session.status",
            json!({"sessionID": session, "status": {"type": status}}),
        )
    }

    /// An assistant message: created, or finished (`completed` time, or an error).
    fn message(
        &mut self,
        session: &str,
        id: &str,
        done: bool,
        error: Option<&str>,
    ) -> Vec<AgentEvent> {
        let mut info = json!({"id": id, "sessionID": session, "role": "assistant",
            "path": {"cwd": "/w", "root": "/"}, "time": {"created": 1},
            "tokens": {"input": 3, "output": 2, "reasoning": 0, "cache": {"read": 1, "write": 0}},
            "cost": 0.5});
        if done {
            info["time"]["completed"] = json!(2);
            info["finish"] = json!("stop");
        }
        if let Some(name) = error {
            info["error"] = json!({"name": name, "data": {"message": "Aborted"}});
        }
        self.feed(
            "message.updated",
            json!({"sessionID": session, "info": info}),
        )
    }

    fn text(
        &mut self,
        session: &str,
        msg: &str,
        part: &str,
        text: &str,
        end: bool,
    ) -> Vec<AgentEvent> {
        let time = if end {
            json!({"start": 1, "end": 2})
        } else {
            json!({"start": 1})
        };
        self.feed(
            "message.part.updated",
            json!({"sessionID": session, "time": 1, "part": {"id": part, "messageID": msg,
                "sessionID": session, "type": "text", "text": text, "time": time}}),
        )
    }

    fn delta(&mut self, session: &str, msg: &str, part: &str, delta: &str) -> Vec<AgentEvent> {
        self.feed(
            "message.part.delta",
            json!({"sessionID": session, "messageID": msg, "partID": part, "field": "text",
                "delta": delta}),
        )
    }

    fn tool(
        &mut self,
        session: &str,
        msg: &str,
        call: &str,
        tool: &str,
        state: Value,
    ) -> Vec<AgentEvent> {
        self.feed(
            "message.part.updated",
            json!({"sessionID": session, "time": 1, "part": {"id": format!("prt_{msg}_{call}"),
                "messageID": msg, "sessionID": session, "type": "tool", "callID": call,
                "tool": tool, "state": state}}),
        )
    }

    fn bash_permission(
        &mut self,
        id: &str,
        call: &str,
        command: &str,
        always: &[&str],
    ) -> PermissionRequest {
        let patterns: Vec<String> = command.split(" && ").map(str::to_string).collect();
        let events = self.feed(
            "permission.asked",
            json!({"id": id, "sessionID": ROOT, "permission": "bash", "patterns": patterns,
                "metadata": {"command": command}, "always": always,
                "tool": {"messageID": "msg_1", "callID": call}}),
        );
        events
            .into_iter()
            .find_map(|e| match e.payload {
                EventPayload::PermissionAsked(p) => Some(p),
                _ => None,
            })
            .expect("permissionAsked")
    }
}

fn types(events: &[AgentEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(|e| e.payload.event_type().as_str())
        .collect()
}

fn completed(events: &[AgentEvent]) -> Vec<Item> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemCompleted(i) => Some(i.item.clone()),
            _ => None,
        })
        .collect()
}

fn started(events: &[AgentEvent]) -> Vec<Item> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemStarted(i) => Some(i.item.clone()),
            _ => None,
        })
        .collect()
}
