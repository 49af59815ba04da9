//! Codex: the daemon's driver runs `codex app-server` (JSON-RPC over stdio) with its
//! `CODEX_HOME` (`config.toml` with the custom provider at the daemon's
//! `OPENAI_BASE_URL`) and environment ([`sandbox_agents::codex::launch`]), and logs in with
//! the key through `account/login/start`; [`provider_env`] points it at the fake provider.

use std::path::Path;

use sandbox_agents::codex::launch::{AuthStore, app_server, write_codex_home};
use sandbox_agents::{ProviderEnv, SessionConfig};
use sandbox_universal::PermissionMode;

use super::{Launch, Sandbox, session_config};
use crate::agents::Agent;

/// The fake API key the driver logs in with.
pub const API_KEY: &str = "sk-fake";

/// The environment the daemon would have: an OpenAI key and base URL (the fake's
/// Responses API at `<provider>/v1`).
pub fn provider_env(provider_url: &str) -> ProviderEnv {
    ProviderEnv::default()
        .with("OPENAI_API_KEY", API_KEY)
        .with("OPENAI_BASE_URL", format!("{provider_url}/v1"))
}

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

/// A `default`-mode session on [`model`] (see [`session_config`]: `CODEX_HOME` is
/// `<root>/home/.codex`, the working directory `<root>/work`).
pub fn session(sandbox: &Sandbox) -> SessionConfig {
    session_config(
        Agent::Codex,
        sandbox,
        PermissionMode::Default,
        model(),
        None,
    )
}

/// The process the daemon's driver starts for [`session`], against the fake provider, as
/// a [`Launch`] for a native driver (which logs in and starts the thread itself).
pub fn launch(exe: &Path, sandbox: &Sandbox, provider_url: &str) -> std::io::Result<Launch> {
    let session = session(sandbox);
    write_codex_home(
        &session.state_dir,
        Some(&format!("{provider_url}/v1")),
        AuthStore::Ephemeral,
    )?;
    Ok(Launch::from_spec(
        app_server(exe.to_owned(), &session),
        sandbox,
    ))
}
