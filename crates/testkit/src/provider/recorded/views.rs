//! What a recorded model request says, in any of the three dialects: the tools it
//! offers, its system text, the images and tool results it carries.

use base64::Engine as _;
use serde_json::Value;

use super::RecordedRequest;
use crate::provider::view::{self, OfferedTool, result_text};

/// An image in a user message of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputImage {
    /// The media type (`image/png`, ...) of an inline image; empty when not stated.
    pub media_type: String,
    /// The base64 data of an inline image; empty when the image is only referenced.
    pub data: String,
    /// What an image that is not inline points to: its URL or file id.
    pub reference: Option<String>,
}

impl InputImage {
    /// The decoded bytes of an inline image.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.data)
            .ok()
    }

    /// An image given by URL: a `data:<media type>;base64,<data>` URL is inline.
    fn from_url(url: &str) -> Self {
        if let Some((media_type, data)) = url
            .strip_prefix("data:")
            .and_then(|rest| rest.split_once(";base64,"))
        {
            return Self {
                media_type: media_type.to_owned(),
                data: data.to_owned(),
                reference: None,
            };
        }
        Self::reference(url)
    }

    fn reference(reference: &str) -> Self {
        Self {
            media_type: String::new(),
            data: String::new(),
            reference: Some(reference.to_owned()),
        }
    }
}

/// The dialect of a request, by its route.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Dialect {
    Anthropic,
    Responses,
    Chat,
    Other,
}

/// Where Claude Code lists the tools it defers behind `ToolSearch`.
const DEFERRED_MARKERS: &[&str] = &[
    "The following deferred tools are now available via ToolSearch",
    "<available-deferred-tools>",
];

impl RecordedRequest {
    fn dialect(&self) -> Dialect {
        match self.route().trim_start_matches("/v1") {
            "/messages" => Dialect::Anthropic,
            "/responses" => Dialect::Responses,
            "/chat/completions" => Dialect::Chat,
            _ => Dialect::Other,
        }
    }

    /// The conversation's entries: Messages / Chat `messages`, Responses `input` items.
    fn entries(&self) -> &[Value] {
        let key = match self.dialect() {
            Dialect::Responses => "input",
            _ => "messages",
        };
        self.body[key]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The tools the request offers, as the fake model sees them ([`view`]).
    fn offered(&self) -> Vec<OfferedTool> {
        match self.dialect() {
            Dialect::Anthropic => view::anthropic(&self.body).tools,
            Dialect::Responses => view::responses(&self.body).tools,
            Dialect::Chat => view::chat(&self.body).tools,
            Dialect::Other => Vec::new(),
        }
    }

    /// Names of the tools the request offers, in any dialect, in these forms:
    ///
    /// - `Bash`, `mcp__ht__echo`, `ht_echo`: a tool the model calls directly;
    /// - `mcp__ht.echo`, `functions.exec`: a tool declared inside a Responses `namespace`
    ///   tool (Codex: its code-mode tools, and an MCP server's tools once a
    ///   `tool_search_output` in the input revealed them);
    /// - `exec(exec_command)`: a tool reached only through a code-mode tool's JavaScript
    ///   (Codex's default model), as the reply labels name such calls;
    /// - `tool_search`: Codex's client-executed tool search (declared without a name);
    /// - `deferred:mcp__ht__echo`: a tool the agent names but defers behind its tool
    ///   search (Claude Code's list of deferred tools: its schema is not sent until the
    ///   model loads it with `ToolSearch`, and the loaded tool then appears plainly too).
    ///
    /// Codex's MCP tools deferred behind `tool_search` are not named anywhere until
    /// searched, and those its code-mode `exec` reaches are never listed.
    pub fn tool_names(&self) -> Vec<String> {
        if self.dialect() == Dialect::Other {
            return self.body["tools"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter_map(|t| t["name"].as_str().or(t["function"]["name"].as_str()))
                .map(str::to_owned)
                .collect();
        }
        let mut names: Vec<String> = self
            .offered()
            .iter()
            .map(|tool| match (&tool.via, &tool.namespace) {
                (Some(via), _) => format!("{via}({})", tool.name),
                (None, Some(namespace)) => format!("{namespace}.{}", tool.name),
                (None, None) => tool.name.clone(),
            })
            .collect();
        names.extend(self.deferred_tools().map(|t| format!("deferred:{t}")));
        names
    }

    /// Whether [`Self::tool_names`] has exactly this name.
    pub fn offers_tool(&self, name: &str) -> bool {
        self.tool_names().iter().any(|t| t == name)
    }

    /// The tools Claude Code lists as deferred, in its words (one name a line after its
    /// announcement, up to an empty line or the closing tag).
    fn deferred_tools(&self) -> impl Iterator<Item = String> {
        let mut strings = Vec::new();
        collect_strings(&self.body, &mut strings);
        let mut names = Vec::new();
        for text in strings {
            for marker in DEFERRED_MARKERS {
                let Some(at) = text.find(marker) else {
                    continue;
                };
                let rest = &text[at + marker.len()..];
                let lines = rest.lines().skip(1).map(str::trim);
                names.extend(
                    lines
                        .take_while(|l| {
                            !l.is_empty()
                                && l.chars()
                                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                        })
                        .map(str::to_owned),
                );
            }
        }
        names.into_iter()
    }

    /// The system and developer instructions, in any dialect, one per paragraph:
    /// Anthropic's `system` (a string or text blocks) and `system` entries in
    /// `messages`; Responses' `instructions` and `developer` / `system` input messages;
    /// Chat's `system` / `developer` messages. Empty when there are none.
    pub fn system_text(&self) -> String {
        let mut texts = Vec::new();
        for key in ["system", "instructions"] {
            let text = result_text(&self.body[key]);
            if !text.is_empty() {
                texts.push(text);
            }
        }
        for entry in self.entries() {
            let role = entry["role"].as_str().unwrap_or_default();
            let message = entry.get("type").is_none_or(|t| t == "message");
            if message && matches!(role, "system" | "developer") {
                texts.push(result_text(&entry["content"]));
            }
        }
        texts.join("\n\n")
    }

    /// The images in the request's user messages, oldest first: Anthropic `image` blocks
    /// (`source` base64, URL or file), Responses `input_image` parts (`image_url` data
    /// URL or URL, or `file_id`), Chat `image_url` parts.
    pub fn images(&self) -> Vec<InputImage> {
        let mut images = Vec::new();
        for entry in self.entries() {
            let user = entry["role"] == "user" && entry.get("type").is_none_or(|t| t == "message");
            let parts = entry["content"].as_array().map(Vec::as_slice);
            for part in parts.filter(|_| user).unwrap_or_default() {
                if let Some(image) = image_of(part) {
                    images.push(image);
                }
            }
        }
        images
    }

    /// The text of every tool result the request carries, oldest first (see
    /// [`view::result_text`]): Anthropic `tool_result` blocks, Responses `*_output`
    /// items with an `output`, Chat `tool` messages.
    pub fn tool_results(&self) -> Vec<String> {
        let mut results = Vec::new();
        for entry in self.entries() {
            match self.dialect() {
                Dialect::Responses => {
                    let kind = entry["type"].as_str().unwrap_or_default();
                    if kind.ends_with("_output") && entry.get("output").is_some() {
                        results.push(result_text(&entry["output"]));
                    }
                }
                Dialect::Chat if entry["role"] == "tool" => {
                    results.push(result_text(&entry["content"]));
                }
                _ => results.extend(
                    entry["content"]
                        .as_array()
                        .map(Vec::as_slice)
                        .unwrap_or_default()
                        .iter()
                        .filter(|p| p["type"] == "tool_result")
                        .map(|p| result_text(&p["content"])),
                ),
            }
        }
        results
    }
}

/// The image of one content part, if it is one.
fn image_of(part: &Value) -> Option<InputImage> {
    match part["type"].as_str()? {
        "image" => {
            let source = &part["source"];
            Some(match source["type"].as_str() {
                Some("base64") => InputImage {
                    media_type: source["media_type"].as_str().unwrap_or_default().to_owned(),
                    data: source["data"].as_str().unwrap_or_default().to_owned(),
                    reference: None,
                },
                _ => InputImage::reference(
                    source["url"]
                        .as_str()
                        .or(source["file_id"].as_str())
                        .unwrap_or_default(),
                ),
            })
        }
        "input_image" => Some(match part["image_url"].as_str() {
            Some(url) => InputImage::from_url(url),
            None => InputImage::reference(part["file_id"].as_str().unwrap_or_default()),
        }),
        "image_url" => {
            let url = &part["image_url"];
            Some(InputImage::from_url(
                url["url"].as_str().or(url.as_str()).unwrap_or_default(),
            ))
        }
        _ => None,
    }
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
mod tests;
