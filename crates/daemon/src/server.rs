//! Running the daemon: binding, serving, and shutting down cleanly.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use sandbox_agents::locate::BinaryLocator;
use sandbox_agents::{AgentRegistry, DriverContext, ProviderEnv};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::app::{HttpSettings, build_app};
use crate::credentials::{CredentialStore, Credentials};
use crate::installs::AgentInstalls;
use crate::session::{SessionManager, SessionSettings, legacy};
use crate::store::{Store, StoreConfig, StoreOptions};

/// How often unused sessions are let go.
const EVICT_EVERY: Duration = Duration::from_secs(5);
/// How long a stopping daemon waits for open connections to finish (within its
/// shutdown timeout).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// How long a stopping daemon may take by default (`--shutdown-timeout`).
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);
/// The least time spans get to go out at shutdown, however little of the shutdown
/// timeout is left.
const TELEMETRY_FLUSH_MIN: Duration = Duration::from_secs(1);
/// How often expired ended sessions are purged.
const RETENTION_EVERY: Duration = Duration::from_secs(60);

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
    /// Where sessions and events are stored (default: SQLite in the data dir).
    pub store: Option<StoreConfig>,
    /// How the store writes.
    pub store_options: StoreOptions,
    /// Provider credentials and endpoints handed to agents.
    pub provider_env: ProviderEnv,
    /// Where agent binaries are found.
    pub locator: BinaryLocator,
    /// The daemon's own executable, which Amp runs to ask permission (`None`: this
    /// process's).
    pub executable: Option<PathBuf>,
    /// How agents are installed (`None`: never; binaries must be provided).
    pub install: Option<sandbox_install::InstallConfig>,
    /// Install a missing agent when a session is created for it.
    pub auto_install: bool,
    /// How long stopping may take: agents stopped, connections closed, and a store that
    /// cannot write retried; past it, what is still unwritten is reported and lost.
    pub shutdown_timeout: Duration,
}

/// A daemon serving in the background (for tests, benchmarks and the demo).
pub struct RunningServer {
    /// The bound address.
    pub addr: SocketAddr,
    _data_lock: DataDirLock,
    sessions: Arc<SessionManager>,
    shutdown: Option<oneshot::Sender<()>>,
    shutdown_timeout: Duration,
    task: JoinHandle<std::io::Result<()>>,
    background: JoinHandle<()>,
    webhooks: JoinHandle<()>,
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

    /// Stops every agent (sessions stay stored, to be restored by the next start), writes
    /// everything, and stops serving, all within the shutdown timeout. Fails, naming the
    /// sessions and how many of their events, when the store could not write everything
    /// by then (a full disk, a database gone): those events are lost, and the next start
    /// closes the turns they belonged to.
    pub async fn stop(mut self) -> std::io::Result<()> {
        let deadline = tokio::time::Instant::now() + self.shutdown_timeout;
        self.background.abort();
        // An attempt cut short stays leased until its lease lapses, then is made again.
        self.webhooks.abort();
        self.sessions.settings().processes.kill_all();
        if tokio::time::timeout_at(deadline, self.sessions.suspend_all())
            .await
            .is_err()
        {
            tracing::error!(
                timeout = ?self.shutdown_timeout,
                "not every agent stopped within the shutdown timeout"
            );
        }
        // The sessions' turns have ended: their spans go out now (within the deadline).
        if let Some(telemetry) = &self.sessions.settings().telemetry {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            telemetry.shutdown(left.max(TELEMETRY_FLUSH_MIN)).await;
        }
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        // Connections still open after a grace period are dropped.
        let grace = deadline.min(tokio::time::Instant::now() + SHUTDOWN_GRACE);
        let served = match tokio::time::timeout_at(grace, &mut self.task).await {
            Ok(served) => served.map_err(|e| std::io::Error::other(e.to_string()))?,
            Err(_) => {
                self.task.abort();
                Ok(())
            }
        };
        let store = self.sessions.store().clone();
        let health = store.health();
        let unwritten = tokio::task::spawn_blocking(move || store.close(deadline.into_std()))
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        if !unwritten.is_empty() {
            let why = health.detail.unwrap_or_else(|| "the store failed".into());
            tracing::error!(events = unwritten.events(), sessions = %unwritten, %why, "events could not be written before the shutdown timeout");
            return Err(std::io::Error::other(format!(
                "{} events could not be written within the shutdown timeout ({:?}; {why}): {unwritten}; \
                 they are lost, and the next start closes the turns they belonged to",
                unwritten.events(),
                self.shutdown_timeout,
            )));
        }
        served
    }
}

/// The data directory's stable daemon id (the owner it writes sessions as), created on
/// first start.
fn daemon_id(data_dir: &std::path::Path) -> std::io::Result<String> {
    let path = data_dir.join("daemon-id");
    match std::fs::read_to_string(&path) {
        Ok(id) if !id.trim().is_empty() => Ok(id.trim().to_string()),
        Ok(_) | Err(_) => {
            let id = uuid::Uuid::new_v4().to_string();
            crate::private::write_file(&path, format!("{id}\n").as_bytes())?;
            Ok(id)
        }
    }
}

/// Raises the soft limit on open files to the hard limit (agents' pipes and SSE clients
/// use descriptors; sessions do not).
pub fn raise_open_files_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid pointer to a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            let soft = limit.rlim_cur;
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                tracing::debug!(
                    from = soft,
                    to = limit.rlim_max,
                    "raised the open-files limit"
                );
            }
        }
    }
}

/// The session manager over the configured store.
async fn manager(config: ServerConfig) -> std::io::Result<Arc<SessionManager>> {
    let data_dir = config.sessions.data_dir.clone();
    let id = daemon_id(&data_dir)?;
    let store_config = config
        .store
        .unwrap_or_else(|| StoreConfig::Sqlite(data_dir.join("store.db")));
    let store = Store::open(&store_config, &id, config.store_options)
        .await
        .map_err(|e| std::io::Error::other(format!("opening the session store: {e}")))?;
    let credentials = Arc::new(Credentials::new(
        CredentialStore::new(&data_dir),
        config.provider_env.clone(),
    ));
    let context = Arc::new(DriverContext {
        locator: config.locator,
        provider_env: config.provider_env,
        data_dir: data_dir.clone(),
        executable: match config.executable {
            Some(path) => path,
            None => std::env::current_exe()?,
        },
    });
    let installs = Arc::new(AgentInstalls::new(
        config.install.map(sandbox_install::Installer::new),
        config.auto_install,
        context.clone(),
    ));
    Ok(Arc::new(SessionManager::new(
        AgentRegistry::new(context),
        installs,
        credentials,
        config.sessions,
        store,
    )))
}

/// Work the daemon does on its own: importing a JSON-lines data dir, closing turns a
/// crash left running, forwarding other daemons' commits, letting unused sessions go and
/// purging expired ones.
async fn background(sessions: Arc<SessionManager>, import: bool) {
    if import {
        legacy::import_all(&sessions).await;
    }
    sessions.recover_interrupted().await;
    if let Some(mut commits) = sessions.store().notifications() {
        let heads = sessions.heads().clone();
        tokio::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                match commits.recv().await {
                    Ok((sid, sequence)) => heads.publish(sid, sequence),
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                }
            }
        });
    }
    let mut evict = tokio::time::interval(EVICT_EVERY);
    let mut retention = tokio::time::interval(RETENTION_EVERY);
    loop {
        tokio::select! {
            _ = evict.tick() => {
                let evicted = sessions.evict_unused();
                if evicted > 0 {
                    tracing::debug!(evicted, "let unused sessions go");
                }
                crate::memory::release_free_memory();
            }
            _ = retention.tick() => {
                let purged = sessions.purge_expired().await;
                if purged > 0 {
                    tracing::info!(purged, "purged ended sessions past --retain-ended");
                }
                crate::idempotency::prune(sessions.store()).await;
            }
        }
    }
}

/// Binds and serves in a background task until [`RunningServer::stop`].
pub async fn start(config: ServerConfig) -> std::io::Result<RunningServer> {
    let dir_mode = crate::session::files::dir_mode(config.sessions.agent_user.as_ref());
    crate::private::ensure_dir(&config.sessions.data_dir, dir_mode)?;
    crate::private::ensure_dir(&config.sessions.data_dir.join("sessions"), dir_mode)?;
    let data_lock = DataDirLock::acquire(&config.sessions.data_dir)?;
    raise_open_files_limit();
    let host = config.host.clone();
    let port = config.port;
    let http = config.http.clone();
    let shutdown_timeout = config.shutdown_timeout;
    let sessions = manager(config).await?;
    let import = legacy::begin(&sessions);
    let listener = TcpListener::bind((host.as_str(), port)).await?;
    let addr = listener.local_addr()?;
    sessions.settings().host_tools.set_endpoint(addr);
    let app = build_app(sessions.clone(), &http, Some(addr));
    let (shutdown, stop) = oneshot::channel::<()>();
    let timeouts = http.timeouts;
    let task = tokio::spawn(crate::serve::serve(listener, app, timeouts, async move {
        let _ = stop.await;
    }));
    let background = tokio::spawn(background(sessions.clone(), import));
    let webhooks = crate::webhooks::spawn_dispatcher(
        sessions.store().clone(),
        sessions.settings().webhooks,
        sessions.closing(),
    );
    Ok(RunningServer {
        addr,
        _data_lock: data_lock,
        sessions,
        shutdown: Some(shutdown),
        shutdown_timeout,
        task,
        background,
        webhooks,
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
        use std::os::unix::fs::OpenOptionsExt;
        let path = data_dir.join("daemon.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
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
