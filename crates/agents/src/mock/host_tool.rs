//! `hosttool <name>`: the mock calls a tool of the daemon's host tool server the way a
//! real agent's MCP client does (Streamable HTTP: `initialize`, then `tools/call`), so
//! host tools can be exercised without a real agent.

use sandbox_universal::McpServer;
use serde_json::{Value, json};

/// The protocol version the mock's MCP client speaks.
const PROTOCOL_VERSION: &str = "2025-06-18";

/// The host tool a message names after `hosttool`, if any.
pub fn target(message: &str) -> Option<String> {
    let mut words = message.split_whitespace();
    words.find(|w| w.eq_ignore_ascii_case("hosttool"))?;
    let name: String = words
        .next()?
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// What a call answered: the text of its content and whether it is an error result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The text parts, joined.
    pub text: String,
    /// `isError`.
    pub is_error: bool,
}

/// Calls `tool` with `input` on `server` (the host tool server entry the daemon gave).
pub async fn call(server: &McpServer, tool: &str, input: Value) -> Result<Answer, String> {
    let McpServer::Http { url, headers } = server else {
        return Err("the host tool server is not an HTTP server".into());
    };
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let post = |body: Value| {
        let mut request = client
            .post(url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", PROTOCOL_VERSION)
            .json(&body);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        request
    };
    let init = post(json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                   "clientInfo": {"name": "sandbox-mock", "version": "1"}}
    }));
    response(init.send().await.map_err(|e| e.to_string())?, 1).await?;
    let call = post(json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": input}
    }));
    let result = response(call.send().await.map_err(|e| e.to_string())?, 2).await?;
    let text = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|part| part["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    Ok(Answer {
        text,
        is_error: result["isError"].as_bool().unwrap_or(false),
    })
}

/// The `result` of JSON-RPC response `id`, read from a JSON or an SSE body.
async fn response(response: reqwest::Response, id: u64) -> Result<Value, String> {
    let status = response.status();
    let body = response.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("HTTP {status}: {body}"));
    }
    let messages: Vec<Value> = match serde_json::from_str::<Value>(&body) {
        Ok(message) => vec![message],
        Err(_) => body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect(),
    };
    let message = messages
        .into_iter()
        .find(|m| m["id"] == id)
        .ok_or_else(|| format!("no JSON-RPC response {id} in {body:?}"))?;
    match message.get("error") {
        Some(error) => Err(format!("MCP error: {error}")),
        None => Ok(message["result"].clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_follows_the_keyword() {
        assert_eq!(target("please hosttool lookup now"), Some("lookup".into()));
        assert_eq!(target("HOSTTOOL ask_user."), Some("ask_user".into()));
        assert_eq!(target("hosttool"), None);
        assert_eq!(target("no tool here"), None);
    }
}
