//! The fake provider over real HTTP on 127.0.0.1 (no agent, no namespace needed): each
//! dialect's streams (`dialects`), its failures and keys (`failures`), and scripted
//! behaviour (`scripts`).

mod dialects;
mod failures;
mod scripts;

use sandbox_testkit::provider::FakeProvider;
use serde_json::{Value, json};

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// `(event name, data)` pairs of an SSE body.
pub fn frames(body: &str) -> Vec<(String, String)> {
    body.split("\n\n")
        .filter(|f| !f.trim().is_empty())
        .map(|frame| {
            let mut event = String::new();
            let mut data = String::new();
            for line in frame.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = e.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = d.to_owned();
                }
            }
            (event, data)
        })
        .collect()
}

pub fn json_frames(body: &str) -> Vec<Value> {
    frames(body)
        .into_iter()
        .filter_map(|(_, d)| serde_json::from_str(&d).ok())
        .collect()
}

pub async fn post(provider: &FakeProvider, path: &str, body: Value) -> reqwest::Response {
    client()
        .post(format!("{}{path}", provider.base_url()))
        .header("x-api-key", "sk-secret")
        .json(&body)
        .send()
        .await
        .unwrap()
}

pub fn anthropic_request(text: &str, stream: bool) -> Value {
    json!({
        "model": "claude-test", "stream": stream, "max_tokens": 100,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": text}]},
            {"role": "system", "content": "# Environment\n - Primary working directory: /tmp/w\n"}
        ],
        "tools": [{"name": "Bash", "input_schema": {"properties": {"command": {}, "description": {}}}},
                  {"name": "Write", "input_schema": {"properties": {"file_path": {}, "content": {}}}}]
    })
}
