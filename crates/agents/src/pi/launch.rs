//! What a Pi session's process is started with: `pi --mode rpc` in the session's cwd, a
//! private agent dir (`PI_CODING_AGENT_DIR`) holding a `models.json` that routes Pi's
//! built-in Anthropic and OpenAI providers to the daemon's endpoints (keys by variable
//! name: they are only in Pi's environment, never on disk), a settings file, the daemon's
//! permission extension, the MCP bridge extension and its private config when the session
//! has HTTP MCP servers ([`super::mcp`]), and Pi's own session files (`--session-dir`,
//! resumed with `--session <id>`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use sandbox_universal::{PermissionMode, SessionPolicy, SystemPromptMode, ToolName};
use serde_json::{Value, json};

use super::convert::Converter;
use super::mcp;
use crate::ProviderEnv;
use crate::kernel::{ChildLaunch, Link, Spawn};
use crate::process::{ProcessSpec, base_env};

/// The title of the extension's permission confirms.
pub const PERMISSION_MARKER: &str = "sandbox-daemon: permission";
/// The variables Pi reads the keys from (named in `models.json`).
const ANTHROPIC_KEY_VAR: &str = "SANDBOX_PI_ANTHROPIC_KEY";
const OPENAI_KEY_VAR: &str = "SANDBOX_PI_OPENAI_KEY";

/// Pi's tools that only read.
const READ_ONLY: &[&str] = &["read", "grep", "find", "ls"];
/// Pi's tools that change files.
const EDITS: &[&str] = &["write", "edit"];

/// A session's private Pi files (under its state dir).
#[derive(Debug, Clone)]
pub struct PiDirs {
    /// HOME.
    pub home: PathBuf,
    /// `PI_CODING_AGENT_DIR`: `models.json`, `settings.json`, the extension.
    pub agent: PathBuf,
    /// Pi's session files.
    pub sessions: PathBuf,
}

impl PiDirs {
    /// The directories under `state_dir`.
    pub fn new(state_dir: &Path) -> Self {
        Self {
            home: state_dir.join("home"),
            agent: state_dir.join("pi-agent"),
            sessions: state_dir.join("pi-sessions"),
        }
    }

    /// The permission extension's file.
    pub fn extension(&self) -> PathBuf {
        self.agent.join("sandbox-daemon-permissions.js")
    }

    /// The MCP bridge extension's file.
    pub fn mcp_extension(&self) -> PathBuf {
        self.agent.join("sandbox-daemon-mcp.js")
    }

    /// The MCP bridge's config (the session's HTTP MCP servers with their headers: 0600).
    pub fn mcp_config(&self) -> PathBuf {
        self.agent.join("sandbox-daemon-mcp.json")
    }

    /// The file holding the session's `systemPrompt` (Pi reads a path given to its prompt
    /// flags as the prompt).
    pub fn system_prompt(&self) -> PathBuf {
        self.agent.join("sandbox-daemon-system-prompt.md")
    }

    /// Writes the session's `systemPrompt`, if it has one, and the MCP bridge with its
    /// config (0600: it holds the servers' headers), if the session has servers to bridge.
    pub fn write_policy(&self, policy: &SessionPolicy) -> std::io::Result<()> {
        if let Some(prompt) = &policy.system_prompt {
            std::fs::write(self.system_prompt(), prompt)?;
        }
        if let Some(config) = mcp::config(policy, tool_list(policy).as_deref()) {
            mcp::write_private(&self.mcp_config(), &config.to_string())?;
            std::fs::write(self.mcp_extension(), mcp::EXTENSION)?;
        }
        Ok(())
    }

    /// Creates the directories and writes the models, settings and the extension of `mode`.
    pub fn write(&self, env: &ProviderEnv, mode: PermissionMode) -> std::io::Result<()> {
        for dir in [&self.home, &self.agent, &self.sessions] {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(
            self.agent.join("models.json"),
            serde_json::to_string_pretty(&models(env)).expect("serializes"),
        )?;
        std::fs::write(
            self.agent.join("settings.json"),
            serde_json::to_string_pretty(&settings()).expect("serializes"),
        )?;
        std::fs::write(self.extension(), extension(mode))
    }
}

/// `models.json`: Pi's built-in providers routed to the daemon's endpoints (their models
/// stay as Pi knows them), keys by variable name.
pub fn models(env: &ProviderEnv) -> Value {
    let mut providers = serde_json::Map::new();
    // Always: a session's `token` is an Anthropic key even when the daemon has none.
    let mut anthropic = json!({"apiKey": ANTHROPIC_KEY_VAR});
    if let Some(url) = env.get("ANTHROPIC_BASE_URL") {
        anthropic["baseUrl"] = json!(url.trim_end_matches('/'));
    }
    providers.insert("anthropic".into(), anthropic);
    if env.get("OPENAI_API_KEY").is_some() || env.get("OPENAI_BASE_URL").is_some() {
        let mut openai = json!({"apiKey": OPENAI_KEY_VAR});
        if let Some(url) = env.get("OPENAI_BASE_URL") {
            openai["baseUrl"] = json!(url.trim_end_matches('/'));
        }
        providers.insert("openai".into(), openai);
    }
    json!({ "providers": providers })
}

/// `settings.json`: no install telemetry, no agent-level retries (the daemon reports
/// failures as they are).
pub fn settings() -> Value {
    json!({"retry": {"enabled": false}, "enableInstallTelemetry": false})
}

/// The extension with the rules of `mode`: read-only tools run; `default` asks for the
/// rest, `acceptEdits` lets edits run, `plan` forbids edits and commands; `bypass` runs
/// everything (the extension is not loaded at all).
pub fn extension(mode: PermissionMode) -> String {
    let mut rules = serde_json::Map::new();
    for tool in READ_ONLY {
        rules.insert((*tool).into(), json!("allow"));
    }
    match mode {
        PermissionMode::AcceptEdits => {
            for tool in EDITS {
                rules.insert((*tool).into(), json!("allow"));
            }
        }
        PermissionMode::Plan => {
            for tool in EDITS.iter().chain(&["bash"]) {
                rules.insert((*tool).into(), json!("deny"));
            }
        }
        PermissionMode::Default | PermissionMode::Bypass => {}
    }
    rules.insert(
        "mode".into(),
        serde_json::to_value(mode).expect("serializes"),
    );
    include_str!("permission.js").replace("__RULES__", &Value::Object(rules).to_string())
}

/// Pi's built-in tools for each universal name (Pi's `find` and `ls` list files: `glob`).
const TOOLS: &[(ToolName, &[&str])] = &[
    (ToolName::Read, &["read"]),
    (ToolName::Write, &["write"]),
    (ToolName::Edit, &["edit"]),
    (ToolName::Shell, &["bash"]),
    (ToolName::Grep, &["grep"]),
    (ToolName::Glob, &["find", "ls"]),
];

/// The tools Pi runs with by default.
const DEFAULT_TOOLS: &[&str] = &["read", "bash", "edit", "write"];

/// Pi's `--tools` allow-list for a session's `tools`, or `None` to keep Pi's defaults.
/// Without an `allow` list Pi's default tools stay, less the denied; an `allow` list may
/// also turn on Pi's optional tools (`grep`, `find`, `ls`).
pub fn tool_list(policy: &SessionPolicy) -> Option<Vec<&'static str>> {
    if policy.tools.is_open() {
        return None;
    }
    let named = |tool: &ToolName| {
        policy
            .tools
            .allow
            .iter()
            .flatten()
            .any(|n| n.parse::<ToolName>().is_ok_and(|n| &n == tool))
    };
    let mut tools = Vec::new();
    for (tool, names) in TOOLS {
        for name in *names {
            let wanted = DEFAULT_TOOLS.contains(name) || named(tool);
            if wanted && policy.tools.permits(tool) {
                tools.push(*name);
            }
        }
    }
    Some(tools)
}

/// The policy's flags: the system prompt (a file, appended or replacing Pi's), the MCP
/// bridge, and the tool list — which the bridge applies itself when it is loaded (Pi's
/// `--tools` would drop its tools).
fn policy_args(dirs: &PiDirs, policy: &SessionPolicy) -> Vec<OsString> {
    let mut args = Vec::new();
    if policy.system_prompt.is_some() {
        args.push(match policy.system_prompt_mode {
            SystemPromptMode::Append => "--append-system-prompt".into(),
            SystemPromptMode::Replace => "--system-prompt".into(),
        });
        args.push(dirs.system_prompt().into_os_string());
    }
    if mcp::bridged(policy) {
        args.push("--extension".into());
        args.push(dirs.mcp_extension().into_os_string());
        return args;
    }
    match tool_list(policy) {
        Some(tools) if tools.is_empty() => args.push("--no-tools".into()),
        Some(tools) => {
            args.push("--tools".into());
            args.push(tools.join(",").into());
        }
        None => {}
    }
    args
}

/// `pi --mode rpc` for a session: `session` resumes Pi's own session file.
pub fn args(
    dirs: &PiDirs,
    mode: PermissionMode,
    model: Option<&str>,
    thinking: Option<&str>,
    session: Option<&str>,
    policy: &SessionPolicy,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = ["--mode", "rpc", "--no-extensions"]
        .map(OsString::from)
        .to_vec();
    if mode != PermissionMode::Bypass {
        args.push("--extension".into());
        args.push(dirs.extension().into_os_string());
    }
    args.push("--session-dir".into());
    args.push(dirs.sessions.clone().into_os_string());
    if let Some(session) = session {
        args.push("--session".into());
        args.push(session.into());
    }
    if let Some(model) = model {
        args.push("--model".into());
        args.push(model.into());
    }
    if let Some(thinking) = thinking {
        args.push("--thinking".into());
        args.push(thinking.into());
    }
    args.extend(policy_args(dirs, policy));
    args
}

/// The process spec: the session's cwd, a private HOME and agent dir, Pi offline and quiet,
/// the keys (the session's `token` replaces the key of its model's provider) in its
/// environment only, the session's `env`, and the MCP bridge's config file.
pub fn spec(
    program: PathBuf,
    cwd: &Path,
    dirs: &PiDirs,
    env: &ProviderEnv,
    token: Option<&str>,
    args: Vec<OsString>,
    policy: &SessionPolicy,
) -> ProcessSpec {
    let mut vars: BTreeMap<String, String> = base_env(&dirs.home);
    vars.insert(
        "PI_CODING_AGENT_DIR".into(),
        dirs.agent.display().to_string(),
    );
    for (name, value) in [
        ("PI_OFFLINE", "1"),
        ("PI_TELEMETRY", "0"),
        ("PI_SKIP_VERSION_CHECK", "1"),
    ] {
        vars.insert(name.into(), value.into());
    }
    if let Some(key) = env.credential(token, &["ANTHROPIC_API_KEY"]) {
        vars.insert(ANTHROPIC_KEY_VAR.into(), key);
    }
    if let Some(key) = env.get("OPENAI_API_KEY") {
        vars.insert(OPENAI_KEY_VAR.into(), key.into());
    }
    crate::process::add_session_env(&mut vars, &policy.env);
    vars.extend(mcp::env(policy, &dirs.mcp_config()));
    ProcessSpec {
        program,
        args,
        cwd: cwd.to_path_buf(),
        env: vars,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_named_not_written_and_modes_become_rules() {
        let env = ProviderEnv::default()
            .with("ANTHROPIC_API_KEY", "sk-ant-1")
            .with("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/");
        let models = models(&env);
        assert_eq!(
            models["providers"]["anthropic"]["apiKey"],
            ANTHROPIC_KEY_VAR
        );
        assert_eq!(
            models["providers"]["anthropic"]["baseUrl"],
            "http://127.0.0.1:9"
        );
        assert!(!models.to_string().contains("sk-ant-1"));
        assert!(models["providers"].get("openai").is_none());
        let bare = super::models(&ProviderEnv::default());
        assert_eq!(
            bare["providers"]["anthropic"]["apiKey"], ANTHROPIC_KEY_VAR,
            "for a token"
        );
        let plan = extension(PermissionMode::Plan);
        assert!(plan.contains(r#""bash":"deny""#), "{plan}");
        assert!(extension(PermissionMode::AcceptEdits).contains(r#""write":"allow""#));
        assert!(!extension(PermissionMode::Default).contains("__RULES__"));
        let dirs = PiDirs::new(Path::new("/s"));
        let none = SessionPolicy::default();
        let bypass = args(&dirs, PermissionMode::Bypass, None, None, None, &none);
        assert!(!bypass.iter().any(|a| a == "--extension"));
        let resumed = args(
            &dirs,
            PermissionMode::Default,
            Some("anthropic/x"),
            Some("high"),
            Some("abc"),
            &none,
        );
        assert!(
            resumed
                .windows(2)
                .any(|w| w[0] == "--session" && w[1] == "abc")
        );
        let spec = spec(
            "/bin/pi".into(),
            Path::new("/w"),
            &dirs,
            &env,
            Some("sk-own"),
            resumed,
            &none,
        );
        assert_eq!(spec.env[ANTHROPIC_KEY_VAR], "sk-own");
        assert_eq!(spec.env["PI_CODING_AGENT_DIR"], "/s/pi-agent");
    }

    #[test]
    fn the_policy_becomes_a_prompt_file_and_a_tool_list() {
        let policy = |json: Value| -> SessionPolicy { serde_json::from_value(json).unwrap() };
        assert_eq!(tool_list(&SessionPolicy::default()), None);
        let deny = policy(json!({"tools": {"deny": ["shell", "write"]}}));
        assert_eq!(tool_list(&deny), Some(vec!["read", "edit"]));
        let allow = policy(json!({"tools": {"allow": ["read", "grep", "glob"]}}));
        assert_eq!(tool_list(&allow), Some(vec!["read", "grep", "find", "ls"]));
        let none = policy(json!({"tools": {"allow": []}}));
        let dirs = PiDirs::new(Path::new("/s"));
        let args = policy_args(&dirs, &none);
        assert_eq!(args, vec![OsString::from("--no-tools")]);
        let prompt = policy(json!({"systemPrompt": "be brief", "systemPromptMode": "replace"}));
        let args = policy_args(&dirs, &prompt);
        assert_eq!(args[0], "--system-prompt");
        assert_eq!(args[1], dirs.system_prompt().as_os_str());
        assert!(
            !args.iter().any(|a| a == "be brief"),
            "the prompt is a file"
        );
        let env = policy(json!({"env": {"MY_FLAG": "1", "HOME": "/elsewhere"}}));
        let spec = spec(
            "/bin/pi".into(),
            Path::new("/w"),
            &dirs,
            &ProviderEnv::default(),
            None,
            Vec::new(),
            &env,
        );
        assert_eq!(spec.env["MY_FLAG"], "1");
        assert_eq!(
            spec.env["HOME"], "/s/home",
            "the daemon's own variables win"
        );
    }

    #[test]
    fn http_mcp_servers_load_the_bridge_with_a_private_config_and_no_secret_on_argv() {
        use std::os::unix::fs::MetadataExt;
        let policy = |json: Value| -> SessionPolicy { serde_json::from_value(json).unwrap() };
        let state = tempfile::tempdir().unwrap();
        let dirs = PiDirs::new(state.path());
        let env = ProviderEnv::default();
        let p = policy(json!({
            "mcpServers": {"ht": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                                  "headers": {"Authorization": "Bearer mcp-secret-1"}}},
            "tools": {"deny": ["shell", "mcp:ht/delete_everything"]},
            "env": {"SANDBOX_PI_MCP_CONFIG": "/elsewhere"},
        }));
        dirs.write(&env, PermissionMode::Default).unwrap();
        dirs.write_policy(&p).unwrap();
        let config = std::fs::read_to_string(dirs.mcp_config()).unwrap();
        assert_eq!(
            std::fs::metadata(dirs.mcp_config()).unwrap().mode() & 0o777,
            0o600
        );
        let config: Value = serde_json::from_str(&config).unwrap();
        assert_eq!(
            config["servers"]["ht"]["headers"]["Authorization"],
            "Bearer mcp-secret-1"
        );
        assert_eq!(
            config["servers"]["ht"]["deny"],
            json!(["delete_everything"])
        );
        assert_eq!(config["builtinTools"], json!(["read", "write", "edit"]));
        assert_eq!(
            std::fs::read_to_string(dirs.mcp_extension()).unwrap(),
            mcp::EXTENSION
        );
        let argv = args(&dirs, PermissionMode::Default, None, None, None, &p);
        let extensions: Vec<_> = argv
            .windows(2)
            .filter(|w| w[0] == "--extension")
            .map(|w| w[1].clone())
            .collect();
        assert_eq!(
            extensions,
            [
                dirs.extension().into_os_string(),
                dirs.mcp_extension().into_os_string()
            ]
        );
        assert!(
            !argv.iter().any(|a| a == "--tools" || a == "--no-tools"),
            "the bridge sets the active tools: {argv:?}"
        );
        let bridged = spec(
            "/bin/pi".into(),
            Path::new("/w"),
            &dirs,
            &env,
            None,
            argv.clone(),
            &p,
        );
        assert_eq!(
            bridged.env[mcp::CONFIG_VAR],
            dirs.mcp_config().display().to_string(),
            "the daemon's, not the session's"
        );
        let everything = format!("{argv:?} {:?}", bridged.env);
        assert!(!everything.contains("mcp-secret-1"), "{everything}");

        // Without HTTP servers: no bridge, no variable, Pi's own tool list.
        let stdio = policy(json!({
            "mcpServers": {"st": {"type": "stdio", "command": "python3"}},
            "tools": {"deny": ["shell"]},
        }));
        for p in [SessionPolicy::default(), stdio] {
            let argv = args(&dirs, PermissionMode::Bypass, None, None, None, &p);
            assert!(!argv.iter().any(|a| a == "--extension"), "{argv:?}");
            let plain = spec(
                "/bin/pi".into(),
                Path::new("/w"),
                &dirs,
                &env,
                None,
                argv,
                &p,
            );
            assert!(!plain.env.contains_key(mcp::CONFIG_VAR));
        }
    }
}

/// What a session's Pi processes are started with; each resumes Pi's own session file
/// (`--session <id>`) once its id is known.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Pi's executable.
    pub program: PathBuf,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The session's private files.
    pub dirs: PiDirs,
    /// The daemon's provider environment.
    pub env: ProviderEnv,
    /// The session's credential override.
    pub token: Option<String>,
    /// The permission mode (the extension's rules).
    pub mode: PermissionMode,
    /// `provider/model`, when the session names one.
    pub model: Option<String>,
    /// Pi's thinking level (the session's `variant`).
    pub thinking: Option<String>,
    /// Pi's session id, once known (restored sessions know it up front).
    pub session: Option<String>,
    /// The session's policy (its prompt file is written by [`PiDirs::write_policy`]).
    pub policy: SessionPolicy,
}

/// How long a command of the daemon's own (`get_state`, `get_available_models`) may take.
pub const REQUEST_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

#[async_trait::async_trait]
impl ChildLaunch for Launch {
    type Protocol = Converter;

    fn spec(&self, _protocol: &Converter, _spawn: Spawn) -> ProcessSpec {
        let args = args(
            &self.dirs,
            self.mode,
            self.model.as_deref(),
            self.thinking.as_deref(),
            self.session.as_deref(),
            &self.policy,
        );
        spec(
            self.program.clone(),
            &self.cwd,
            &self.dirs,
            &self.env,
            self.token.as_deref(),
            args,
            &self.policy,
        )
    }

    /// Learns Pi's session id (`get_state`) when it is not known yet.
    async fn handshake(
        &mut self,
        link: &Link<'_, Self>,
        _spawn: Spawn,
    ) -> Result<Value, sandbox_universal::AgentError> {
        if self.session.is_some() {
            return Ok(Value::Null);
        }
        let state = link.request("get_state", json!({}), REQUEST_LIMIT).await?;
        self.session = state["data"]["sessionId"].as_str().map(str::to_string);
        Ok(state)
    }

    fn native_id(&self) -> Option<String> {
        self.session.clone()
    }

    fn request_timeout(&self) -> std::time::Duration {
        REQUEST_LIMIT
    }
}
