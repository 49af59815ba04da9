//! `sandbox-daemon [--token T | --no-token] [--host H] [--port P]`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use sandbox_agents::ProviderEnv;
use sandbox_agents::locate::BinaryLocator;

use crate::app::{DEFAULT_BODY_LIMIT, HttpSettings};
use crate::auth::AuthConfig;
use crate::server::{ServerConfig, default_data_dir, serve};
use crate::session::SessionSettings;
use crate::store::{StoreConfig, StoreOptions};

/// Parses a duration such as `15m`, `1h 30m`, `7d` or `0`.
fn parse_duration(value: &str) -> Result<Duration, String> {
    if value.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(value)
        .map_err(|e| format!("`{value}` is not a duration ({e}); e.g. 90s, 15m, 7d"))
}

/// Options of the server.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Require `Authorization: Bearer <TOKEN>` on every route but /health.
    #[arg(long, env = "SANDBOX_DAEMON_TOKEN", conflicts_with = "no_token")]
    pub token: Option<String>,
    /// Run without authentication (only on a trusted network).
    #[arg(long)]
    pub no_token: bool,
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
}

impl ServerArgs {
    /// The server configuration, or why the arguments are not enough.
    pub fn config(&self) -> Result<ServerConfig, String> {
        let auth = match (&self.token, self.no_token) {
            (Some(token), false) if !token.is_empty() => AuthConfig::token(token.as_str()),
            (Some(_), false) => return Err("--token must not be empty".into()),
            (None, true) => AuthConfig::disabled(),
            (None, false) => {
                return Err("pass --token <TOKEN> to require a bearer token on every request, or --no-token to run without authentication".into());
            }
            (Some(_), true) => return Err("--token and --no-token exclude each other".into()),
        };
        if self.sse_keep_alive_secs == 0 {
            return Err("--sse-keep-alive-secs must be at least 1".into());
        }
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
            },
            locator: BinaryLocator::from_process_env(Some(data_dir.join("agents"))),
            sessions: SessionSettings {
                workspace_root: self.workspace_root.clone(),
                idle_timeout: (!self.idle_timeout.is_zero()).then_some(self.idle_timeout),
                retain_ended: self.retain_ended,
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

/// Starts the daemon and serves until Ctrl-C / SIGTERM.
pub async fn run(args: ServerArgs) -> ExitCode {
    let config = match args.config() {
        Ok(config) => config,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    match serve(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
