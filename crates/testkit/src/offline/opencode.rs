//! OpenCode: `opencode serve` (HTTP + SSE) — launched exactly as the daemon launches a
//! server ([`sandbox_agents::opencode::launch`]: its providers, key files, generated config
//! in which every permission asks, password and environment), pointed at the fake
//! provider through the daemon's Anthropic provider (the Messages API at `<provider>/v1`).
//! The driver ([`crate::drivers::opencode`]) talks to it as the daemon's does.

use std::path::Path;

use sandbox_agents::ProviderEnv;
use sandbox_agents::opencode::launch::{self, ServerDirs, ServerKey};

use super::{Launch, Sandbox};

/// The fake API key (the fake provider takes any).
pub const API_KEY: &str = "sk-fake";

/// A server ready to start: its launch and the password it is started with (the driver
/// authenticates as [`launch::USER`] with it).
#[derive(Clone)]
pub struct Serve {
    /// `opencode serve` with the daemon's arguments and environment.
    pub launch: Launch,
    /// The server's password (also in the launch's environment, as the daemon puts it).
    pub password: String,
}

impl std::fmt::Debug for Serve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serve")
            .field("launch", &self.launch.program)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// The environment the daemon would have: an Anthropic key and base URL (the fake).
pub fn provider_env(provider_url: &str) -> ProviderEnv {
    ProviderEnv::default()
        .with("ANTHROPIC_API_KEY", API_KEY)
        .with("ANTHROPIC_BASE_URL", provider_url)
}

/// `opencode serve` against the fake provider, as the daemon's server pool starts one: the
/// providers of the daemon's environment ([`provider_env`]), the server's directories
/// under `<root>/opencode/<key id>` (HOME with its XDG dirs, the key files) as under the
/// daemon's data directory, the inline config and a fresh password. TMPDIR is moved into
/// the sandbox.
pub fn launch(exe: &Path, sandbox: &Sandbox, provider_url: &str) -> std::io::Result<Serve> {
    let providers = launch::providers(&provider_env(provider_url), None, None);
    let dirs = ServerDirs::new(&sandbox.root.join("opencode"), &ServerKey::of(&providers));
    dirs.write(&providers)?;
    let config = launch::config(&providers, &dirs);
    let password = launch::password();
    let spec = launch::serve(exe.to_owned(), &dirs, &config, &password);
    Ok(Serve {
        launch: Launch::from_spec(spec, sandbox),
        password,
    })
}
