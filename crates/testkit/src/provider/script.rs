//! The script: which reply the fake model gives to which request.
//!
//! A [`Script`] is a small table of [`Rule`]s. Each rule pairs a keyword with an
//! [`Effect`]; every rule whose keyword occurs in the last real user message applies,
//! in table order. The default table (see [`Script::default`]) understands
//! `USE_TOOL`, `USE_WRITE`, `ASK_QUESTION`, `THINK`, `SLOW` and `FAIL`.
//!
//! Tool calls are written per agent dialect: an effect lists candidate tools
//! (Claude's `Bash`, Codex's `exec_command`, OpenCode's and Pi's `bash`, ...) and the
//! first one the request offers is called. A request that offers no tools (a side
//! request such as OpenCode's title call) always gets plain text.

use std::time::Duration;

use serde_json::{Value, json};

use super::view::{LastTurn, RequestView};

/// Text of a plain reply.
pub const REPLY_TEXT: &str = "hello from fake model";
/// Text of the reply that follows a tool result.
pub const AFTER_TOOL_TEXT: &str = "tool finished; hello from fake model";
/// Text of the reply to a `SLOW` prompt; long enough for a dozen paced deltas.
pub const SLOW_TEXT: &str =
    "this is a slow reply from the fake model streamed word by word so a client can cancel it";
/// Reasoning text streamed for `THINK`.
pub const THINKING_TEXT: &str =
    "The user wants a short demonstration, so I will think briefly and answer.";
/// The shell command run by `USE_TOOL`.
pub const TOOL_COMMAND: &str =
    "echo fake-tool-ran > fake_tool_output.txt && cat fake_tool_output.txt";
/// File created by `USE_TOOL` in the agent's working directory.
pub const TOOL_OUTPUT_FILE: &str = "fake_tool_output.txt";
/// File created by `USE_WRITE` in the agent's working directory.
pub const WRITTEN_FILE: &str = "fake_written.txt";
/// Content written by `USE_WRITE`.
pub const WRITTEN_CONTENT: &str = "written by fake model\n";

/// How one candidate tool call is written.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolInput {
    /// JSON arguments of a function tool. String values may contain `{cwd}`, replaced
    /// by the agent's working directory when the request reveals it. Top-level keys
    /// that the offered tool's schema does not declare are dropped, so one template
    /// can serve two agents whose tools share a name but not a schema.
    Json(Value),
    /// Raw input of a freeform (custom) tool, such as Codex's `apply_patch`.
    Freeform(String),
}

/// One candidate tool call in one agent's dialect.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolTemplate {
    /// Tool name exactly as the agent offers it.
    pub name: String,
    /// Arguments of the call.
    pub input: ToolInput,
}

impl ToolTemplate {
    /// A function tool call with JSON arguments.
    pub fn json(name: &str, input: Value) -> Self {
        Self {
            name: name.to_owned(),
            input: ToolInput::Json(input),
        }
    }

    /// A freeform tool call with raw text input.
    pub fn freeform(name: &str, input: &str) -> Self {
        Self {
            name: name.to_owned(),
            input: ToolInput::Freeform(input.to_owned()),
        }
    }
}

/// An error answer instead of a model reply.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// HTTP status code.
    pub status: u16,
    /// Error type in the Anthropic error body (`overloaded_error`, `api_error`, ...).
    pub error_type: String,
    /// Human-readable message.
    pub message: String,
    /// Value of the `x-should-retry` header, which the Anthropic and OpenAI SDKs obey.
    pub should_retry: Option<bool>,
    /// Value of the `retry-after-ms` header, which OpenCode's retry loop obeys.
    pub retry_after_ms: Option<u64>,
}

/// What a matched keyword does to the reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Call the first of these tools that the request offers (else plain text).
    CallTool(Vec<ToolTemplate>),
    /// Stream this reasoning text before the answer.
    Think(String),
    /// Spread the whole stream over this much time, and use [`SLOW_TEXT`].
    Pace(Duration),
    /// Answer with an HTTP error.
    Fail(Failure),
    /// Reply with this text instead of [`REPLY_TEXT`].
    Say(String),
}

/// A keyword and its effect.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// Matched case-sensitively anywhere in the last real user message.
    pub keyword: String,
    /// Applied when the keyword matches.
    pub effect: Effect,
}

/// The table of rules plus the fixed texts.
#[derive(Clone, Debug)]
pub struct Script {
    /// Rules in the order they apply.
    pub rules: Vec<Rule>,
    /// Reply when no rule changes the text.
    pub reply_text: String,
    /// Reply after a tool result.
    pub after_tool_text: String,
    /// Pause between two streamed events when no `Pace` effect applies.
    pub event_delay: Duration,
}

/// A tool call the fake model decided to make.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedTool {
    /// Tool name.
    pub name: String,
    /// Resolved arguments.
    pub input: ToolInput,
}

impl PlannedTool {
    /// The arguments as the text the model streams (JSON or raw freeform input).
    pub fn input_text(&self) -> String {
        match &self.input {
            ToolInput::Json(v) => v.to_string(),
            ToolInput::Freeform(s) => s.clone(),
        }
    }
}

/// The reply decided for one request, independent of the wire dialect.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Short description recorded with the request (`text`, `tool:Bash`, `error:500`).
    pub label: String,
    /// Reasoning to stream first.
    pub thinking: Option<String>,
    /// Text to stream.
    pub text: Option<String>,
    /// Tool call to stream (after the text, if both are set).
    pub tool: Option<PlannedTool>,
    /// Total duration of the stream, when paced.
    pub pace: Option<Duration>,
    /// HTTP error instead of a reply.
    pub failure: Option<Failure>,
}

impl Plan {
    fn text(label: &str, text: &str) -> Self {
        Self {
            label: label.to_owned(),
            thinking: None,
            text: Some(text.to_owned()),
            tool: None,
            pace: None,
            failure: None,
        }
    }
}

impl Default for Script {
    /// The default table: `USE_TOOL`, `USE_WRITE`, `ASK_QUESTION`, `THINK`, `SLOW`, `FAIL`.
    fn default() -> Self {
        Self {
            rules: default_rules(),
            reply_text: REPLY_TEXT.to_owned(),
            after_tool_text: AFTER_TOOL_TEXT.to_owned(),
            event_delay: Duration::from_millis(5),
        }
    }
}

impl Script {
    /// A script with no rules: every request gets plain text.
    pub fn empty() -> Self {
        Self {
            rules: Vec::new(),
            ..Self::default()
        }
    }

    /// Adds a rule at the front of the table, so it applies before the existing ones.
    pub fn with_rule(mut self, keyword: &str, effect: Effect) -> Self {
        self.rules.insert(
            0,
            Rule {
                keyword: keyword.to_owned(),
                effect,
            },
        );
        self
    }

    /// Decides the reply to one request.
    pub fn plan(&self, view: &RequestView) -> Plan {
        if view.tools.is_empty() {
            return Plan::text("text (no tools offered)", &self.reply_text);
        }
        let prompt = match &view.last {
            LastTurn::ToolResult => return Plan::text("text (after tool)", &self.after_tool_text),
            LastTurn::Nothing => return Plan::text("text", &self.reply_text),
            LastTurn::User(text) => text,
        };
        let mut plan = Plan::text("text", &self.reply_text);
        for rule in self.rules.iter().filter(|r| prompt.contains(&r.keyword)) {
            match &rule.effect {
                Effect::CallTool(candidates) if plan.tool.is_none() => {
                    if let Some(tool) = pick_tool(candidates, view) {
                        plan.label = format!("tool:{}", tool.name);
                        plan.text = None;
                        plan.tool = Some(tool);
                    }
                }
                Effect::CallTool(_) => {}
                Effect::Think(text) => plan.thinking = Some(text.clone()),
                Effect::Pace(total) => {
                    plan.pace = Some(*total);
                    if plan.tool.is_none() {
                        plan.text = Some(SLOW_TEXT.to_owned());
                    }
                }
                Effect::Fail(failure) => {
                    plan.label = format!("error:{}", failure.status);
                    plan.failure = Some(failure.clone());
                    return plan;
                }
                Effect::Say(text) if plan.tool.is_none() => plan.text = Some(text.clone()),
                Effect::Say(_) => {}
            }
        }
        if plan.thinking.is_some() && plan.tool.is_none() {
            plan.label = "thinking+text".to_owned();
        }
        plan
    }
}

/// Picks the first candidate the request offers and resolves its arguments.
fn pick_tool(candidates: &[ToolTemplate], view: &RequestView) -> Option<PlannedTool> {
    candidates.iter().find_map(|candidate| {
        let offered = view.tools.iter().find(|t| t.name == candidate.name)?;
        let input = match (&candidate.input, offered.freeform) {
            (ToolInput::Freeform(raw), true) => {
                ToolInput::Freeform(fill_cwd(raw, view.cwd.as_deref()))
            }
            (ToolInput::Json(args), false) => {
                let mut args = fill_cwd_json(args, view.cwd.as_deref());
                if let (Value::Object(map), Some(props)) = (&mut args, &offered.properties) {
                    map.retain(|key, _| props.iter().any(|p| p == key));
                }
                ToolInput::Json(args)
            }
            _ => return None,
        };
        Some(PlannedTool {
            name: candidate.name.clone(),
            input,
        })
    })
}

fn fill_cwd(text: &str, cwd: Option<&str>) -> String {
    match cwd {
        Some(cwd) => text.replace("{cwd}", cwd.trim_end_matches('/')),
        None => text.replace("{cwd}/", "").replace("{cwd}", "."),
    }
}

fn fill_cwd_json(value: &Value, cwd: Option<&str>) -> Value {
    match value {
        Value::String(s) => Value::String(fill_cwd(s, cwd)),
        Value::Array(items) => Value::Array(items.iter().map(|v| fill_cwd_json(v, cwd)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill_cwd_json(v, cwd)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The default rule table. Edit here to teach the fake model a new trick.
fn default_rules() -> Vec<Rule> {
    let rule = |keyword: &str, effect| Rule {
        keyword: keyword.to_owned(),
        effect,
    };
    let written_path = format!("{{cwd}}/{WRITTEN_FILE}");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {WRITTEN_FILE}\n+{}\n*** End Patch\n",
        WRITTEN_CONTENT.trim_end()
    );
    vec![
        rule(
            "USE_TOOL",
            Effect::CallTool(vec![
                ToolTemplate::json(
                    "Bash",
                    json!({"command": TOOL_COMMAND, "description": "Write and print a marker file"}),
                ),
                ToolTemplate::json("exec_command", json!({"cmd": TOOL_COMMAND})),
                ToolTemplate::json(
                    "bash",
                    json!({"command": TOOL_COMMAND, "description": "Write and print a marker file"}),
                ),
            ]),
        ),
        rule(
            "USE_WRITE",
            Effect::CallTool(vec![
                ToolTemplate::json(
                    "Write",
                    json!({"file_path": written_path, "content": WRITTEN_CONTENT}),
                ),
                ToolTemplate::freeform("apply_patch", &patch),
                ToolTemplate::json(
                    "write",
                    json!({"filePath": written_path, "path": written_path, "content": WRITTEN_CONTENT}),
                ),
            ]),
        ),
        rule("ASK_QUESTION", Effect::CallTool(question_tools())),
        rule("THINK", Effect::Think(THINKING_TEXT.to_owned())),
        rule("SLOW", Effect::Pace(Duration::from_secs(3))),
        // HTTP 500 that agents give up on quickly: the Anthropic SDK (Claude Code) obeys
        // `x-should-retry: false`; OpenCode still retries five times but `retry-after-ms: 0`
        // removes its back-off; Codex and Pi need retries off in their config (see `offline`).
        rule(
            "FAIL",
            Effect::Fail(Failure {
                status: 500,
                error_type: "api_error".to_owned(),
                message: "fake provider failure (FAIL keyword)".to_owned(),
                should_retry: Some(false),
                retry_after_ms: Some(0),
            }),
        ),
    ]
}

/// The two questions asked by `ASK_QUESTION`, one single-select and one multi-select,
/// in the question tool of each agent.
fn question_tools() -> Vec<ToolTemplate> {
    let color = (
        "Which color should the widget be?",
        "Color",
        ["Red", "Blue"],
    );
    let extras = (
        "Which extras do you want?",
        "Extras",
        ["Tests", "Docs", "Benchmarks"],
    );
    let options = |labels: &[&str]| -> Value {
        labels
            .iter()
            .map(|l| json!({"label": l, "description": format!("Choose {l}")}))
            .collect()
    };
    vec![
        ToolTemplate::json(
            "AskUserQuestion",
            json!({"questions": [
                {"question": color.0, "header": color.1, "options": options(&color.2), "multiSelect": false},
                {"question": extras.0, "header": extras.1, "options": options(&extras.2), "multiSelect": true},
            ]}),
        ),
        ToolTemplate::json(
            "request_user_input",
            json!({"questions": [
                {"id": "color", "header": color.1, "question": color.0, "options": options(&color.2)},
                {"id": "extras", "header": extras.1, "question": extras.0, "options": options(&extras.2)},
            ]}),
        ),
        ToolTemplate::json(
            "question",
            json!({"questions": [
                {"question": color.0, "header": color.1, "options": options(&color.2), "multiple": false},
                {"question": extras.0, "header": extras.1, "options": options(&extras.2), "multiple": true},
            ]}),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::view::OfferedTool;

    fn view(last: LastTurn, tools: &[(&str, Option<&[&str]>)]) -> RequestView {
        RequestView {
            last,
            tools: tools
                .iter()
                .map(|(name, props)| OfferedTool {
                    name: (*name).to_owned(),
                    freeform: *name == "apply_patch",
                    properties: props.map(|p| p.iter().map(|s| (*s).to_owned()).collect()),
                })
                .collect(),
            cwd: Some("/w".to_owned()),
        }
    }

    #[test]
    fn side_request_without_tools_gets_text() {
        let plan = Script::default().plan(&view(LastTurn::User("USE_TOOL FAIL".into()), &[]));
        assert_eq!(plan.text.as_deref(), Some(REPLY_TEXT));
        assert!(plan.tool.is_none() && plan.failure.is_none());
    }

    #[test]
    fn tool_is_picked_in_the_offered_dialect_and_filtered_by_schema() {
        let plan = Script::default().plan(&view(
            LastTurn::User("please USE_WRITE".into()),
            &[("read", None), ("write", Some(&["path", "content"]))],
        ));
        let tool = plan.tool.expect("tool");
        assert_eq!(tool.name, "write");
        assert_eq!(
            tool.input,
            ToolInput::Json(json!({"path": "/w/fake_written.txt", "content": WRITTEN_CONTENT}))
        );
    }

    #[test]
    fn freeform_patch_for_codex() {
        let plan = Script::default().plan(&view(
            LastTurn::User("USE_WRITE".into()),
            &[("exec_command", None), ("apply_patch", None)],
        ));
        let tool = plan.tool.expect("tool");
        assert!(
            tool.input_text()
                .starts_with("*** Begin Patch\n*** Add File: fake_written.txt")
        );
    }

    #[test]
    fn after_tool_result_the_model_finishes() {
        let plan = Script::default().plan(&view(LastTurn::ToolResult, &[("Bash", None)]));
        assert_eq!(plan.text.as_deref(), Some(AFTER_TOOL_TEXT));
    }

    #[test]
    fn unoffered_tool_falls_back_to_text_and_modifiers_combine() {
        let plan = Script::default().plan(&view(
            LastTurn::User("THINK SLOW ASK_QUESTION".into()),
            &[("Bash", None)],
        ));
        assert!(plan.tool.is_none());
        assert_eq!(plan.thinking.as_deref(), Some(THINKING_TEXT));
        assert_eq!(plan.text.as_deref(), Some(SLOW_TEXT));
        assert_eq!(plan.pace, Some(Duration::from_secs(3)));
    }

    #[test]
    fn fail_and_custom_rules() {
        let script = Script::default().with_rule("HELLO", Effect::Say("custom".into()));
        let plan = script.plan(&view(LastTurn::User("HELLO".into()), &[("Bash", None)]));
        assert_eq!(plan.text.as_deref(), Some("custom"));
        let plan = script.plan(&view(LastTurn::User("FAIL".into()), &[("Bash", None)]));
        assert_eq!(plan.failure.map(|f| f.status), Some(500));
    }
}
