//! Pi: `--mode rpc` (JSON lines on stdio) with a custom provider in `models.json`.

use std::path::Path;

use serde_json::json;

use super::{Launch, Sandbox, write_file};

/// Provider name in `models.json`.
pub const PROVIDER: &str = "fake";
/// Model id in `models.json`.
pub const MODEL: &str = "fake-model";

/// `models.json`: the fake provider over the Anthropic Messages API (its `baseUrl`
/// takes no `/v1`; the OpenAI APIs would need it).
pub fn models_json(provider_url: &str) -> serde_json::Value {
    json!({"providers": {PROVIDER: {
        "baseUrl": provider_url,
        "api": "anthropic-messages",
        "apiKey": "sk-fake",
        "models": [{"id": MODEL, "name": "Fake Model", "reasoning": false, "input": ["text"],
                    "contextWindow": 200_000, "maxTokens": 8192,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
    }}})
}

/// `settings.json`: no agent-level retries (so `FAIL` ends the turn at once) and no
/// install telemetry.
pub fn settings_json() -> serde_json::Value {
    json!({"retry": {"enabled": false}, "enableInstallTelemetry": false})
}

/// `pi --mode rpc` against the fake provider, with `PI_CODING_AGENT_DIR` in the sandbox.
pub fn launch(exe: &Path, sandbox: &Sandbox, provider_url: &str) -> std::io::Result<Launch> {
    let dir = sandbox.home.join(".pi/agent");
    write_file(
        &dir.join("models.json"),
        &models_json(provider_url).to_string(),
    )?;
    write_file(&dir.join("settings.json"), &settings_json().to_string())?;
    Ok(Launch::new(exe, sandbox)
        .args(["--mode", "rpc", "--provider", PROVIDER, "--model", MODEL])
        .envs([
            ("PI_CODING_AGENT_DIR", dir.display().to_string()),
            ("PI_OFFLINE", "1".to_owned()),
            ("PI_TELEMETRY", "0".to_owned()),
            ("PI_SKIP_VERSION_CHECK", "1".to_owned()),
        ]))
}
