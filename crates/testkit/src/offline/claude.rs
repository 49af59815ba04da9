//! Claude Code: `-p` stream-json in and out, permission prompts over stdio — launched
//! exactly as the daemon launches a session's process
//! ([`sandbox_agents::claude::launch::LaunchPlan`]), pointed at the fake provider.

use std::path::Path;

use sandbox_agents::claude::launch::{Conversation, LaunchPlan, running_as_root};
use sandbox_agents::{Credentials, SessionConfig};
use sandbox_universal::PermissionMode;

use super::{Launch, Sandbox};

/// The fake API key (any value works; `-p` mode accepts a key with no login).
pub const API_KEY: &str = "sk-ant-fake";

/// The conversation id of a recorded session (fixed, so recordings stay comparable).
pub const SESSION_ID: &str = "00000000-0000-4000-8000-000000000001";

/// Claude Code in stream-json mode against the fake provider: the daemon's arguments and
/// environment for a new `default`-mode session whose state directory is the sandbox
/// root (so HOME is `<root>/home`) and whose working directory is `<root>/work`.
pub fn launch(exe: &Path, sandbox: &Sandbox, provider_url: &str) -> Launch {
    let config = SessionConfig {
        session_id: "testkit".into(),
        agent_mode: None,
        permission_mode: PermissionMode::Default,
        model: None,
        variant: None,
        token: None,
        validate_token: false,
        dangerously_skip_permissions: false,
        agent_version: None,
        cwd: sandbox.work.clone(),
        state_dir: sandbox.root.clone(),
        tap: None,
    };
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
