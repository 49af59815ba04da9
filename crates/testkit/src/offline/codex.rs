//! Codex: `codex app-server` (JSON-RPC over stdio) with a custom model provider.

use std::path::Path;

use super::{Launch, Sandbox, write_file};

/// Variable holding the fake key, named by the provider's `env_key`.
pub const KEY_ENV: &str = "FAKE_KEY";
/// A model of Codex's bundled catalog (others fail: "Model metadata ... not found").
pub const MODEL: &str = "gpt-5.5";

/// `$CODEX_HOME/config.toml`: the custom `fake` provider (Responses API over HTTP SSE,
/// no retries so `FAIL` fails at once), and the features that reach out on their own off.
pub fn config_toml(provider_url: &str) -> String {
    format!(
        r#"model = "{MODEL}"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{provider_url}/v1"
wire_api = "responses"
env_key = "{KEY_ENV}"
request_max_retries = 0
stream_max_retries = 0

[features]
# plugin sync runs git ls-remote and GitHub API calls and delays exit by ~5 s
plugins = false
apps = false
remote_plugin = false
# lets the model call request_user_input outside Plan mode
default_mode_request_user_input = true

[analytics]
enabled = false
"#
    )
}

/// `codex app-server` against the fake provider, with `CODEX_HOME` in the sandbox.
pub fn launch(exe: &Path, sandbox: &Sandbox, provider_url: &str) -> std::io::Result<Launch> {
    let codex_home = sandbox.home.join(".codex");
    write_file(&codex_home.join("config.toml"), &config_toml(provider_url))?;
    let mut launch = Launch::new(exe, sandbox).args(["app-server"]).envs([
        ("CODEX_HOME", codex_home.display().to_string()),
        (KEY_ENV, "sk-fake".to_owned()),
        ("RUST_LOG", "warn".to_owned()),
    ]);
    // The npm launcher puts the bundled `rg` (vendor/<triple>/codex-path) on PATH.
    if let Some(vendor) = exe.parent().and_then(Path::parent) {
        let path = launch.env.get("PATH").cloned().unwrap_or_default();
        launch.env.insert(
            "PATH".to_owned(),
            format!("{}:{path}", vendor.join("codex-path").display()),
        );
    }
    Ok(launch)
}
