//! OpenCode: the daemon's driver runs `opencode serve` from its server pool
//! ([`sandbox_agents::opencode::launch`]: its providers, key files, generated config in
//! which every permission asks, password and environment), one server per provider set
//! under `<data dir>/opencode/<key id>` (the sandbox root is the data dir), pointed at the
//! fake provider through the daemon's Anthropic provider (the Messages API at
//! `<provider>/v1`).

use sandbox_agents::ProviderEnv;

/// The fake API key (the fake provider takes any).
pub const API_KEY: &str = "sk-fake";

/// The environment the daemon would have: an Anthropic key and base URL (the fake).
pub fn provider_env(provider_url: &str) -> ProviderEnv {
    ProviderEnv::default()
        .with("ANTHROPIC_API_KEY", API_KEY)
        .with("ANTHROPIC_BASE_URL", provider_url)
}
