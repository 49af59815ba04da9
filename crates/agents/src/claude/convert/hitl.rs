//! Human in the loop: `can_use_tool` control requests → `permissionAsked` /
//! `questionAsked` (AskUserQuestion) / plan approvals (ExitPlanMode), and the client's
//! answers → `control_response` lines.

use sandbox_universal::{
    EventPayload, PermissionKind, PermissionOutcome, PermissionReply, PermissionRequest,
    PermissionResolved, Question, QuestionOption, QuestionRequest,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::items::Items;
use crate::claude::native::CanUseTool;
use crate::{AgentEvent, QuestionAnswer, SessionIds};

/// What a pending native request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingKind {
    /// A tool permission.
    Permission,
    /// `ExitPlanMode`: approve the plan.
    PlanApproval,
    /// `AskUserQuestion`.
    Question,
}

/// A `can_use_tool` request waiting for the client.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The CLI's request id.
    pub request_id: String,
    /// What it is.
    pub kind: PendingKind,
    /// The tool's input, echoed back as `updatedInput`.
    pub input: Value,
    /// The CLI's suggested permission updates (sent back, session-scoped, on `always`).
    pub suggestions: Vec<Value>,
    /// The question texts, in order (questions only).
    pub questions: Vec<String>,
}

#[derive(Deserialize)]
struct AskInput {
    questions: Vec<AskQuestion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AskQuestion {
    question: String,
    #[serde(default)]
    header: Option<String>,
    #[serde(default)]
    options: Vec<AskOption>,
    #[serde(default)]
    multi_select: bool,
}

#[derive(Deserialize)]
struct AskOption {
    label: String,
    #[serde(default)]
    description: Option<String>,
}

/// Turns a `can_use_tool` request into a universal request and the pending entry the
/// answer will need (keyed by the universal id).
pub fn ask(
    request_id: &str,
    request: CanUseTool,
    items: &Items,
    raw: &Value,
    ids: &dyn SessionIds,
) -> (Vec<AgentEvent>, Option<(String, Pending)>) {
    let item_id = request
        .tool_use_id
        .as_deref()
        .and_then(|id| items.call(id))
        .map(|c| c.item_id.clone());
    if request.tool_name == "AskUserQuestion"
        && let Ok(ask) = serde_json::from_value::<AskInput>(request.input.clone())
    {
        let question_id = ids.next_id("q");
        let pending = Pending {
            request_id: request_id.to_string(),
            kind: PendingKind::Question,
            input: request.input,
            suggestions: Vec::new(),
            questions: ask.questions.iter().map(|q| q.question.clone()).collect(),
        };
        let questions = ask
            .questions
            .into_iter()
            .map(|q| Question {
                question: q.question,
                header: q.header,
                options: q
                    .options
                    .into_iter()
                    .map(|o| QuestionOption {
                        label: o.label,
                        description: o.description,
                    })
                    .collect(),
                multi_select: q.multi_select,
                // Claude Code always lets the user type an answer of their own.
                allow_custom: true,
            })
            .collect();
        let event = AgentEvent::native(
            EventPayload::QuestionAsked(QuestionRequest {
                question_id: question_id.clone(),
                questions,
                item_id,
            }),
            Some(raw.clone()),
        );
        return (vec![event], Some((question_id, pending)));
    }
    let permission_id = ids.next_id("perm");
    let input = &request.input;
    let str_of = |key: &str| input[key].as_str().map(str::to_string);
    let mut paths: Vec<String> = ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|k| str_of(k))
        .into_iter()
        .collect();
    if let Some(blocked) = &request.blocked_path
        && !paths.contains(blocked)
    {
        paths.push(blocked.clone());
    }
    let tool = request.tool_name.as_str();
    let mcp = items.mcp_tool(tool).or_else(|| {
        let server = request.mcp_server.as_ref()?["name"].as_str()?;
        let tool = tool.strip_prefix(&format!("mcp__{server}__"))?;
        Some(sandbox_universal::McpToolRef {
            server: server.to_string(),
            tool: tool.to_string(),
        })
    });
    let first_path = paths.first().cloned().unwrap_or_default();
    let (kind, title) = match tool {
        "Bash" => (
            PermissionKind::Command,
            format!("Run `{}`", str_of("command").unwrap_or_default()),
        ),
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            (PermissionKind::FileChange, format!("{tool} {first_path}"))
        }
        "Read" | "Glob" | "Grep" | "LS" => {
            (PermissionKind::FileRead, format!("{tool} {first_path}"))
        }
        "WebFetch" => (
            PermissionKind::Network,
            format!("Fetch {}", str_of("url").unwrap_or_default()),
        ),
        "WebSearch" => (
            PermissionKind::Network,
            format!(
                "Search the web for `{}`",
                str_of("query").unwrap_or_default()
            ),
        ),
        "ExitPlanMode" => (PermissionKind::PlanApproval, "Approve the plan".to_string()),
        _ if mcp.is_some() => {
            let mcp = mcp.as_ref().expect("an MCP tool");
            (
                PermissionKind::McpTool,
                format!(
                    "Use {} ({})",
                    request.display_name.as_deref().unwrap_or(&mcp.tool),
                    mcp.server
                ),
            )
        }
        _ => (
            PermissionKind::Tool,
            request
                .title
                .clone()
                .or_else(|| request.description.clone())
                .unwrap_or_else(|| format!("Use {tool}")),
        ),
    };
    let plan_approval = kind == PermissionKind::PlanApproval;
    let asked = PermissionRequest {
        permission_id: permission_id.clone(),
        kind,
        title: title.trim_end().to_string(),
        item_id,
        tool: Some(request.tool_name.clone()),
        command: (tool == "Bash").then(|| str_of("command")).flatten(),
        paths,
        plan: plan_approval.then(|| str_of("plan")).flatten(),
        input: Some(request.input.clone()),
        always_scope: None,
        mcp: mcp.clone(),
    };
    // `always` for an MCP tool is remembered for that tool, whatever the CLI suggests.
    let mut suggestions = request.permission_suggestions;
    if kind == PermissionKind::McpTool && suggestions.is_empty() {
        suggestions.push(json!({"type": "addRules", "behavior": "allow",
            "rules": [{"toolName": request.tool_name}], "destination": "session"}));
    }
    let pending = Pending {
        request_id: request_id.to_string(),
        kind: if plan_approval {
            PendingKind::PlanApproval
        } else {
            PendingKind::Permission
        },
        input: request.input,
        suggestions,
        questions: Vec::new(),
    };
    let asked = PermissionRequest {
        always_scope: (!plan_approval)
            .then(|| always_scope(&pending.suggestions))
            .flatten(),
        ..asked
    };
    let event = AgentEvent::native(EventPayload::PermissionAsked(asked), Some(raw.clone()));
    (vec![event], Some((permission_id, pending)))
}

/// What an `always` answer covers, in Claude's own granularity: the allow rules,
/// permission mode and directories the CLI suggests (e.g.
/// `claude:Bash(echo hi *) dir:/work`). `None` when the CLI suggests nothing lasting.
pub fn always_scope(suggestions: &[Value]) -> Option<String> {
    let mut parts = Vec::new();
    for suggestion in suggestions {
        match suggestion["type"].as_str() {
            Some("addRules" | "replaceRules") if suggestion["behavior"] == "allow" => {
                for rule in suggestion["rules"].as_array().into_iter().flatten() {
                    let tool = rule["toolName"].as_str().unwrap_or_default();
                    parts.push(match rule["ruleContent"].as_str() {
                        Some(content) => format!("{tool}({content})"),
                        None => tool.to_string(),
                    });
                }
            }
            Some("setMode") => {
                parts.push(format!(
                    "mode:{}",
                    suggestion["mode"].as_str().unwrap_or_default()
                ));
            }
            Some("addDirectories") => {
                for dir in suggestion["directories"].as_array().into_iter().flatten() {
                    parts.push(format!("dir:{}", dir.as_str().unwrap_or_default()));
                }
            }
            _ => {}
        }
    }
    parts.sort();
    parts.dedup();
    (!parts.is_empty()).then(|| format!("claude:{}", parts.join(" ")))
}

fn success(request_id: &str, response: Value) -> Value {
    json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": request_id, "response": response}})
}

/// An error answer to a control request.
pub fn error_response(request_id: &str, error: &str) -> Value {
    json!({"type": "control_response", "response": {
        "subtype": "error", "request_id": request_id, "error": error}})
}

/// Whether `payload` asks permission for a file change.
pub fn is_file_change(payload: &EventPayload) -> bool {
    matches!(payload, EventPayload::PermissionAsked(p) if p.kind == PermissionKind::FileChange)
}

/// The native refusal of a file change in plan mode.
pub fn plan_mode_refusal(pending: &Pending) -> Value {
    success(
        &pending.request_id,
        deny("Plan mode changes no files. Present your plan with ExitPlanMode first."),
    )
}

/// The `permissionResolved` (automatic, rejected) that replaces a request the daemon
/// answers itself; it carries the request.
pub fn refused_automatically(asked: &AgentEvent, raw: &Value) -> AgentEvent {
    let EventPayload::PermissionAsked(request) = &asked.payload else {
        unreachable!("only permission requests are refused automatically")
    };
    AgentEvent::native(
        EventPayload::PermissionResolved(PermissionResolved {
            permission_id: request.permission_id.clone(),
            outcome: PermissionOutcome::Reject,
            automatic: true,
            request: Some(request.clone()),
        }),
        Some(raw.clone()),
    )
}

fn deny(message: &str) -> Value {
    json!({"behavior": "deny", "message": message})
}

/// The native answer to a permission (or plan approval) request. `always` allows and
/// sends the CLI's suggestions back scoped to this session (never to the user's
/// project settings files). An allowed plan needs nothing more: the pinned CLI leaves
/// plan mode by itself (for `default`, and reports it), so no `set_permission_mode`
/// request is sent.
pub fn permission_response(pending: &Pending, reply: PermissionReply) -> Value {
    let body = match (reply, pending.kind) {
        (PermissionReply::Reject, PendingKind::PlanApproval) => {
            deny("The user rejected the plan. Stay in plan mode and revise it.")
        }
        (PermissionReply::Reject, _) => deny("The user denied permission for this action."),
        (PermissionReply::Always, PendingKind::Permission) if !pending.suggestions.is_empty() => {
            let updates: Vec<Value> = pending
                .suggestions
                .iter()
                .map(|s| {
                    let mut s = s.clone();
                    if let Some(map) = s.as_object_mut() {
                        map.insert("destination".into(), json!("session"));
                    }
                    s
                })
                .collect();
            json!({"behavior": "allow", "updatedInput": pending.input, "updatedPermissions": updates})
        }
        _ => json!({"behavior": "allow", "updatedInput": pending.input}),
    };
    success(&pending.request_id, body)
}

/// The native answer to an AskUserQuestion request: the tool's input plus `answers`, a
/// map from question text to the selected label(s) joined with `", "` (the format the
/// pinned CLI reports back to the model); a rejection denies the tool.
pub fn question_response(pending: &Pending, answer: &QuestionAnswer) -> Value {
    let body = match answer {
        QuestionAnswer::Rejected => deny("The user declined to answer."),
        QuestionAnswer::Answered(answers) => {
            let mut input = pending.input.clone();
            let map: Map<String, Value> = pending
                .questions
                .iter()
                .zip(answers)
                .map(|(question, labels)| (question.clone(), json!(labels.join(", "))))
                .collect();
            if let Some(object) = input.as_object_mut() {
                object.insert("answers".into(), Value::Object(map));
            }
            json!({"behavior": "allow", "updatedInput": input})
        }
    };
    success(&pending.request_id, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_follow_claude_rules_modes_and_directories() {
        let bash = vec![
            json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "echo hi *"}],
                   "behavior": "allow", "destination": "localSettings"}),
            json!({"type": "addDirectories", "directories": ["/w"], "destination": "session"}),
        ];
        assert_eq!(
            always_scope(&bash).as_deref(),
            Some("claude:Bash(echo hi *) dir:/w")
        );
        let write =
            vec![json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"})];
        assert_eq!(
            always_scope(&write).as_deref(),
            Some("claude:mode:acceptEdits")
        );
        assert_eq!(always_scope(&[]), None);
        let deny_rule = vec![json!({"type": "addRules", "behavior": "deny",
            "rules": [{"toolName": "Bash"}]})];
        assert_eq!(always_scope(&deny_rule), None);
    }

    #[test]
    fn always_sends_suggestions_back_for_this_session_only() {
        let pending = Pending {
            request_id: "r1".into(),
            kind: PendingKind::Permission,
            input: json!({"command": "ls"}),
            suggestions: vec![json!({"type": "addRules", "rules": [{"toolName": "Bash"}],
                "behavior": "allow", "destination": "localSettings"})],
            questions: Vec::new(),
        };
        let line = permission_response(&pending, PermissionReply::Always);
        let response = &line["response"]["response"];
        assert_eq!(line["response"]["request_id"], "r1");
        assert_eq!(response["behavior"], "allow");
        assert_eq!(response["updatedInput"], json!({"command": "ls"}));
        assert_eq!(response["updatedPermissions"][0]["destination"], "session");
        let once = permission_response(&pending, PermissionReply::Once);
        assert!(
            once["response"]["response"]
                .get("updatedPermissions")
                .is_none()
        );
        let reject = permission_response(&pending, PermissionReply::Reject);
        assert_eq!(reject["response"]["response"]["behavior"], "deny");
    }

    #[test]
    fn answers_are_keyed_by_question_text() {
        let pending = Pending {
            request_id: "r2".into(),
            kind: PendingKind::Question,
            input: json!({"questions": []}),
            suggestions: Vec::new(),
            questions: vec!["Color?".into(), "Extras?".into()],
        };
        let answered = QuestionAnswer::Answered(vec![
            vec!["Blue".into()],
            vec!["Tests".into(), "Docs".into()],
        ]);
        let line = question_response(&pending, &answered);
        assert_eq!(
            line["response"]["response"]["updatedInput"]["answers"],
            json!({"Color?": "Blue", "Extras?": "Tests, Docs"})
        );
        let rejected = question_response(&pending, &QuestionAnswer::Rejected);
        assert_eq!(rejected["response"]["response"]["behavior"], "deny");
    }
}
