//! The script: which reply the fake model gives to which request.
//!
//! A [`Script`] is a small table of [`Rule`]s. Each rule pairs a keyword with an
//! [`Effect`]; every rule whose keyword occurs in the last real user message applies,
//! in table order. The default table (see [`Script::default`]) understands
//! `USE_TOOL`, `USE_WRITE`, `ASK_QUESTION`, `EXIT_PLAN`, `THINK`, `SLOW`, `FAIL`,
//! `REFUSE` and `FLAKY`.
//!
//! The table itself is stateless; the one exception, [`Effect::FailOnce`] (`FLAKY`),
//! remembers in a [`Memory`] (one per provider) which prompts already failed.
//!
//! Tool calls are written per agent dialect: an effect lists candidate tools
//! (Claude's `Bash`, Codex's `exec_command`, OpenCode's and Pi's `bash`, ...) and the
//! first one the request offers is called. A request that offers no tools (a side
//! request such as OpenCode's title call) always gets plain text.
//!
//! After a tool result the model writes its final text, unless the request now offers
//! a candidate preferred over the one just called: then that one is called (a chain).
//! This reaches tools an agent reveals only on demand, such as Claude Code's deferred
//! `ExitPlanMode`, which the model must first load with `ToolSearch`.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use super::calls;
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
/// The plan submitted for approval by `EXIT_PLAN`.
pub const PLAN_TEXT: &str = "## Fake plan\n\n1. Write fake_written.txt\n2. Report back\n";
/// Message of the HTTP 400 answered to a `REFUSE` prompt, in each API's error shape.
pub const REFUSAL_MESSAGE: &str = "fake provider refuses this request (REFUSE keyword)";
/// Message of the transient error answered once to a `FLAKY` prompt.
pub const FLAKY_MESSAGE: &str = "fake provider is overloaded, try again (FLAKY keyword)";
/// Value of `retry-after-ms` on the `FLAKY` failure: short, so SDKs that obey it
/// retry promptly.
pub const FLAKY_RETRY_AFTER_MS: u64 = 200;
/// The `ToolSearch` query that loads Claude Code's deferred `ExitPlanMode` tool.
pub const EXIT_PLAN_SEARCH: &str = "select:ExitPlanMode";

/// How one candidate tool call is written.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolInput {
    /// JSON arguments of a function tool. String values may contain `{cwd}`, replaced
    /// by the agent's working directory when the request reveals it, and
    /// `{plan_file}`, the plan file the agent names (without one the candidate is not
    /// called). Top-level keys
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
///
/// The Anthropic Messages dialect answers `{"type":"error","error":{"type","message"}}`
/// with [`Failure::status`]; the OpenAI dialects (Responses, Chat Completions) answer
/// `{"error":{"message","type","param","code"}}` with the same status and type unless
/// [`Failure::openai`] says otherwise.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// HTTP status code (Anthropic Messages; also OpenAI's unless `openai` is set).
    pub status: u16,
    /// Error type (`overloaded_error`, `api_error`, `invalid_request_error`, ...).
    pub error_type: String,
    /// Human-readable message.
    pub message: String,
    /// Value of the `x-should-retry` header, which the Anthropic and OpenAI SDKs obey.
    pub should_retry: Option<bool>,
    /// Value of the `retry-after-ms` header, which OpenCode's retry loop obeys.
    pub retry_after_ms: Option<u64>,
    /// The same failure as the OpenAI APIs state it, when it differs (Anthropic's 529
    /// `overloaded_error` is a 503 `server_error` there).
    pub openai: Option<OpenAiError>,
}

/// Status, type and code of a [`Failure`] in the OpenAI dialects.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenAiError {
    /// HTTP status code.
    pub status: u16,
    /// `error.type` (`server_error`, `invalid_request_error`, ...).
    pub error_type: String,
    /// `error.code`, `null` when `None`.
    pub code: Option<String>,
}

impl Failure {
    /// A failure without retry headers and stated alike in every dialect.
    pub fn new(status: u16, error_type: &str, message: &str) -> Self {
        Self {
            status,
            error_type: error_type.to_owned(),
            message: message.to_owned(),
            should_retry: None,
            retry_after_ms: None,
            openai: None,
        }
    }

    /// Status, type and code in the OpenAI dialects.
    pub fn openai_error(&self) -> OpenAiError {
        self.openai.clone().unwrap_or_else(|| OpenAiError {
            status: self.status,
            error_type: self.error_type.clone(),
            code: None,
        })
    }
}

/// What a provider remembers between requests: the prompts that already got their
/// [`Effect::FailOnce`] failure. Thread-safe; one per provider instance.
#[derive(Debug, Default)]
pub struct Memory {
    failed_once: Mutex<HashSet<String>>,
}

impl Memory {
    /// Records that `prompt` failed once; `false` when it already had.
    fn first_failure(&self, prompt: &str) -> bool {
        self.failed_once
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(prompt.to_owned())
    }
}

/// What a matched keyword does to the reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Call the first of these tools that the request offers (else plain text).
    /// Candidates are in order of preference: if, after the call's result, the request
    /// offers a candidate preferred over the one called (a tool the agent reveals only
    /// on demand), it is called next.
    CallTool(Vec<ToolTemplate>),
    /// Steps called one reply after another, each step a candidate list like
    /// [`Effect::CallTool`]'s; a step none of whose candidates is offered is skipped.
    CallChain(Vec<Vec<ToolTemplate>>),
    /// Stream this reasoning text before the answer.
    Think(String),
    /// Spread the whole stream over this much time, and use [`SLOW_TEXT`].
    Pace(Duration),
    /// Answer with an HTTP error.
    Fail(Failure),
    /// Answer with an HTTP error the first time the provider sees this prompt (the last
    /// real user message); later requests with the same prompt (the agent's retry) are
    /// answered as if this rule were absent. A transient failure.
    FailOnce(Failure),
    /// Reply with this text instead of [`REPLY_TEXT`].
    Say(String),
}

impl Effect {
    /// The steps of a tool-calling effect (`CallTool` is a one-step chain).
    fn steps(&self) -> Option<Vec<&[ToolTemplate]>> {
        match self {
            Effect::CallTool(candidates) => Some(vec![candidates.as_slice()]),
            Effect::CallChain(steps) => Some(steps.iter().map(Vec::as_slice).collect()),
            _ => None,
        }
    }
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
    /// The namespace the request declares the tool in (Codex's `functions`), sent back
    /// with the call.
    pub namespace: Option<String>,
    /// For a code-mode call (Codex's `exec`, whose input is JavaScript): the tool the
    /// script calls (`exec_command`, `apply_patch`, ...).
    pub nested: Option<String>,
}

impl PlannedTool {
    /// A direct call of `name`, outside any namespace.
    pub fn new(name: &str, input: ToolInput) -> Self {
        Self {
            name: name.to_owned(),
            input,
            namespace: None,
            nested: None,
        }
    }

    /// How a recorded request labels the call: `exec_command`, or `exec(exec_command)`
    /// for a code-mode call.
    pub fn describe(&self) -> String {
        match &self.nested {
            Some(nested) => format!("{}({nested})", self.name),
            None => self.name.clone(),
        }
    }

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
    /// Short description recorded with the request (`text`, `tool:Bash`, `error:500`,
    /// `error:529 (once)`; a failure's status is the Anthropic one, see
    /// [`Plan::label_for_openai`]).
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
    /// The label as the OpenAI dialects answer: a failure's status is theirs.
    pub fn label_for_openai(&self) -> String {
        match &self.failure {
            Some(failure) => {
                let once = if self.label.ends_with(ONCE_SUFFIX) {
                    ONCE_SUFFIX
                } else {
                    ""
                };
                format!("error:{}{once}", failure.openai_error().status)
            }
            None => self.label.clone(),
        }
    }

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
    /// The default table: `USE_TOOL`, `USE_WRITE`, `ASK_QUESTION`, `EXIT_PLAN`, `THINK`,
    /// `SLOW`, `FAIL`, `REFUSE`, `FLAKY`.
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

    /// Decides the reply to one request as a fresh provider would (a `FailOnce` rule
    /// fails).
    pub fn plan(&self, view: &RequestView) -> Plan {
        self.plan_with(view, &Memory::default())
    }

    /// Decides the reply to one request of a provider that remembers `memory`.
    pub fn plan_with(&self, view: &RequestView, memory: &Memory) -> Plan {
        if view.tools.is_empty() {
            return Plan::text("text (no tools offered)", &self.reply_text);
        }
        let prompt = match &view.last {
            LastTurn::ToolResult { prompt, called } => {
                return self.after_tool(prompt.as_deref(), called, view);
            }
            LastTurn::Nothing => return Plan::text("text", &self.reply_text),
            LastTurn::User(text) => text,
        };
        let mut plan = Plan::text("text", &self.reply_text);
        for rule in self.rules.iter().filter(|r| prompt.contains(&r.keyword)) {
            match &rule.effect {
                Effect::CallTool(_) | Effect::CallChain(_) if plan.tool.is_none() => {
                    let steps = rule.effect.steps().unwrap_or_default();
                    if let Some(tool) = calls::first_call(&steps, view) {
                        plan.label = format!("tool:{}", tool.describe());
                        plan.text = None;
                        plan.tool = Some(tool);
                    }
                }
                Effect::CallTool(_) | Effect::CallChain(_) => {}
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
                Effect::FailOnce(failure) if memory.first_failure(prompt) => {
                    plan.label = format!("error:{}{ONCE_SUFFIX}", failure.status);
                    plan.failure = Some(failure.clone());
                    return plan;
                }
                Effect::FailOnce(_) => {}
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

impl Script {
    /// The reply after a tool result: the next call of a matching rule's chain (see
    /// [`calls::next_call`]), else the final text. Modifiers (`THINK`, `SLOW`, ...)
    /// shape only the first reply.
    fn after_tool(&self, prompt: Option<&str>, called: &[String], view: &RequestView) -> Plan {
        let next = prompt.and_then(|prompt| {
            self.rules
                .iter()
                .filter(|r| prompt.contains(&r.keyword))
                .find_map(|rule| calls::next_call(&rule.effect.steps()?, called, view))
        });
        match next {
            Some(tool) => Plan {
                label: format!("tool:{} (chained)", tool.describe()),
                text: None,
                tool: Some(tool),
                ..Plan::text("", "")
            },
            None => Plan::text("text (after tool)", &self.after_tool_text),
        }
    }
}

/// Ends the label of a [`Effect::FailOnce`] failure.
const ONCE_SUFFIX: &str = " (once)";

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
        // Leave plan mode with a plan, as a real model does in Claude Code: write the
        // plan to the plan file the prompt names, then call ExitPlanMode (which reads
        // that file). The CLI offers ExitPlanMode only after the model loads it with
        // ToolSearch; the chain calls it as soon as a request offers it.
        rule(
            "EXIT_PLAN",
            Effect::CallChain(vec![
                vec![ToolTemplate::json(
                    "Write",
                    json!({"file_path": calls::PLAN_FILE, "content": PLAN_TEXT}),
                )],
                vec![
                    ToolTemplate::json("ExitPlanMode", json!({})),
                    ToolTemplate::json(
                        "ToolSearch",
                        json!({"query": EXIT_PLAN_SEARCH, "max_results": 1}),
                    ),
                ],
            ]),
        ),
        rule("THINK", Effect::Think(THINKING_TEXT.to_owned())),
        rule("SLOW", Effect::Pace(Duration::from_secs(3))),
        // HTTP 500 that agents give up on quickly: the Anthropic SDK (Claude Code) obeys
        // `x-should-retry: false`; OpenCode still retries five times but `retry-after-ms: 0`
        // removes its back-off; Codex and Pi need retries off in their config (see `offline`).
        rule(
            "FAIL",
            Effect::Fail(Failure {
                should_retry: Some(false),
                retry_after_ms: Some(0),
                openai: Some(OpenAiError {
                    status: 500,
                    error_type: "server_error".to_owned(),
                    code: Some("server_error".to_owned()),
                }),
                ..Failure::new(500, "api_error", "fake provider failure (FAIL keyword)")
            }),
        ),
        // HTTP 400: the request itself is refused, so no client retries it.
        rule(
            "REFUSE",
            Effect::Fail(Failure {
                should_retry: Some(false),
                ..Failure::new(400, "invalid_request_error", REFUSAL_MESSAGE)
            }),
        ),
        // A transient overload, once per prompt: Anthropic's 529 `overloaded_error`
        // (OpenAI's 503) with headers that let the SDKs retry at once; the retry gets
        // the normal reply.
        rule(
            "FLAKY",
            Effect::FailOnce(Failure {
                should_retry: Some(true),
                retry_after_ms: Some(FLAKY_RETRY_AFTER_MS),
                openai: Some(OpenAiError {
                    status: 503,
                    error_type: "server_error".to_owned(),
                    code: None,
                }),
                ..Failure::new(529, "overloaded_error", FLAKY_MESSAGE)
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
                    ..OfferedTool::default()
                })
                .collect(),
            cwd: Some("/w".to_owned()),
            plan_file: None,
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

    fn after(prompt: &str, called: &[&str]) -> LastTurn {
        LastTurn::ToolResult {
            prompt: Some(prompt.to_owned()),
            called: called.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    #[test]
    fn after_tool_result_the_model_finishes() {
        let script = Script::default();
        let plan = script.plan(&view(after("USE_TOOL", &["Bash"]), &[("Bash", None)]));
        assert_eq!(plan.text.as_deref(), Some(AFTER_TOOL_TEXT));
        assert!(plan.tool.is_none());
        // Candidates listed after the one called are never chained, nor other rules.
        let plan = script.plan(&view(
            after("USE_WRITE USE_TOOL THINK", &["apply_patch"]),
            &[("apply_patch", None), ("write", None), ("Bash", None)],
        ));
        assert_eq!(plan.label, "text (after tool)");
        assert!(plan.thinking.is_none());
        let orphan = LastTurn::ToolResult {
            prompt: None,
            called: Vec::new(),
        };
        let plan = script.plan(&view(orphan, &[("Bash", None)]));
        assert_eq!(plan.text.as_deref(), Some(AFTER_TOOL_TEXT));
    }

    #[test]
    fn exit_plan_writes_the_plan_searches_then_calls_the_revealed_tool() {
        let script = Script::default();
        let write = ("Write", Some(&["file_path", "content"][..]));
        let search = ("ToolSearch", Some(&["query", "max_results"][..]));
        let exit = ("ExitPlanMode", Some(&["allowedPrompts"][..]));
        let planning = |last: LastTurn, tools: &[(&str, Option<&[&str]>)]| {
            let mut view = view(last, tools);
            view.plan_file = Some("/h/plans/p.md".to_owned());
            script.plan(&view)
        };
        let first = planning(LastTurn::User("EXIT_PLAN".into()), &[write, search]);
        assert_eq!(first.label, "tool:Write");
        assert_eq!(
            first.tool.unwrap().input,
            ToolInput::Json(json!({"file_path": "/h/plans/p.md", "content": PLAN_TEXT}))
        );
        let second = planning(after("EXIT_PLAN", &["Write"]), &[write, search]);
        assert_eq!(second.label, "tool:ToolSearch (chained)");
        assert_eq!(
            second.tool.unwrap().input,
            ToolInput::Json(json!({"query": EXIT_PLAN_SEARCH, "max_results": 1}))
        );
        // The search did not reveal the tool: the model gives up with text.
        let unrevealed = planning(
            after("EXIT_PLAN", &["Write", "ToolSearch"]),
            &[write, search],
        );
        assert_eq!(unrevealed.text.as_deref(), Some(AFTER_TOOL_TEXT));
        let revealed = [write, search, exit];
        let third = planning(after("EXIT_PLAN", &["Write", "ToolSearch"]), &revealed);
        assert_eq!(third.label, "tool:ExitPlanMode (chained)");
        assert_eq!(third.tool.unwrap().input, ToolInput::Json(json!({})));
        let done = planning(
            after("EXIT_PLAN", &["Write", "ToolSearch", "ExitPlanMode"]),
            &revealed,
        );
        assert_eq!(done.text.as_deref(), Some(AFTER_TOOL_TEXT));
        // Already loaded (a later turn): the plan, then ExitPlanMode, then text.
        let again = planning(after("EXIT_PLAN", &["Write"]), &revealed);
        assert_eq!(again.label, "tool:ExitPlanMode (chained)");
        // Outside plan mode no plan file is named: no write.
        let plain = script.plan(&view(LastTurn::User("EXIT_PLAN".into()), &[write, search]));
        assert_eq!(plain.label, "tool:ToolSearch");
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

    #[test]
    fn refuse_is_a_400_invalid_request_in_every_dialect() {
        let plan = Script::default().plan(&view(
            LastTurn::User("REFUSE THINK".into()),
            &[("Bash", None)],
        ));
        assert_eq!(plan.label, "error:400");
        assert_eq!(plan.label_for_openai(), "error:400");
        let failure = plan.failure.expect("failure");
        assert_eq!(
            (failure.status, failure.error_type.as_str()),
            (400, "invalid_request_error")
        );
        assert_eq!(failure.message, REFUSAL_MESSAGE);
        assert_ne!(failure.should_retry, Some(true));
        assert_eq!(failure.retry_after_ms, None);
        let openai = failure.openai_error();
        assert_eq!(
            (openai.status, openai.error_type.as_str(), openai.code),
            (400, "invalid_request_error", None)
        );
    }

    #[test]
    fn flaky_fails_once_per_prompt_then_replies_normally() {
        let script = Script::default();
        let memory = Memory::default();
        let tools = [("Bash", None)];
        let first = script.plan_with(&view(LastTurn::User("FLAKY THINK".into()), &tools), &memory);
        assert_eq!(first.label, "error:529 (once)");
        assert_eq!(first.label_for_openai(), "error:503 (once)");
        let failure = first.failure.expect("failure");
        assert_eq!(failure.error_type, "overloaded_error");
        assert_eq!(failure.should_retry, Some(true));
        assert_eq!(failure.retry_after_ms, Some(FLAKY_RETRY_AFTER_MS));
        assert_eq!(failure.openai_error().status, 503);
        // The retry of the same prompt gets the reply, other rules included.
        let retry = script.plan_with(&view(LastTurn::User("FLAKY THINK".into()), &tools), &memory);
        assert!(retry.failure.is_none());
        assert_eq!(retry.label, "thinking+text");
        assert_eq!(retry.thinking.as_deref(), Some(THINKING_TEXT));
        // Another prompt fails once of its own; side requests never fail.
        let other = script.plan_with(&view(LastTurn::User("FLAKY again".into()), &tools), &memory);
        assert!(other.failure.is_some());
        let side = script.plan_with(&view(LastTurn::User("FLAKY more".into()), &[]), &memory);
        assert!(side.failure.is_none());
        // A fresh memory (another provider) fails it again; plain `plan` always does.
        let fresh = Memory::default();
        let again = script.plan_with(&view(LastTurn::User("FLAKY THINK".into()), &tools), &fresh);
        assert!(again.failure.is_some());
    }
}
