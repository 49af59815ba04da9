//! The PostgreSQL read side: a connection pool.

use async_trait::async_trait;
use deadpool_postgres::Pool;
use sandbox_universal::SessionStatus;
use tokio::sync::{broadcast, oneshot};
use tokio_postgres::Row;

use super::{outage, pool_outage};
use crate::store::{
    EventRow, ListQuery, NativeRow, ReadBackend, SessionRow, StoreError, Stored, StoredName,
};

/// Session ids this daemon may take over: unowned, its own, or owned by a daemon whose
/// heartbeat is older than the lease (owner `$1`, lease cut-off `$2`). Callers add
/// `AND ...` conditions.
const CLAIMABLE: &str =
    "SELECT s.session_id FROM sessions s LEFT JOIN daemons d ON d.daemon_id = s.owner
     WHERE (s.owner IS NULL OR s.owner = $1 OR d.heartbeat_ms IS NULL OR d.heartbeat_ms <= $2)";

/// The columns of a [`SessionRow`], joined with the owner's heartbeat and the time of the
/// last event (one lookup by the events' key).
const SESSION_COLUMNS: &str = "s.sid, s.session_id, s.record_version, s.record, s.agent, s.status,
    s.created_ms, s.ended_ms, s.last_sequence, s.state_version, s.state_sequence, s.state,
    s.owner, (d.heartbeat_ms IS NOT NULL AND d.heartbeat_ms > $1) AS alive,
    (SELECT e.time_us FROM events e WHERE e.sid = s.sid AND e.sequence = s.last_sequence)
    FROM sessions s LEFT JOIN daemons d ON d.daemon_id = s.owner";

fn session_row(row: &Row) -> SessionRow {
    SessionRow {
        sid: row.get(0),
        session_id: row.get(1),
        record_version: row.get::<_, i32>(2) as u32,
        record: row.get(3),
        agent: Stored::parse(row.get(4)),
        status: Stored::parse(row.get(5)),
        created_ms: row.get(6),
        ended_ms: row.get(7),
        last_sequence: row.get::<_, i64>(8) as u64,
        state_version: row.get::<_, Option<i32>>(9).map(|v| v as u32),
        state_sequence: row.get::<_, Option<i64>>(10).map(|s| s as u64),
        state: row.get(11),
        owner: row.get(12),
        owner_alive: row.get(13),
        last_event_us: row.get(14),
    }
}

fn event_row(row: &Row) -> EventRow {
    EventRow {
        sequence: row.get::<_, i64>(0) as u64,
        version: row.get::<_, i32>(1) as u32,
        event_type: row.get(2),
        time_us: row.get(3),
        body: row.get(4),
        raw: row.get(5),
    }
}

/// The read side: a connection pool.
pub(crate) struct PgReads {
    pub(super) pool: Pool,
    pub(super) notifications: broadcast::Sender<(i64, u64)>,
    pub(super) _stop_listening: oneshot::Sender<()>,
}

impl PgReads {
    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        let client = self.pool.get().await.map_err(pool_outage)?;
        let statement = client.prepare_cached(sql).await.map_err(outage)?;
        client.query(&statement, params).await.map_err(outage)
    }
}

#[async_trait]
impl ReadBackend for PgReads {
    fn notifications(&self) -> Option<broadcast::Receiver<(i64, u64)>> {
        Some(self.notifications.subscribe())
    }

    async fn session(
        &self,
        id: &str,
        alive_after_ms: i64,
    ) -> Result<Option<SessionRow>, StoreError> {
        let rows = self
            .query(
                &format!("SELECT {SESSION_COLUMNS} WHERE s.session_id = $2"),
                &[&alive_after_ms, &id],
            )
            .await?;
        Ok(rows.first().map(session_row))
    }

    async fn sessions(
        &self,
        query: &ListQuery,
        alive_after_ms: i64,
    ) -> Result<Vec<SessionRow>, StoreError> {
        let rows = self
            .query(
                &format!(
                    "SELECT {SESSION_COLUMNS} WHERE s.sid > $2
                     AND ($3::text IS NULL OR s.status = $3) ORDER BY s.sid LIMIT $4"
                ),
                &[
                    &alive_after_ms,
                    &query.after_sid.unwrap_or(0),
                    &query.status.map(StoredName::stored_name),
                    &(query.limit as i64),
                ],
            )
            .await?;
        Ok(rows.iter().map(session_row).collect())
    }

    async fn events(
        &self,
        sid: i64,
        after: u64,
        limit: usize,
        with_raw: bool,
    ) -> Result<Vec<EventRow>, StoreError> {
        let sql = if with_raw {
            "SELECT sequence, version, type, time_us, body, raw FROM events
             WHERE sid = $1 AND sequence > $2 ORDER BY sequence LIMIT $3"
        } else {
            "SELECT sequence, version, type, time_us, body, NULL::text FROM events
             WHERE sid = $1 AND sequence > $2 ORDER BY sequence LIMIT $3"
        };
        let rows = self
            .query(sql, &[&sid, &(after as i64), &(limit as i64)])
            .await?;
        Ok(rows.iter().map(event_row).collect())
    }

    async fn state_events(
        &self,
        sid: i64,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EventRow>, StoreError> {
        let rows = self
            .query(
                "SELECT sequence, version, type, time_us, body, NULL::text FROM events
                 WHERE sid = $1 AND sequence > $2 AND type <> 'itemDelta'
                 ORDER BY sequence LIMIT $3",
                &[&sid, &(after as i64), &(limit as i64)],
            )
            .await?;
        Ok(rows.iter().map(event_row).collect())
    }

    async fn last_event(&self, sid: i64) -> Result<Option<(u64, i64)>, StoreError> {
        let rows = self
            .query(
                "SELECT sequence, time_us FROM events WHERE sid = $1
                 ORDER BY sequence DESC LIMIT 1",
                &[&sid],
            )
            .await?;
        Ok(rows
            .first()
            .map(|row| (row.get::<_, i64>(0) as u64, row.get(1))))
    }

    async fn native(&self, sid: i64) -> Result<Option<NativeRow>, StoreError> {
        let rows = self
            .query(
                "SELECT agent, body, saved_ms FROM native_states WHERE sid = $1",
                &[&sid],
            )
            .await?;
        Ok(rows.first().map(|r| NativeRow {
            agent: Stored::parse(r.get(0)),
            body: r.get(1),
            saved_ms: r.get(2),
        }))
    }

    async fn ended_before(
        &self,
        ended_before_ms: i64,
        owner: &str,
        alive_after_ms: i64,
    ) -> Result<Vec<String>, StoreError> {
        let rows = self
            .query(
                &format!(
                    "{CLAIMABLE} AND s.status = $4 AND s.ended_ms < $3
                     ORDER BY s.ended_ms LIMIT 1000"
                ),
                &[
                    &owner,
                    &alive_after_ms,
                    &ended_before_ms,
                    &SessionStatus::Ended.stored_name(),
                ],
            )
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn interrupted(
        &self,
        owner: &str,
        alive_after_ms: i64,
    ) -> Result<Vec<String>, StoreError> {
        let rows = self
            .query(
                &format!("{CLAIMABLE} AND s.status = $3 ORDER BY s.sid"),
                &[
                    &owner,
                    &alive_after_ms,
                    &SessionStatus::Running.stored_name(),
                ],
            )
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}
