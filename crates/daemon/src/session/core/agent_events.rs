//! What the agent's events go through on their way into the log ([`EventConsumer`]): the
//! rules the daemon keeps for them (remembered `always` scopes, host tool approvals, the
//! turn an agent ends, items the daemon closed), and the back-pressure on an agent that
//! outruns the store.

use std::sync::atomic::Ordering;

use sandbox_agents::{AgentEvent, EventConsumer};
use sandbox_universal::{
    ContentPart, EventPayload, PermissionReply, PermissionRequest, SessionStatus, TurnEnded,
};

use super::{CoreSignal, EventMeta, Live, SessionCore};

impl EventConsumer for SessionCore {
    fn emit(&self, event: AgentEvent) {
        let meta = EventMeta {
            source: event.source,
            synthetic: event.synthetic,
            raw: event.raw,
        };
        self.record(event.payload, meta);
        // Back-pressure on an agent that outruns the store. No lock is held here: readers
        // and commands go on while the agent waits for the store.
        // `exempt` is asked under the store queue's lock, so it must not take the core's.
        self.log
            .store()
            .wait_for_room(&|| self.interrupted.load(Ordering::SeqCst));
    }

    fn set_native_session_id(&self, id: &str) {
        let mut live = self.lock();
        if live.state.native_session_id.as_deref() != Some(id) {
            live.state.native_session_id = Some(id.to_string());
            self.save_state(&mut live);
        }
    }

    fn next_id(&self, prefix: &str) -> String {
        let n = self.ids.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}_{n}")
    }
}

impl SessionCore {
    /// Logs one event of the agent's under the core's lock, applying the rules the daemon
    /// keeps for it (remembered `always` scopes, the turn it ends, items the daemon
    /// closed).
    fn record(&self, payload: EventPayload, meta: EventMeta) {
        let mut live = self.lock();
        if live.state.status() == SessionStatus::Ended {
            tracing::debug!(session = %self.session_id, "dropping an event after sessionEnded");
            return;
        }
        match payload {
            EventPayload::ItemDelta(delta) if live.force_closed.contains(&delta.item_id) => {
                tracing::debug!(session = %self.session_id, item = %delta.item_id, "dropping a delta of an item the daemon closed");
            }
            EventPayload::ItemCompleted(done) if live.force_closed.contains(&done.item.item_id) => {
                tracing::debug!(session = %self.session_id, item = %done.item.item_id, "dropping the completion of an item the daemon closed");
            }
            EventPayload::ItemCompleted(done) => {
                let item_id = done.item.item_id.clone();
                self.append(&mut live, EventPayload::ItemCompleted(done), meta);
                drop(live);
                self.item_completed(&item_id);
            }
            EventPayload::PermissionAsked(request) => {
                let reply = if self.refuses(&request) {
                    Some(PermissionReply::Reject)
                } else if gates_host_tool(&live, &request) {
                    Some(PermissionReply::Once)
                } else if live.state.remembers(&request) {
                    Some(PermissionReply::Always)
                } else {
                    None
                };
                match reply {
                    Some(reply) => {
                        let id = self.answer_itself(&mut live, request, reply, meta.raw);
                        drop(live);
                        self.signal(CoreSignal::AutoReply(id, reply));
                    }
                    None => self.append(&mut live, EventPayload::PermissionAsked(request), meta),
                }
            }
            EventPayload::TurnEnded(ended) => match live.state.current_turn.clone() {
                Some(turn_id) => {
                    if turn_id != ended.turn_id {
                        tracing::warn!(
                            session = %self.session_id,
                            expected = %turn_id,
                            got = %ended.turn_id,
                            "the agent ended another turn than the running one"
                        );
                    }
                    let stop_reason = self.take_tool_stop(&turn_id, ended.stop_reason);
                    self.agent_ended_turn(
                        &mut live,
                        TurnEnded {
                            turn_id,
                            stop_reason,
                            ..ended
                        },
                        meta,
                    );
                }
                None => {
                    tracing::debug!(session = %self.session_id, "dropping turnEnded: no turn is running");
                }
            },
            EventPayload::SessionEnded(ended) => {
                if self.end_locked(&mut live, ended, meta) {
                    drop(live);
                    self.signal(CoreSignal::AgentEnded);
                }
            }
            payload => self.append(&mut live, payload, meta),
        }
    }
}

/// Whether the agent asks to call a tool of the daemon's host tool server (the request or
/// its open tool-call item names the server): the daemon's server asks itself where a
/// tool needs approval.
fn gates_host_tool(live: &Live, request: &PermissionRequest) -> bool {
    let host = sandbox_universal::HOST_MCP_SERVER;
    if let Some(mcp) = &request.mcp {
        return mcp.server == host;
    }
    let Some(item_id) = &request.item_id else {
        return false;
    };
    live.state
        .open_items
        .iter()
        .filter(|item| &item.item_id == item_id)
        .flat_map(|item| &item.content)
        .any(|part| {
            matches!(part, ContentPart::ToolCall { mcp: Some(mcp), .. }
                if mcp.server == sandbox_universal::HOST_MCP_SERVER)
        })
}
