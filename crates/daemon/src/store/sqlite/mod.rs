//! The embedded backend: one SQLite database file in WAL mode. A commit is in the WAL when
//! it returns, so it survives any crash or kill of the daemon; with `fsync` it is also
//! synced to the disk (survives a power loss; each commit then waits for the disk). One
//! write connection, owned by the writer thread; a checkpointer thread with its own
//! connection, so commits never pay for checkpoints; a small pool of read connections used
//! from blocking tasks.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

mod reads;
mod side;
mod writes;

pub(crate) use reads::SqliteReads;
pub(crate) use writes::SqliteWrites;

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior, params};
use tokio::sync::Semaphore;

use super::StoreError;
use super::migrations::{self, MIGRATIONS};

/// Read connections at most, opened when needed and kept (each holds three file
/// descriptors).
const READERS: usize = 4;
/// How often the checkpointer looks at what was written since its last checkpoint.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(250);
/// It copies the WAL into the database once this much was committed since the last time...
const CHECKPOINT_BYTES: usize = 1 << 20;
/// ...or once anything was and this long has passed (a checkpoint costs two fsyncs, so an
/// agent's trickle of small commits pays for one every few seconds, not four a second).
const CHECKPOINT_IDLE: std::time::Duration = std::time::Duration::from_secs(2);

/// Maps a SQLite error to the store's: no space is `Full`, the rest `Unavailable`.
fn outage(error: rusqlite::Error) -> StoreError {
    match error.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => StoreError::Full(error.to_string()),
        _ => StoreError::Unavailable(error.to_string()),
    }
}

fn is_unique_violation(error: &rusqlite::Error) -> bool {
    error.sqlite_error_code() == Some(ErrorCode::ConstraintViolation)
}

/// What a connection is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Write { fsync: bool },
    Checkpoint,
    Read,
}

fn connect(path: &Path, role: Role) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    match role {
        Role::Write { fsync } => {
            conn.pragma_update(None, "synchronous", if fsync { "FULL" } else { "NORMAL" })?;
            // The checkpointer does this off the commit path.
            conn.pragma_update(None, "wal_autocheckpoint", 0)?;
            // Keep the WAL from staying large after a burst.
            conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024)?;
        }
        Role::Checkpoint => conn.pragma_update(None, "synchronous", "NORMAL")?,
        Role::Read => conn.pragma_update(None, "query_only", true)?,
    }
    conn.set_prepared_statement_cache_capacity(32);
    Ok(conn)
}

/// Copies the WAL into the database off the commit path (never blocking the writer or
/// readers): every [`CHECKPOINT_EVERY`] once [`CHECKPOINT_BYTES`] were committed, or after
/// [`CHECKPOINT_IDLE`] when less was. Stops when dropped.
pub(super) struct Checkpointer {
    stop: Arc<(Mutex<bool>, std::sync::Condvar)>,
    written: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the checkpointer of the database at `path`; its connection is opened at its
    /// first checkpoint (an idle daemon never opens it).
    fn start(path: std::path::PathBuf) -> std::io::Result<Self> {
        let stop = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        let written = Arc::new(AtomicUsize::new(0));
        let (signal, pending) = (stop.clone(), written.clone());
        let thread = std::thread::Builder::new()
            .name("store-checkpoint".into())
            .spawn(move || {
                let (stopped, wake) = &*signal;
                let mut stopped = stopped.lock().expect("checkpointer lock");
                let mut last = std::time::Instant::now();
                let mut conn = None;
                while !*stopped {
                    stopped = wake
                        .wait_timeout(stopped, CHECKPOINT_EVERY)
                        .expect("checkpointer lock")
                        .0;
                    let bytes = pending.load(Ordering::Relaxed);
                    let due = bytes >= CHECKPOINT_BYTES
                        || (bytes > 0 && last.elapsed() >= CHECKPOINT_IDLE);
                    if !due {
                        continue;
                    }
                    pending.fetch_sub(bytes, Ordering::Relaxed);
                    last = std::time::Instant::now();
                    let checkpoint = match &conn {
                        Some(conn) => Ok(conn),
                        None => connect(&path, Role::Checkpoint).map(|c| &*conn.insert(c)),
                    }
                    .and_then(|conn: &Connection| {
                        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                    });
                    if let Err(error) = checkpoint {
                        tracing::debug!(%error, "a WAL checkpoint failed; the next one retries");
                        pending.fetch_add(bytes.max(1), Ordering::Relaxed);
                    }
                }
            })?;
        Ok(Self {
            stop,
            written,
            thread: Some(thread),
        })
    }

    /// Counts `bytes` committed to the WAL (any positive amount makes a checkpoint due
    /// within [`CHECKPOINT_IDLE`]).
    pub(super) fn wrote(&self, bytes: usize) {
        self.written.fetch_add(bytes.max(1), Ordering::Relaxed);
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        *self.stop.0.lock().expect("checkpointer lock") = true;
        self.stop.1.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Opens the database at `path` (creating it mode 0600), migrates it, and answers its read
/// and write sides; with `fsync`, every commit is synced to the disk.
pub(super) fn open(path: &Path, fsync: bool) -> Result<(SqliteReads, SqliteWrites), StoreError> {
    let unavailable =
        |e: std::io::Error| StoreError::Unavailable(format!("{}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(unavailable)?;
    }
    if !path.exists() {
        // SQLite gives the -wal and -shm files the database file's mode.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(unavailable)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(unavailable)?;
    }
    let mut writer = connect(path, Role::Write { fsync }).map_err(outage)?;
    migrate(&mut writer)?;
    let checkpointer = Checkpointer::start(path.to_path_buf())
        .map_err(|e| StoreError::Unavailable(format!("starting the checkpointer: {e}")))?;
    Ok((
        SqliteReads {
            path: path.into(),
            pool: Arc::new(Mutex::new(Vec::with_capacity(READERS))),
            permits: Arc::new(Semaphore::new(READERS)),
        },
        SqliteWrites {
            conn: writer,
            checkpointer,
            fsync,
            webhooks: None,
            queued_deliveries: 0,
        },
    ))
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(outage)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL)",
    )
    .map_err(outage)?;
    let current: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
            [],
            |r| r.get(0),
        )
        .map_err(outage)?;
    migrations::check_not_newer(current, "sqlite");
    for migration in migrations::pending(current) {
        tx.execute_batch(migration.sqlite).map_err(outage)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_ms) VALUES (?1, ?2, ?3)",
            params![migration.version, migration.name, super::now_ms()],
        )
        .map_err(outage)?;
    }
    tx.commit().map_err(outage)?;
    debug_assert!(MIGRATIONS.iter().all(|m| !m.sqlite.is_empty()));
    Ok(())
}
