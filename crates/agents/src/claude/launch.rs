//! How a Claude Code process is started: its arguments and its allow-listed environment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use sandbox_universal::PermissionMode;

use super::convert::Converter;
use super::policy::PolicyLaunch;
use crate::kernel::{ChildLaunch, Link, Spawn};
use crate::process::{ProcessSpec, base_env};
use crate::{Credentials, ProviderEnv, SessionConfig};

/// Variables that turn off everything but model calls: telemetry, error reports, the
/// auto-updater, the `/bug` command and other non-essential traffic.
pub const QUIET_ENV: &[(&str, &str)] = &[
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ("DISABLE_TELEMETRY", "1"),
    ("DISABLE_AUTOUPDATER", "1"),
    ("DISABLE_ERROR_REPORTING", "1"),
    ("DISABLE_BUG_COMMAND", "1"),
];

/// Flags of every session process: stream-json both ways, token deltas, permission
/// prompts as `can_use_tool` control requests on stdout.
pub const STREAM_ARGS: &[&str] = &[
    "-p",
    "--verbose",
    "--output-format",
    "stream-json",
    "--input-format",
    "stream-json",
    "--include-partial-messages",
    "--permission-prompt-tool",
    "stdio",
];

/// Claude's name of a permission mode (`--permission-mode`).
pub fn permission_mode_arg(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "default",
        PermissionMode::Plan => "plan",
        PermissionMode::AcceptEdits => "acceptEdits",
        PermissionMode::Bypass => "bypassPermissions",
    }
}

/// Whether the daemon runs as root (Claude refuses bypass as root unless `IS_SANDBOX=1`).
pub fn running_as_root() -> bool {
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The private HOME of a session's Claude process.
pub fn home_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("home")
}

/// Claude's config dir (`CLAUDE_CONFIG_DIR`: settings, and the session transcripts under
/// `projects/`) in the private HOME `home`.
pub fn config_dir(home: &Path) -> PathBuf {
    home.join(".claude")
}

/// The environment of a Claude process: the allow-listed daemon variables, a private
/// HOME and `CLAUDE_CONFIG_DIR` (so sessions persist there for `--resume`), only its own
/// credential and base URL, and every non-essential traffic switch off.
pub fn environment(
    home: &Path,
    credentials: &Credentials,
    base_url: Option<&str>,
    bypass_as_root: bool,
) -> BTreeMap<String, String> {
    let mut env = base_env(home);
    env.insert(
        "CLAUDE_CONFIG_DIR".into(),
        config_dir(home).display().to_string(),
    );
    for (name, value) in QUIET_ENV {
        env.insert((*name).into(), (*value).into());
    }
    match credentials {
        Credentials::ApiKey(key) => {
            env.insert("ANTHROPIC_API_KEY".into(), key.clone());
        }
        Credentials::OAuthToken(token) => {
            env.insert("CLAUDE_CODE_OAUTH_TOKEN".into(), token.clone());
        }
        Credentials::None => {}
    }
    if let Some(url) = base_url {
        env.insert("ANTHROPIC_BASE_URL".into(), url.to_string());
    }
    if bypass_as_root {
        env.insert("IS_SANDBOX".into(), "1".into());
    }
    env
}

/// Which conversation a process opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conversation {
    /// A new conversation with this id (`--session-id`).
    New(String),
    /// An existing conversation (`--resume`).
    Resume(String),
}

/// The `--permission-mode` of a process, if one is passed.
///
/// A new conversation starts in the session's mode. A resumed one goes on in the mode
/// the CLI last reported (`reported`), e.g. `default` once a plan was approved: a
/// respawn must not bring plan mode back. When no mode was reported (a session restored
/// after a daemon restart), a session created in plan mode passes no flag: the pinned
/// CLI then takes plan mode from the conversation's transcript unless the plan was
/// approved (it restores no other mode, so the others pass theirs).
pub fn permission_mode_flag(
    configured: PermissionMode,
    conversation: &Conversation,
    reported: Option<&str>,
) -> Option<String> {
    let configured = permission_mode_arg(configured);
    match (conversation, reported) {
        (Conversation::New(_), _) => Some(configured.to_string()),
        (Conversation::Resume(_), Some(reported)) => Some(reported.to_string()),
        (Conversation::Resume(_), None) if configured == "plan" => None,
        (Conversation::Resume(_), None) => Some(configured.to_string()),
    }
}

/// Everything needed to (re)start a session's Claude process.
#[derive(Debug, Clone)]
pub struct LaunchPlan {
    /// The executable.
    pub program: PathBuf,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The complete environment.
    pub env: BTreeMap<String, String>,
    /// Flags before the permission mode and conversation flags.
    pub args: Vec<String>,
    /// The permission mode the session was created with.
    pub permission_mode: PermissionMode,
    /// The policy's private files (system prompt, MCP servers), written by
    /// [`LaunchPlan::write_files`] before a process starts.
    pub files: Vec<(PathBuf, String)>,
}

impl LaunchPlan {
    /// The plan for a session.
    pub fn new(
        program: PathBuf,
        config: &SessionConfig,
        credentials: &Credentials,
        base_url: Option<&str>,
        as_root: bool,
    ) -> Self {
        let mut args: Vec<String> = STREAM_ARGS.iter().map(|a| (*a).to_string()).collect();
        for (flag, value) in [
            ("--model", &config.model),
            ("--effort", &config.variant),
            ("--agent", &config.agent_mode),
        ] {
            if let Some(value) = value {
                args.push(flag.into());
                args.push(value.clone());
            }
        }
        let bypass_as_root = as_root && config.permission_mode == PermissionMode::Bypass;
        let mut env = environment(
            &home_dir(&config.state_dir),
            credentials,
            base_url,
            bypass_as_root,
        );
        let policy = PolicyLaunch::new(&config.policy, &config.state_dir);
        args.extend(policy.args.iter().cloned());
        for (name, value) in &policy.env {
            env.entry(name.clone()).or_insert_with(|| value.clone());
        }
        Self {
            program,
            cwd: config.cwd.clone(),
            env,
            args,
            permission_mode: config.permission_mode,
            files: policy.files,
        }
    }

    /// Writes the policy's files (0600) into the session's state dir.
    pub fn write_files(&self) -> std::io::Result<()> {
        super::policy::write_files(&self.files)
    }

    /// The process to spawn for `conversation`, given the permission mode the CLI last
    /// reported (see [`permission_mode_flag`]).
    pub fn spec(&self, conversation: &Conversation, reported_mode: Option<&str>) -> ProcessSpec {
        let mut args: Vec<OsString> = self.args.iter().map(OsString::from).collect();
        if let Some(mode) = permission_mode_flag(self.permission_mode, conversation, reported_mode)
        {
            args.push("--permission-mode".into());
            args.push(mode.into());
        }
        let (flag, id) = match conversation {
            Conversation::New(id) => ("--session-id", id),
            Conversation::Resume(id) => ("--resume", id),
        };
        args.push(flag.into());
        args.push(id.into());
        ProcessSpec {
            program: self.program.clone(),
            args,
            cwd: self.cwd.clone(),
            env: self.env.clone(),
        }
    }
}

/// Claude's credential for a session: its `token` (an OAuth token when it starts with
/// `sk-ant-oat`), else `ANTHROPIC_API_KEY`, else `CLAUDE_CODE_OAUTH_TOKEN`.
pub fn credentials(provider: &ProviderEnv, token: Option<&str>) -> Credentials {
    match token.filter(|t| !t.is_empty()) {
        Some(t) if t.starts_with("sk-ant-oat") => Credentials::OAuthToken(t.to_string()),
        Some(t) => Credentials::ApiKey(t.to_string()),
        None => match (
            provider.get("ANTHROPIC_API_KEY"),
            provider.get("CLAUDE_CODE_OAUTH_TOKEN"),
        ) {
            (Some(key), _) => Credentials::ApiKey(key.to_string()),
            (None, Some(oauth)) => Credentials::OAuthToken(oauth.to_string()),
            (None, None) => Credentials::None,
        },
    }
}

/// Claude's credential for `session`: [`credentials`], else the stored login's token
/// (a stored login file gives none here: it is seeded, see [`seed_login`]).
pub fn session_credentials(provider: &ProviderEnv, session: &SessionConfig) -> Credentials {
    match credentials(provider, session.token.as_deref()) {
        Credentials::None => match session.login.as_ref().and_then(|l| l.token()) {
            Some(token) => Credentials::OAuthToken(token.to_string()),
            None => Credentials::None,
        },
        found => found,
    }
}

/// Writes the session's stored login file, if it has one, where Claude reads it:
/// `.credentials.json` in its config dir (`CLAUDE_CONFIG_DIR` = `<home>/.claude`).
pub fn seed_login(session: &SessionConfig, home: &Path) -> std::io::Result<()> {
    match &session.login {
        Some(login) => login.seed_home(home),
        None => Ok(()),
    }
}

/// The Anthropic endpoint from the daemon's environment, when set.
pub fn base_url(provider: &ProviderEnv) -> Option<&str> {
    provider.get("ANTHROPIC_BASE_URL")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(mode: PermissionMode) -> SessionConfig {
        SessionConfig {
            session_id: "s".into(),
            agent_mode: Some("Plan".into()),
            permission_mode: mode,
            model: Some("sonnet".into()),
            variant: Some("high".into()),
            token: None,
            validate_token: false,
            dangerously_skip_permissions: mode == PermissionMode::Bypass,
            agent_version: None,
            cwd: "/work".into(),
            state_dir: "/state/s".into(),
            tap: None,
            policy: Default::default(),
            login: None,
        }
    }

    #[test]
    fn args_carry_mode_model_effort_agent_and_conversation() {
        let plan = LaunchPlan::new(
            "/bin/claude".into(),
            &config(PermissionMode::AcceptEdits),
            &Credentials::ApiKey("k".into()),
            None,
            false,
        );
        let spec = plan.spec(&Conversation::New("abc".into()), None);
        let args: Vec<String> = spec
            .args
            .iter()
            .map(|a| a.to_string_lossy().into())
            .collect();
        let joined = args.join(" ");
        assert!(joined.starts_with("-p --verbose --output-format stream-json"));
        for part in [
            "--include-partial-messages",
            "--permission-prompt-tool stdio",
            "--permission-mode acceptEdits",
            "--model sonnet",
            "--effort high",
            "--agent Plan",
        ] {
            assert!(joined.contains(part), "{joined}");
        }
        assert!(joined.ends_with("--session-id abc"));
        let resumed = plan.spec(&Conversation::Resume("u".into()), Some("default"));
        let args: Vec<String> = resumed
            .args
            .iter()
            .map(|a| a.to_string_lossy().into())
            .collect();
        assert!(
            args.join(" ")
                .ends_with("--permission-mode default --resume u")
        );
        assert_eq!(resumed.cwd, PathBuf::from("/work"));
    }

    #[test]
    fn a_resumed_process_keeps_the_mode_the_cli_reported() {
        let new = Conversation::New("n".into());
        let resume = Conversation::Resume("r".into());
        let flag = |mode, conversation, reported| {
            permission_mode_flag(mode, conversation, reported).map(|m| m.to_string())
        };
        use PermissionMode::*;
        assert_eq!(flag(Plan, &new, None).as_deref(), Some("plan"));
        assert_eq!(flag(Plan, &new, Some("default")).as_deref(), Some("plan"));
        // An approved plan left plan mode: a respawn stays out of it.
        assert_eq!(
            flag(Plan, &resume, Some("default")).as_deref(),
            Some("default")
        );
        assert_eq!(flag(Plan, &resume, Some("plan")).as_deref(), Some("plan"));
        // After a daemon restart: the CLI's transcript knows whether plan mode ended.
        assert_eq!(flag(Plan, &resume, None), None);
        assert_eq!(
            flag(AcceptEdits, &resume, None).as_deref(),
            Some("acceptEdits")
        );
        assert_eq!(
            flag(Default, &resume, Some("acceptEdits")).as_deref(),
            Some("acceptEdits")
        );
    }

    #[test]
    fn environment_has_only_the_session_credential_and_quiet_switches() {
        let plan = LaunchPlan::new(
            "/bin/claude".into(),
            &config(PermissionMode::Bypass),
            &Credentials::OAuthToken("sk-ant-oat-x".into()),
            Some("http://127.0.0.1:9"),
            true,
        );
        let env = &plan.env;
        assert_eq!(env["HOME"], "/state/s/home");
        assert_eq!(env["CLAUDE_CONFIG_DIR"], "/state/s/home/.claude");
        assert_eq!(env["CLAUDE_CODE_OAUTH_TOKEN"], "sk-ant-oat-x");
        assert!(!env.contains_key("ANTHROPIC_API_KEY"));
        assert_eq!(env["ANTHROPIC_BASE_URL"], "http://127.0.0.1:9");
        assert_eq!(env["IS_SANDBOX"], "1");
        for (name, value) in QUIET_ENV {
            assert_eq!(env[*name], *value);
        }
        let not_root = LaunchPlan::new(
            "/bin/claude".into(),
            &config(PermissionMode::Bypass),
            &Credentials::None,
            None,
            false,
        );
        assert!(!not_root.env.contains_key("IS_SANDBOX"));
        assert!(!not_root.env.contains_key("ANTHROPIC_BASE_URL"));
    }

    #[test]
    fn credentials_prefer_the_session_token_then_the_key_then_oauth() {
        let none = ProviderEnv::default();
        assert_eq!(credentials(&none, None), Credentials::None);
        let oauth = none
            .clone()
            .with("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat-env");
        assert_eq!(
            credentials(&oauth, None),
            Credentials::OAuthToken("sk-ant-oat-env".into())
        );
        let both = oauth.with("ANTHROPIC_API_KEY", "sk-ant-key");
        assert_eq!(
            credentials(&both, None),
            Credentials::ApiKey("sk-ant-key".into())
        );
        assert_eq!(
            credentials(&both, Some("sk-ant-oat-session")),
            Credentials::OAuthToken("sk-ant-oat-session".into())
        );
        assert_eq!(
            credentials(&both, Some("sk-ant-session")),
            Credentials::ApiKey("sk-ant-session".into())
        );
        // An empty token is no token.
        assert_eq!(
            credentials(&both, Some("")),
            Credentials::ApiKey("sk-ant-key".into())
        );
    }
}

/// How long a new process may take to answer `initialize`.
pub const START_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// How a Claude session's processes start: a new conversation with a chosen id
/// (`--session-id`), then `--resume` once a message reached it (or after a daemon
/// restart); every process answers `initialize` before it takes turns.
#[derive(Debug, Clone)]
pub struct ClaudeLaunch {
    plan: LaunchPlan,
    native_id: String,
}

impl ClaudeLaunch {
    /// Processes of `plan` for the conversation `native_id`.
    pub fn new(plan: LaunchPlan, native_id: String) -> Self {
        Self { plan, native_id }
    }
}

#[async_trait::async_trait]
impl ChildLaunch for ClaudeLaunch {
    type Protocol = Converter;

    fn spec(&self, protocol: &Converter, spawn: Spawn) -> ProcessSpec {
        let id = self.native_id.clone();
        let conversation = if spawn.restored || spawn.delivered > 0 {
            Conversation::Resume(id)
        } else {
            Conversation::New(id)
        };
        self.plan.spec(&conversation, protocol.permission_mode())
    }

    async fn handshake(
        &mut self,
        link: &Link<'_, Self>,
        _spawn: Spawn,
    ) -> Result<serde_json::Value, sandbox_universal::AgentError> {
        link.request(
            "initialize",
            serde_json::json!({"hooks": null}),
            START_TIMEOUT,
        )
        .await
    }

    fn native_id(&self) -> Option<String> {
        Some(self.native_id.clone())
    }
}
