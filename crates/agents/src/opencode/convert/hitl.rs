//! Human in the loop: `permission.asked` → `permissionAsked`, `question.asked` →
//! `questionAsked` (each pointing at its tool call's item, started here if it has not
//! started), the universal answers → OpenCode's reply routes, and the native
//! `*.replied` / `question.rejected` events, which resolve a request only when the daemon
//! did not answer it (someone else did), so each resolves exactly once.
//!
//! `always` is never sent to OpenCode: the server keeps an `always` in memory for its whole
//! project, so on a server shared by several sessions it would approve other sessions'
//! calls (survey §5.4). The daemon answers `once` and keeps the scope: a later request of
//! this session with the same `alwaysScope` is approved by the daemon's core (which then
//! calls [`Converter::permission_reply`] with `always`, sent as `once`). A later request
//! that OpenCode's own rules would consider covered by an approved `always` (each of its
//! patterns matches an approved pattern of the same permission) gets the approved
//! request's scope, so the daemon approves it too.

use sandbox_universal::{
    AgentError, EventPayload, PermissionKind, PermissionOutcome, PermissionReply,
    PermissionRequest, PermissionResolved, Question, QuestionOption, QuestionOutcome,
    QuestionRequest, QuestionResolved,
};
use serde_json::{Value, json};

use super::parts::Tracked;
use super::{Converter, NativeCall, event};
use crate::opencode::native::{
    PermissionAsked, PermissionReplied, QuestionAsked, QuestionRejected, QuestionReplied, ToolRef,
};
use crate::{AgentEvent, QuestionAnswer, SessionIds};

/// A permission request the server waits on.
#[derive(Debug, Clone)]
pub(super) struct PendingPermission {
    universal: String,
    request_id: String,
    permission: String,
    always: Vec<String>,
    scope: Option<String>,
}

/// A question the server waits on.
#[derive(Debug, Clone)]
pub(super) struct PendingQuestion {
    universal: String,
    request_id: String,
}

/// Patterns approved with `always` in this session.
#[derive(Debug, Clone)]
pub(super) struct Approved {
    permission: String,
    patterns: Vec<String>,
    scope: String,
}

/// What an `always` answer covers: OpenCode's own granularity, the permission and the
/// patterns `always` would allow (e.g. `opencode:bash:echo *, cat *`). `None` when the
/// server offers no lasting approval.
pub fn always_scope(permission: &str, always: &[String]) -> Option<String> {
    (!always.is_empty()).then(|| format!("opencode:{permission}:{}", always.join(", ")))
}

/// OpenCode's wildcard match: `*` matches any text, `?` one character, and a trailing
/// ` *` also matches nothing (`ls *` allows `ls`).
pub(super) fn wildcard(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // The last `*` seen, and where in the text it started matching.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    star = Some((sp, st + 1));
                    pi = sp + 1;
                    ti = st + 1;
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*') || pattern.strip_suffix(" *").is_some_and(|h| h == text)
}

pub(super) fn kind_of(permission: &str, tool: Option<&str>) -> PermissionKind {
    match permission {
        "bash" => PermissionKind::Command,
        "edit" => PermissionKind::FileChange,
        "read" | "list" | "glob" | "grep" | "lsp" => PermissionKind::FileRead,
        "external_directory"
            if matches!(
                tool,
                Some("write" | "edit" | "multiedit" | "apply_patch" | "patch")
            ) =>
        {
            PermissionKind::FileChange
        }
        "external_directory" => PermissionKind::FileRead,
        "webfetch" | "websearch" | "codesearch" => PermissionKind::Network,
        _ => PermissionKind::Tool,
    }
}

impl Converter {
    /// The item of the tool call `tool` refers to, started now if it has not started (with
    /// what the request says of it: `metadata` and `input`).
    fn call_item(
        &mut self,
        ids: &dyn SessionIds,
        tool: &ToolRef,
        guess: (&str, Value, &Value, Option<String>),
        session: &str,
        raw: &Value,
    ) -> (Option<String>, Option<String>, Vec<AgentEvent>) {
        let (name, input, metadata, diff) = guess;
        let index = match self.call_position(&tool.message_id, &tool.call_id) {
            Some(index) => index,
            None => {
                self.open.push(Tracked::tool(
                    format!("call:{}:{}", tool.message_id, tool.call_id),
                    session.to_string(),
                    tool.message_id.clone(),
                    name,
                    &tool.call_id,
                ));
                self.open.len() - 1
            }
        };
        let tracked = &mut self.open[index];
        if tracked.input.is_null() && !input.is_null() {
            tracked.input = input;
        }
        if diff.is_some() {
            tracked.diff = diff;
        }
        let name = tracked.tool_name().map(str::to_string);
        let events = self.start_tool(ids, index, metadata, raw);
        let item = self.open[index].item.as_ref().map(|i| i.item_id.clone());
        (item, name, events)
    }

    pub(super) fn permission_asked(
        &mut self,
        ids: &dyn SessionIds,
        asked: PermissionAsked,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let session = self.session_or_root(asked.session_id.clone());
        let diff = asked.metadata["diff"].as_str().map(str::to_string);
        let (item_id, tool, mut events) = match &asked.tool {
            Some(tool) => {
                let guess = (
                    asked.permission.as_str(),
                    Value::Null,
                    &asked.metadata,
                    diff,
                );
                self.call_item(ids, tool, guess, &session, raw)
            }
            None => (None, None, Vec::new()),
        };
        let mcp = self.mcp_tool(&asked.permission);
        let kind = match &mcp {
            Some(_) => PermissionKind::McpTool,
            None => kind_of(&asked.permission, tool.as_deref()),
        };
        let meta = &asked.metadata;
        let command = meta["command"].as_str().map(str::to_string);
        let paths: Vec<String> = match kind {
            PermissionKind::FileChange => match meta["filepath"].as_str() {
                Some(path) => vec![path.to_string()],
                None => asked.patterns.clone(),
            },
            PermissionKind::FileRead => asked.patterns.clone(),
            _ => Vec::new(),
        };
        let patterns = asked.patterns.join(", ");
        let title = match (kind, &command) {
            (PermissionKind::McpTool, _) => match &mcp {
                Some(mcp) => format!("Use {} of MCP server {}", mcp.tool, mcp.server),
                None => format!("Use {}", asked.permission),
            },
            (PermissionKind::Command, Some(command)) => format!("Run `{command}`"),
            (PermissionKind::FileChange, _) if paths.len() == 1 => format!("Edit {}", paths[0]),
            (PermissionKind::FileChange, _) => format!("Edit {} files", paths.len()),
            _ if asked.permission == "external_directory" => {
                format!("Access {patterns} outside the working directory")
            }
            (PermissionKind::Network, _) if meta["url"].is_string() => {
                format!("Fetch {}", meta["url"].as_str().unwrap_or_default())
            }
            _ if patterns.is_empty() || patterns == "*" => format!("Use {}", asked.permission),
            _ => format!("Use {} on {patterns}", asked.permission),
        };
        let own_scope = always_scope(&asked.permission, &asked.always);
        let covered = self.approved.iter().find(|a| {
            a.permission == asked.permission
                && !asked.patterns.is_empty()
                && asked
                    .patterns
                    .iter()
                    .all(|p| a.patterns.iter().any(|rule| wildcard(rule, p)))
        });
        let scope = covered.map(|a| a.scope.clone()).or(own_scope);
        let request = PermissionRequest {
            permission_id: ids.next_id("perm"),
            kind,
            title,
            item_id,
            tool: Some(tool.unwrap_or_else(|| asked.permission.clone())),
            command: command.filter(|_| kind == PermissionKind::Command),
            paths,
            plan: None,
            input: Some(raw["properties"].clone()),
            always_scope: scope.clone(),
            mcp: mcp.clone(),
        };
        self.permissions.push(PendingPermission {
            universal: request.permission_id.clone(),
            request_id: asked.id,
            permission: asked.permission,
            always: asked.always,
            scope,
        });
        events.push(event(EventPayload::PermissionAsked(request), raw));
        events
    }

    pub(super) fn question_asked(
        &mut self,
        ids: &dyn SessionIds,
        asked: QuestionAsked,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let session = self.session_or_root(asked.session_id.clone());
        let (item_id, _, mut events) = match &asked.tool {
            Some(tool) => {
                let input = json!({"questions": raw["properties"]["questions"]});
                let guess = ("question", input, &Value::Null, None);
                self.call_item(ids, tool, guess, &session, raw)
            }
            None => (None, None, Vec::new()),
        };
        let questions = asked
            .questions
            .iter()
            .map(|q| Question {
                question: q.question.clone(),
                header: (!q.header.is_empty()).then(|| q.header.clone()),
                options: q
                    .options
                    .iter()
                    .map(|o| QuestionOption {
                        label: o.label.clone(),
                        description: (!o.description.is_empty()).then(|| o.description.clone()),
                    })
                    .collect(),
                multi_select: q.multiple,
                // OpenCode offers a typed answer unless the question says otherwise.
                allow_custom: q.custom.unwrap_or(true),
            })
            .collect();
        let request = QuestionRequest {
            question_id: ids.next_id("q"),
            questions,
            item_id,
        };
        self.questions.push(PendingQuestion {
            universal: request.question_id.clone(),
            request_id: asked.id,
        });
        events.push(event(EventPayload::QuestionAsked(request), raw));
        events
    }

    pub(super) fn permission_replied(
        &mut self,
        replied: &PermissionReplied,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let Some(index) = self
            .permissions
            .iter()
            .position(|p| p.request_id == replied.request_id)
        else {
            // Our own reply's echo (or a request of another session).
            return Vec::new();
        };
        let pending = self.permissions.remove(index);
        let outcome = match replied.reply.as_str() {
            "once" => PermissionOutcome::Once,
            "always" => PermissionOutcome::Always,
            _ => PermissionOutcome::Reject,
        };
        vec![event(
            EventPayload::PermissionResolved(PermissionResolved {
                permission_id: pending.universal,
                outcome,
                automatic: false,
                request: None,
            }),
            raw,
        )]
    }

    fn question_resolved(
        &mut self,
        request_id: &str,
        answers: Option<Vec<Vec<String>>>,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        let Some(index) = self
            .questions
            .iter()
            .position(|q| q.request_id == request_id)
        else {
            return Vec::new();
        };
        let pending = self.questions.remove(index);
        vec![event(
            EventPayload::QuestionResolved(QuestionResolved {
                question_id: pending.universal,
                outcome: if answers.is_some() {
                    QuestionOutcome::Answered
                } else {
                    QuestionOutcome::Rejected
                },
                answers,
            }),
            raw,
        )]
    }

    pub(super) fn question_replied(
        &mut self,
        replied: &QuestionReplied,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        self.question_resolved(&replied.request_id, Some(replied.answers.clone()), raw)
    }

    pub(super) fn question_rejected(
        &mut self,
        rejected: &QuestionRejected,
        raw: &Value,
    ) -> Vec<AgentEvent> {
        self.question_resolved(&rejected.request_id, None, raw)
    }

    /// The call answering the pending permission `permission_id`: `{reply: "once"}` for
    /// `once` and `always` (see the module docs), `{reply: "reject"}` for `reject`.
    pub fn permission_reply(
        &mut self,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<NativeCall, AgentError> {
        let index = self
            .permissions
            .iter()
            .position(|p| p.universal == permission_id)
            .ok_or_else(|| not_waiting(permission_id))?;
        let pending = self.permissions.remove(index);
        if reply == PermissionReply::Always
            && let Some(scope) = pending.scope
            && !self
                .approved
                .iter()
                .any(|a| a.scope == scope && a.patterns == pending.always)
        {
            self.approved.push(Approved {
                permission: pending.permission,
                patterns: pending.always,
                scope,
            });
        }
        let native = match reply {
            PermissionReply::Once | PermissionReply::Always => "once",
            PermissionReply::Reject => "reject",
        };
        Ok(NativeCall::post(
            format!("/permission/{}/reply", pending.request_id),
            Some(json!({"reply": native})),
            &self.cwd,
        ))
    }

    /// The call answering the pending question `question_id`:
    /// `POST /question/{id}/reply {answers}` (one array of labels per question), or
    /// `POST /question/{id}/reject` (no body), which the model reads as "The user dismissed
    /// this question" and which ends its turn: a refusal.
    pub fn question_reply(
        &mut self,
        question_id: &str,
        answer: QuestionAnswer,
    ) -> Result<NativeCall, AgentError> {
        let index = self
            .questions
            .iter()
            .position(|q| q.universal == question_id)
            .ok_or_else(|| not_waiting(question_id))?;
        let pending = self.questions.remove(index);
        Ok(match answer {
            QuestionAnswer::Answered(answers) => NativeCall::post(
                format!("/question/{}/reply", pending.request_id),
                Some(json!({"answers": answers})),
                &self.cwd,
            ),
            QuestionAnswer::Rejected => NativeCall::post(
                format!("/question/{}/reject", pending.request_id),
                None,
                &self.cwd,
            ),
        })
    }

    /// Rejects every pending request natively (cancel) and forgets them.
    pub(super) fn reject_pending(&mut self) -> Vec<NativeCall> {
        let permissions = std::mem::take(&mut self.permissions).into_iter().map(|p| {
            NativeCall::post(
                format!("/permission/{}/reply", p.request_id),
                Some(json!({"reply": "reject"})),
                &self.cwd,
            )
        });
        let questions = std::mem::take(&mut self.questions).into_iter().map(|q| {
            NativeCall::post(
                format!("/question/{}/reject", q.request_id),
                None,
                &self.cwd,
            )
        });
        permissions.chain(questions).collect()
    }
}

fn not_waiting(id: &str) -> AgentError {
    AgentError::protocol(format!("OpenCode is not waiting for an answer to `{id}`"))
}
