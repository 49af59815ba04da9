//! Offline environments for the real agent CLIs, as the daemon's own drivers set them up:
//! [`driver_context`] pins the agent's binary and gives the drivers the provider
//! environment the daemon would have with the fake provider ([`provider_env`]);
//! [`session_config`] gives a session its working directory and a state directory under
//! the scenario's [`Sandbox`] (so the agent's private HOME is `<root>/home`). The drivers
//! then write each agent's configuration (telemetry, auto-update and non-essential traffic
//! off, the provider pointed at the fake) exactly as for a daemon session. One module per
//! agent; read them as the reference of what each agent needs.
//!
//! [`claude::launch`] and [`codex::launch`] describe the same processes as [`Launch`]es
//! for the native drivers the daemon's `real_turn` bench compares the daemon with; Amp,
//! which cannot run offline, is launched by hand ([`amp::launch`]).

pub mod amp;
pub mod claude;
pub mod codex;
pub mod opencode;
pub mod pi;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use sandbox_agents::kernel::Tap;
use sandbox_agents::locate::BinaryLocator;
use sandbox_agents::{DriverContext, ProviderEnv, SessionConfig};
use sandbox_universal::PermissionMode;

use crate::agents::Agent;

/// What the daemon's drivers share, set up for `agent` offline: its binary pinned to `exe`
/// (no install dir, no `PATH` search), the provider environment of [`provider_env`], and
/// `sandbox.root` as the daemon's data dir (OpenCode's servers live under
/// `<root>/opencode/<key>`).
pub fn driver_context(
    agent: Agent,
    exe: &Path,
    sandbox: &Sandbox,
    provider_url: &str,
) -> DriverContext {
    DriverContext {
        locator: BinaryLocator::new(
            HashMap::from([(agent.agent_id(), exe.to_owned())]),
            None,
            None,
        ),
        provider_env: provider_env(agent, provider_url),
        data_dir: sandbox.root.clone(),
        executable: std::env::current_exe().unwrap_or_default(),
    }
}

/// The daemon's provider environment for `agent` with the fake provider at `provider_url`:
/// Claude Code, OpenCode and Pi on the Anthropic Messages API, Codex on the OpenAI
/// Responses API; each with a fake key.
pub fn provider_env(agent: Agent, provider_url: &str) -> ProviderEnv {
    match agent {
        Agent::Claude => claude::provider_env(provider_url),
        Agent::Codex => codex::provider_env(provider_url),
        Agent::OpenCode => opencode::provider_env(provider_url),
        Agent::Pi => pi::provider_env(provider_url),
        Agent::Amp => ProviderEnv::default(),
    }
}

/// A session of `agent` in `mode` on `model` (none: the agent's default), working in
/// `sandbox.work`, its native messages tapped by `tap`. Its state directory makes the
/// agent's HOME `sandbox.home`: Codex's HOME is its state dir, Claude Code's and Pi's are
/// `<state dir>/home` (OpenCode's servers keep theirs under the data dir).
pub fn session_config(
    agent: Agent,
    sandbox: &Sandbox,
    mode: PermissionMode,
    model: Option<String>,
    tap: Option<Tap>,
) -> SessionConfig {
    SessionConfig {
        session_id: "testkit".into(),
        agent_mode: None,
        permission_mode: mode,
        model,
        variant: None,
        token: None,
        validate_token: false,
        dangerously_skip_permissions: false,
        agent_version: None,
        cwd: sandbox.work.clone(),
        state_dir: match agent {
            Agent::Codex => sandbox.home.clone(),
            _ => sandbox.root.clone(),
        },
        tap,
        policy: Default::default(),
        login: None,
    }
}

/// The directories of one agent run: `<root>/home` (the agent's private HOME),
/// `<root>/work` (its working directory) and `<root>/tmp` (TMPDIR of a [`Launch`]; the
/// daemon's drivers pass the daemon's own TMPDIR on, as for any session).
#[derive(Clone, Debug)]
pub struct Sandbox {
    /// Parent of the other directories.
    pub root: PathBuf,
    /// The isolated HOME.
    pub home: PathBuf,
    /// The agent's working directory.
    pub work: PathBuf,
    /// TMPDIR.
    pub tmp: PathBuf,
}

impl Sandbox {
    /// Creates the directories under `root` (which may already exist).
    pub fn create(root: &Path) -> std::io::Result<Self> {
        let sandbox = Self {
            root: root.to_owned(),
            home: root.join("home"),
            work: root.join("work"),
            tmp: root.join("tmp"),
        };
        for dir in [&sandbox.home, &sandbox.work, &sandbox.tmp] {
            std::fs::create_dir_all(dir)?;
        }
        Ok(sandbox)
    }

    /// The environment every agent gets: PATH, HOME, XDG dirs under HOME, TMPDIR, a
    /// plain terminal. Nothing else of the caller's environment leaks in.
    pub fn base_env(&self) -> BTreeMap<String, String> {
        let home = self.home.display().to_string();
        let path =
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned());
        BTreeMap::from([
            ("PATH".to_owned(), path),
            ("HOME".to_owned(), home.clone()),
            ("USER".to_owned(), "tester".to_owned()),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ("TERM".to_owned(), "dumb".to_owned()),
            ("NO_COLOR".to_owned(), "1".to_owned()),
            ("TMPDIR".to_owned(), self.tmp.display().to_string()),
            ("XDG_CONFIG_HOME".to_owned(), format!("{home}/.config")),
            ("XDG_DATA_HOME".to_owned(), format!("{home}/.local/share")),
            ("XDG_CACHE_HOME".to_owned(), format!("{home}/.cache")),
            ("XDG_STATE_HOME".to_owned(), format!("{home}/.local/state")),
        ])
    }
}

/// A ready-to-spawn agent: program, arguments, complete environment, working directory.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The whole environment (the caller's is cleared).
    pub env: BTreeMap<String, String>,
    /// Working directory.
    pub cwd: PathBuf,
}

impl Launch {
    /// A launch of `program` in the sandbox's work directory with its base environment.
    pub fn new(program: &Path, sandbox: &Sandbox) -> Self {
        Self {
            program: program.to_owned(),
            args: Vec::new(),
            env: sandbox.base_env(),
            cwd: sandbox.work.clone(),
        }
    }

    /// The launch of a process the agents crate describes (the daemon's own arguments and
    /// environment), with TMPDIR moved into the sandbox.
    pub fn from_spec(spec: sandbox_agents::process::ProcessSpec, sandbox: &Sandbox) -> Self {
        let mut env = spec.env;
        env.insert("TMPDIR".to_owned(), sandbox.tmp.display().to_string());
        Self {
            program: spec.program,
            args: spec
                .args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            env,
            cwd: spec.cwd,
        }
    }

    /// Appends arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets environment variables.
    pub fn envs<I: IntoIterator<Item = (K, V)>, K: Into<String>, V: Into<String>>(
        mut self,
        vars: I,
    ) -> Self {
        self.env
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// The launch as the agents crate spawns it ([`sandbox_agents::process::AgentProcess`]:
    /// exactly this environment, its own process group, piped stdio).
    pub fn spec(&self) -> sandbox_agents::process::ProcessSpec {
        sandbox_agents::process::ProcessSpec {
            program: self.program.clone(),
            args: self.args.iter().map(Into::into).collect(),
            cwd: self.cwd.clone(),
            env: self.env.clone(),
        }
    }

    /// The launch as a command (piped stdio, its own process group).
    pub fn command(&self) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.args)
            .env_clear()
            .envs(&self.env)
            .current_dir(&self.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        cmd
    }
}

/// Writes `contents` to `path`, creating parent directories.
fn write_file(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, contents)
}
