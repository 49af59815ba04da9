//! The constraints of the session policy's fields (`tools`, `maxTurns`, `mcpServers`,
//! `env`): checked when a create request is parsed, and stated in both schemas.

use serde_json::{Map, Value, json};

use super::*;
use crate::{CreateSessionRequest, IMAGE_TYPES, McpServer, ToolName};

/// The first thing wrong with a session's policy fields, naming the field.
pub(super) fn policy_violation(request: &CreateSessionRequest) -> Option<String> {
    if let Some(max) = request.max_turns
        && !(1..=MAX_TURNS_LIMIT).contains(&max)
    {
        return Some(format!("`maxTurns` must be 1 to {MAX_TURNS_LIMIT}"));
    }
    if let Some(tools) = &request.tools {
        let lists = [
            ("allow", tools.allow.as_deref().unwrap_or_default()),
            ("deny", &tools.deny),
        ];
        for (list, names) in lists {
            if names.len() > MAX_TOOL_NAMES {
                return Some(format!(
                    "`tools.{list}` may hold at most {MAX_TOOL_NAMES} names"
                ));
            }
            for (i, name) in names.iter().enumerate() {
                if let Err(error) = name.parse::<ToolName>() {
                    return Some(format!("`tools.{list}[{i}]`: {error}"));
                }
            }
        }
    }
    let servers = request.mcp_servers.as_ref();
    if servers.is_some_and(|s| s.len() > MAX_MCP_SERVERS) {
        return Some(format!(
            "`mcpServers` may hold at most {MAX_MCP_SERVERS} servers"
        ));
    }
    for (name, server) in servers.into_iter().flatten() {
        if let Err(error) = MCP_NAME.check("mcpServers", name) {
            return Some(format!("{error} (server `{}`)", name.escape_debug()));
        }
        let field = format!("mcpServers.{name}");
        let broken = match server {
            McpServer::Stdio { command, args, env } => check_entries(&field, "args", args.len())
                .or_else(|| {
                    MCP_COMMAND
                        .check(&format!("{field}.command"), command)
                        .err()
                })
                .or_else(|| {
                    args.iter().enumerate().find_map(|(i, arg)| {
                        MCP_ARG.check(&format!("{field}.args[{i}]"), arg).err()
                    })
                })
                .or_else(|| check_env(&format!("{field}.env"), env)),
            McpServer::Http { url, headers } => MCP_URL
                .check(&format!("{field}.url"), url)
                .err()
                .or_else(|| check_entries(&field, "headers", headers.len()))
                .or_else(|| {
                    headers.iter().find_map(|(header, value)| {
                        let at = format!("{field}.headers");
                        HEADER_NAME
                            .check(&at, header)
                            .err()
                            .map(|e| format!("{e} (header `{}`)", header.escape_debug()))
                            .or_else(|| HEADER_VALUE.check(&format!("{at}.{header}"), value).err())
                    })
                }),
        };
        if broken.is_some() {
            return broken;
        }
    }
    request.env.as_ref().and_then(|env| check_env("env", env))
}

fn check_entries(field: &str, what: &str, count: usize) -> Option<String> {
    (count > MAX_ENTRIES)
        .then(|| format!("`{field}.{what}` may hold at most {MAX_ENTRIES} entries"))
}

pub(super) fn check_env(
    field: &str,
    env: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    if env.len() > MAX_ENTRIES {
        return Some(format!(
            "`{field}` may hold at most {MAX_ENTRIES} variables"
        ));
    }
    env.iter().find_map(|(name, value)| {
        ENV_NAME
            .check(field, name)
            .err()
            .map(|e| format!("{e} (variable `{}`)", name.escape_debug()))
            .or_else(|| ENV_VALUE.check(&format!("{field}.{name}"), value).err())
    })
}
/// States the policy fields' constraints in the schemas.
pub(super) fn describe_policy(schemas: &mut Map<String, Value>) {
    let create = &mut schemas["CreateSessionRequest"]["properties"];
    create["maxTurns"]["minimum"] = json!(1);
    create["maxTurns"]["maximum"] = json!(MAX_TURNS_LIMIT);
    create["mcpServers"]["maxProperties"] = json!(MAX_MCP_SERVERS);
    create["mcpServers"]["propertyNames"] = MCP_NAME.schema();
    create["env"]["maxProperties"] = json!(MAX_ENTRIES);
    create["env"]["propertyNames"] = ENV_NAME.schema();
    create["env"]["additionalProperties"] = ENV_VALUE.schema();
    let names = r"^(read|write|edit|shell|glob|grep|webFetch|webSearch|mcp:[A-Za-z0-9_-]{1,64}/(\*|[A-Za-z0-9_.-]{1,128}))$";
    let tools = &mut schemas["ToolPolicy"]["properties"];
    for list in ["allow", "deny"] {
        tools[list]["maxItems"] = json!(MAX_TOOL_NAMES);
        tools[list]["items"] = json!({"type": "string", "pattern": names});
    }
    // The variants of the tagged enum, wherever the generator put them.
    let describe_variant = |variant: &mut Value| {
        let properties = &mut variant["properties"];
        if properties.get("command").is_some() {
            properties["command"] = MCP_COMMAND.schema();
            properties["args"]["maxItems"] = json!(MAX_ENTRIES);
            properties["args"]["items"] = MCP_ARG.schema();
            properties["env"]["maxProperties"] = json!(MAX_ENTRIES);
            properties["env"]["propertyNames"] = ENV_NAME.schema();
            properties["env"]["additionalProperties"] = ENV_VALUE.schema();
        } else if properties.get("url").is_some() {
            properties["url"] = MCP_URL.schema();
            properties["headers"]["maxProperties"] = json!(MAX_ENTRIES);
            properties["headers"]["propertyNames"] = HEADER_NAME.schema();
            properties["headers"]["additionalProperties"] = HEADER_VALUE.schema();
        }
    };
    for variant in schemas["McpServer"]["oneOf"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        describe_variant(variant);
    }
    let message = &mut schemas["SendMessageRequest"];
    // Absent, not null: `null` would be a message of neither kind.
    message["properties"]["message"]["type"] = json!("string");
    message["properties"]["content"]["type"] = json!("array");
    message["properties"]["content"]["minItems"] = json!(1);
    message["properties"]["content"]["maxItems"] = json!(MAX_MESSAGE_PARTS);
    message["properties"]["message"]["maxLength"] = json!(MAX_MESSAGE_CHARS);
    message["oneOf"] = json!([{"required": ["message"]}, {"required": ["content"]}]);
    for variant in schemas["MessagePart"]["oneOf"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        let properties = &mut variant["properties"];
        if properties.get("mediaType").is_some() {
            properties["mediaType"]["enum"] = json!(IMAGE_TYPES);
            properties["data"]["type"] = json!("string");
            properties["path"]["type"] = json!("string");
            variant["oneOf"] = json!([{"required": ["data"]}, {"required": ["path"]}]);
        } else if properties.get("text").is_some() {
            properties["text"]["maxLength"] = json!(MAX_MESSAGE_CHARS);
        }
    }
}
