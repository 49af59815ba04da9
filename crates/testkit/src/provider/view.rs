//! A dialect-neutral view of one model request: what the user last said, which tools
//! are offered, and the agent's working directory when the prompt reveals it.
//!
//! Each dialect first reads its conversation into a neutral list of [`Entry`]s; one
//! function ([`last_turn`]) then decides what the conversation ends with.

use serde_json::Value;

/// The last real turn of the conversation.
#[derive(Clone, Debug, PartialEq)]
pub enum LastTurn {
    /// The user's text (system, developer and environment-context entries skipped).
    User(String),
    /// The conversation ends with a tool result.
    ToolResult {
        /// The last real user message before it, if any.
        prompt: Option<String>,
        /// Names of the tools the model called since that message, in order (a Codex
        /// `tool_search_call` is `tool_search`).
        called: Vec<String>,
        /// The text of that last tool result (see [`result_text`]).
        output: String,
    },
    /// Nothing usable (e.g. an assistant prefill).
    Nothing,
}

/// One step of a conversation, whatever the dialect.
#[derive(Clone, Debug, PartialEq)]
enum Entry {
    /// Real user text.
    User(String),
    /// A tool result sent back to the model, and its text.
    ToolResult(String),
    /// A tool call the model made.
    ToolCall(String),
    /// Any other assistant output (text, a prefill).
    Assistant,
    /// Something that is not a turn: system and developer entries, injected user
    /// texts, reasoning.
    Skip,
}

/// What a conversation (entries in order) ends with.
fn last_turn(entries: &[Entry]) -> LastTurn {
    let mut rest = entries.iter().rev().skip_while(|e| **e == Entry::Skip);
    match rest.next() {
        Some(Entry::User(text)) => LastTurn::User(text.clone()),
        Some(Entry::ToolResult(output)) => {
            let output = output.clone();
            let mut called = Vec::new();
            let mut prompt = None;
            for entry in rest {
                match entry {
                    Entry::User(text) => {
                        prompt = Some(text.clone());
                        break;
                    }
                    Entry::ToolCall(name) => called.push(name.clone()),
                    Entry::ToolResult(_) | Entry::Assistant | Entry::Skip => {}
                }
            }
            called.reverse();
            LastTurn::ToolResult {
                prompt,
                called,
                output,
            }
        }
        _ => LastTurn::Nothing,
    }
}

/// A tool the request offers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OfferedTool {
    /// Tool name.
    pub name: String,
    /// A freeform (custom) tool taking raw text instead of JSON.
    pub freeform: bool,
    /// Top-level argument names from the tool's JSON schema, when it has one.
    pub properties: Option<Vec<String>>,
    /// The namespace of the tool the model calls (this one, or the code-mode tool that
    /// reaches it), as a Responses `namespace` tool declares it (Codex's `functions`).
    pub namespace: Option<String>,
    /// The code-mode tool (Codex's `exec`) whose JavaScript reaches this tool, when the
    /// model cannot call it directly: see [`code_mode_tools`].
    pub via: Option<String>,
    /// A client-executed tool search (Codex's `tool_search`, declared as `{"type":
    /// "tool_search"}` without a name, so named `tool_search` here): the model calls it
    /// with a `tool_search_call` item, and the tools it reveals come back in a
    /// `tool_search_output` item.
    pub search: bool,
    /// A code-mode tool whose JavaScript also reaches deferred tools its description does
    /// not list (Codex's `exec`: "Some deferred nested tools may be omitted from this
    /// description"), such as MCP tools (`tools.mcp__<server>__<tool>`).
    pub reaches_deferred: bool,
}

/// What the script needs to know about a request.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestView {
    /// The last real turn.
    pub last: LastTurn,
    /// Tools offered to the model.
    pub tools: Vec<OfferedTool>,
    /// The agent's working directory, if the prompt states it.
    pub cwd: Option<String>,
    /// The file the agent asks the model to write its plan to (Claude Code's plan
    /// mode), if the prompt names one.
    pub plan_file: Option<String>,
}

impl RequestView {
    /// A view of `body` with this last turn and these tools; paths from the prompt.
    fn new(body: &Value, last: LastTurn, tools: Vec<OfferedTool>) -> Self {
        let mut strings = Vec::new();
        collect_strings(body, &mut strings);
        Self {
            last,
            tools,
            cwd: find_path(&strings, CWD_MARKERS, &['\n', '<']),
            // The sentence goes on after the path ("... at /p/plan.md. You can ...").
            plan_file: find_path(&strings, PLAN_FILE_MARKERS, &[' ', '\n', '<'])
                .map(|p| p.trim_end_matches('.').to_owned()),
        }
    }
}

/// User-role texts that agents inject and that are not the user's words.
const INJECTED_PREFIXES: &[&str] = &[
    "<system-reminder>",
    "<environment_context",
    "<user_instructions",
    "<skills_instructions",
    "<permissions instructions",
    "<turn_aborted",
    "# AGENTS.md instructions",
];

fn is_injected(text: &str) -> bool {
    let t = text.trim_start();
    INJECTED_PREFIXES.iter().any(|p| t.starts_with(p))
}

/// The last real text part of a content value (a string or an array of parts), skipping
/// injected blocks. Returns `None` when nothing real remains.
fn user_text(content: &Value) -> Option<String> {
    let texts: Vec<&str> = match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(parts) => parts
            .iter()
            .filter(|p| matches!(p["type"].as_str(), Some("text" | "input_text")))
            .filter_map(|p| p["text"].as_str())
            .collect(),
        _ => Vec::new(),
    };
    // Several real blocks are user messages an agent merged (a message the provider
    // refused, then the next one): the newest is the last.
    texts
        .into_iter()
        .rfind(|t| !is_injected(t))
        .map(str::to_string)
}

fn schema_properties(schema: &Value) -> Option<Vec<String>> {
    schema["properties"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
}

/// A user message's entry: real text, or [`Entry::Skip`] when only injected text remains.
fn user_entry(content: &Value) -> Entry {
    user_text(content).map_or(Entry::Skip, Entry::User)
}

fn slice(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// The name the view gives Codex's nameless `{"type": "tool_search"}` tool, and the name
/// of its calls.
pub const TOOL_SEARCH: &str = "tool_search";

/// What Codex's code-mode `exec` says when it reaches deferred tools it does not list.
const DEFERRED_NESTED: &str = "deferred nested tools";

/// The text of a tool result's content in any dialect: a string as it is; the `text` of
/// each part of an array (Anthropic `text` blocks, Responses `input_text` /
/// `output_text` items, Chat parts), one per line; anything else as JSON.
pub fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Texts Claude Code puts beside a tool's result itself (after a `ToolSearch` result):
/// not a user's message.
const TOOL_RESULT_NOTES: &[&str] = &["Tool loaded."];

/// Reads an Anthropic Messages request.
pub fn anthropic(body: &Value) -> RequestView {
    let mut entries = Vec::new();
    for message in slice(&body["messages"]) {
        let content = &message["content"];
        match message["role"].as_str() {
            Some("user") => {
                let results: Vec<String> = slice(content)
                    .iter()
                    .filter(|p| p["type"] == "tool_result")
                    .map(|p| result_text(&p["content"]))
                    .collect();
                if results.is_empty() {
                    entries.push(user_entry(content));
                    continue;
                }
                entries.push(Entry::ToolResult(results.join("\n")));
                // A new user message merged after the results (Claude Code when a turn
                // ended between a tool's result and the next request, e.g. at its turn
                // limit; OpenCode after an abort): the text after the last result is a new
                // user turn, unless it is one of the agent's own notes.
                let parts = slice(content);
                let last_result = parts.iter().rposition(|p| p["type"] == "tool_result");
                let after = &parts[last_result.map_or(parts.len(), |i| i + 1)..];
                if let Some(text) = user_text(&Value::Array(after.to_vec()))
                    .filter(|t| !TOOL_RESULT_NOTES.contains(&t.as_str()))
                {
                    entries.push(Entry::User(text));
                }
            }
            Some("assistant") => {
                let calls: Vec<Entry> = slice(content)
                    .iter()
                    .filter(|p| p["type"] == "tool_use")
                    .filter_map(|p| Some(Entry::ToolCall(p["name"].as_str()?.to_owned())))
                    .collect();
                if calls.is_empty() {
                    entries.push(Entry::Assistant);
                }
                entries.extend(calls);
            }
            Some("system") => entries.push(Entry::Skip),
            _ => entries.push(Entry::Assistant),
        }
    }
    let tools = slice(&body["tools"])
        .iter()
        .filter_map(|t| {
            Some(OfferedTool {
                name: t["name"].as_str()?.to_owned(),
                properties: schema_properties(&t["input_schema"]),
                ..OfferedTool::default()
            })
        })
        .collect();
    RequestView::new(body, last_turn(&entries), tools)
}

/// Reads an OpenAI Responses request (Codex, Pi with `openai-responses`).
pub fn responses(body: &Value) -> RequestView {
    let items: Vec<Value> = match &body["input"] {
        Value::Array(items) => items.clone(),
        Value::String(s) => {
            vec![serde_json::json!({"type": "message", "role": "user", "content": s})]
        }
        _ => Vec::new(),
    };
    let entries: Vec<Entry> = items
        .iter()
        .flat_map(|item| match item["type"].as_str().unwrap_or("message") {
            "message" => vec![match item["role"].as_str() {
                Some("user") => user_entry(&item["content"]),
                Some("assistant") => Entry::Assistant,
                _ => Entry::Skip,
            }],
            k if k.ends_with("_output") => {
                vec![Entry::ToolResult(result_text(&item["output"]))]
            }
            "reasoning" | "additional_tools" => vec![Entry::Skip],
            "tool_search_call" => vec![Entry::ToolCall(TOOL_SEARCH.to_owned())],
            k if k.ends_with("_call") => match item["name"].as_str() {
                // A code-mode call is a call of each tool its script calls.
                Some(name) => match script_calls(item["input"].as_str().unwrap_or_default()) {
                    nested if nested.is_empty() => vec![Entry::ToolCall(name.to_owned())],
                    nested => nested.into_iter().map(Entry::ToolCall).collect(),
                },
                None => vec![Entry::Assistant],
            },
            _ => vec![Entry::Assistant],
        })
        .collect();
    // Tools come in `tools`, (Codex on a code-mode model) in `additional_tools` items, and
    // (revealed by a tool search) in `tool_search_output` items.
    let mut tools = Vec::new();
    responses_tools(slice(&body["tools"]), None, &mut tools);
    for item in items.iter().filter(|i| {
        matches!(
            i["type"].as_str(),
            Some("additional_tools" | "tool_search_output")
        )
    }) {
        responses_tools(slice(&item["tools"]), None, &mut tools);
    }
    RequestView::new(body, last_turn(&entries), tools)
}

/// The tools a code-mode script calls (`tools.<name>(`), in order.
fn script_calls(script: &str) -> Vec<String> {
    script
        .split("tools.")
        .skip(1)
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty() && rest[name.len()..].starts_with('(')).then_some(name)
        })
        .collect()
}

/// Reads Responses tool declarations: functions, custom (freeform) tools, `namespace`
/// tools grouping others, and the tools a code-mode `exec` tool reaches.
fn responses_tools(declared: &[Value], namespace: Option<&str>, out: &mut Vec<OfferedTool>) {
    for tool in declared {
        if tool["type"] == "tool_search" {
            out.push(OfferedTool {
                name: TOOL_SEARCH.to_owned(),
                properties: schema_properties(&tool["parameters"]),
                search: true,
                ..OfferedTool::default()
            });
            continue;
        }
        let Some(name) = tool["name"].as_str() else {
            continue;
        };
        if tool["type"] == "namespace" {
            responses_tools(slice(&tool["tools"]), Some(name), out);
            continue;
        }
        let freeform = tool["type"] == "custom";
        let description = tool["description"].as_str().unwrap_or_default();
        let nested = if freeform {
            code_mode_tools(name, description)
        } else {
            Vec::new()
        };
        out.push(OfferedTool {
            name: name.to_owned(),
            freeform,
            properties: schema_properties(&tool["parameters"]),
            namespace: namespace.map(str::to_owned),
            reaches_deferred: !nested.is_empty() && description.contains(DEFERRED_NESTED),
            ..OfferedTool::default()
        });
        out.extend(nested.into_iter().map(|t| OfferedTool {
            namespace: namespace.map(str::to_owned),
            ..t
        }));
    }
}

/// The tools a code-mode tool reaches, read from its description.
///
/// Codex's code mode offers the model one freeform tool, `exec`, that takes JavaScript;
/// the script calls Codex's other tools as `await tools.<name>(<input>)`. Its
/// description lists them, one section each:
///
/// ````text
/// ### `exec_command`
/// Runs a command in a PTY, ...
///
/// exec tool declaration:
/// ```ts
/// declare const tools: { exec_command(args: {
///   // Shell command to execute.
///   cmd: string;
///   justification?: string;
/// }): Promise<{ ... }>; };
/// ```
/// ````
///
/// A tool declared with `(input: string)` is freeform; one declared with `(args: {…})`
/// takes JSON with those argument names. A description without such sections is not a
/// code-mode tool: nothing is returned.
pub fn code_mode_tools(exec: &str, description: &str) -> Vec<OfferedTool> {
    let lines: Vec<&str> = description.lines().collect();
    let headings: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| Some((i, l.strip_prefix("### `")?.strip_suffix('`')?)))
        .collect();
    let mut tools = Vec::new();
    for (k, (start, name)) in headings.iter().enumerate() {
        let end = headings.get(k + 1).map_or(lines.len(), |h| h.0);
        let section = &lines[start + 1..end];
        let declaration = format!("declare const tools: {{ {name}(");
        let Some((at, signature)) = section
            .iter()
            .enumerate()
            .find_map(|(i, l)| Some((i, l.trim_start().strip_prefix(declaration.as_str())?)))
        else {
            continue;
        };
        let properties = signature.starts_with("args: {").then(|| {
            if signature.trim_end() != "args: {" {
                return Vec::new(); // `args: {}`
            }
            section[at + 1..]
                .iter()
                .take_while(|l| !l.starts_with('}'))
                .filter_map(|l| {
                    let (key, _) = l.strip_prefix("  ")?.split_once(':')?;
                    let key = key.strip_suffix('?').unwrap_or(key);
                    let ident = !key.is_empty()
                        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    ident.then(|| key.to_owned())
                })
                .collect()
        });
        tools.push(OfferedTool {
            name: (*name).to_owned(),
            freeform: signature.starts_with("input: string"),
            properties,
            via: Some(exec.to_owned()),
            ..OfferedTool::default()
        });
    }
    tools
}

/// Reads an OpenAI Chat Completions request (OpenCode, Pi with `openai-completions`).
pub fn chat(body: &Value) -> RequestView {
    let mut entries = Vec::new();
    for message in slice(&body["messages"]) {
        match message["role"].as_str() {
            Some("tool") => entries.push(Entry::ToolResult(result_text(&message["content"]))),
            Some("user") => entries.push(user_entry(&message["content"])),
            Some("assistant") => {
                let calls: Vec<Entry> = slice(&message["tool_calls"])
                    .iter()
                    .filter_map(|c| {
                        Some(Entry::ToolCall(c["function"]["name"].as_str()?.to_owned()))
                    })
                    .collect();
                if calls.is_empty() {
                    entries.push(Entry::Assistant);
                }
                entries.extend(calls);
            }
            _ => entries.push(Entry::Skip),
        }
    }
    let tools = slice(&body["tools"])
        .iter()
        .filter_map(|t| {
            let function = &t["function"];
            Some(OfferedTool {
                name: function["name"].as_str()?.to_owned(),
                properties: schema_properties(&function["parameters"]),
                ..OfferedTool::default()
            })
        })
        .collect();
    RequestView::new(body, last_turn(&entries), tools)
}

/// Phrases after which agents state their working directory in the prompt.
const CWD_MARKERS: &[&str] = &[
    "Primary working directory: ",
    "<cwd>",
    "Current working directory: ",
    "Working directory: ",
    "working directory: ",
];

/// Phrases after which Claude Code names the plan file in plan mode.
const PLAN_FILE_MARKERS: &[&str] = &[
    "You should create your plan at ",
    "A plan file already exists at ",
];

/// Finds an absolute path stated after one of `markers` (tried in order) in any of
/// the prompt's strings, up to one of `ends`.
fn find_path(strings: &[&str], markers: &[&str], ends: &[char]) -> Option<String> {
    markers.iter().find_map(|marker| {
        strings.iter().find_map(|s| {
            let start = s.find(marker)? + marker.len();
            let rest = &s[start..];
            let end = rest.find(ends).unwrap_or(rest.len());
            let path = rest[..end].trim().trim_matches('`');
            path.starts_with('/').then(|| path.to_owned())
        })
    })
}

fn collect_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

#[cfg(test)]
pub(crate) mod tests;
