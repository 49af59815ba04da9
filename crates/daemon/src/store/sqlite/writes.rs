//! The SQLite write side, owned by the writer thread.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sandbox_universal::SessionStatus;

use super::{Checkpointer, is_unique_violation, outage};
use crate::store::queue::SessionWrites;
use crate::store::writer::WriteBackend;
use crate::store::{
    EVENT_VERSION, EventRow, NativeRow, NewSession, StateSnapshot, StoreError, StoredName,
};

/// The write side, owned by the writer thread.
pub(crate) struct SqliteWrites {
    pub(super) conn: Connection,
    /// Told how much each transaction wrote, so it checkpoints when the WAL has grown.
    pub(super) checkpointer: Checkpointer,
    /// Whether each commit is synced to the disk (`--fsync`).
    pub(super) fsync: bool,
    /// Whether any webhook is stored (`None`: not known yet). Only this connection writes
    /// webhooks (SQLite is one daemon's), so it knows when this changes.
    pub(super) webhooks: Option<bool>,
    /// Deliveries queued by commits since the writer last asked.
    pub(super) queued_deliveries: usize,
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

/// Queues the deliveries of a session's events to the webhooks that want them (see
/// `side.rs`); answers how many.
fn queue_deliveries(
    tx: &rusqlite::Transaction<'_>,
    writes: &SessionWrites,
) -> rusqlite::Result<usize> {
    let mut queue = tx.prepare_cached(super::side::QUEUE_DELIVERIES)?;
    let now = crate::store::now_ms();
    let mut queued = 0;
    for event in writes
        .events
        .iter()
        .filter(|e| sandbox_universal::subscribable(e.event_type))
    {
        queued += queue.execute(params![
            writes.sid,
            event.sequence as i64,
            event.event_type.as_str(),
            &*event.json,
            now
        ])?;
    }
    Ok(queued)
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
        state.status.stored_name(),
        state.ended_ms,
        state.version,
        state.sequence as i64,
        state.json
    ])
}

impl SqliteWrites {
    /// Whether any webhook is stored (read once, then kept up to date).
    fn any_webhook(&mut self) -> rusqlite::Result<bool> {
        if let Some(any) = self.webhooks {
            return Ok(any);
        }
        let any = self
            .conn
            .query_row("SELECT EXISTS (SELECT 1 FROM webhooks)", [], |r| r.get(0))?;
        self.webhooks = Some(any);
        Ok(any)
    }

    /// `Ok` when a write to session `sid` changed a row, else why not: another daemon
    /// owns it, or it is gone.
    fn owned(&self, sid: i64, changed: usize) -> Result<(), StoreError> {
        if changed > 0 {
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
}

impl WriteBackend for SqliteWrites {
    fn commits_quickly(&self) -> bool {
        // Without a sync, a commit is a few page writes into the OS cache.
        !self.fsync
    }

    fn commit(&mut self, batch: &[SessionWrites], owner: &str) -> Result<Vec<i64>, StoreError> {
        let webhooks = self.any_webhook().map_err(outage)?;
        let mut queued = 0;
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
            if webhooks {
                queued += queue_deliveries(&tx, writes).map_err(outage)?;
            }
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
        self.queued_deliveries += queued;
        let bytes = batch
            .iter()
            .flat_map(|w| w.events.iter())
            .map(|e| e.json.len() + e.raw.as_deref().map_or(0, str::len))
            .sum::<usize>()
            + batch
                .iter()
                .filter_map(|w| w.state.as_ref())
                .map(|s| s.json.len())
                .sum::<usize>();
        self.checkpointer.wrote(bytes);
        Ok(lost)
    }

    fn create(&mut self, session: &NewSession, owner: &str) -> Result<i64, StoreError> {
        self.checkpointer.wrote(1);
        let result = self.conn.execute(
            "INSERT INTO sessions (session_id, record_version, record, agent, status, created_ms, owner)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                session.session_id,
                session.record_version,
                session.record,
                session.agent.name(),
                SessionStatus::Idle.stored_name(),
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
        self.checkpointer.wrote(1);
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
        self.checkpointer.wrote(1);
        let tx = self.conn.transaction().map_err(outage)?;
        tx.execute("DELETE FROM sessions WHERE sid = ?1", [sid])
            .map_err(outage)?;
        tx.execute("DELETE FROM native_states WHERE sid = ?1", [sid])
            .map_err(outage)?;
        let webhooks = tx
            .execute("DELETE FROM webhooks WHERE sid = ?1", [sid])
            .map_err(outage)?;
        if webhooks > 0 {
            tx.execute(
                "DELETE FROM webhook_deliveries WHERE sid = ?1 AND webhook_id NOT IN
                 (SELECT webhook_id FROM webhooks)",
                [sid],
            )
            .map_err(outage)?;
        }
        tx.execute("INSERT OR IGNORE INTO purged (sid) VALUES (?1)", [sid])
            .map_err(outage)?;
        tx.commit().map_err(outage)?;
        if webhooks > 0 {
            self.webhooks = None;
        }
        Ok(())
    }

    fn reap(&mut self, limit: usize) -> Result<usize, StoreError> {
        self.checkpointer.wrote(1);
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
        self.checkpointer.wrote(1);
        self.conn
            .execute(
                "INSERT INTO daemons (daemon_id, heartbeat_ms) VALUES (?1, ?2)
                 ON CONFLICT (daemon_id) DO UPDATE SET heartbeat_ms = excluded.heartbeat_ms",
                params![daemon_id, now_ms],
            )
            .map(|_| ())
            .map_err(outage)
    }

    fn rewrite(&mut self, sid: i64, session: &NewSession, owner: &str) -> Result<(), StoreError> {
        self.checkpointer.wrote(1);
        let updated = self
            .conn
            .execute(
                "UPDATE sessions SET record_version = ?2, record = ?3, agent = ?4
                 WHERE sid = ?1 AND owner = ?5",
                params![
                    sid,
                    session.record_version,
                    session.record,
                    session.agent.name(),
                    owner
                ],
            )
            .map_err(outage)?;
        self.owned(sid, updated)
    }

    fn side(&mut self) -> Result<&mut dyn crate::store::side::SideWrites, StoreError> {
        Ok(self)
    }

    fn take_queued_deliveries(&mut self) -> usize {
        std::mem::take(&mut self.queued_deliveries)
    }

    fn save_native(&mut self, sid: i64, native: &NativeRow, owner: &str) -> Result<(), StoreError> {
        self.checkpointer.wrote(1);
        let saved = self
            .conn
            .execute(
                "INSERT INTO native_states (sid, agent, body, saved_ms)
                 SELECT ?1, ?2, ?3, ?4 FROM sessions WHERE sid = ?1 AND owner = ?5
                 ON CONFLICT (sid) DO UPDATE SET agent = excluded.agent, body = excluded.body,
                 saved_ms = excluded.saved_ms",
                params![
                    sid,
                    native.agent.name(),
                    native.body,
                    native.saved_ms,
                    owner
                ],
            )
            .map_err(outage)?;
        self.owned(sid, saved)
    }

    fn import(
        &mut self,
        session: &NewSession,
        owner: &str,
        events: &mut dyn Iterator<Item = EventRow>,
        state: Option<&StateSnapshot>,
    ) -> Result<i64, StoreError> {
        self.checkpointer.wrote(1);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(outage)?;
        let created = tx.execute(
            "INSERT INTO sessions (session_id, record_version, record, agent, status, created_ms, owner)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                session.session_id,
                session.record_version,
                session.record,
                session.agent.name(),
                SessionStatus::Idle.stored_name(),
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
