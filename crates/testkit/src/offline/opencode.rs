//! OpenCode: `opencode serve` (HTTP + SSE) with an `@ai-sdk/openai-compatible`
//! provider, which is bundled, so nothing is downloaded.

use std::path::Path;

use serde_json::{Value, json};

use super::{Launch, Sandbox};

/// The inline config (`OPENCODE_CONFIG_CONTENT`): the `fake` provider at
/// `<provider>/v1` (Chat Completions), no auto-update, no sharing, and an optional
/// `permission` block such as `{"bash": "ask", "edit": "ask"}`.
pub fn config(provider_url: &str, permission: Option<Value>) -> Value {
    let mut config = json!({
        "$schema": "https://opencode.ai/config.json",
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "autoupdate": false,
        "share": "disabled",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": format!("{provider_url}/v1"), "apiKey": "sk-fake"},
            "models": {"fake-model": {"name": "Fake Model", "tool_call": true,
                                      "limit": {"context": 200_000, "output": 8192}}},
        }},
    });
    if let Some(permission) = permission {
        config["permission"] = permission;
    }
    config
}

/// Environment switching off model-list fetches, updates, LSP downloads, default
/// plugins, sharing and Claude Code config discovery.
pub fn env(provider_url: &str, permission: Option<Value>) -> Vec<(&'static str, String)> {
    let one = || "1".to_owned();
    vec![
        (
            "OPENCODE_CONFIG_CONTENT",
            config(provider_url, permission).to_string(),
        ),
        ("OPENCODE_DISABLE_MODELS_FETCH", one()),
        ("OPENCODE_DISABLE_AUTOUPDATE", one()),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", one()),
        ("OPENCODE_DISABLE_DEFAULT_PLUGINS", one()),
        ("OPENCODE_DISABLE_SHARE", one()),
        ("OPENCODE_DISABLE_CLAUDE_CODE", one()),
    ]
}

/// `opencode serve` on a free port of 127.0.0.1 (it prints the URL it listens on).
pub fn launch(
    exe: &Path,
    sandbox: &Sandbox,
    provider_url: &str,
    permission: Option<Value>,
) -> Launch {
    Launch::new(exe, sandbox)
        .args(["serve", "--hostname", "127.0.0.1", "--port", "0"])
        .envs(env(provider_url, permission))
}
