//! Claude Code: the daemon's driver runs `claude -p` with stream-json both ways and
//! permission prompts over stdio ([`sandbox_agents::claude::launch::LaunchPlan`]), its
//! private HOME under the session's state dir, pointed at the fake provider by the
//! daemon's Anthropic variables ([`provider_env`]).

use std::path::Path;

use sandbox_agents::claude::launch::{Conversation, LaunchPlan, running_as_root};
use sandbox_agents::{Credentials, ProviderEnv};
use sandbox_universal::PermissionMode;

use super::{Launch, Sandbox, session_config};
use crate::agents::Agent;

/// The fake API key (any value works; `-p` mode accepts a key with no login).
pub const API_KEY: &str = "sk-ant-fake";

/// The conversation id of a [`launch`]ed process (the daemon's driver picks a new one per
/// session).
pub const SESSION_ID: &str = "00000000-0000-4000-8000-000000000001";

/// The environment the daemon would have: an Anthropic key and base URL (the fake).
pub fn provider_env(provider_url: &str) -> ProviderEnv {
    ProviderEnv::default()
        .with("ANTHROPIC_API_KEY", API_KEY)
        .with("ANTHROPIC_BASE_URL", provider_url)
}

/// The process the daemon's driver starts for a new `default`-mode session of
/// [`session_config`] (HOME `<root>/home`, cwd `<root>/work`), as a [`Launch`] for a
/// native driver, TMPDIR in the sandbox.
pub fn launch(exe: &Path, sandbox: &Sandbox, provider_url: &str) -> Launch {
    let config = session_config(Agent::Claude, sandbox, PermissionMode::Default, None, None);
    let plan = LaunchPlan::new(
        exe.to_owned(),
        &config,
        &Credentials::ApiKey(API_KEY.into()),
        Some(provider_url),
        running_as_root(),
    );
    Launch::from_spec(
        plan.spec(&Conversation::New(SESSION_ID.into()), None),
        sandbox,
    )
}
