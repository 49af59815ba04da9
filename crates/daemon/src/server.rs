//! Running the daemon: binding, serving, and shutting down cleanly.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use sandbox_agents::locate::BinaryLocator;
use sandbox_agents::{AgentRegistry, DriverContext, ProviderEnv};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::app::{HttpSettings, build_app};
use crate::session::{SessionManager, SessionSettings};

/// Everything the daemon needs to run.
#[derive(Debug)]
pub struct ServerConfig {
    /// Address to bind, e.g. `127.0.0.1`.
    pub host: String,
    /// Port to bind (0 picks a free one).
    pub port: u16,
    /// Auth, body limit, SSE keep-alive.
    pub http: HttpSettings,
    /// Sessions' working directories and private state.
    pub sessions: SessionSettings,
    /// Provider credentials and endpoints handed to agents.
    pub provider_env: ProviderEnv,
    /// Where agent binaries are found.
    pub locator: BinaryLocator,
}

/// A daemon serving in the background (for tests, benchmarks and the demo).
pub struct RunningServer {
    /// The bound address.
    pub addr: SocketAddr,
    _data_lock: DataDirLock,
    sessions: Arc<SessionManager>,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// `http://<addr>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The session manager.
    pub fn sessions(&self) -> &Arc<SessionManager> {
        &self.sessions
    }

    /// Stops every agent (sessions stay on disk, to be restored by the next start) and
    /// stops serving.
    pub async fn stop(mut self) -> std::io::Result<()> {
        self.sessions.suspend_all().await;
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        (&mut self.task)
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?
    }
}

/// The session manager, with the sessions of an earlier run restored from the data dir.
async fn manager(config: ServerConfig) -> Arc<SessionManager> {
    let context = Arc::new(DriverContext {
        locator: config.locator,
        provider_env: config.provider_env,
    });
    let sessions = Arc::new(SessionManager::new(
        AgentRegistry::new(context),
        config.sessions,
    ));
    sessions.restore_all().await;
    sessions
}

/// Binds and serves in a background task until [`RunningServer::stop`].
pub async fn start(config: ServerConfig) -> std::io::Result<RunningServer> {
    let data_lock = DataDirLock::acquire(&config.sessions.data_dir)?;
    let listener = TcpListener::bind((config.host.as_str(), config.port)).await?;
    let addr = listener.local_addr()?;
    let http = config.http.clone();
    let sessions = manager(config).await;
    let app = build_app(sessions.clone(), &http);
    let (shutdown, stop) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop.await;
            })
            .await
    });
    Ok(RunningServer {
        addr,
        _data_lock: data_lock,
        sessions,
        shutdown: Some(shutdown),
        task,
    })
}

/// Serves until Ctrl-C or SIGTERM, then stops every agent process; sessions stay in the
/// data dir and are restored by the next start.
pub async fn serve(config: ServerConfig) -> std::io::Result<()> {
    let server = start(config).await?;
    tracing::info!(url = %server.url(), "sandbox-daemon listening");
    eprintln!("sandbox-daemon listening on {}", server.url());
    shutdown_signal().await;
    tracing::info!("shutting down");
    server.stop().await
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("installing the SIGTERM handler");
    tokio::select! {
        _ = ctrl_c => {}
        _ = term.recv() => {}
    }
}

/// The default data directory: `$XDG_DATA_HOME/sandbox-daemon`, else
/// `$HOME/.local/share/sandbox-daemon`, else a directory under the system temp dir.
pub fn default_data_dir() -> PathBuf {
    if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(xdg).join("sandbox-daemon");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join(".local/share/sandbox-daemon");
    }
    std::env::temp_dir().join("sandbox-daemon")
}

/// An exclusive lock on the data directory, so two daemons never share (and corrupt) the
/// same sessions. Released when dropped (or when the process dies).
#[derive(Debug)]
struct DataDirLock {
    _file: std::fs::File,
}

impl DataDirLock {
    fn acquire(data_dir: &std::path::Path) -> std::io::Result<Self> {
        use std::os::fd::AsRawFd;
        std::fs::create_dir_all(data_dir)?;
        let path = data_dir.join("daemon.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        // SAFETY: flock on a file descriptor we own; the lock lives as long as the file.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                format!(
                    "another sandbox-daemon is using the data directory {} (pass a different --data-dir)",
                    data_dir.display()
                ),
            ));
        }
        Ok(Self { _file: file })
    }
}
