//! Server requests (approvals, `request_user_input`) → `permissionAsked` /
//! `questionAsked`, and the client's replies → the JSON-RPC responses Codex expects.

use std::path::Path;

use sandbox_universal::{
    AgentError, ContentPart, EventPayload, Item, ItemKind, ItemRole, ItemStatus, PermissionKind,
    PermissionReply, PermissionRequest, Question, QuestionOption, QuestionRequest,
};
use serde_json::{Map, Value, json};

use super::{Converted, Converter, event};
use crate::codex::native::{
    CommandApproval, FileChangeApproval, McpElicitation, PermissionsApproval, UserInputRequest,
    method,
};
use crate::items::{finished_item, parse, unparsed_item};
use crate::kernel::Outgoing;
use crate::{QuestionAnswer, SessionIds};

/// JSON-RPC "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

/// A server request waiting for the client's answer, by kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    /// `item/commandExecution/requestApproval`.
    Command {
        /// The server's request id.
        native_id: Value,
    },
    /// `item/fileChange/requestApproval`.
    FileChange {
        /// The server's request id.
        native_id: Value,
    },
    /// `item/permissions/requestApproval`.
    Permissions {
        /// The server's request id.
        native_id: Value,
        /// The requested profile (granted as asked).
        requested: Value,
    },
    /// `mcpServer/elicitation/request` approving an MCP tool call.
    McpTool {
        /// The server's request id.
        native_id: Value,
        /// Whether Codex can remember an approval for the session.
        persists: bool,
    },
    /// `item/tool/requestUserInput`.
    Question {
        /// The server's request id.
        native_id: Value,
        /// The question ids, in order.
        question_ids: Vec<String>,
    },
}

impl Pending {
    /// The server's request id.
    pub fn native_id(&self) -> &Value {
        match self {
            Self::Command { native_id }
            | Self::FileChange { native_id }
            | Self::Permissions { native_id, .. }
            | Self::McpTool { native_id, .. }
            | Self::Question { native_id, .. } => native_id,
        }
    }
}

fn response(id: &Value, result: Value) -> Value {
    json!({"id": id, "result": result})
}

/// What Codex hears for each question of a rejected `request_user_input`.
pub const DECLINED: &str = "The user declined to answer this question.";

/// The name of Codex's tool that asks the user questions.
pub const USER_INPUT_TOOL: &str = "request_user_input";

impl Converter {
    /// Converts a request Codex makes of the client. `raw` is the whole message.
    pub(super) fn server_request(
        &mut self,
        ids: &dyn SessionIds,
        id: &Value,
        method: &str,
        params: &Value,
        raw: &Value,
    ) -> Converted {
        let converted = match method {
            method::COMMAND_APPROVAL => {
                parse(params).map(|p| self.command(ids, id, &p, params, raw))
            }
            method::FILE_CHANGE_APPROVAL => {
                parse(params).map(|p| self.file_change(ids, id, &p, params, raw))
            }
            method::PERMISSIONS_APPROVAL => {
                parse(params).map(|p| self.permissions(ids, id, &p, params, raw))
            }
            method::USER_INPUT => parse(params).map(|p| self.question(ids, id, &p, raw)),
            method::MCP_ELICITATION => {
                parse(params).map(|p| self.mcp_elicitation(ids, id, &p, raw))
            }
            other => Err(format!(
                "sandbox-daemon does not handle the Codex request `{other}`"
            )),
        };
        converted.unwrap_or_else(|error| Converted {
            events: unparsed_item(ids, raw, &error),
            replies: vec![Outgoing::Line(
                json!({"id": id, "error": {"code": METHOD_NOT_FOUND, "message": error}}),
            )],
        })
    }

    fn ask(&mut self, request: PermissionRequest, pending: Pending, raw: &Value) -> Converted {
        self.pending.insert(request.permission_id.clone(), pending);
        Converted::events(vec![event(EventPayload::PermissionAsked(request), raw)])
    }

    /// The universal id of the open item with this native id.
    fn item_of(&self, native_item: &str) -> Option<String> {
        self.open_item(native_item).map(|item| item.item_id.clone())
    }

    fn command(
        &mut self,
        ids: &dyn SessionIds,
        id: &Value,
        params: &CommandApproval,
        input: &Value,
        raw: &Value,
    ) -> Converted {
        let command = params.command.clone().or_else(|| {
            self.open_item(&params.item_id).and_then(|item| {
                item.content.iter().find_map(|part| match part {
                    ContentPart::CommandExecution { command, .. } => Some(command.clone()),
                    _ => None,
                })
            })
        });
        let title = match (&command, &params.reason) {
            (Some(command), _) => format!("Run `{command}`"),
            (None, Some(reason)) => reason.clone(),
            (None, None) => "Run a command".to_string(),
        };
        let request = PermissionRequest {
            permission_id: ids.next_id("perm"),
            kind: PermissionKind::Command,
            title,
            item_id: self.item_of(&params.item_id),
            tool: None,
            // Codex remembers `acceptForSession` per exact command.
            always_scope: command.as_ref().map(|c| format!("codex:command:{c}")),
            command,
            paths: Vec::new(),
            plan: None,
            input: Some(input.clone()),
            mcp: None,
        };
        self.ask(
            request,
            Pending::Command {
                native_id: id.clone(),
            },
            raw,
        )
    }

    fn file_change(
        &mut self,
        ids: &dyn SessionIds,
        id: &Value,
        params: &FileChangeApproval,
        input: &Value,
        raw: &Value,
    ) -> Converted {
        let mut paths: Vec<String> = self
            .open_item(&params.item_id)
            .map(|item| {
                item.content
                    .iter()
                    .filter_map(|part| match part {
                        ContentPart::FileChange { path, .. } => Some(path.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        paths.sort();
        paths.dedup();
        let inside_cwd = !paths.is_empty()
            && paths
                .iter()
                .all(|p| Path::new(p).starts_with(Path::new(&self.settings.cwd)));
        if self.settings.policy.auto_accept_edits && params.grant_root.is_none() && inside_cwd {
            return Converted {
                events: Vec::new(),
                replies: vec![Outgoing::Line(response(id, json!({"decision": "accept"})))],
            };
        }
        let title = match (paths.as_slice(), &params.grant_root) {
            (_, Some(root)) => format!("Allow writes under `{root}`"),
            ([one], None) => format!("Edit `{one}`"),
            (many, None) => format!("Edit {} files", many.len()),
        };
        let request = PermissionRequest {
            permission_id: ids.next_id("perm"),
            kind: PermissionKind::FileChange,
            title,
            item_id: self.item_of(&params.item_id),
            tool: Some("apply_patch".into()),
            command: None,
            // Codex remembers `acceptForSession` per file.
            always_scope: (params.grant_root.is_none() && !paths.is_empty())
                .then(|| format!("codex:fileChange:{}", paths.join("\n"))),
            paths,
            plan: None,
            input: Some(input.clone()),
            mcp: None,
        };
        self.ask(
            request,
            Pending::FileChange {
                native_id: id.clone(),
            },
            raw,
        )
    }

    fn permissions(
        &mut self,
        ids: &dyn SessionIds,
        id: &Value,
        params: &PermissionsApproval,
        input: &Value,
        raw: &Value,
    ) -> Converted {
        let requested = &params.permissions;
        let network = requested.pointer("/network/enabled") == Some(&Value::Bool(true));
        let writes = requested
            .pointer("/fileSystem/write")
            .and_then(Value::as_array)
            .is_some_and(|w| !w.is_empty())
            || requested
                .pointer("/fileSystem/entries")
                .and_then(Value::as_array)
                .is_some_and(|e| e.iter().any(|e| e["access"] == "write"));
        let kind = match (network, writes) {
            (true, _) => PermissionKind::Network,
            (false, true) => PermissionKind::FileChange,
            (false, false) => PermissionKind::FileRead,
        };
        let request = PermissionRequest {
            permission_id: ids.next_id("perm"),
            kind,
            title: params
                .reason
                .clone()
                .unwrap_or_else(|| "Grant additional sandbox permissions".into()),
            item_id: self.item_of(&params.item_id),
            tool: None,
            command: None,
            paths: Vec::new(),
            plan: None,
            input: Some(input.clone()),
            always_scope: Some(format!("codex:permissions:{requested}")),
            mcp: None,
        };
        let pending = Pending::Permissions {
            native_id: id.clone(),
            requested: requested.clone(),
        };
        self.ask(request, pending, raw)
    }

    /// The approval of an MCP tool call is a `permissionAsked` of kind `mcpTool`; any
    /// other elicitation (a server asking the user for input) is declined: the daemon has
    /// no form to show.
    fn mcp_elicitation(
        &mut self,
        ids: &dyn SessionIds,
        id: &Value,
        params: &McpElicitation,
        raw: &Value,
    ) -> Converted {
        let server = &params.server_name;
        let Some(tool) = params.tool_approval() else {
            let detail = format!("{server}: {}", params.message);
            return Converted {
                events: finished_item(
                    crate::items::status(ids, "mcpElicitationDeclined", Some(detail)),
                    raw,
                ),
                replies: vec![Outgoing::Line(response(id, json!({"action": "decline"})))],
            };
        };
        let meta = params.meta.clone().unwrap_or_default();
        let item_id = self.open.iter().find_map(|open| {
            open.item.content.iter().find_map(|part| match part {
                ContentPart::ToolCall { mcp: Some(m), .. }
                    if m.server == *server && m.tool == tool =>
                {
                    Some(open.item.item_id.clone())
                }
                _ => None,
            })
        });
        let request = PermissionRequest {
            permission_id: ids.next_id("perm"),
            kind: PermissionKind::McpTool,
            title: format!("Call `{tool}` of the MCP server `{server}`"),
            item_id,
            tool: Some(super::items::mcp_tool_name(server, tool)),
            command: None,
            paths: Vec::new(),
            plan: None,
            input: meta.tool_params.clone(),
            always_scope: Some(format!("codex:mcp:{server}/{tool}")),
            mcp: Some(sandbox_universal::McpToolRef {
                server: server.to_string(),
                tool: tool.to_string(),
            }),
        };
        let pending = Pending::McpTool {
            native_id: id.clone(),
            persists: meta.persist.iter().any(|p| p == "session"),
        };
        self.ask(request, pending, raw)
    }

    fn question(
        &mut self,
        ids: &dyn SessionIds,
        id: &Value,
        params: &UserInputRequest,
        raw: &Value,
    ) -> Converted {
        let questions = params
            .questions
            .iter()
            .map(|q| {
                let options: Vec<QuestionOption> = q
                    .options
                    .iter()
                    .flatten()
                    .map(|o| QuestionOption {
                        label: o.label.clone(),
                        description: (!o.description.is_empty()).then(|| o.description.clone()),
                    })
                    .collect();
                Question {
                    question: q.question.clone(),
                    header: (!q.header.is_empty()).then(|| q.header.clone()),
                    // request_user_input takes one answer per question.
                    multi_select: false,
                    allow_custom: q.is_other || options.is_empty(),
                    options,
                }
            })
            .collect();
        // Codex announces no item for the `request_user_input` call itself: the call
        // becomes a tool call item here, so the question points at it as every agent's
        // question points at its tool call.
        let mut events = Vec::new();
        let item_id = match self.item_of(&params.item_id) {
            Some(open) => Some(open),
            None if !params.item_id.is_empty() => {
                let call = Item::new(
                    ids.next_id("itm"),
                    ItemKind::ToolCall,
                    ItemStatus::Completed,
                )
                .with_role(ItemRole::Assistant)
                .with_native_id(params.item_id.clone())
                .with_content(ContentPart::ToolCall {
                    call_id: params.item_id.clone(),
                    name: USER_INPUT_TOOL.into(),
                    arguments: json!({"questions": raw["params"]["questions"]}),
                    mcp: None,
                });
                let id = call.item_id.clone();
                events.extend(finished_item(call, raw));
                Some(id)
            }
            None => None,
        };
        let request = QuestionRequest {
            question_id: ids.next_id("q"),
            questions,
            item_id,
        };
        self.pending.insert(
            request.question_id.clone(),
            Pending::Question {
                native_id: id.clone(),
                question_ids: params.questions.iter().map(|q| q.id.clone()).collect(),
            },
        );
        events.push(event(EventPayload::QuestionAsked(request), raw));
        Converted::events(events)
    }

    /// The response to a pending permission request: `once` → `accept`, `always` →
    /// `acceptForSession`, `reject` → `decline`; for an MCP tool `accept` (remembered for
    /// the session with `_meta.persist` on `always`) or `decline`.
    pub(super) fn permission_reply(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<Value, AgentError> {
        let decision = match reply {
            PermissionReply::Once => "accept",
            PermissionReply::Always => "acceptForSession",
            PermissionReply::Reject => "decline",
        };
        match self.take_pending(permission_id)? {
            Pending::Command { native_id } | Pending::FileChange { native_id } => {
                Ok(response(&native_id, json!({"decision": decision})))
            }
            Pending::Permissions {
                native_id,
                requested,
            } => {
                let result = match reply {
                    PermissionReply::Once => json!({"permissions": requested, "scope": "turn"}),
                    PermissionReply::Always => {
                        json!({"permissions": requested, "scope": "session"})
                    }
                    PermissionReply::Reject => json!({"permissions": {}}),
                };
                Ok(response(&native_id, result))
            }
            Pending::McpTool {
                native_id,
                persists,
            } => {
                let result = match reply {
                    PermissionReply::Once => json!({"action": "accept", "content": {}}),
                    PermissionReply::Always if persists => json!({
                        "action": "accept", "content": {}, "_meta": {"persist": "session"}
                    }),
                    PermissionReply::Always => json!({"action": "accept", "content": {}}),
                    PermissionReply::Reject => json!({"action": "decline"}),
                };
                Ok(response(&native_id, result))
            }
            Pending::Question { .. } => Err(AgentError::protocol(format!(
                "`{permission_id}` is a question, not a permission request"
            ))),
        }
    }

    /// The response to a pending question: `{answers: {<questionId>: {answers: [..]}}}`;
    /// a rejection answers nothing.
    pub(super) fn question_reply(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<Value, AgentError> {
        let Pending::Question {
            native_id,
            question_ids,
        } = self.take_pending(question_id)?
        else {
            return Err(AgentError::protocol(format!(
                "`{question_id}` is a permission request, not a question"
            )));
        };
        // `request_user_input` has no way to refuse: a rejection answers every question
        // with a refusal the model reads as one (an empty map would read as "no
        // preference").
        let selected = match answer {
            QuestionAnswer::Answered(selected) => selected,
            QuestionAnswer::Rejected => vec![vec![DECLINED.to_string()]; question_ids.len()],
        };
        let answers: Map<String, Value> = question_ids
            .iter()
            .zip(selected)
            .map(|(id, labels)| (id.clone(), json!({"answers": labels})))
            .collect();
        Ok(response(&native_id, json!({"answers": answers})))
    }

    fn take_pending(&mut self, id: &str) -> Result<Pending, AgentError> {
        self.pending.remove(id).ok_or_else(|| {
            AgentError::protocol(format!("Codex is not waiting for an answer to `{id}`"))
        })
    }
}
