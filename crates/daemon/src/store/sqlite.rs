//! The embedded backend: one SQLite database file in WAL mode. A commit is in the WAL when
//! it returns, so it survives any crash or kill of the daemon; with `fsync` it is also
//! synced to the disk (survives a power loss; each commit then waits for the disk). One
//! write connection, owned by the writer thread; a checkpointer thread with its own
//! connection, so commits never pay for checkpoints; a small pool of read connections used
//! from blocking tasks.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior, params};
use tokio::sync::Semaphore;

use super::migrations::{self, MIGRATIONS};
use super::writer::{SessionWrites, WriteBackend};
use super::{
    EVENT_VERSION, EventRow, ListQuery, NewSession, ReadBackend, SessionRow, StateSnapshot,
    StoreError,
};

/// Read connections kept open (each holds three file descriptors).
const READERS: usize = 4;
/// How often the checkpointer copies the WAL into the database.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

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

/// Copies the WAL into the database every [`CHECKPOINT_EVERY`] (never blocking the writer
/// or readers) until dropped.
struct Checkpointer {
    stop: Arc<(Mutex<bool>, std::sync::Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    fn start(conn: Connection) -> std::io::Result<Self> {
        let stop = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        let signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name("store-checkpoint".into())
            .spawn(move || {
                let (stopped, wake) = &*signal;
                let mut stopped = stopped.lock().expect("checkpointer lock");
                while !*stopped {
                    stopped = wake
                        .wait_timeout(stopped, CHECKPOINT_EVERY)
                        .expect("checkpointer lock")
                        .0;
                    if let Err(error) =
                        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                    {
                        tracing::debug!(%error, "a WAL checkpoint failed; the next one retries");
                    }
                }
            })?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
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
    let readers = (0..READERS)
        .map(|_| connect(path, Role::Read))
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(outage)?;
    let checkpointer = Checkpointer::start(connect(path, Role::Checkpoint).map_err(outage)?)
        .map_err(|e| StoreError::Unavailable(format!("starting the checkpointer: {e}")))?;
    Ok((
        SqliteReads {
            pool: Arc::new(Mutex::new(readers)),
            permits: Arc::new(Semaphore::new(READERS)),
        },
        SqliteWrites {
            conn: writer,
            _checkpointer: checkpointer,
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

/// The columns of a [`SessionRow`], joined with the owner's heartbeat.
const SESSION_COLUMNS: &str = "s.sid, s.session_id, s.record_version, s.record, s.agent, s.status,
    s.created_ms, s.ended_ms, s.last_sequence, s.state_version, s.state_sequence, s.state,
    s.owner, (d.heartbeat_ms IS NOT NULL AND d.heartbeat_ms > :alive) AS alive
    FROM sessions s LEFT JOIN daemons d ON d.daemon_id = s.owner";

fn session_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        sid: row.get(0)?,
        session_id: row.get(1)?,
        record_version: row.get(2)?,
        record: row.get(3)?,
        agent: row.get(4)?,
        status: row.get(5)?,
        created_ms: row.get(6)?,
        ended_ms: row.get(7)?,
        last_sequence: row.get::<_, i64>(8)? as u64,
        state_version: row.get(9)?,
        state_sequence: row.get::<_, Option<i64>>(10)?.map(|s| s as u64),
        state: row.get(11)?,
        owner: row.get(12)?,
        owner_alive: row.get(13)?,
    })
}

fn event_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<EventRow> {
    Ok(EventRow {
        sequence: row.get::<_, i64>(0)? as u64,
        version: row.get(1)?,
        event_type: row.get(2)?,
        time_us: row.get(3)?,
        body: row.get(4)?,
        raw: row.get(5)?,
    })
}

/// The read side: a pool of connections used from blocking tasks.
pub(super) struct SqliteReads {
    pool: Arc<Mutex<Vec<Connection>>>,
    permits: Arc<Semaphore>,
}

impl SqliteReads {
    async fn with<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| StoreError::Unavailable("the store is closed".into()))?;
        let conn = self
            .pool
            .lock()
            .expect("reader pool lock")
            .pop()
            .expect("a permit guarantees a connection");
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || {
            let result = read(&conn);
            pool.lock().expect("reader pool lock").push(conn);
            result.map_err(outage)
        })
        .await
        .map_err(|e| StoreError::Unavailable(format!("a store read panicked: {e}")))?
    }
}

#[async_trait]
impl ReadBackend for SqliteReads {
    async fn session(
        &self,
        id: &str,
        alive_after_ms: i64,
    ) -> Result<Option<SessionRow>, StoreError> {
        let id = id.to_string();
        self.with(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {SESSION_COLUMNS} WHERE s.session_id = :id"
            ))?
            .query_row(
                rusqlite::named_params! {":id": id, ":alive": alive_after_ms},
                session_row,
            )
            .optional()
        })
        .await
    }

    async fn sessions(
        &self,
        query: &ListQuery,
        alive_after_ms: i64,
    ) -> Result<Vec<SessionRow>, StoreError> {
        let query = query.clone();
        self.with(move |conn| {
            let mut statement = conn.prepare_cached(&format!(
                "SELECT {SESSION_COLUMNS} WHERE s.sid > :after
                 AND (:status IS NULL OR s.status = :status) ORDER BY s.sid LIMIT :limit"
            ))?;
            let rows = statement.query_map(
                rusqlite::named_params! {
                    ":after": query.after_sid.unwrap_or(0),
                    ":status": query.status,
                    ":limit": query.limit as i64,
                    ":alive": alive_after_ms,
                },
                session_row,
            )?;
            rows.collect()
        })
        .await
    }

    async fn events(
        &self,
        sid: i64,
        after: u64,
        limit: usize,
        with_raw: bool,
    ) -> Result<Vec<EventRow>, StoreError> {
        self.with(move |conn| {
            let sql = if with_raw {
                "SELECT sequence, version, type, time_us, body, raw FROM events
                 WHERE sid = ?1 AND sequence > ?2 ORDER BY sequence LIMIT ?3"
            } else {
                "SELECT sequence, version, type, time_us, body, NULL FROM events
                 WHERE sid = ?1 AND sequence > ?2 ORDER BY sequence LIMIT ?3"
            };
            let mut statement = conn.prepare_cached(sql)?;
            let rows = statement.query_map(params![sid, after as i64, limit as i64], event_row)?;
            rows.collect()
        })
        .await
    }

    async fn state_events(
        &self,
        sid: i64,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EventRow>, StoreError> {
        self.with(move |conn| {
            let mut statement = conn.prepare_cached(
                "SELECT sequence, version, type, time_us, body, NULL FROM events
                 WHERE sid = ?1 AND sequence > ?2 AND type <> 'itemDelta'
                 ORDER BY sequence LIMIT ?3",
            )?;
            let rows = statement.query_map(params![sid, after as i64, limit as i64], event_row)?;
            rows.collect()
        })
        .await
    }

    async fn last_sequence(&self, sid: i64) -> Result<u64, StoreError> {
        self.with(move |conn| {
            conn.prepare_cached("SELECT COALESCE(MAX(sequence), 0) FROM events WHERE sid = ?1")?
                .query_row([sid], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
        })
        .await
    }

    async fn ended_before(
        &self,
        ended_before_ms: i64,
        owner: &str,
        alive_after_ms: i64,
    ) -> Result<Vec<String>, StoreError> {
        let owner = owner.to_string();
        self.with(move |conn| {
            let mut statement = conn.prepare_cached(
                "SELECT s.session_id FROM sessions s LEFT JOIN daemons d ON d.daemon_id = s.owner
                 WHERE s.status = 'ended' AND s.ended_ms < ?1
                 AND (s.owner IS NULL OR s.owner = ?2 OR d.heartbeat_ms IS NULL OR d.heartbeat_ms <= ?3)
                 ORDER BY s.ended_ms LIMIT 1000",
            )?;
            let rows = statement.query_map(params![ended_before_ms, owner, alive_after_ms], |r| {
                r.get(0)
            })?;
            rows.collect()
        })
        .await
    }

    async fn interrupted(
        &self,
        owner: &str,
        alive_after_ms: i64,
    ) -> Result<Vec<String>, StoreError> {
        let owner = owner.to_string();
        self.with(move |conn| {
            let mut statement = conn.prepare_cached(
                "SELECT s.session_id FROM sessions s LEFT JOIN daemons d ON d.daemon_id = s.owner
                 WHERE s.status = 'running'
                 AND (s.owner IS NULL OR s.owner = ?1 OR d.heartbeat_ms IS NULL OR d.heartbeat_ms <= ?2)
                 ORDER BY s.sid",
            )?;
            let rows = statement.query_map(params![owner, alive_after_ms], |r| r.get(0))?;
            rows.collect()
        })
        .await
    }
}

/// The write side, owned by the writer thread.
pub(super) struct SqliteWrites {
    conn: Connection,
    _checkpointer: Checkpointer,
}

fn insert_events<'a>(
    tx: &rusqlite::Transaction<'_>,
    sid: i64,
    rows: impl Iterator<Item = (u64, u32, &'a str, i64, &'a str, Option<&'a str>)>,
) -> rusqlite::Result<u64> {
    let mut insert = tx.prepare_cached(
        "INSERT OR IGNORE INTO events (sid, sequence, version, type, time_us, body, raw)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut last = 0;
    for (sequence, version, event_type, time_us, body, raw) in rows {
        insert.execute(params![
            sid,
            sequence as i64,
            version,
            event_type,
            time_us,
            body,
            raw
        ])?;
        last = last.max(sequence);
    }
    Ok(last)
}

fn save_state(
    tx: &rusqlite::Transaction<'_>,
    sid: i64,
    last_sequence: u64,
    state: &StateSnapshot,
) -> rusqlite::Result<usize> {
    tx.prepare_cached(
        "UPDATE sessions SET last_sequence = MAX(last_sequence, ?2), status = ?3, ended_ms = ?4,
         state_version = ?5, state_sequence = ?6, state = ?7 WHERE sid = ?1",
    )?
    .execute(params![
        sid,
        last_sequence as i64,
        state.status,
        state.ended_ms,
        state.version,
        state.sequence as i64,
        state.json
    ])
}

impl WriteBackend for SqliteWrites {
    fn commit(&mut self, batch: &[SessionWrites], owner: &str) -> Result<Vec<i64>, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(outage)?;
        let mut lost = Vec::new();
        for writes in batch {
            let owned = tx
                .prepare_cached("SELECT 1 FROM sessions WHERE sid = ?1 AND owner = ?2")
                .and_then(|mut s| s.exists(params![writes.sid, owner]))
                .map_err(outage)?;
            if !owned {
                lost.push(writes.sid);
                continue;
            }
            let last = insert_events(
                &tx,
                writes.sid,
                writes.events.iter().map(|e| {
                    (
                        e.sequence,
                        EVENT_VERSION,
                        e.event_type.as_str(),
                        e.time_us,
                        &*e.json,
                        e.raw.as_deref(),
                    )
                }),
            )
            .map_err(outage)?;
            match &writes.state {
                Some(state) => save_state(&tx, writes.sid, last, state),
                None => tx
                    .prepare_cached(
                        "UPDATE sessions SET last_sequence = MAX(last_sequence, ?2) WHERE sid = ?1",
                    )
                    .and_then(|mut s| s.execute(params![writes.sid, last as i64])),
            }
            .map_err(outage)?;
        }
        tx.commit().map_err(outage)?;
        Ok(lost)
    }

    fn create(&mut self, session: &NewSession, owner: &str) -> Result<i64, StoreError> {
        let result = self.conn.execute(
            "INSERT INTO sessions (session_id, record_version, record, agent, status, created_ms, owner)
             VALUES (?1, ?2, ?3, ?4, 'idle', ?5, ?6)",
            params![
                session.session_id,
                session.record_version,
                session.record,
                session.agent,
                session.created_ms,
                owner
            ],
        );
        match result {
            Ok(_) => Ok(self.conn.last_insert_rowid()),
            Err(e) if is_unique_violation(&e) => {
                Err(StoreError::Exists(session.session_id.clone()))
            }
            Err(e) => Err(outage(e)),
        }
    }

    fn claim(&mut self, sid: i64, owner: &str, alive_after_ms: i64) -> Result<(), StoreError> {
        let claimed = self
            .conn
            .execute(
                "UPDATE sessions SET owner = ?2 WHERE sid = ?1 AND (owner IS NULL OR owner = ?2
                 OR owner NOT IN (SELECT daemon_id FROM daemons WHERE heartbeat_ms > ?3))",
                params![sid, owner, alive_after_ms],
            )
            .map_err(outage)?;
        if claimed == 1 {
            return Ok(());
        }
        let current: Option<Option<String>> = self
            .conn
            .query_row("SELECT owner FROM sessions WHERE sid = ?1", [sid], |r| {
                r.get(0)
            })
            .optional()
            .map_err(outage)?;
        Err(match current {
            Some(other) => StoreError::OwnedElsewhere(other.unwrap_or_default()),
            None => StoreError::NotFound(format!("session {sid} was purged")),
        })
    }

    fn purge(&mut self, sid: i64) -> Result<(), StoreError> {
        let tx = self.conn.transaction().map_err(outage)?;
        tx.execute("DELETE FROM sessions WHERE sid = ?1", [sid])
            .map_err(outage)?;
        tx.execute("INSERT OR IGNORE INTO purged (sid) VALUES (?1)", [sid])
            .map_err(outage)?;
        tx.commit().map_err(outage)
    }

    fn reap(&mut self, limit: usize) -> Result<usize, StoreError> {
        let Some(sid): Option<i64> = self
            .conn
            .query_row("SELECT sid FROM purged LIMIT 1", [], |r| r.get(0))
            .optional()
            .map_err(outage)?
        else {
            return Ok(0);
        };
        let deleted = self
            .conn
            .execute(
                "DELETE FROM events WHERE sid = ?1 AND sequence IN
                 (SELECT sequence FROM events WHERE sid = ?1 ORDER BY sequence LIMIT ?2)",
                params![sid, limit as i64],
            )
            .map_err(outage)?;
        if deleted == 0 {
            self.conn
                .execute("DELETE FROM purged WHERE sid = ?1", [sid])
                .map_err(outage)?;
        }
        Ok(deleted.max(1))
    }

    fn heartbeat(&mut self, daemon_id: &str, now_ms: i64) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO daemons (daemon_id, heartbeat_ms) VALUES (?1, ?2)
                 ON CONFLICT (daemon_id) DO UPDATE SET heartbeat_ms = excluded.heartbeat_ms",
                params![daemon_id, now_ms],
            )
            .map(|_| ())
            .map_err(outage)
    }

    fn import(
        &mut self,
        session: &NewSession,
        owner: &str,
        events: &mut dyn Iterator<Item = EventRow>,
        state: Option<&StateSnapshot>,
    ) -> Result<i64, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(outage)?;
        let created = tx.execute(
            "INSERT INTO sessions (session_id, record_version, record, agent, status, created_ms, owner)
             VALUES (?1, ?2, ?3, ?4, 'idle', ?5, ?6)",
            params![
                session.session_id,
                session.record_version,
                session.record,
                session.agent,
                session.created_ms,
                owner
            ],
        );
        match created {
            Ok(_) => {}
            Err(e) if is_unique_violation(&e) => {
                return Err(StoreError::Exists(session.session_id.clone()));
            }
            Err(e) => return Err(outage(e)),
        }
        let sid = tx.last_insert_rowid();
        let mut last = 0;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO events (sid, sequence, version, type, time_us, body, raw)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(outage)?;
            for row in events {
                insert
                    .execute(params![
                        sid,
                        row.sequence as i64,
                        row.version,
                        row.event_type,
                        row.time_us,
                        row.body,
                        row.raw
                    ])
                    .map_err(outage)?;
                last = row.sequence;
            }
        }
        match state {
            Some(state) => save_state(&tx, sid, last, state),
            None => tx.execute(
                "UPDATE sessions SET last_sequence = ?2 WHERE sid = ?1",
                params![sid, last as i64],
            ),
        }
        .map_err(outage)?;
        tx.commit().map_err(outage)?;
        Ok(sid)
    }
}
