//! `sandbox-daemon [--token T | --no-token] [--host H] [--port P]`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use sandbox_agents::ProviderEnv;
use sandbox_agents::locate::BinaryLocator;

use sandbox_agents::user::AgentUser;

use crate::app::{DEFAULT_BODY_LIMIT, HttpSettings};
use crate::auth::AuthConfig;
use crate::processes::ProcessLimits;
use crate::serve::ConnectionTimeouts;
use crate::server::{ServerConfig, default_data_dir, serve};
use crate::session::SessionSettings;
use crate::store::{StoreConfig, StoreOptions};
use crate::workspace::FileLimits;

/// Parses a duration such as `15m`, `1h 30m`, `7d` or `0`.
fn parse_duration(value: &str) -> Result<Duration, String> {
    if value.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(value)
        .map_err(|e| format!("`{value}` is not a duration ({e}); e.g. 90s, 15m, 7d"))
}

/// The files API's limits (`/sessions/{id}/files...`).
#[derive(Debug, Clone, Args)]
pub struct FileLimitArgs {
    /// Largest body of a file write or an upload, and the most bytes an uploaded archive
    /// may unpack to.
    #[arg(long, default_value_t = FileLimits::default().max_upload_bytes)]
    pub max_upload_bytes: u64,
    /// The most entries an uploaded archive may hold.
    #[arg(long, default_value_t = FileLimits::default().max_upload_entries)]
    pub max_upload_entries: u64,
    /// A workspace snapshot (`files/archive`) leaves out files larger than this unless
    /// the request says otherwise.
    #[arg(long, default_value_t = FileLimits::default().archive_max_file_bytes)]
    pub archive_max_file_bytes: u64,
    /// A workspace snapshot whose files add up to more is refused unless the request says
    /// otherwise.
    #[arg(long, default_value_t = FileLimits::default().archive_max_bytes)]
    pub archive_max_bytes: u64,
}

impl FileLimitArgs {
    /// The limits these flags set.
    pub fn limits(&self) -> FileLimits {
        FileLimits {
            max_upload_bytes: self.max_upload_bytes,
            max_upload_entries: self.max_upload_entries,
            archive_max_file_bytes: self.archive_max_file_bytes,
            archive_max_bytes: self.archive_max_bytes,
            ..FileLimits::default()
        }
    }
}

/// The processes API's limits (`/sessions/{id}/processes...`).
#[derive(Debug, Clone, Args)]
pub struct ProcessLimitArgs {
    /// The most processes (runs and long-running) one session may have running at once.
    #[arg(long, default_value_t = ProcessLimits::default().max_running)]
    pub max_processes: usize,
    /// The longest `timeoutMs` a run may ask for, e.g. `1h`.
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    pub process_timeout: Duration,
    /// The most output per stream a run may ask to keep, in bytes.
    #[arg(long, default_value_t = ProcessLimits::default().max_output_bytes)]
    pub process_output_bytes: u64,
    /// The bytes of log a long-running process keeps (its oldest chunks go first).
    #[arg(long, default_value_t = ProcessLimits::default().log_bytes)]
    pub process_log_bytes: usize,
}

impl ProcessLimitArgs {
    /// The limits these flags set.
    pub fn limits(&self) -> ProcessLimits {
        ProcessLimits {
            max_running: self.max_processes,
            max_timeout: self.process_timeout,
            max_output_bytes: self.process_output_bytes,
            log_bytes: self.process_log_bytes,
        }
    }
}

/// Options of the server.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Require `Authorization: Bearer <TOKEN>` on every route but /health. Prefer
    /// `--token-file` or `SANDBOX_DAEMON_TOKEN`: every local user can read a command line.
    #[arg(long, env = "SANDBOX_DAEMON_TOKEN", hide_env_values = true, conflicts_with_all = ["no_token", "token_file"])]
    pub token: Option<String>,
    /// Read the bearer token from this file (keep it mode 0600).
    #[arg(long, env = "SANDBOX_DAEMON_TOKEN_FILE", conflicts_with = "no_token")]
    pub token_file: Option<PathBuf>,
    /// Run without authentication (only on a trusted network). Requests must then name an
    /// allowed host, come from an allowed origin and send JSON.
    #[arg(long)]
    pub no_token: bool,
    /// With --no-token: a host name the daemon answers to besides the loopback names and
    /// its own address (repeat for several).
    #[arg(long = "allow-host")]
    pub allowed_hosts: Vec<String>,
    /// Run agents (and every process the daemon starts) as this user, so they cannot read
    /// the daemon's memory, token or store. Their homes and the session's workspace are
    /// handed to that user.
    #[arg(long, env = "SANDBOX_DAEMON_AGENT_USER")]
    pub agent_user: Option<String>,
    /// Close a connection whose request head has not arrived within this (also how long
    /// an idle keep-alive connection waits for its next request).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub header_read_timeout: Duration,
    /// Refuse (408) a request whose body has not arrived within this.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub request_body_timeout: Duration,
    /// Close a connection on which nothing has moved either way for this long (SSE
    /// keep-alives count, so streams stay open).
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub connection_idle_timeout: Duration,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on.
    #[arg(long, default_value_t = 2468)]
    pub port: u16,
    /// The daemon's state directory (private session homes, installed agents).
    #[arg(long, env = "SANDBOX_DAEMON_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// When set, session working directories must be inside this directory.
    #[arg(long, env = "SANDBOX_DAEMON_WORKSPACE_ROOT")]
    pub workspace_root: Option<PathBuf>,
    /// Seconds between SSE keep-alive comments.
    #[arg(long, default_value_t = 15)]
    pub sse_keep_alive_secs: u64,
    /// Largest accepted request body, in bytes.
    #[arg(long, default_value_t = DEFAULT_BODY_LIMIT)]
    pub max_body_bytes: usize,
    /// Where sessions and events are stored: `postgres://user:password@host/database` (a
    /// database several daemons may share) or `sqlite:<path>`. Default: SQLite in the data
    /// directory.
    #[arg(long, env = "SANDBOX_DAEMON_STORE")]
    pub store: Option<String>,
    /// SQLite: sync every commit to the disk, so events survive a power loss and not only a
    /// crash of the daemon (each commit then waits for the disk).
    #[arg(long)]
    pub fsync: bool,
    /// Stop an agent idle this long (it is resumed by the next message); `0` keeps agents
    /// running. E.g. `15m`, `1h`, `90s`.
    #[arg(long, default_value = "15m", value_parser = parse_duration)]
    pub idle_timeout: Duration,
    /// Purge ended sessions (and their events) this long after they ended, e.g. `7d`.
    /// Default: keep them.
    #[arg(long, value_parser = parse_duration)]
    pub retain_ended: Option<Duration>,
    /// A browser origin allowed to call the API (CORS), e.g. `http://localhost:5173`;
    /// repeat for several, or `*` for any.
    #[arg(long = "cors-origin")]
    pub cors_origins: Vec<String>,
    /// Where agent downloads come from.
    #[command(flatten)]
    pub install: super::install::InstallArgs,
    /// The files API's limits.
    #[command(flatten)]
    pub files: FileLimitArgs,
    /// The processes API's limits.
    #[command(flatten)]
    pub processes: ProcessLimitArgs,
    /// Do not look at the workspace as each turn starts and ends: `turnEnded` carries no
    /// change counts and `GET .../turns/{turnId}/changes` answers 404.
    #[arg(long)]
    pub no_turn_changes: bool,
    /// Workspaces with more files than this (outside `.git`, `node_modules` and
    /// `.gitignore`d paths) are not tracked.
    #[arg(long, default_value_t = crate::changes::ChangeLimits::default().max_files)]
    pub turn_changes_max_files: usize,
    /// How long stopping (Ctrl-C, SIGTERM) may take: agents stopped, connections closed,
    /// and a store that cannot write (full disk, database gone) retried. Events still
    /// unwritten then are reported by session and the daemon exits with an error.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub shutdown_timeout: Duration,
    /// Webhook deliveries are retried (after 1 s, 2 s, 4 s, ... at most an hour apart)
    /// until the event is this old; then they are `failed`.
    #[arg(
        long,
        env = "SANDBOX_DAEMON_WEBHOOK_GIVE_UP_AFTER",
        default_value = "24h",
        value_parser = parse_duration
    )]
    pub webhook_give_up_after: Duration,
    /// Do not install a missing agent when a session is created for it (`POST
    /// /agents/{agent}/install` still installs).
    /// The variable takes `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
    #[arg(
        long,
        env = "SANDBOX_DAEMON_NO_AUTO_INSTALL",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_auto_install: bool,
    /// Read the secret that signs the daemon's calls to http host tools
    /// (`Sandbox-Daemon-Signature`) from this file; hosts verify it. Without one, sessions
    /// with http host tools are refused.
    #[arg(long, env = "SANDBOX_DAEMON_HOST_TOOL_SECRET_FILE")]
    pub host_tool_secret_file: Option<PathBuf>,
    /// OpenTelemetry traces of sessions (`--otlp-endpoint`, `--otlp-capture-content`).
    #[command(flatten)]
    pub telemetry: crate::telemetry::TelemetryArgs,
}

impl ServerArgs {
    /// The server configuration, or why the arguments are not enough.
    pub fn config(&self) -> Result<ServerConfig, String> {
        let token = match &self.token_file {
            Some(path) => Some(read_token_file(path)?),
            None => self.token.clone(),
        };
        let auth = match (token, self.no_token) {
            (Some(token), false) if !token.is_empty() => AuthConfig::token(token.as_str()),
            (Some(_), false) => return Err("the token must not be empty".into()),
            (None, true) => AuthConfig::disabled(),
            (None, false) => {
                return Err("pass --token-file <FILE> (or SANDBOX_DAEMON_TOKEN) to require a bearer token on every request, or --no-token to run without authentication".into());
            }
            (Some(_), true) => return Err("a token and --no-token exclude each other".into()),
        };
        for timeout in [
            self.header_read_timeout,
            self.request_body_timeout,
            self.connection_idle_timeout,
        ] {
            if timeout.is_zero() {
                return Err("connection timeouts must be longer than 0".into());
            }
        }
        let agent_user = self
            .agent_user
            .as_deref()
            .map(AgentUser::lookup)
            .transpose()
            .map_err(|e| format!("--agent-user: {e}"))?;
        if self.sse_keep_alive_secs == 0 {
            return Err("--sse-keep-alive-secs must be at least 1".into());
        }
        let host_tool_secret = self
            .host_tool_secret_file
            .as_deref()
            .map(|path| {
                read_token_file(path)
                    .map(String::into_bytes)
                    .map_err(|e| e.replace("--token-file", "--host-tool-secret-file"))
            })
            .transpose()?;
        let data_dir = self.data_dir.clone().unwrap_or_else(default_data_dir);
        let default_cwd = std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?;
        Ok(ServerConfig {
            host: self.host.clone(),
            port: self.port,
            http: HttpSettings {
                auth,
                body_limit: self.max_body_bytes,
                sse_keep_alive: Duration::from_secs(self.sse_keep_alive_secs),
                cors_origins: self.cors_origins.clone(),
                allowed_hosts: self.allowed_hosts.clone(),
                timeouts: ConnectionTimeouts {
                    header_read: self.header_read_timeout,
                    idle: self.connection_idle_timeout,
                },
                body_timeout: self.request_body_timeout,
            },
            locator: BinaryLocator::from_process_env(Some(data_dir.join("agents"))),
            executable: None,
            install: Some(self.install.config(data_dir.join("agents"))),
            auto_install: !self.no_auto_install,
            shutdown_timeout: self.shutdown_timeout,
            sessions: SessionSettings {
                workspace_root: self.workspace_root.clone(),
                idle_timeout: (!self.idle_timeout.is_zero()).then_some(self.idle_timeout),
                retain_ended: self.retain_ended,
                agent_user,
                host_tools: crate::host_tools::HostBroker::new(host_tool_secret),
                files: self.files.limits(),
                processes: crate::processes::ProcessTable::new(self.processes.limits()),
                turn_changes: (!self.no_turn_changes).then(|| crate::changes::ChangeLimits {
                    max_files: self.turn_changes_max_files,
                    ..crate::changes::ChangeLimits::default()
                }),
                webhooks: crate::webhooks::DeliveryPolicy {
                    give_up_after: self.webhook_give_up_after,
                    ..crate::webhooks::DeliveryPolicy::default()
                },
                telemetry: crate::telemetry::Telemetry::from_args(&self.telemetry)?,
                ..SessionSettings::new(data_dir, default_cwd)
            },
            store: self.store.as_deref().map(StoreConfig::parse).transpose()?,
            store_options: StoreOptions {
                fsync: self.fsync,
                ..StoreOptions::new()
            },
            provider_env: ProviderEnv::from_process_env(),
        })
    }
}

/// Reads a token file: its content, trimmed. Warns when others can read it.
fn read_token_file(path: &std::path::Path) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("--token-file {shown}: {e}"))?;
    if meta.mode() & 0o077 != 0 {
        eprintln!(
            "warning: the token file {shown} can be read by other users (mode {:o}); chmod 600 it",
            meta.mode() & 0o777
        );
    }
    let token = std::fs::read_to_string(path).map_err(|e| format!("--token-file {shown}: {e}"))?;
    Ok(token.trim().to_string())
}

/// Starts the daemon and serves until Ctrl-C / SIGTERM.
pub async fn run(args: ServerArgs) -> ExitCode {
    if std::env::args_os().any(|a| a == "--token" || a.to_string_lossy().starts_with("--token=")) {
        eprintln!(
            "warning: a token given with --token is visible to every local user (ps, /proc/<pid>/cmdline); pass it with --token-file or SANDBOX_DAEMON_TOKEN"
        );
    }
    let config = match args.config() {
        Ok(config) => config,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    if let Some(user) = &config.sessions.agent_user
        && let Err(user) = sandbox_agents::user::run_agents_as(user.clone())
    {
        eprintln!("error: agents already run as {}", user.name);
        return ExitCode::FAILURE;
    }
    if sandbox_agents::user::agents_run_as_root() {
        eprintln!(
            "warning: agents run as root, so they can read this daemon's memory, its token and its store; pass --agent-user <name> to run them as another user"
        );
    }
    match serve(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
