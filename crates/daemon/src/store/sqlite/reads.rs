//! The SQLite read side: a pool of connections used from blocking tasks.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};
use sandbox_universal::SessionStatus;
use tokio::sync::Semaphore;

use super::outage;
use crate::store::{
    EventRow, ListQuery, NativeRow, ReadBackend, SessionRow, StoreError, Stored, StoredName,
};

/// Session ids this daemon may take over: unowned, its own, or owned by a daemon whose
/// heartbeat is older than the lease (owner `?1`, lease cut-off `?2`). Callers add
/// `AND ...` conditions.
const CLAIMABLE: &str =
    "SELECT s.session_id FROM sessions s LEFT JOIN daemons d ON d.daemon_id = s.owner
     WHERE (s.owner IS NULL OR s.owner = ?1 OR d.heartbeat_ms IS NULL OR d.heartbeat_ms <= ?2)";

/// The columns of a [`SessionRow`], joined with the owner's heartbeat and the time of the
/// last event (one lookup by the events' key).
const SESSION_COLUMNS: &str = "s.sid, s.session_id, s.record_version, s.record, s.agent, s.status,
    s.created_ms, s.ended_ms, s.last_sequence, s.state_version, s.state_sequence, s.state,
    s.owner, (d.heartbeat_ms IS NOT NULL AND d.heartbeat_ms > :alive) AS alive,
    (SELECT e.time_us FROM events e WHERE e.sid = s.sid AND e.sequence = s.last_sequence)
    FROM sessions s LEFT JOIN daemons d ON d.daemon_id = s.owner";

fn session_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        sid: row.get(0)?,
        session_id: row.get(1)?,
        record_version: row.get(2)?,
        record: row.get(3)?,
        agent: Stored::parse(row.get(4)?),
        status: Stored::parse(row.get(5)?),
        created_ms: row.get(6)?,
        ended_ms: row.get(7)?,
        last_sequence: row.get::<_, i64>(8)? as u64,
        state_version: row.get(9)?,
        state_sequence: row.get::<_, Option<i64>>(10)?.map(|s| s as u64),
        state: row.get(11)?,
        owner: row.get(12)?,
        owner_alive: row.get(13)?,
        last_event_us: row.get(14)?,
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

/// The read side: a pool of connections used from blocking tasks, opened when first
/// needed (a daemon that only answers `/health` opens none) and kept, up to as many as
/// there are permits.
pub(crate) struct SqliteReads {
    pub(super) path: Arc<std::path::Path>,
    pub(super) pool: Arc<Mutex<Vec<Connection>>>,
    pub(super) permits: Arc<Semaphore>,
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
        // A permit guarantees a connection is idle or may be opened.
        let idle = self.pool.lock().expect("reader pool lock").pop();
        let (pool, path) = (self.pool.clone(), self.path.clone());
        tokio::task::spawn_blocking(move || {
            let conn = match idle {
                Some(conn) => conn,
                None => super::connect(&path, super::Role::Read).map_err(outage)?,
            };
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
                    ":status": query.status.map(StoredName::stored_name),
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

    async fn last_event(&self, sid: i64) -> Result<Option<(u64, i64)>, StoreError> {
        self.with(move |conn| {
            conn.prepare_cached(
                "SELECT sequence, time_us FROM events WHERE sid = ?1
                 ORDER BY sequence DESC LIMIT 1",
            )?
            .query_row([sid], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))
            .optional()
        })
        .await
    }

    async fn native(&self, sid: i64) -> Result<Option<NativeRow>, StoreError> {
        self.with(move |conn| {
            conn.prepare_cached("SELECT agent, body, saved_ms FROM native_states WHERE sid = ?1")?
                .query_row([sid], |r| {
                    Ok(NativeRow {
                        agent: Stored::parse(r.get(0)?),
                        body: r.get(1)?,
                        saved_ms: r.get(2)?,
                    })
                })
                .optional()
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
            let mut statement = conn.prepare_cached(&format!(
                "{CLAIMABLE} AND s.status = ?4 AND s.ended_ms < ?3
                 ORDER BY s.ended_ms LIMIT 1000"
            ))?;
            let ended = SessionStatus::Ended.stored_name();
            let rows = statement.query_map(
                params![owner, alive_after_ms, ended_before_ms, ended],
                |r| r.get(0),
            )?;
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
            let mut statement =
                conn.prepare_cached(&format!("{CLAIMABLE} AND s.status = ?3 ORDER BY s.sid"))?;
            let running = SessionStatus::Running.stored_name();
            let rows =
                statement.query_map(params![owner, alive_after_ms, running], |r| r.get(0))?;
            rows.collect()
        })
        .await
    }
}
