//! Pi: the daemon's driver runs `pi --mode rpc` with a private agent dir
//! ([`sandbox_agents::pi::launch::PiDirs`] under the session's state dir: `models.json`
//! routing Pi's built-in Anthropic provider to the daemon's `ANTHROPIC_BASE_URL`, a
//! `settings.json` without agent-level retries or telemetry, and the daemon's permission
//! extension unless the session bypasses permissions), offline and quiet. Pi picks its own
//! default Anthropic model.

use sandbox_agents::ProviderEnv;

/// The fake API key (the fake provider takes any).
pub const API_KEY: &str = "sk-fake";

/// The environment the daemon would have: an Anthropic key and base URL (the fake; Pi's
/// `baseUrl` takes no `/v1`).
pub fn provider_env(provider_url: &str) -> ProviderEnv {
    ProviderEnv::default()
        .with("ANTHROPIC_API_KEY", API_KEY)
        .with("ANTHROPIC_BASE_URL", provider_url)
}
