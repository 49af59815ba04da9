//! What the editor sends → the daemon's request bodies: a `session/prompt` → a message,
//! the `mcpServers` of a new or loaded session → the session's MCP servers.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema as acp;
use sandbox_universal::{McpServer, MessagePart, SendMessageRequest, is_mcp_name};

/// The daemon's message for a prompt. Text blocks, embedded text resources (the URI, then
/// the text fenced) and resource links (`[@name](uri)`) make text, adjacent text joining
/// into one part; inline images (or `file://` ones) are image parts; audio, binary
/// resources and images with neither data nor a file are left out with a note saying so.
/// A prompt of text only is sent as `message`, anything else as `content` parts.
pub fn message_from_prompt(prompt: &[acp::ContentBlock]) -> SendMessageRequest {
    let mut parts: Vec<MessagePart> = Vec::new();
    let push_text = |parts: &mut Vec<MessagePart>, text: &str| match parts.last_mut() {
        Some(MessagePart::Text { text: last }) => last.push_str(text),
        _ => parts.push(MessagePart::Text { text: text.into() }),
    };
    for block in prompt {
        match block {
            acp::ContentBlock::Text(text) => push_text(&mut parts, &text.text),
            acp::ContentBlock::Image(image) if !image.data.is_empty() => {
                parts.push(MessagePart::Image {
                    media_type: image.mime_type.clone(),
                    data: Some(image.data.clone()),
                    path: None,
                });
            }
            acp::ContentBlock::Image(image) => {
                match image
                    .uri
                    .as_deref()
                    .and_then(|uri| uri.strip_prefix("file://"))
                {
                    Some(path) => parts.push(MessagePart::Image {
                        media_type: image.mime_type.clone(),
                        data: None,
                        path: Some(path.to_string()),
                    }),
                    None => push_text(&mut parts, "\n[an image without data was left out]\n"),
                }
            }
            acp::ContentBlock::Resource(resource) => match &resource.resource {
                acp::EmbeddedResourceResource::TextResourceContents(file) => {
                    push_text(&mut parts, &embedded_text(&file.uri, &file.text));
                }
                acp::EmbeddedResourceResource::BlobResourceContents(blob) => {
                    let note = format!("\n[binary resource {} was left out]\n", blob.uri);
                    push_text(&mut parts, &note);
                }
                _ => push_text(
                    &mut parts,
                    "\n[a resource of an unknown kind was left out]\n",
                ),
            },
            acp::ContentBlock::ResourceLink(link) => {
                push_text(&mut parts, &format!("[@{}]({})", link.name, link.uri));
            }
            acp::ContentBlock::Audio(_) => {
                push_text(&mut parts, "\n[audio was left out: not supported]\n");
            }
            _ => push_text(&mut parts, "\n[content of an unknown kind was left out]\n"),
        }
    }
    match parts.as_slice() {
        [] => SendMessageRequest::text(""),
        [MessagePart::Text { text }] => SendMessageRequest::text(text.clone()),
        _ => SendMessageRequest {
            message: None,
            content: Some(parts),
        },
    }
}

/// An embedded text resource as prompt text: its URI, then its text in a fence longer than
/// any backtick run inside it.
fn embedded_text(uri: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if text.ends_with('\n') || text.is_empty() {
        ""
    } else {
        "\n"
    };
    format!("\n{uri}\n{fence}\n{text}{newline}{fence}\n")
}

/// The session's MCP servers, by name: stdio servers (command, arguments, environment) and
/// Streamable HTTP ones (URL, headers). An SSE server, a name the daemon refuses (see
/// [`is_mcp_name`]), a name given twice, or a variable or header given twice is an error
/// naming it.
pub fn mcp_servers(servers: &[acp::McpServer]) -> Result<BTreeMap<String, McpServer>, String> {
    let mut out = BTreeMap::new();
    for server in servers {
        let (name, server) = match server {
            acp::McpServer::Stdio(stdio) => {
                let command = stdio.command.to_str().ok_or_else(|| {
                    format!("MCP server `{}`: its command is not UTF-8", stdio.name)
                })?;
                let env = entries(
                    &stdio.name,
                    "environment variable",
                    stdio.env.iter().map(|v| (&v.name, &v.value)),
                    false,
                )?;
                let server = McpServer::Stdio {
                    command: command.to_string(),
                    args: stdio.args.clone(),
                    env,
                };
                (&stdio.name, server)
            }
            acp::McpServer::Http(http) => {
                let headers = entries(
                    &http.name,
                    "header",
                    http.headers.iter().map(|h| (&h.name, &h.value)),
                    true,
                )?;
                let server = McpServer::Http {
                    url: http.url.clone(),
                    headers,
                };
                (&http.name, server)
            }
            acp::McpServer::Sse(sse) => {
                return Err(format!(
                    "MCP server `{}` uses SSE, which sandbox-daemon does not support: use \
                     stdio or Streamable HTTP",
                    sse.name
                ));
            }
            _ => return Err("an MCP server of an unknown transport".to_string()),
        };
        if !is_mcp_name(name) {
            return Err(format!(
                "MCP server name `{}` is not allowed: 1 to 64 of A-Z a-z 0-9 _ -",
                name.escape_debug()
            ));
        }
        if out.insert(name.clone(), server).is_some() {
            return Err(format!("MCP server `{name}` is given twice"));
        }
    }
    Ok(out)
}

/// Name/value pairs as a map; a name given twice (ignoring case when `any_case`) is an error.
fn entries<'a>(
    server: &str,
    what: &str,
    pairs: impl Iterator<Item = (&'a String, &'a String)>,
    any_case: bool,
) -> Result<BTreeMap<String, String>, String> {
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in pairs {
        let twice = map
            .keys()
            .any(|k| k == name || (any_case && k.eq_ignore_ascii_case(name)));
        if twice {
            return Err(format!(
                "MCP server `{server}`: {what} `{name}` is given twice"
            ));
        }
        map.insert(name.clone(), value.clone());
    }
    Ok(map)
}
