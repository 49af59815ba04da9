//! What a Codex session is configured with and how its app-servers start: the private
//! `CODEX_HOME` and its `config.toml`, the process environment, the approval/sandbox
//! policy of each permission mode, the settings every thread and turn carries, and the
//! handshake of each new process ([`CodexLaunch`]).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sandbox_universal::{AgentError, PermissionMode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::convert::Converter;
use super::native::{InitializeResult, ThreadResult, method};
use super::policy::{self, Instructions, SECRET_ENV_PREFIX};
use crate::kernel::{ChildLaunch, Link, Spawn};
use crate::process::{ProcessSpec, add_session_env, base_env};
use crate::{SessionConfig, UserMessage, UserPart};

/// The id of the model provider the daemon writes into `config.toml`.
pub const PROVIDER_ID: &str = "sandbox_daemon";

/// The OpenAI API, when `OPENAI_BASE_URL` is not set.
pub const DEFAULT_OPENAI_BASE_URL: &str = crate::validate::OPENAI_DEFAULT_BASE_URL;

/// The variable naming where Codex refreshes a ChatGPT login (its own; the daemon passes
/// it on from its environment to sessions on a stored login).
pub const REFRESH_URL_VAR: &str = "CODEX_REFRESH_TOKEN_URL_OVERRIDE";

/// Where Codex keeps the login it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthStore {
    /// In the app-server's memory only: the key given with `account/login/start`.
    Ephemeral,
    /// `auth.json` in `CODEX_HOME`: a stored login seeded there, which Codex refreshes
    /// in place.
    File,
}

impl AuthStore {
    fn as_str(self) -> &'static str {
        match self {
            Self::Ephemeral => "ephemeral",
            Self::File => "file",
        }
    }
}

/// `CODEX_HOME` inside a session's state directory.
pub fn codex_home(state_dir: &Path) -> PathBuf {
    state_dir.join(".codex")
}

/// The `config.toml` of a session.
///
/// - A custom provider speaking the Responses API over HTTP(S) at `base_url`; the
///   built-in `openai` provider ignores `OPENAI_BASE_URL` and first tries a websocket
///   (about 11 s lost per turn). `requires_openai_auth` makes it use the key given with
///   `account/login/start`, and `cli_auth_credentials_store = "ephemeral"` keeps that key
///   in the app-server's memory only: it is never written to disk nor put in an
///   environment variable a shell command could read. A session on a stored login has
///   it seeded as `auth.json` instead, and `"file"` makes Codex read (and refresh) it
///   there.
/// - Features that reach out on their own are off: plugin and app sync (git and GitHub
///   calls, ~5 s at exit), remote plugins, connector suggestions, MCP dependency
///   installs; analytics and the update check too. Thread goals are off: the daemon has
///   no API for them.
/// - `default_mode_request_user_input` lets the model ask questions outside Plan mode;
///   the warning about it being unstable is silenced.
/// - The commands the model runs do not inherit the variables holding the session's MCP
///   secrets ([`policy::secret_env`]).
pub fn config_toml(base_url: Option<&str>, auth: AuthStore) -> String {
    // Without a base URL (a ChatGPT login, no `OPENAI_BASE_URL`) Codex's own provider
    // talks to its backend as it does for its own login.
    let (provider, table) = match base_url {
        Some(url) => (
            PROVIDER_ID,
            format!(
                r#"
[model_providers.{PROVIDER_ID}]
name = "OpenAI (sandbox-daemon)"
base_url = {url}
wire_api = "responses"
requires_openai_auth = true
"#,
                url = toml_string(url),
            ),
        ),
        None => ("openai", String::new()),
    };
    format!(
        r#"# Written by sandbox-daemon for one session.
model_provider = "{provider}"
cli_auth_credentials_store = "{auth}"
check_for_update_on_startup = false
suppress_unstable_features_warning = true
{table}
[analytics]
enabled = false

[shell_environment_policy]
exclude = ["{SECRET_ENV_PREFIX}*"]

[features]
plugins = false
apps = false
remote_plugin = false
tool_suggest = false
skill_mcp_dependency_install = false
goals = false
default_mode_request_user_input = true
"#,
        auth = auth.as_str(),
    )
}

/// A TOML basic string (JSON string escapes are valid TOML escapes).
fn toml_string(value: &str) -> String {
    serde_json::to_string(value).expect("strings serialize")
}

/// Creates `CODEX_HOME` under `state_dir` with its `config.toml`.
pub fn write_codex_home(
    state_dir: &Path,
    base_url: Option<&str>,
    auth: AuthStore,
) -> std::io::Result<PathBuf> {
    let home = codex_home(state_dir);
    std::fs::create_dir_all(&home)?;
    std::fs::write(home.join("config.toml"), config_toml(base_url, auth))?;
    Ok(home)
}

/// The app-server's environment: the allow-listed variables, `HOME` = the state dir,
/// `CODEX_HOME`, and quiet logs. No credential: the key goes through the login request.
pub fn environment(state_dir: &Path) -> BTreeMap<String, String> {
    let mut env = base_env(state_dir);
    env.insert(
        "CODEX_HOME".into(),
        codex_home(state_dir).display().to_string(),
    );
    env.insert("RUST_LOG".into(), "warn".into());
    env
}

/// The app-server's environment of a session: [`environment`], the variables holding its
/// MCP servers' secrets, and its `env` (which cannot override the daemon's).
pub fn session_environment(session: &SessionConfig) -> BTreeMap<String, String> {
    let mut env = environment(&session.state_dir);
    env.extend(policy::secret_env(&session.policy));
    add_session_env(&mut env, &session.policy.env);
    env
}

/// The `codex app-server` process of a session: in its working directory, with
/// [`session_environment`] (write `CODEX_HOME` first with [`write_codex_home`]). The
/// arguments never carry the session's policy: its secrets are in the environment only.
pub fn app_server(program: PathBuf, session: &SessionConfig) -> ProcessSpec {
    ProcessSpec {
        program,
        args: vec![OsString::from("app-server")],
        cwd: session.cwd.clone(),
        env: session_environment(session),
    }
}

/// How a permission mode is enforced by Codex.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `approvalPolicy` (`untrusted`: every command that is not known to be read-only and
    /// every patch asks; `never`: nothing asks).
    pub approval: &'static str,
    /// `sandboxPolicy` of every turn.
    pub sandbox: Value,
    /// Patches inside the working directory are approved by the driver without asking.
    pub auto_accept_edits: bool,
}

/// The policy of a permission mode.
///
/// The daemon itself runs inside a sandbox, so `default` and `acceptEdits` use Codex's
/// `externalSandbox` policy: Codex asks before acting but does not wrap commands in its
/// own bubblewrap/seccomp sandbox (which needs user namespaces that many containers
/// forbid). `plan` is enforced by Codex's `readOnly` sandbox with nothing to approve;
/// `bypass` runs everything unsandboxed without asking.
pub fn policy(mode: PermissionMode) -> Policy {
    let external = json!({"type": "externalSandbox", "networkAccess": "enabled"});
    match mode {
        PermissionMode::Default => Policy {
            approval: "untrusted",
            sandbox: external,
            auto_accept_edits: false,
        },
        PermissionMode::AcceptEdits => Policy {
            approval: "untrusted",
            sandbox: external,
            auto_accept_edits: true,
        },
        PermissionMode::Plan => Policy {
            approval: "never",
            sandbox: json!({"type": "readOnly"}),
            auto_accept_edits: false,
        },
        PermissionMode::Bypass => Policy {
            approval: "never",
            sandbox: json!({"type": "dangerFullAccess"}),
            auto_accept_edits: false,
        },
    }
}

/// What every thread and turn of a session is started with besides the input.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnSettings {
    /// Approval and sandbox policy of the permission mode.
    pub policy: Policy,
    /// Reasoning effort (the session's `variant`).
    pub effort: Option<String>,
    /// Working directory.
    pub cwd: String,
    /// Model override.
    pub model: Option<String>,
    /// The session's instructions.
    pub instructions: Instructions,
    /// The thread's `config` (removed tools, MCP servers), sent again on every resume.
    pub config: Option<Value>,
}

impl TurnSettings {
    /// The settings of a session: its permission mode's policy, variant, cwd and model.
    pub fn new(session: &SessionConfig) -> Self {
        Self {
            effort: session.variant.clone(),
            model: session.model.clone(),
            instructions: Instructions::of(&session.policy),
            config: policy::thread_config(&session.policy),
            ..Self::in_mode(session.permission_mode, session.cwd.display().to_string())
        }
    }

    /// The settings of permission mode `mode` in `cwd`, with Codex's default model and
    /// effort.
    pub fn in_mode(mode: PermissionMode, cwd: impl Into<String>) -> Self {
        Self {
            policy: policy(mode),
            effort: None,
            cwd: cwd.into(),
            model: None,
            instructions: Instructions::default(),
            config: None,
        }
    }

    /// `thread/start` params: also the session's instructions and thread config.
    pub fn thread_start(&self) -> Value {
        let mut params = json!({"cwd": self.cwd, "approvalPolicy": self.policy.approval});
        if let Some(model) = &self.model {
            params["model"] = json!(model);
        }
        self.instructions.apply(&mut params);
        if let Some(config) = &self.config {
            params["config"] = config.clone();
        }
        params
    }

    /// `thread/resume` params for `thread_id`.
    pub fn thread_resume(&self, thread_id: &str) -> Value {
        let mut params = self.thread_start();
        params["threadId"] = json!(thread_id);
        params
    }

    /// `turn/start` params: the message's parts in order, images as `data:` URLs.
    pub fn turn_start(&self, thread_id: &str, message: &UserMessage) -> Value {
        let input: Vec<Value> = message
            .parts
            .iter()
            .map(|part| match part {
                UserPart::Text(text) => json!({"type": "text", "text": text}),
                UserPart::Image(image) => json!({"type": "image", "url": image.data_url()}),
            })
            .collect();
        let mut params = json!({
            "threadId": thread_id,
            "input": input,
            "approvalPolicy": self.policy.approval,
            "sandboxPolicy": self.policy.sandbox,
        });
        if let Some(effort) = &self.effort {
            params["effort"] = json!(effort);
        }
        params
    }
}

/// How long each handshake request may take (a cold start of the 290 MB binary on a slow
/// disk is the slow part).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long `turn/start` and `turn/interrupt` may take to be acknowledged.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How a session's app-servers start: each is initialized (with the experimental API,
/// which `request_user_input` needs), told `initialized`, logged in with the session's
/// key, and then opens the session's thread — `thread/start` on the first process,
/// `thread/resume` on every later one and on a restored session's. A launch without
/// settings opens no thread (e.g. only to list models). Not `Debug`: it holds the key.
pub struct CodexLaunch {
    spec: ProcessSpec,
    api_key: Option<String>,
    settings: Option<TurnSettings>,
    thread_id: Option<String>,
    model: Option<String>,
    version: Option<String>,
}

impl CodexLaunch {
    /// The app-servers `spec` of a session with `settings`, logging in with `api_key`;
    /// `thread_id` is the thread to resume (a restored session), else one is started.
    pub fn session(
        spec: ProcessSpec,
        api_key: Option<String>,
        settings: TurnSettings,
        thread_id: Option<String>,
    ) -> Self {
        Self {
            settings: Some(settings),
            thread_id,
            ..Self::threadless(spec, api_key)
        }
    }

    /// An app-server `spec` that only answers requests: it opens no thread.
    pub fn threadless(spec: ProcessSpec, api_key: Option<String>) -> Self {
        Self {
            spec,
            api_key,
            settings: None,
            thread_id: None,
            model: None,
            version: None,
        }
    }

    /// The session's thread, once one was started (or the restored one).
    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref()
    }

    /// The model Codex reported for the thread when the last process opened it.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Codex's version, from the last process's `initialize` answer.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }
}

#[async_trait::async_trait]
impl ChildLaunch for CodexLaunch {
    type Protocol = Converter;

    fn spec(&self, _protocol: &Converter, _spawn: Spawn) -> ProcessSpec {
        self.spec.clone()
    }

    /// Returns the `thread/start` or `thread/resume` result (`null` without a thread).
    /// Whether to resume follows from the thread id: only a first process of a new
    /// session has none.
    async fn handshake(
        &mut self,
        link: &Link<'_, Self>,
        _spawn: Spawn,
    ) -> Result<Value, AgentError> {
        let client = json!({
            "clientInfo": {
                "name": "sandbox-daemon",
                "title": "sandbox-daemon",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "capabilities": {"experimentalApi": true},
        });
        let init = link
            .request(method::INITIALIZE, client, HANDSHAKE_TIMEOUT)
            .await?;
        self.version = InitializeResult::deserialize(&init)
            .ok()
            .and_then(|i| i.version());
        link.send(json!({"method": method::INITIALIZED})).await?;
        if let Some(key) = &self.api_key {
            let login = json!({"type": "apiKey", "apiKey": key});
            link.request(method::LOGIN, login, HANDSHAKE_TIMEOUT)
                .await
                .map_err(|e| AgentError::TokenError {
                    message: format!("codex did not accept the API key: {}", e.message()),
                })?;
        }
        let Some(settings) = &self.settings else {
            return Ok(Value::Null);
        };
        let (method, params) = match &self.thread_id {
            Some(id) => (method::THREAD_RESUME, settings.thread_resume(id)),
            None => (method::THREAD_START, settings.thread_start()),
        };
        let result = link.request(method, params, HANDSHAKE_TIMEOUT).await?;
        let thread = ThreadResult::deserialize(&result)
            .map_err(|e| AgentError::protocol(format!("unexpected `{method}` result: {e}")))?;
        match &self.thread_id {
            Some(id) => {
                tracing::info!(target: "codex", thread = %id, "resumed the thread in a new app-server")
            }
            None => self.thread_id = Some(thread.thread.id),
        }
        self.model = thread.model;
        Ok(result)
    }

    fn native_id(&self) -> Option<String> {
        self.thread_id.clone()
    }

    fn request_timeout(&self) -> Duration {
        REQUEST_TIMEOUT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_points_the_custom_provider_at_the_base_url_and_escapes_it() {
        let toml = config_toml(Some("http://127.0.0.1:9/v1\"x"), AuthStore::Ephemeral);
        assert!(toml.contains(r#"base_url = "http://127.0.0.1:9/v1\"x""#));
        assert!(toml.contains(r#"cli_auth_credentials_store = "ephemeral""#));
        let file = config_toml(None, AuthStore::File);
        assert!(file.contains(r#"cli_auth_credentials_store = "file""#));
        assert!(file.contains(r#"model_provider = "openai""#) && !file.contains("base_url"));
        assert!(toml.contains("requires_openai_auth = true"));
        assert!(toml.contains("plugins = false"));
        assert!(
            !toml.contains("env_key"),
            "the key never travels by environment"
        );
    }

    #[test]
    fn environment_has_codex_home_and_no_credentials() {
        let env = environment(Path::new("/state/s1"));
        assert_eq!(env["CODEX_HOME"], "/state/s1/.codex");
        assert_eq!(env["HOME"], "/state/s1");
        assert!(
            env.keys()
                .all(|k| !k.contains("KEY") && !k.contains("TOKEN"))
        );
    }

    fn session(policy: Value) -> SessionConfig {
        SessionConfig {
            session_id: "s".into(),
            agent_mode: None,
            permission_mode: PermissionMode::Default,
            model: None,
            variant: None,
            token: None,
            validate_token: false,
            dangerously_skip_permissions: false,
            agent_version: None,
            cwd: "/work".into(),
            state_dir: "/state/s".into(),
            tap: None,
            policy: serde_json::from_value(policy).unwrap(),
            login: None,
        }
    }

    /// The policy reaches Codex in `thread/start` and again in `thread/resume`; its
    /// secrets only in the app-server's environment, never in argv or a request.
    #[test]
    fn the_policy_goes_in_the_thread_requests_and_its_secrets_in_the_environment() {
        let session = session(json!({
            "systemPrompt": "Answer in French.",
            "tools": {"deny": ["shell"]},
            "env": {"TEAM": "blue", "PATH": "/evil"},
            "mcpServers": {
                "ht": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                       "headers": {"Authorization": "Bearer tok-secret"}},
                "st": {"type": "stdio", "command": "python3", "env": {"KEY": "env-secret"}},
            },
        }));
        let settings = TurnSettings::new(&session);
        let start = settings.thread_start();
        assert_eq!(start["developerInstructions"], "Answer in French.");
        assert_eq!(start["config"]["features"]["shell_tool"], false);
        assert_eq!(
            start["config"]["mcp_servers"]["ht"]["bearer_token_env_var"],
            "SANDBOX_MCP_0_BEARER"
        );
        let resume = settings.thread_resume("th");
        assert_eq!(resume["threadId"], "th");
        assert_eq!(resume["config"], start["config"]);
        assert_eq!(resume["developerInstructions"], "Answer in French.");

        let spec = app_server("/bin/codex".into(), &session);
        let shown = format!("{:?} {start} {resume}", spec.args);
        assert!(
            !shown.contains("tok-secret") && !shown.contains("env-secret"),
            "{shown}"
        );
        assert_eq!(spec.env["SANDBOX_MCP_0_BEARER"], "tok-secret");
        assert_eq!(spec.env["SANDBOX_MCP_1_0"], "env-secret");
        assert_eq!(spec.env["TEAM"], "blue");
        assert_ne!(
            spec.env["PATH"], "/evil",
            "the session's env cannot override the daemon's"
        );
        assert_eq!(spec.env["CODEX_HOME"], "/state/s/.codex");
        assert!(
            config_toml(Some("http://x"), AuthStore::Ephemeral)
                .contains(r#"exclude = ["SANDBOX_MCP_*"]"#)
        );
    }

    #[test]
    fn every_mode_has_a_policy() {
        assert_eq!(policy(PermissionMode::Default).approval, "untrusted");
        assert!(policy(PermissionMode::AcceptEdits).auto_accept_edits);
        assert_eq!(policy(PermissionMode::Plan).sandbox["type"], "readOnly");
        assert_eq!(policy(PermissionMode::Bypass).approval, "never");
    }
}
