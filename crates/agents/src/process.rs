//! Spawning agent processes: an allow-listed environment, a private HOME, their own
//! process group (so tool subprocesses die with them), JSON lines on stdin, and a tail of
//! stderr for crash reports.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

/// Variables copied from the daemon's environment into every agent's environment. Nothing
/// else passes: not the daemon's token, not other agents' credentials.
pub const INHERITED_VARS: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// Variables a session's `env` may not set: what the daemon sets for every agent, where
/// agents keep their configuration, and what loads code into a process (`LD_*`,
/// `NODE_OPTIONS`); credentials and endpoints (the manifest's variables) too.
const PROTECTED_VARS: &[&str] = &[
    "HOME",
    "PWD",
    "NODE_OPTIONS",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CODEX_HOME",
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_CONTENT",
    "OPENCODE_CONFIG_DIR",
    "OPENCODE_SERVER_PASSWORD",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
    "AMP_SETTINGS_FILE",
];

/// Prefixes of variables a session's `env` may not set.
const PROTECTED_PREFIXES: &[&str] = &["LD_", "DYLD_", "XDG_", "SANDBOX_"];

/// Whether a session's `env` may not set `name` (see [`add_session_env`]).
pub fn is_protected_var(name: &str) -> bool {
    INHERITED_VARS.contains(&name)
        || PROTECTED_VARS.contains(&name)
        || PROTECTED_PREFIXES.iter().any(|p| name.starts_with(p))
        || crate::manifest::MANIFEST
            .iter()
            .any(|spec| spec.credential_vars.contains(&name) || spec.endpoint_vars.contains(&name))
}

/// Whether a process run beside the agent may not be given `name`: what
/// [`is_protected_var`] protects, but for the allow-listed variables inherited from the
/// daemon (`PATH`, `LANG`, `TZ`, ...), which a client may set for its own program.
pub fn is_protected_for_process(name: &str) -> bool {
    is_protected_var(name) && !INHERITED_VARS.contains(&name)
}

/// Adds a session's `env` to an agent's environment: what the driver set itself wins, and
/// protected names (refused when the session was created) are skipped.
pub fn add_session_env(env: &mut BTreeMap<String, String>, session: &BTreeMap<String, String>) {
    for (name, value) in session {
        if !is_protected_var(name) {
            env.entry(name.clone()).or_insert_with(|| value.clone());
        }
    }
}

/// How many bytes of stderr are kept for crash reports.
pub const STDERR_TAIL_BYTES: usize = 8 * 1024;

/// The environment of an agent process: the allow-listed variables of the daemon, HOME and
/// the XDG directories inside `home`, plus whatever the driver adds.
pub fn base_env(home: &Path) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = INHERITED_VARS
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|v| (name.to_string(), v)))
        .collect();
    let home_str = home.display().to_string();
    env.insert("HOME".into(), home_str.clone());
    env.insert("XDG_CONFIG_HOME".into(), format!("{home_str}/.config"));
    env.insert("XDG_DATA_HOME".into(), format!("{home_str}/.local/share"));
    env.insert("XDG_CACHE_HOME".into(), format!("{home_str}/.cache"));
    env.insert("XDG_STATE_HOME".into(), format!("{home_str}/.local/state"));
    env.entry("PATH".into())
        .or_insert_with(|| "/usr/local/bin:/usr/bin:/bin".into());
    env
}

/// What to run.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// The complete environment (nothing else is inherited).
    pub env: BTreeMap<String, String>,
}

/// The umask agent processes start with (the daemon keeps 077 for itself).
static AGENT_UMASK: AtomicU32 = AtomicU32::new(0o022);

/// Sets the umask agent processes start with: the one the daemon was started with, so files
/// agents write in the workspace look as the user expects (the daemon adds 022, so others
/// can never write them).
pub fn set_agent_umask(mask: u32) {
    AGENT_UMASK.store(mask & 0o777, Ordering::Relaxed);
}

/// The umask agents run with (`set_agent_umask`; 022 unless set): what the daemon applies to
/// files it creates in a workspace on an agent's behalf.
pub fn agent_umask() -> u32 {
    AGENT_UMASK.load(Ordering::Relaxed)
}

/// The command of `spec`: its program, arguments, working directory and exactly its
/// environment, run as the agent user when there is one (`--agent-user`; its HOME is made
/// that user's first), with the agents' umask.
fn command(spec: &ProcessSpec) -> std::io::Result<Command> {
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(&spec.env);
    if let Some(user) = crate::user::agent_user() {
        if let Some(home) = spec.env.get("HOME") {
            user.own_tree(Path::new(home))?;
        }
        command.uid(user.uid).gid(user.gid);
    }
    let mask = AGENT_UMASK.load(Ordering::Relaxed) as libc::mode_t;
    // SAFETY: umask is async-signal-safe and touches nothing but the child's mask.
    unsafe {
        command.pre_exec(move || {
            libc::umask(mask);
            Ok(())
        });
    }
    Ok(command)
}

/// The command of a process a client runs beside the agent (the files API's processes):
/// exactly `spec`'s environment, the agent user, the agents' umask, as agents run.
pub fn beside_agent(spec: &ProcessSpec) -> std::io::Result<Command> {
    command(spec)
}

/// The command of a helper the daemon runs as itself rather than as an agent (npm for the
/// installer): `program` with exactly `env`, nothing of the daemon's own environment
/// inherited, in the daemon's user and umask.
pub fn helper_command(program: &Path, env: impl IntoIterator<Item = (String, String)>) -> Command {
    let mut command = Command::new(program);
    command.env_clear().envs(env);
    command
}

/// Runs a short command (e.g. `<agent> --version`) the way agents run — allow-listed
/// environment, a private throw-away HOME, the agent user — and answers its output, or
/// `None` when it fails or takes longer than `limit`.
pub async fn probe(
    program: &Path,
    args: &[&str],
    limit: std::time::Duration,
) -> Option<std::process::Output> {
    let home = tempfile::tempdir().ok()?;
    let spec = ProcessSpec {
        program: program.to_path_buf(),
        args: args.iter().map(OsString::from).collect(),
        cwd: home.path().to_path_buf(),
        env: base_env(home.path()),
    };
    let mut command = command(&spec).ok()?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    tokio::time::timeout(limit, command.output())
        .await
        .ok()?
        .ok()
}

/// Runs `spec` to its end the way agents run (its exact environment, the agent user, the
/// agents' umask), with no stdin, and answers its output; killed after `limit`.
pub async fn run_to_end(
    spec: &ProcessSpec,
    limit: std::time::Duration,
) -> std::io::Result<std::process::Output> {
    let mut command = command(spec)?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    tokio::time::timeout(limit, command.output())
        .await
        .map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("{} took longer than {limit:?}", spec.program.display()),
            )
        })?
}

/// How a process ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExitInfo {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// Signal, when it was killed.
    pub signal: Option<i32>,
    /// The end of its stderr.
    pub stderr_tail: String,
}

impl ExitInfo {
    /// Exit code or signal as text, e.g. `exit code 1` or `signal 9`.
    pub fn describe(&self) -> String {
        match (self.code, self.signal) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "an unknown status".into(),
        }
    }
}

/// Sends `signal` to process group `group`: the one place the daemon signals processes.
/// The caller knows the group is one it created and has not seen end (a group id is not
/// handed out again while any member of the group lives).
pub fn signal_group(group: u32, signal: i32) {
    if group != 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory involved.
        unsafe {
            libc::kill(-(group as i32), signal);
        }
    }
}

/// Signals one agent process group (see [`AgentProcess::signaller`]); the only code that
/// signals processes is here.
#[derive(Clone)]
pub struct Signaller {
    pid: u32,
    exit: watch::Receiver<Option<ExitInfo>>,
}

impl Signaller {
    /// The process id (also the group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends `signal` to the process group, unless the process has exited (its group id
    /// may then belong to someone else).
    pub fn send(&self, signal: i32) {
        if self.exit.borrow().is_none() {
            signal_group(self.pid, signal);
        }
    }

    /// SIGKILL to the group.
    pub fn kill(&self) {
        self.send(libc::SIGKILL);
    }
}

/// A running agent process.
pub struct AgentProcess {
    pid: u32,
    stdin: Option<ChildStdin>,
    stderr_tail: Arc<Mutex<VecDeque<u8>>>,
    exit: watch::Receiver<Option<ExitInfo>>,
}

impl AgentProcess {
    /// Spawns `spec` in its own process group with piped stdio. Returns the process and its
    /// stdout as lines.
    pub fn spawn(spec: &ProcessSpec) -> std::io::Result<(Self, Lines<BufReader<ChildStdout>>)> {
        let mut command = command(spec)?;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let pid = child.id().unwrap_or_default();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_BYTES)));
        let tail = stderr_tail.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "agent_stderr", pid, "{line}");
                let mut tail = tail.lock().expect("stderr lock");
                tail.extend(line.bytes().chain(std::iter::once(b'\n')));
                let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
                tail.drain(..excess);
            }
        });
        let (exit_tx, exit) = watch::channel(None);
        let tail = stderr_tail.clone();
        tokio::spawn(wait_for_exit(child, exit_tx, tail));
        Ok((
            Self {
                pid,
                stdin,
                stderr_tail,
                exit,
            },
            BufReader::new(stdout).lines(),
        ))
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Writes one JSON value as a line on stdin.
    pub async fn write_json(&mut self, value: &serde_json::Value) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdin closed"))?;
        let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
        line.push(b'\n');
        stdin.write_all(&line).await?;
        stdin.flush().await
    }

    /// Closes stdin (many agents exit when their input ends).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Hands stdin to the caller, e.g. a writer task that serialises messages from several
    /// tasks. Afterwards [`AgentProcess::write_json`] fails and closing stdin is up to the
    /// new owner (dropping it).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// The end of stderr so far.
    pub fn stderr_tail(&self) -> String {
        tail_text(&self.stderr_tail)
    }

    /// The exit status, once the process has exited.
    pub fn exited(&self) -> Option<ExitInfo> {
        self.exit.borrow().clone()
    }

    /// A receiver that holds the exit status once the process exits.
    pub fn exit_watch(&self) -> watch::Receiver<Option<ExitInfo>> {
        self.exit.clone()
    }

    /// Waits for the process to exit.
    pub async fn wait(&self) -> ExitInfo {
        let mut exit = self.exit.clone();
        match exit.wait_for(Option::is_some).await {
            Ok(info) => info.clone().unwrap_or_default(),
            Err(_) => ExitInfo::default(),
        }
    }

    /// Sends a signal to the whole process group.
    pub fn signal(&self, signal: i32) {
        self.signaller().send(signal);
    }

    /// A handle that signals this process's group from anywhere (a task, a `Drop`) without
    /// holding the process itself.
    pub fn signaller(&self) -> Signaller {
        Signaller {
            pid: self.pid,
            exit: self.exit.clone(),
        }
    }

    /// Stops the process: closes stdin, SIGTERM to the group, SIGKILL after `grace`.
    pub async fn stop(&mut self, grace: std::time::Duration) -> ExitInfo {
        self.close_stdin();
        self.signal(libc::SIGTERM);
        match tokio::time::timeout(grace, self.wait()).await {
            Ok(info) => info,
            Err(_) => {
                self.signal(libc::SIGKILL);
                self.wait().await
            }
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
    }
}

fn tail_text(tail: &Mutex<VecDeque<u8>>) -> String {
    let bytes: Vec<u8> = tail.lock().expect("stderr lock").iter().copied().collect();
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

async fn wait_for_exit(
    mut child: Child,
    exit: watch::Sender<Option<ExitInfo>>,
    tail: Arc<Mutex<VecDeque<u8>>>,
) {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id();
    let status = child.wait().await;
    // Whatever the agent left running in its process group (tool commands) dies with it.
    // The group id cannot have been reused yet: the group existed until this moment.
    if let Some(pid) = pid {
        signal_group(pid, libc::SIGKILL);
    }
    // Give the stderr reader a moment to drain the last lines.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let info = match status {
        Ok(status) => ExitInfo {
            code: status.code(),
            signal: status.signal(),
            stderr_tail: tail_text(&tail),
        },
        Err(e) => ExitInfo {
            code: None,
            signal: None,
            stderr_tail: format!("waiting for the process failed: {e}"),
        },
    };
    exit.send_replace(Some(info));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sh(script: &str, env: BTreeMap<String, String>) -> ProcessSpec {
        ProcessSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: std::env::temp_dir(),
            env,
        }
    }

    #[tokio::test]
    async fn only_allow_listed_variables_reach_the_process() {
        let home = tempfile::tempdir().unwrap();
        let (process, mut lines) = AgentProcess::spawn(&sh("env", base_env(home.path()))).unwrap();
        let mut seen = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            seen.push(line);
        }
        process.wait().await;
        assert!(
            seen.iter()
                .any(|l| *l == format!("HOME={}", home.path().display()))
        );
        assert!(seen.iter().any(|l| l.starts_with("PATH=")));
        let names: Vec<&str> = seen
            .iter()
            .filter_map(|l| l.split_once('='))
            .map(|(n, _)| n)
            .collect();
        let own = [
            "HOME",
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_CACHE_HOME",
            "XDG_STATE_HOME",
            "PWD",
            "SHLVL",
            "_",
        ];
        for name in names {
            assert!(
                INHERITED_VARS.contains(&name) || own.contains(&name),
                "`{name}` leaked into the agent"
            );
        }
    }

    #[tokio::test]
    async fn stdin_lines_stdout_lines_and_exit_status() {
        let (mut process, mut lines) = AgentProcess::spawn(&sh(
            "read x; echo \"got $x\"; echo oops >&2; exit 3",
            base_env(Path::new("/tmp")),
        ))
        .unwrap();
        process
            .write_json(&serde_json::json!({"a": 1}))
            .await
            .unwrap();
        assert_eq!(lines.next_line().await.unwrap().unwrap(), r#"got {"a":1}"#);
        let exit = process.wait().await;
        assert_eq!(exit.code, Some(3));
        assert_eq!(exit.stderr_tail, "oops");
        assert_eq!(exit.describe(), "exit code 3");
    }

    #[tokio::test]
    async fn tool_processes_die_when_the_agent_exits_by_itself() {
        let marker = tempfile::tempdir().unwrap();
        let pid_file = marker.path().join("child.pid");
        let script = format!("sleep 30 & echo $! > {}; exit 0", pid_file.display());
        let (process, _lines) =
            AgentProcess::spawn(&sh(&script, base_env(Path::new("/tmp")))).unwrap();
        process.wait().await;
        let child: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !running(child),
            "the orphaned tool process outlived its agent"
        );
    }

    /// Whether a process exists and is not a zombie.
    fn running(pid: i32) -> bool {
        // SAFETY: signal 0 only checks whether the process exists.
        let exists = unsafe { libc::kill(pid, 0) } == 0;
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(true);
        exists && !zombie
    }

    #[tokio::test]
    async fn stop_kills_the_whole_process_group() {
        let marker = tempfile::tempdir().unwrap();
        let pid_file = marker.path().join("child.pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let (mut process, _lines) =
            AgentProcess::spawn(&sh(&script, base_env(Path::new("/tmp")))).unwrap();
        let mut pid = String::new();
        for _ in 0..100 {
            pid = std::fs::read_to_string(&pid_file).unwrap_or_default();
            if !pid.trim().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let exit = process.stop(Duration::from_secs(2)).await;
        assert!(exit.signal.is_some() || exit.code.is_some());
        let child: i32 = pid.trim().parse().unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!running(child), "the tool subprocess outlived its agent");
    }
}
