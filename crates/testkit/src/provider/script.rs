//! The script: which reply the fake model gives to which request.
//!
//! A [`Script`] is a small table of [`Rule`]s. Each rule pairs a keyword with an
//! [`Effect`]; every rule whose keyword occurs in the last real user message applies,
//! in table order. The default table (see [`Script::default`]) understands
//! `USE_TOOL`, `USE_WRITE`, `ASK_QUESTION`, `EXIT_PLAN`, `USE_MCP`, `LOOP_TOOLS`,
//! `THINK`, `SLOW`, `FAIL`, `REFUSE` and `FLAKY`.
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

use serde_json::Value;

use super::calls;
use super::view::{LastTurn, RequestView};

mod mcp;
mod rules;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_mcp;

pub use mcp::{MCP_REPLY_PREFIX, MCP_TEXT, mcp_candidates, mcp_target};
use rules::default_rules;

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
/// The shell command `LOOP_TOOLS` runs again and again.
pub const LOOP_COMMAND: &str = "echo loop-step";

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
    /// JSON arguments of a client-executed tool search (Codex's `tool_search`), sent as a
    /// `tool_search_call` item. Only planned: a template asks for it with [`Self::Json`]
    /// arguments, and the offered tool decides.
    Search(Value),
}

/// One candidate tool call in one agent's dialect.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolTemplate {
    /// Tool name exactly as the agent offers it.
    pub name: String,
    /// Arguments of the call.
    pub input: ToolInput,
    /// Only a tool declared in this Responses `namespace` tool matches (Codex's
    /// `mcp__<server>`); `None`: a tool of this name in any namespace or none.
    pub namespace: Option<String>,
    /// When no request offers the tool, it may still be reached through a code-mode tool
    /// that reaches deferred tools ([`super::view::OfferedTool::reaches_deferred`]:
    /// Codex's `exec` and its MCP tools).
    pub deferred: bool,
}

impl ToolTemplate {
    /// A function tool call with JSON arguments.
    pub fn json(name: &str, input: Value) -> Self {
        Self {
            name: name.to_owned(),
            input: ToolInput::Json(input),
            namespace: None,
            deferred: false,
        }
    }

    /// A freeform tool call with raw text input.
    pub fn freeform(name: &str, input: &str) -> Self {
        Self {
            input: ToolInput::Freeform(input.to_owned()),
            ..Self::json(name, Value::Null)
        }
    }

    /// The same call, matching only a tool of this Responses `namespace`.
    pub fn in_namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.to_owned());
        self
    }

    /// The same call, also reachable as a deferred tool of a code-mode tool.
    pub fn deferred(mut self) -> Self {
        self.deferred = true;
        self
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
    /// Call an MCP tool with these arguments: the word after the keyword names it as
    /// `<server>/<tool>` (`USE_MCP ht/echo`), and [`mcp_candidates`] are its names in every
    /// agent's dialect, searching for it first where the agent defers it. After its
    /// result the final text quotes the result: [`MCP_REPLY_PREFIX`] then the tool's
    /// output. Without a `<server>/<tool>` word it does nothing.
    CallMcp(Value),
    /// Call the first of these tools that the request offers, and again after every
    /// tool result, forever: only a turn limit (or a cancel) ends the turn.
    CallForever(Vec<ToolTemplate>),
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
    /// The steps of a tool-calling effect matched by `keyword` in `prompt` (`CallTool`,
    /// `CallForever` and `CallMcp` are one-step chains).
    fn steps(&self, keyword: &str, prompt: &str) -> Option<Vec<Vec<ToolTemplate>>> {
        match self {
            Effect::CallTool(candidates) | Effect::CallForever(candidates) => {
                Some(vec![candidates.clone()])
            }
            Effect::CallChain(steps) => Some(steps.clone()),
            Effect::CallMcp(arguments) => {
                let (server, tool) = mcp_target(prompt, keyword)?;
                Some(vec![mcp_candidates(&server, &tool, arguments)])
            }
            _ => None,
        }
    }
}

/// Steps as the call pickers take them.
fn slices(steps: &[Vec<ToolTemplate>]) -> Vec<&[ToolTemplate]> {
    steps.iter().map(Vec::as_slice).collect()
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
            ToolInput::Json(v) | ToolInput::Search(v) => v.to_string(),
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
    /// The default table: `USE_TOOL`, `USE_WRITE`, `ASK_QUESTION`, `EXIT_PLAN`,
    /// `USE_MCP`, `LOOP_TOOLS`, `THINK`, `SLOW`, `FAIL`, `REFUSE`, `FLAKY`.
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
            LastTurn::ToolResult {
                prompt,
                called,
                output,
            } => {
                return self.after_tool(prompt.as_deref(), called, output, view);
            }
            LastTurn::Nothing => return Plan::text("text", &self.reply_text),
            LastTurn::User(text) => text,
        };
        let mut plan = Plan::text("text", &self.reply_text);
        for rule in self.rules.iter().filter(|r| prompt.contains(&r.keyword)) {
            match &rule.effect {
                Effect::CallTool(_)
                | Effect::CallChain(_)
                | Effect::CallMcp(_)
                | Effect::CallForever(_)
                    if plan.tool.is_none() =>
                {
                    let steps = rule.effect.steps(&rule.keyword, prompt);
                    let steps = steps.unwrap_or_default();
                    if let Some(tool) = calls::first_call(&slices(&steps), view) {
                        plan.label = format!("tool:{}", tool.describe());
                        plan.text = None;
                        plan.tool = Some(tool);
                    }
                }
                Effect::CallTool(_)
                | Effect::CallChain(_)
                | Effect::CallMcp(_)
                | Effect::CallForever(_) => {}
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
    /// [`calls::next_call`]) or loop, else the final text (quoting the result after an
    /// MCP call). Modifiers (`THINK`, `SLOW`, ...) shape only the first reply.
    fn after_tool(
        &self,
        prompt: Option<&str>,
        called: &[String],
        output: &str,
        view: &RequestView,
    ) -> Plan {
        let prompt = prompt.unwrap_or_default();
        let rules: Vec<&Rule> = self
            .rules
            .iter()
            .filter(|r| !prompt.is_empty() && prompt.contains(&r.keyword))
            .collect();
        let next = rules.iter().find_map(|rule| {
            let steps = rule.effect.steps(&rule.keyword, prompt)?;
            match rule.effect {
                Effect::CallForever(_) => Some((calls::first_call(&slices(&steps), view)?, "loop")),
                _ => Some((calls::next_call(&slices(&steps), called, view)?, "chained")),
            }
        });
        match next {
            Some((tool, how)) => Plan {
                label: format!("tool:{} ({how})", tool.describe()),
                text: None,
                tool: Some(tool),
                ..Plan::text("", "")
            },
            None if rules.iter().any(|r| matches!(r.effect, Effect::CallMcp(_))) => {
                let text = format!("{MCP_REPLY_PREFIX}{}", output.trim());
                Plan::text("text (after tool)", &text)
            }
            None => Plan::text("text (after tool)", &self.after_tool_text),
        }
    }
}

/// Ends the label of a [`Effect::FailOnce`] failure.
const ONCE_SUFFIX: &str = " (once)";
