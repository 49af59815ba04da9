//! Codex: `codex app-server` (JSON-RPC over stdio) — launched exactly as the daemon
//! launches a session's server ([`sandbox_agents::codex::launch`]: its `config.toml` with
//! the custom provider, its environment), pointed at the fake provider. The key reaches
//! the server through `account/login/start`, as the daemon sends it
//! ([`crate::drivers::codex::Codex::start`]).

use std::path::Path;

use sandbox_agents::SessionConfig;
use sandbox_agents::codex::launch::{app_server, write_codex_home};
use sandbox_universal::PermissionMode;

use super::{Launch, Sandbox};

/// The fake API key the driver logs in with.
pub const API_KEY: &str = "sk-fake";

/// The model the kit's Codex sessions ask for unless told otherwise: a model of Codex's
/// bundled catalog that gets its tools as classic function tools (`exec_command`,
/// `apply_patch`, `request_user_input` in `tools`).
pub const MODEL: &str = "gpt-5.5";

/// The model Codex picks when a thread names none: its bundled catalog's default
/// (`tool_mode: code_mode_only`). Its tools come in "code mode": one `exec` tool taking
/// JavaScript that calls the others (the fake provider answers both dialects).
pub const DEFAULT_MODEL: &str = "gpt-6.1-sol";

/// Overrides the model of the kit's Codex sessions: a model id, or `default` for no
/// model at all (Codex then uses [`DEFAULT_MODEL`]), e.g.
/// `SANDBOX_TESTKIT_CODEX_MODEL=default cargo test -p sandbox-testkit --test codex`.
pub const MODEL_ENV: &str = "SANDBOX_TESTKIT_CODEX_MODEL";

/// The model the kit's Codex sessions ask for: [`MODEL`] unless [`MODEL_ENV`] says
/// otherwise; `None` lets Codex choose its default model.
pub fn model() -> Option<String> {
    match std::env::var(MODEL_ENV) {
        Ok(value) if value == "default" => None,
        Ok(value) if !value.is_empty() => Some(value),
        _ => Some(MODEL.to_owned()),
    }
}

/// A `default`-mode session on [`model`] whose state directory is the sandbox's HOME (so
/// `CODEX_HOME` is `<root>/home/.codex`) and whose working directory is `<root>/work`.
pub fn session(sandbox: &Sandbox) -> SessionConfig {
    SessionConfig {
        session_id: "testkit".into(),
        agent_mode: None,
        permission_mode: PermissionMode::Default,
        model: model(),
        variant: None,
        token: None,
        validate_token: false,
        dangerously_skip_permissions: false,
        agent_version: None,
        cwd: sandbox.work.clone(),
        state_dir: sandbox.home.clone(),
        tap: None,
    }
}

/// `codex app-server` against the fake provider with the daemon's `CODEX_HOME` and
/// environment (the Responses API at `<provider>/v1`).
pub fn launch(exe: &Path, sandbox: &Sandbox, provider_url: &str) -> std::io::Result<Launch> {
    let session = session(sandbox);
    write_codex_home(&session.state_dir, &format!("{provider_url}/v1"))?;
    Ok(Launch::from_spec(
        app_server(exe.to_owned(), &session),
        sandbox,
    ))
}
