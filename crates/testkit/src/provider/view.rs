//! A dialect-neutral view of one model request: what the user last said, which tools
//! are offered, and the agent's working directory when the prompt reveals it.

use serde_json::Value;

/// The last real turn of the conversation.
#[derive(Clone, Debug, PartialEq)]
pub enum LastTurn {
    /// The user's text (system, developer and environment-context entries skipped).
    User(String),
    /// The conversation ends with a tool result: the model should finish.
    ToolResult,
    /// Nothing usable (e.g. an assistant prefill).
    Nothing,
}

/// A tool the request offers.
#[derive(Clone, Debug, PartialEq)]
pub struct OfferedTool {
    /// Tool name.
    pub name: String,
    /// A freeform (custom) tool taking raw text instead of JSON.
    pub freeform: bool,
    /// Top-level argument names from the tool's JSON schema, when it has one.
    pub properties: Option<Vec<String>>,
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

/// Joins the text parts of a content value (a string or an array of parts), skipping
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
    let real: Vec<&str> = texts.into_iter().filter(|t| !is_injected(t)).collect();
    (!real.is_empty()).then(|| real.join("\n"))
}

fn schema_properties(schema: &Value) -> Option<Vec<String>> {
    schema["properties"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
}

/// Reads an Anthropic Messages request.
pub fn anthropic(body: &Value) -> RequestView {
    let mut last = LastTurn::Nothing;
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for message in messages.iter().rev() {
        match message["role"].as_str() {
            Some("system") => continue,
            Some("user") => {
                let content = &message["content"];
                let has_result = content
                    .as_array()
                    .is_some_and(|parts| parts.iter().any(|p| p["type"] == "tool_result"));
                if has_result {
                    last = LastTurn::ToolResult;
                } else if let Some(text) = user_text(content) {
                    last = LastTurn::User(text);
                } else {
                    continue;
                }
            }
            _ => {}
        }
        break;
    }
    let tools = body["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|t| {
            Some(OfferedTool {
                name: t["name"].as_str()?.to_owned(),
                freeform: false,
                properties: schema_properties(&t["input_schema"]),
            })
        })
        .collect();
    RequestView {
        last,
        tools,
        cwd: find_cwd(body),
    }
}

/// Reads an OpenAI Responses request (Codex, Pi with `openai-responses`).
pub fn responses(body: &Value) -> RequestView {
    let mut last = LastTurn::Nothing;
    let items: Vec<Value> = match &body["input"] {
        Value::Array(items) => items.clone(),
        Value::String(s) => {
            vec![serde_json::json!({"type": "message", "role": "user", "content": s})]
        }
        _ => Vec::new(),
    };
    for item in items.iter().rev() {
        let kind = item["type"].as_str().unwrap_or("message");
        match kind {
            "message" => match item["role"].as_str() {
                Some("user") => match user_text(&item["content"]) {
                    Some(text) => last = LastTurn::User(text),
                    None => continue,
                },
                Some("assistant") => {}
                _ => continue,
            },
            k if k.ends_with("_output") => last = LastTurn::ToolResult,
            "reasoning" => continue,
            _ => {}
        }
        break;
    }
    let tools = body["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|t| {
            Some(OfferedTool {
                name: t["name"].as_str()?.to_owned(),
                freeform: t["type"] == "custom",
                properties: schema_properties(&t["parameters"]),
            })
        })
        .collect();
    RequestView {
        last,
        tools,
        cwd: find_cwd(body),
    }
}

/// Reads an OpenAI Chat Completions request (OpenCode, Pi with `openai-completions`).
pub fn chat(body: &Value) -> RequestView {
    let mut last = LastTurn::Nothing;
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for message in messages.iter().rev() {
        match message["role"].as_str() {
            Some("tool") => last = LastTurn::ToolResult,
            Some("user") => match user_text(&message["content"]) {
                Some(text) => last = LastTurn::User(text),
                None => continue,
            },
            Some("assistant") => {}
            _ => continue,
        }
        break;
    }
    let tools = body["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|t| {
            let function = &t["function"];
            Some(OfferedTool {
                name: function["name"].as_str()?.to_owned(),
                freeform: false,
                properties: schema_properties(&function["parameters"]),
            })
        })
        .collect();
    RequestView {
        last,
        tools,
        cwd: find_cwd(body),
    }
}

/// Phrases after which agents state their working directory in the prompt.
const CWD_MARKERS: &[&str] = &[
    "Primary working directory: ",
    "<cwd>",
    "Current working directory: ",
    "Working directory: ",
    "working directory: ",
];

/// Finds the working directory an agent states somewhere in its prompt.
fn find_cwd(body: &Value) -> Option<String> {
    let mut strings = Vec::new();
    collect_strings(body, &mut strings);
    CWD_MARKERS.iter().find_map(|marker| {
        strings.iter().find_map(|s| {
            let start = s.find(marker)? + marker.len();
            let rest = &s[start..];
            let end = rest.find(['\n', '<']).unwrap_or(rest.len());
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
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn anthropic_skips_system_entries_and_reminders() {
        let body = json!({
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "<system-reminder>USE_TOOL is not for you</system-reminder>"},
                    {"type": "text", "text": "say hi"}]},
                {"role": "system", "content": "# Environment\n - Primary working directory: /tmp/w\n"}
            ],
            "tools": [{"name": "Bash", "input_schema": {"properties": {"command": {}}}}]
        });
        let view = anthropic(&body);
        assert_eq!(view.last, LastTurn::User("say hi".into()));
        assert_eq!(view.cwd.as_deref(), Some("/tmp/w"));
        assert_eq!(view.tools[0].properties, Some(vec!["command".to_owned()]));
    }

    #[test]
    fn anthropic_tool_result() {
        let body = json!({"messages": [
            {"role": "user", "content": "USE_TOOL"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}
        ]});
        assert_eq!(anthropic(&body).last, LastTurn::ToolResult);
    }

    #[test]
    fn responses_skips_developer_and_environment_context() {
        let body = json!({
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "USE_TOOL"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "<environment_context>\n  <cwd>/tmp/c</cwd>\n</environment_context>"}]}
            ],
            "tools": [{"type": "custom", "name": "apply_patch"}, {"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}}]
        });
        let view = responses(&body);
        assert_eq!(view.last, LastTurn::User("hi".into()));
        assert_eq!(view.cwd.as_deref(), Some("/tmp/c"));
        assert!(view.tools[0].freeform && !view.tools[1].freeform);
    }

    #[test]
    fn responses_function_call_output_is_a_tool_result() {
        let body = json!({"input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "USE_TOOL"}]},
            {"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "done"}
        ]});
        assert_eq!(responses(&body).last, LastTurn::ToolResult);
    }

    #[test]
    fn chat_roles() {
        let body = json!({
            "messages": [
                {"role": "system", "content": "Working directory: /srv/x\n"},
                {"role": "user", "content": [{"type": "text", "text": "USE_TOOL now"}]}
            ],
            "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"properties": {"command": {}}}}}]
        });
        let view = chat(&body);
        assert_eq!(view.last, LastTurn::User("USE_TOOL now".into()));
        assert_eq!(view.cwd.as_deref(), Some("/srv/x"));
        let body = json!({"messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}]});
        assert_eq!(chat(&body).last, LastTurn::ToolResult);
    }
}
