//! The constraints of `hostTools` and of a tool call's answer: checked when a body is
//! parsed, and stated in both schemas. Whether an input schema is a valid JSON Schema is
//! the daemon's check (it needs a validator).

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::*;
use crate::{
    ASK_USER_TOOL, CreateSessionRequest, HOST_MCP_SERVER, HostToolHandler, ToolCallRejectRequest,
    ToolCallResultRequest, ToolOutput,
};

/// A host tool's name: what the model calls it.
pub static HOST_TOOL_NAME: Text =
    Text::new(1, 64, r"^[A-Za-z0-9_-]+$", "1 to 64 of A-Z a-z 0-9 _ -");

/// A host tool's description.
pub static HOST_TOOL_DESCRIPTION: Text =
    Text::new(0, 8192, r"^[^\x00]*$", "at most 8192 characters, no NUL");

/// Why a call was rejected.
pub static REJECT_REASON: Text =
    Text::new(0, 4096, r"^[^\x00]*$", "at most 4096 characters, no NUL");

/// The most host tools a session may have.
pub const MAX_HOST_TOOLS: usize = 64;

/// The most bytes a host tool's input schema may hold, as JSON.
pub const MAX_INPUT_SCHEMA_BYTES: usize = 64 * 1024;

/// The longest an http host tool's attempt may take, in milliseconds.
pub const MAX_HOST_TOOL_TIMEOUT_MS: u64 = 600_000;

/// The first thing wrong with a session's `hostTools` (or an MCP server named like the
/// daemon's own), naming the field.
pub(super) fn host_tools_violation(request: &CreateSessionRequest) -> Option<String> {
    if request
        .mcp_servers
        .as_ref()
        .is_some_and(|servers| servers.contains_key(HOST_MCP_SERVER))
    {
        return Some(format!(
            "`mcpServers.{HOST_MCP_SERVER}`: the name is the daemon's own (its host tools' server)"
        ));
    }
    let tools = request.host_tools.as_deref()?;
    if tools.len() > MAX_HOST_TOOLS {
        return Some(format!(
            "`hostTools` may hold at most {MAX_HOST_TOOLS} tools"
        ));
    }
    let mut names = HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        let field = format!("hostTools[{i}]");
        if let Err(error) = HOST_TOOL_NAME.check(&format!("{field}.name"), &tool.name) {
            return Some(error);
        }
        if tool.name == ASK_USER_TOOL {
            return Some(format!(
                "`{field}.name`: `{ASK_USER_TOOL}` is the daemon's own question tool"
            ));
        }
        if !names.insert(tool.name.as_str()) {
            return Some(format!(
                "`{field}.name`: `{}` is given twice; names must be unique",
                tool.name
            ));
        }
        if let Err(error) =
            HOST_TOOL_DESCRIPTION.check(&format!("{field}.description"), &tool.description)
        {
            return Some(error);
        }
        let schema = &tool.input_schema;
        match schema.get("type") {
            _ if !schema.is_object() => {
                return Some(format!(
                    "`{field}.inputSchema` must be a JSON Schema object"
                ));
            }
            Some(Value::String(kind)) if kind == "object" => {}
            _ => {
                return Some(format!(
                    "`{field}.inputSchema` must describe an object (`\"type\": \"object\"`), as MCP requires"
                ));
            }
        }
        if schema.to_string().len() > MAX_INPUT_SCHEMA_BYTES {
            return Some(format!(
                "`{field}.inputSchema` may hold at most {MAX_INPUT_SCHEMA_BYTES} bytes"
            ));
        }
        if let HostToolHandler::Http {
            url,
            headers,
            timeout_ms,
        } = &tool.handler
        {
            let at = format!("{field}.handler");
            if let Err(error) = MCP_URL.check(&format!("{at}.url"), url) {
                return Some(error);
            }
            if timeout_ms.is_some_and(|ms| !(1..=MAX_HOST_TOOL_TIMEOUT_MS).contains(&ms)) {
                return Some(format!(
                    "`{at}.timeoutMs` must be 1 to {MAX_HOST_TOOL_TIMEOUT_MS}"
                ));
            }
            if headers.len() > MAX_ENTRIES {
                return Some(format!(
                    "`{at}.headers` may hold at most {MAX_ENTRIES} entries"
                ));
            }
            for (name, value) in headers {
                if let Err(error) = HEADER_NAME.check(&format!("{at}.headers"), name) {
                    return Some(format!("{error} (header `{}`)", name.escape_debug()));
                }
                if let Err(error) = HEADER_VALUE.check(&format!("{at}.headers.{name}"), value) {
                    return Some(error);
                }
            }
        }
    }
    None
}

impl Constrained for ToolCallResultRequest {
    fn broken_relation(&self) -> Option<String> {
        match &self.output {
            ToolOutput::Text(text) => (text.chars().count() > MAX_MESSAGE_CHARS)
                .then(|| format!("`output` may hold at most {MAX_MESSAGE_CHARS} characters")),
            ToolOutput::Parts(parts) => parts_violation("output", parts, 1),
        }
    }
}

impl Constrained for ToolCallRejectRequest {
    fn texts(&self) -> Vec<(&'static str, &'static Text, Option<&str>)> {
        vec![("reason", &REJECT_REASON, self.reason.as_deref())]
    }
}

/// States the host tools' constraints in the schemas.
pub(super) fn describe_host_tools(schemas: &mut Map<String, Value>) {
    schemas["CreateSessionRequest"]["properties"]["hostTools"]["maxItems"] = json!(MAX_HOST_TOOLS);
    let tool = &mut schemas["HostTool"]["properties"];
    tool["name"] = HOST_TOOL_NAME.schema();
    tool["name"]["not"] = json!({"const": ASK_USER_TOOL});
    tool["description"] = HOST_TOOL_DESCRIPTION.schema();
    tool["inputSchema"] = json!({
        "type": "object",
        "description": "The JSON Schema of the tool's input: an object schema.",
        "properties": {"type": {"const": "object"}},
        "required": ["type"],
    });
    for variant in schemas["HostToolHandler"]["oneOf"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        let properties = &mut variant["properties"];
        if properties.get("url").is_some() {
            properties["url"] = MCP_URL.schema();
            properties["headers"]["maxProperties"] = json!(MAX_ENTRIES);
            properties["headers"]["propertyNames"] = HEADER_NAME.schema();
            properties["headers"]["additionalProperties"] = HEADER_VALUE.schema();
            properties["timeoutMs"]["minimum"] = json!(1);
            properties["timeoutMs"]["maximum"] = json!(MAX_HOST_TOOL_TIMEOUT_MS);
        }
    }
    schemas["ToolCallRejectRequest"]["properties"]["reason"] = REJECT_REASON.schema();
    let output = schemas
        .get_mut("ToolOutput")
        .and_then(Value::as_object_mut)
        .expect("the ToolOutput schema");
    let variants = output
        .iter_mut()
        .filter(|(keyword, _)| *keyword == "oneOf" || *keyword == "anyOf")
        .filter_map(|(_, variants)| variants.as_array_mut())
        .flatten();
    for variant in variants {
        if variant["type"] == "array" {
            variant["minItems"] = json!(1);
            variant["maxItems"] = json!(MAX_MESSAGE_PARTS);
        } else if variant["type"] == "string" {
            variant["maxLength"] = json!(MAX_MESSAGE_CHARS);
        }
    }
}
