//! The daemon the bridge talks to: one given by `--endpoint` (and its token), or a private
//! one started in this process on a loopback port, configured as `sandbox-daemon` would be
//! (its data dir, installs and environment variables), with a token of its own that never
//! leaves the process.

use clap::Parser;
use sandbox_client::Client;

use crate::auth::AuthConfig;
use crate::cli::ServerArgs;
use crate::server::{RunningServer, start};

/// Where the bridge's daemon is.
pub struct Daemon {
    /// Its client.
    pub client: Client,
    /// The private daemon, stopped when dropped.
    _private: Option<RunningServer>,
}

/// The server options of the private daemon, read like `sandbox-daemon`'s own (from the
/// `SANDBOX_DAEMON_*` environment variables, with a free loopback port).
#[derive(Parser)]
struct PrivateDaemon {
    #[command(flatten)]
    server: ServerArgs,
}

impl Daemon {
    /// The daemon at `endpoint`, or a private one when there is none.
    pub async fn connect(endpoint: Option<&str>, token: Option<String>) -> Result<Self, String> {
        if let Some(endpoint) = endpoint {
            let client = Client::new(endpoint, token).map_err(|e| format!("--endpoint: {e}"))?;
            client
                .health()
                .await
                .map_err(|e| format!("the daemon at {endpoint} does not answer: {e}"))?;
            return Ok(Self {
                client,
                _private: None,
            });
        }
        let mut args =
            PrivateDaemon::try_parse_from(["sandbox-daemon", "--host", "127.0.0.1", "--port", "0"])
                .map_err(|e| format!("the private daemon's options: {e}"))?;
        // Its own token replaces any the environment names (that one is the client's).
        args.server.token = None;
        args.server.token_file = None;
        args.server.no_token = true;
        let mut config = args.server.config()?;
        let token = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        config.http.auth = AuthConfig::token(token.as_str());
        let server = start(config).await.map_err(|e| {
            format!("starting a private daemon: {e} (is a daemon already using its data dir? give --endpoint)")
        })?;
        let client = Client::new(&server.url(), Some(token)).map_err(|e| e.to_string())?;
        Ok(Self {
            client,
            _private: Some(server),
        })
    }
}
