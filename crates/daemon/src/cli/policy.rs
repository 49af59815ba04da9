//! The CLI's flags for a session's policy (`sessions create`) and a message's images
//! (`sessions send-message`), turned into the request bodies' fields.

use std::collections::BTreeMap;
use std::path::PathBuf;

use base64::Engine;
use clap::Args;
use sandbox_universal::{
    CreateSessionRequest, McpServer, MessagePart, SendMessageRequest, SystemPromptMode, ToolPolicy,
};

/// `sessions create`'s policy flags.
#[derive(Debug, Clone, Args)]
pub struct PolicyArgs {
    /// Instructions for the agent (`systemPrompt`).
    #[arg(long)]
    pub system_prompt: Option<String>,
    /// How they combine with the agent's own: append (default) or replace.
    #[arg(long, value_parser = parse_prompt_mode)]
    pub system_prompt_mode: Option<SystemPromptMode>,
    /// A tool the agent may use (`tools.allow`; repeat it). Universal names: read, write,
    /// edit, shell, glob, grep, webFetch, webSearch, mcp:<server>/<tool>, mcp:<server>/*.
    #[arg(long = "allow-tool")]
    pub allow_tools: Vec<String>,
    /// A tool the agent may not use (`tools.deny`; repeat it).
    #[arg(long = "deny-tool")]
    pub deny_tools: Vec<String>,
    /// The most model responses one turn may take (`maxTurns`).
    #[arg(long)]
    pub max_turns: Option<u32>,
    /// MCP servers (`mcpServers`): a JSON object by name, or `@file` holding one.
    #[arg(long)]
    pub mcp_servers: Option<String>,
    /// An extra variable for the agent (`env`): `NAME=value`, or `NAME` to pass this
    /// CLI's own value on. Repeat it.
    #[arg(long = "env")]
    pub env: Vec<String>,
    /// The host's tools (`hostTools`): a JSON array, or `@file` holding one.
    #[arg(long)]
    pub host_tools: Option<String>,
}

/// The JSON of a flag: the text itself, or the content of the file `@path` names.
fn json_text(flag: &str, text: String) -> Result<String, String> {
    match text.strip_prefix('@') {
        Some(path) => {
            std::fs::read_to_string(path).map_err(|e| format!("--{flag}: reading {path}: {e}"))
        }
        None => Ok(text),
    }
}

impl PolicyArgs {
    /// Puts the flags into `request`.
    pub fn apply(self, request: &mut CreateSessionRequest) -> Result<(), String> {
        request.system_prompt = self.system_prompt;
        request.system_prompt_mode = self.system_prompt_mode;
        if !self.allow_tools.is_empty() || !self.deny_tools.is_empty() {
            request.tools = Some(ToolPolicy {
                allow: (!self.allow_tools.is_empty()).then_some(self.allow_tools),
                deny: self.deny_tools,
            });
        }
        request.max_turns = self.max_turns;
        if let Some(text) = self.host_tools {
            let json = json_text("host-tools", text)?;
            let tools = serde_json::from_str(&json)
                .map_err(|e| format!("--host-tools: not a list of host tools: {e}"))?;
            request.host_tools = Some(tools);
        }
        if let Some(text) = self.mcp_servers {
            let json = json_text("mcp-servers", text)?;
            let servers: BTreeMap<String, McpServer> = serde_json::from_str(&json)
                .map_err(|e| format!("--mcp-servers: not a map of MCP servers: {e}"))?;
            request.mcp_servers = Some(servers);
        }
        if !self.env.is_empty() {
            let mut env = BTreeMap::new();
            for entry in self.env {
                let (name, value) = match entry.split_once('=') {
                    Some((name, value)) => (name.to_string(), value.to_string()),
                    None => {
                        let value = std::env::var(&entry)
                            .map_err(|_| format!("--env {entry}: not set in this environment"))?;
                        (entry, value)
                    }
                };
                env.insert(name, value);
            }
            request.env = Some(env);
        }
        Ok(())
    }
}

fn parse_prompt_mode(text: &str) -> Result<SystemPromptMode, String> {
    match text {
        "append" => Ok(SystemPromptMode::Append),
        "replace" => Ok(SystemPromptMode::Replace),
        other => Err(format!(
            "unknown system prompt mode `{other}` (append, replace)"
        )),
    }
}

/// `sessions send-message`'s images.
#[derive(Debug, Clone, Args)]
pub struct ImageArgs {
    /// An image file on this machine, sent inline (repeat it).
    #[arg(long = "image")]
    pub images: Vec<PathBuf>,
    /// An image file in the session's working directory, sent by path (repeat it).
    #[arg(long = "image-path")]
    pub image_paths: Vec<String>,
}

impl ImageArgs {
    /// The request: the text alone, or the text and the images as `content`.
    pub fn request(self, message: String) -> Result<SendMessageRequest, String> {
        if self.images.is_empty() && self.image_paths.is_empty() {
            return Ok(SendMessageRequest::text(message));
        }
        let mut parts = vec![MessagePart::Text { text: message }];
        for path in self.images {
            let bytes =
                std::fs::read(&path).map_err(|e| format!("--image {}: {e}", path.display()))?;
            parts.push(MessagePart::Image {
                media_type: media_type(&path.display().to_string())?,
                data: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
                path: None,
            });
        }
        for path in self.image_paths {
            parts.push(MessagePart::Image {
                media_type: media_type(&path)?,
                data: None,
                path: Some(path),
            });
        }
        Ok(SendMessageRequest {
            message: None,
            content: Some(parts),
        })
    }
}

/// The media type of an image file, by its extension.
fn media_type(path: &str) -> Result<String, String> {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let media_type = match extension.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => return Err(format!("{path}: not a .png, .jpg, .gif or .webp file")),
    };
    Ok(media_type.to_string())
}
