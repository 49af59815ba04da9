//! What one Amp turn is started with: `amp [threads continue <id>] --execute --stream-json`
//! with the prompt on stdin, a private HOME, a settings file whose permission rules end with
//! `delegate` to the daemon's own executable (so the daemon asks the user), and the key in
//! the environment only (never on disk).
//!
//! Facts from the pinned binary (see README "Amp"): `--dangerously-allow-all` overrides
//! every rule, delegate included, so it is never used; local `ask` rules reject under
//! `--execute`; the delegate program is spawned with no arguments and Amp's environment,
//! gets the tool's input as JSON on stdin and `AGENT_TOOL_NAME` / `AMP_THREAD_ID`, and
//! answers with its exit code (0 allow, 1 ask = reject here, other = reject with stderr).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use sandbox_universal::PermissionMode;
use serde_json::{Value, json};

use crate::process::{ProcessSpec, base_env};

/// Amp's modes in the pinned version (`--mode`): they choose the model server-side.
pub const MODES: &[(&str, &str)] = &[
    (
        "low",
        "Fast and cheap: Amp's smaller models for quick, simple tasks",
    ),
    ("medium", "Amp's default: balanced models and tools"),
    ("high", "More capable models and more reasoning, slower"),
    (
        "ultra",
        "Amp's most capable models and tools (`create_file` / `edit_file`)",
    ),
];

/// The mode Amp uses when none is given.
pub const DEFAULT_MODE: &str = "medium";

/// Tools that only read or load: they never ask in any mode.
const READ_ONLY: &[&str] = &[
    "Read",
    "Grep",
    "glob",
    "finder",
    "look_at",
    "read_thread",
    "find_thread",
    "read_mcp_resource",
    "skill",
    "reload_skills",
    "shell_command_status",
];

/// Tools that change files.
const EDITS: &[&str] = &["apply_patch", "create_file", "edit_file", "undo_edit"];

/// Tools that run commands.
const COMMANDS: &[&str] = &["shell_command", "shell_command_kill", "Bash"];

/// The private files of a session's Amp (under the session's state dir).
#[derive(Debug, Clone)]
pub struct AmpDirs {
    /// HOME (Amp keeps its settings, threads cache and logs under it).
    pub home: PathBuf,
    /// The settings file the daemon writes (`--settings-file`).
    pub settings: PathBuf,
    /// The log file (`--log-file`).
    pub log: PathBuf,
}

impl AmpDirs {
    /// The files under `state_dir`.
    pub fn new(state_dir: &Path) -> Self {
        Self {
            home: state_dir.join("home"),
            settings: state_dir.join("amp-settings.json"),
            log: state_dir.join("amp.log"),
        }
    }

    /// Creates HOME and writes the settings (readable by the daemon's user alone: they may
    /// hold MCP secrets) of `mode`, delegating to `helper`, with the session's `policy`.
    pub fn write(
        &self,
        mode: PermissionMode,
        helper: &Path,
        policy: &sandbox_universal::SessionPolicy,
    ) -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        std::fs::create_dir_all(&self.home)?;
        let mut all = settings(mode, helper);
        if let Value::Object(map) = &mut all {
            map.extend(super::policy::settings(policy));
        }
        let text = serde_json::to_string_pretty(&all).expect("serializes");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&self.settings)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(text.as_bytes())
    }
}

/// The settings of a permission mode: rules first-match-wins, then a catch-all that hands
/// every other tool call to `helper` (the daemon), except in `bypass`, where everything is
/// allowed. Protected files (Amp's own list: `.ssh`, shell rc files, ...) go through the
/// same rules instead of ending the run (Amp cannot ask about them without a terminal).
pub fn settings(mode: PermissionMode, helper: &Path) -> Value {
    let rule = |tool: &str, action: &str| json!({"tool": tool, "action": action});
    let mut rules: Vec<Value> = Vec::new();
    match mode {
        PermissionMode::Bypass => rules.push(rule("*", "allow")),
        PermissionMode::Default | PermissionMode::AcceptEdits | PermissionMode::Plan => {
            rules.extend(READ_ONLY.iter().map(|t| rule(t, "allow")));
            match mode {
                PermissionMode::AcceptEdits => rules.extend(EDITS.iter().map(|t| rule(t, "allow"))),
                PermissionMode::Plan => {
                    for tool in EDITS.iter().chain(COMMANDS) {
                        rules.push(json!({
                            "tool": tool, "action": "reject",
                            "message": "plan mode: make no changes and run no commands; describe the plan instead"
                        }));
                    }
                }
                _ => {}
            }
            rules.push(
                json!({"tool": "*", "action": "delegate", "to": helper.display().to_string()}),
            );
        }
    }
    json!({
        "amp.permissions": rules,
        "amp.guardedFiles.allowlist": ["/**"],
    })
}

/// Arguments of one turn: a new thread, or `threads continue <thread>`.
pub fn args(thread: Option<&str>, mode: Option<&str>, dirs: &AmpDirs) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    if let Some(thread) = thread {
        args.extend(["threads", "continue", thread].map(OsString::from));
    }
    args.extend(["--execute", "--stream-json", "--stream-json-thinking"].map(OsString::from));
    args.push("--settings-file".into());
    args.push(dirs.settings.clone().into_os_string());
    args.push("--log-file".into());
    args.push(dirs.log.clone().into_os_string());
    if let Some(mode) = mode {
        args.push("--mode".into());
        args.push(mode.into());
    }
    args
}

/// What one turn's process gets: the session's cwd, a private HOME, the key and service URL,
/// and the channel the delegate program answers through.
pub struct TurnLaunch<'a> {
    /// Amp's executable.
    pub program: &'a Path,
    /// The session's working directory.
    pub cwd: &'a Path,
    /// The session's private files.
    pub dirs: &'a AmpDirs,
    /// `AMP_API_KEY`, unless a stored login (`secrets.json` in HOME) stands for it.
    pub key: Option<&'a str>,
    /// `AMP_URL`, when set.
    pub url: Option<&'a str>,
    /// The permission channel (see `relay`), as its environment value.
    pub permission_channel: &'a str,
    /// The session's extra environment variables.
    pub session_env: &'a BTreeMap<String, String>,
}

impl TurnLaunch<'_> {
    /// The process spec of a turn with `args`.
    pub fn spec(&self, args: Vec<OsString>) -> ProcessSpec {
        let mut env: BTreeMap<String, String> = base_env(&self.dirs.home);
        if let Some(key) = self.key {
            env.insert("AMP_API_KEY".into(), key.into());
        }
        if let Some(url) = self.url {
            env.insert("AMP_URL".into(), url.into());
        }
        env.insert(
            super::relay::CHANNEL_ENV.into(),
            self.permission_channel.into(),
        );
        crate::process::add_session_env(&mut env, self.session_env);
        ProcessSpec {
            program: self.program.to_path_buf(),
            args,
            cwd: self.cwd.to_path_buf(),
            env,
        }
    }
}

/// What every turn of a session is started with.
pub struct Launch {
    /// Amp's executable.
    pub program: PathBuf,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The session's private files.
    pub dirs: AmpDirs,
    /// `AMP_API_KEY` (kept in memory only), unless the session has a stored login.
    pub key: Option<String>,
    /// `AMP_URL`, when set.
    pub url: Option<String>,
    /// Amp's mode (`--mode`).
    pub mode: Option<String>,
    /// The session's permission channel (its delegate program's asks).
    pub channel: super::relay::Channel,
    /// The session's extra environment variables.
    pub env: BTreeMap<String, String>,
}

impl crate::kernel::per_turn::TurnLaunch for Launch {
    type Protocol = super::convert::AmpProtocol;

    const AGENT: sandbox_universal::AgentId = sandbox_universal::AgentId::Amp;

    fn spec(&self, thread: Option<&str>) -> ProcessSpec {
        let turn = TurnLaunch {
            program: &self.program,
            cwd: &self.cwd,
            dirs: &self.dirs,
            key: self.key.as_deref(),
            url: self.url.as_deref(),
            permission_channel: self.channel.env_value(),
            session_env: &self.env,
        };
        turn.spec(args(thread, self.mode.as_deref(), &self.dirs))
    }

    fn native_id(protocol: &Self::Protocol) -> Option<&str> {
        protocol.thread()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actions(mode: PermissionMode) -> Vec<String> {
        settings(mode, Path::new("/d/sandbox-daemon"))["amp.permissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{}={}",
                    r["tool"].as_str().unwrap(),
                    r["action"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn permission_modes_become_rules_that_end_with_the_daemon() {
        let default = actions(PermissionMode::Default);
        assert!(default.contains(&"Read=allow".to_string()));
        assert_eq!(default.last().unwrap(), "*=delegate");
        assert!(!default.iter().any(|r| r.starts_with("shell_command=")));
        assert!(actions(PermissionMode::AcceptEdits).contains(&"apply_patch=allow".to_string()));
        let plan = actions(PermissionMode::Plan);
        assert!(plan.contains(&"apply_patch=reject".to_string()));
        assert!(plan.contains(&"shell_command=reject".to_string()));
        assert_eq!(actions(PermissionMode::Bypass), ["*=allow"]);
        let all = settings(PermissionMode::Default, Path::new("/d/sandbox-daemon"));
        assert_eq!(
            all["amp.permissions"].as_array().unwrap().last().unwrap()["to"],
            "/d/sandbox-daemon"
        );
    }

    #[test]
    fn a_turn_continues_its_thread_and_carries_the_key_only_in_its_environment() {
        let dirs = AmpDirs::new(Path::new("/s"));
        let first = args(None, None, &dirs);
        assert_eq!(first[0], "--execute");
        assert!(!first.iter().any(|a| a == "--dangerously-allow-all"));
        let next = args(Some("T-1"), Some("high"), &dirs);
        assert_eq!(
            &next[..3],
            ["threads", "continue", "T-1"].map(OsString::from)
        );
        assert!(next.windows(2).any(|w| w[0] == "--mode" && w[1] == "high"));
        let launch = TurnLaunch {
            program: Path::new("/bin/amp"),
            cwd: Path::new("/w"),
            dirs: &dirs,
            key: Some("sk-amp"),
            url: Some("http://127.0.0.1:9"),
            permission_channel: "c",
            session_env: &BTreeMap::from([
                ("FOO".to_string(), "bar".to_string()),
                ("AMP_API_KEY".to_string(), "other".to_string()),
            ]),
        };
        let spec = launch.spec(next);
        assert_eq!(spec.env["AMP_API_KEY"], "sk-amp");
        assert_eq!(spec.env["FOO"], "bar");
        assert_eq!(spec.env["HOME"], "/s/home");
        assert!(!spec.env.contains_key("AMP_THREAD_ID"));
        assert!(
            !spec
                .args
                .iter()
                .any(|a| a.to_string_lossy().contains("sk-amp"))
        );
    }
}
