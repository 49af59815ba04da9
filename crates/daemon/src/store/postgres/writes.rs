//! The PostgreSQL write side: one connection on the writer thread's own runtime, one
//! statement per session per commit.

use sandbox_universal::SessionStatus;
use tokio_postgres::Client;

use super::{CHANNEL, INSERT_CHUNK, connect, outage};
use crate::store::queue::SessionWrites;
use crate::store::writer::WriteBackend;
use crate::store::{
    EVENT_VERSION, EventRow, NativeRow, NewSession, StateSnapshot, StoreError, StoredName,
};

/// The write side: one connection on the writer thread's own runtime.
pub(crate) struct PgWrites {
    runtime: tokio::runtime::Runtime,
    config: tokio_postgres::Config,
    connection: Option<Connection>,
    /// Deliveries queued by commits since the writer last asked.
    queued_deliveries: usize,
}

/// The writer's connection and the commit statement prepared on it.
struct Connection {
    client: Client,
    commit: Option<tokio_postgres::Statement>,
}

impl PgWrites {
    pub(super) fn new(config: tokio_postgres::Config) -> Result<Self, StoreError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::Unavailable(format!("starting the store writer: {e}")))?;
        Ok(Self {
            runtime,
            config,
            connection: None,
            queued_deliveries: 0,
        })
    }

    /// Runs `work` on the writer's connection (connecting first if needed); a failed
    /// connection is dropped so the next call reconnects.
    pub(super) fn run<T>(
        &mut self,
        work: impl AsyncFnOnce(&mut Client) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, StoreError> {
        self.run_connection(async |connection| work(&mut connection.client).await)
    }

    fn run_connection<T>(
        &mut self,
        work: impl AsyncFnOnce(&mut Connection) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, StoreError> {
        let Self {
            runtime,
            config,
            connection,
            ..
        } = self;
        runtime.block_on(async {
            if connection.as_ref().is_none_or(|c| c.client.is_closed()) {
                *connection = Some(Connection {
                    client: connect(config).await?,
                    commit: None,
                });
            }
            let live = connection.as_mut().expect("connected");
            let result = work(live).await;
            if live.client.is_closed() {
                *connection = None;
            }
            result.map_err(outage)
        })
    }
}

/// Inserts one session's events (in chunks of multi-row inserts); answers the last
/// sequence.
async fn insert_events(
    tx: &tokio_postgres::Transaction<'_>,
    sid: i64,
    rows: &[EventRow],
) -> Result<u64, tokio_postgres::Error> {
    let statement = tx
        .prepare(
            "INSERT INTO events (sid, sequence, version, type, time_us, body, raw)
             SELECT $1, * FROM UNNEST($2::bigint[], $3::int[], $4::text[], $5::bigint[], $6::text[], $7::text[])
             ON CONFLICT (sid, sequence) DO NOTHING",
        )
        .await?;
    let mut last = 0;
    for chunk in rows.chunks(INSERT_CHUNK) {
        let sequences: Vec<i64> = chunk.iter().map(|r| r.sequence as i64).collect();
        let versions: Vec<i32> = chunk.iter().map(|r| r.version as i32).collect();
        let types: Vec<&str> = chunk.iter().map(|r| r.event_type.as_str()).collect();
        let times: Vec<i64> = chunk.iter().map(|r| r.time_us).collect();
        let bodies: Vec<&str> = chunk.iter().map(|r| r.body.as_str()).collect();
        let raws: Vec<Option<&str>> = chunk.iter().map(|r| r.raw.as_deref()).collect();
        tx.execute(
            &statement,
            &[&sid, &sequences, &versions, &types, &times, &bodies, &raws],
        )
        .await?;
        last = last.max(sequences.last().copied().unwrap_or(0) as u64);
    }
    Ok(last)
}

async fn save_state(
    tx: &tokio_postgres::Transaction<'_>,
    sid: i64,
    last: u64,
    state: Option<&StateSnapshot>,
) -> Result<(), tokio_postgres::Error> {
    match state {
        Some(state) => {
            tx.execute(
                "UPDATE sessions SET last_sequence = GREATEST(last_sequence, $2), status = $3,
                 ended_ms = $4, state_version = $5, state_sequence = $6, state = $7 WHERE sid = $1",
                &[
                    &sid,
                    &(last as i64),
                    &state.status.stored_name(),
                    &state.ended_ms,
                    &(state.version as i32),
                    &(state.sequence as i64),
                    &state.json,
                ],
            )
            .await?
        }
        None => {
            tx.execute(
                "UPDATE sessions SET last_sequence = GREATEST(last_sequence, $2) WHERE sid = $1",
                &[&sid, &(last as i64)],
            )
            .await?
        }
    };
    if last > 0 {
        tx.execute(
            "SELECT pg_notify($1, $2)",
            &[&CHANNEL, &format!("{sid} {last}")],
        )
        .await?;
    }
    Ok(())
}

/// Commits one session's writes in one statement, only if `owner` owns it: saves the state
/// (when given) and the last sequence, inserts the events, queues their webhook deliveries
/// (every type but `itemDelta` and `unknown`, as `sandbox_universal::subscribable` says; see
/// `store/side.rs`), and notifies other daemons. Answers a row when it was owned, with the
/// number of deliveries queued.
const COMMIT_SESSION: &str = "WITH owned AS (
    UPDATE sessions SET last_sequence = GREATEST(last_sequence, $8),
        status = CASE WHEN $9 THEN $10 ELSE status END,
        ended_ms = CASE WHEN $9 THEN $11 ELSE ended_ms END,
        state_version = CASE WHEN $9 THEN $12 ELSE state_version END,
        state_sequence = CASE WHEN $9 THEN $13 ELSE state_sequence END,
        state = CASE WHEN $9 THEN $14 ELSE state END
    WHERE sid = $1 AND owner = $15
    RETURNING sid
), inserted AS (
    INSERT INTO events (sid, sequence, version, type, time_us, body, raw)
    SELECT $1, * FROM UNNEST($2::bigint[], $3::int[], $4::text[], $5::bigint[], $6::text[], $7::text[])
    WHERE EXISTS (SELECT 1 FROM owned)
    ON CONFLICT (sid, sequence) DO NOTHING
), queued AS (
    INSERT INTO webhook_deliveries
        (webhook_id, sid, session_id, sequence, event_type, event, status, next_attempt_ms, created_ms)
    SELECT w.webhook_id, $1, s.session_id, e.sequence, e.type, e.body, 'pending', $16, $16
    FROM UNNEST($2::bigint[], $4::text[], $6::text[]) AS e(sequence, type, body)
    JOIN webhooks w ON (w.sid IS NULL OR w.sid = $1)
        AND (w.events = '*' OR position(',' || e.type || ',' IN w.events) > 0)
    JOIN sessions s ON s.sid = $1
    WHERE EXISTS (SELECT 1 FROM owned) AND e.type NOT IN ('itemDelta', 'unknown')
    ON CONFLICT (webhook_id, sid, sequence) DO NOTHING
    RETURNING 1
)
SELECT sid, CASE WHEN $8 > 0 THEN pg_notify('sandbox_daemon_events', sid::text || ' ' || $8::text) END,
    (SELECT count(*) FROM queued)
FROM owned";

/// One session's events as the columns of [`COMMIT_SESSION`].
struct SessionEvents<'a> {
    sequences: Vec<i64>,
    versions: Vec<i32>,
    types: Vec<&'static str>,
    times: Vec<i64>,
    bodies: Vec<&'a str>,
    raws: Vec<Option<&'a str>>,
    last: i64,
    state: Option<(&'static str, Option<i64>, i32, i64, &'a str)>,
}

impl<'a> SessionEvents<'a> {
    fn of(writes: &'a SessionWrites) -> Self {
        let events = &writes.events;
        Self {
            sequences: events.iter().map(|e| e.sequence as i64).collect(),
            versions: vec![EVENT_VERSION as i32; events.len()],
            types: events.iter().map(|e| e.event_type.as_str()).collect(),
            times: events.iter().map(|e| e.time_us).collect(),
            bodies: events.iter().map(|e| &*e.json).collect(),
            raws: events.iter().map(|e| e.raw.as_deref()).collect(),
            last: events.last().map_or(0, |e| e.sequence as i64),
            state: writes.state.as_ref().map(|s| {
                (
                    s.status.stored_name(),
                    s.ended_ms,
                    s.version as i32,
                    s.sequence as i64,
                    s.json.as_str(),
                )
            }),
        }
    }

    fn params<'p>(
        &'p self,
        writes: &'p SessionWrites,
        owner: &'p String,
        now_ms: &'p i64,
    ) -> Vec<&'p (dyn tokio_postgres::types::ToSql + Sync)> {
        let state = self.state.as_ref();
        vec![
            &writes.sid,
            &self.sequences,
            &self.versions,
            &self.types,
            &self.times,
            &self.bodies,
            &self.raws,
            &self.last,
            if state.is_some() { &true } else { &false },
            state.map_or(&NO_TEXT as _, |s| &s.0 as _),
            state.map_or(&NO_BIGINT as _, |s| &s.1 as _),
            state.map_or(&NO_INT as _, |s| &s.2 as _),
            state.map_or(&NO_BIGINT_VALUE as _, |s| &s.3 as _),
            state.map_or(&NO_TEXT as _, |s| &s.4 as _),
            owner,
            now_ms,
        ]
    }
}

const NO_TEXT: Option<&str> = None;
const NO_BIGINT: Option<i64> = None;
const NO_INT: Option<i32> = None;
const NO_BIGINT_VALUE: Option<i64> = None;

const INSERT_SESSION: &str = "INSERT INTO sessions
    (session_id, record_version, record, agent, status, created_ms, owner)
    VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (session_id) DO NOTHING RETURNING sid";

impl WriteBackend for PgWrites {
    fn commit(&mut self, batch: &[SessionWrites], owner: &str) -> Result<Vec<i64>, StoreError> {
        let owner = owner.to_string();
        self.run_connection(async |connection| {
            let statement = match &connection.commit {
                Some(statement) => statement.clone(),
                None => {
                    let statement = connection.client.prepare(COMMIT_SESSION).await?;
                    connection.commit = Some(statement.clone());
                    statement
                }
            };
            // One statement per session; several sessions commit in one transaction.
            let client = &connection.client;
            let several = batch.len() > 1;
            let mut queued = 0;
            if several {
                client.batch_execute("BEGIN").await?;
            }
            let mut lost = Vec::new();
            let now = crate::store::now_ms();
            for writes in batch {
                let events = SessionEvents::of(writes);
                match client
                    .query(&statement, &events.params(writes, &owner, &now))
                    .await
                {
                    Ok(rows) if rows.is_empty() => lost.push(writes.sid),
                    Ok(rows) => queued += rows[0].get::<_, i64>(2) as usize,
                    Err(error) => {
                        if several {
                            let _ = client.batch_execute("ROLLBACK").await;
                        }
                        return Err(error);
                    }
                }
            }
            if several {
                client.batch_execute("COMMIT").await?;
            }
            Ok((lost, queued))
        })
        .map(|(lost, queued)| {
            self.queued_deliveries += queued;
            lost
        })
    }

    fn take_queued_deliveries(&mut self) -> usize {
        std::mem::take(&mut self.queued_deliveries)
    }

    fn side(&mut self) -> Result<&mut dyn crate::store::side::SideWrites, StoreError> {
        Ok(self)
    }

    fn create(&mut self, session: &NewSession, owner: &str) -> Result<i64, StoreError> {
        let owner = owner.to_string();
        let created = self.run(async |client| {
            let rows = client
                .query(
                    INSERT_SESSION,
                    &[
                        &session.session_id,
                        &(session.record_version as i32),
                        &session.record,
                        &session.agent.name(),
                        &SessionStatus::Idle.stored_name(),
                        &session.created_ms,
                        &owner,
                    ],
                )
                .await?;
            Ok(rows.first().map(|r| r.get::<_, i64>(0)))
        })?;
        created.ok_or_else(|| StoreError::Exists(session.session_id.clone()))
    }

    fn claim(&mut self, sid: i64, owner: &str, alive_after_ms: i64) -> Result<(), StoreError> {
        let owner = owner.to_string();
        let (claimed, current) = self.run(async |client| {
            let claimed = client
                .execute(
                    "UPDATE sessions SET owner = $2 WHERE sid = $1 AND (owner IS NULL OR owner = $2
                     OR owner NOT IN (SELECT daemon_id FROM daemons WHERE heartbeat_ms > $3))",
                    &[&sid, &owner, &alive_after_ms],
                )
                .await?;
            let current = if claimed == 1 {
                None
            } else {
                client
                    .query_opt("SELECT owner FROM sessions WHERE sid = $1", &[&sid])
                    .await?
                    .map(|r| r.get::<_, Option<String>>(0))
            };
            Ok((claimed, current))
        })?;
        if claimed == 1 {
            return Ok(());
        }
        Err(match current {
            Some(other) => StoreError::OwnedElsewhere(other.unwrap_or_default()),
            None => StoreError::NotFound(format!("session {sid} was purged")),
        })
    }

    fn purge(&mut self, sid: i64) -> Result<(), StoreError> {
        self.run(async |client| {
            let tx = client.transaction().await?;
            tx.execute("DELETE FROM sessions WHERE sid = $1", &[&sid])
                .await?;
            tx.execute("DELETE FROM native_states WHERE sid = $1", &[&sid])
                .await?;
            tx.execute(
                "DELETE FROM webhook_deliveries WHERE webhook_id IN
                 (SELECT webhook_id FROM webhooks WHERE sid = $1)",
                &[&sid],
            )
            .await?;
            tx.execute("DELETE FROM webhooks WHERE sid = $1", &[&sid])
                .await?;
            tx.execute(
                "INSERT INTO purged (sid) VALUES ($1) ON CONFLICT DO NOTHING",
                &[&sid],
            )
            .await?;
            tx.commit().await
        })
    }

    fn reap(&mut self, limit: usize) -> Result<usize, StoreError> {
        self.run(async |client| {
            let Some(row) = client
                .query_opt("SELECT sid FROM purged LIMIT 1", &[])
                .await?
            else {
                return Ok(0);
            };
            let sid: i64 = row.get(0);
            let deleted = client
                .execute(
                    "DELETE FROM events WHERE sid = $1 AND sequence IN
                     (SELECT sequence FROM events WHERE sid = $1 ORDER BY sequence LIMIT $2)",
                    &[&sid, &(limit as i64)],
                )
                .await?;
            if deleted == 0 {
                client
                    .execute("DELETE FROM purged WHERE sid = $1", &[&sid])
                    .await?;
            }
            Ok((deleted as usize).max(1))
        })
    }

    fn heartbeat(&mut self, daemon_id: &str, now_ms: i64) -> Result<(), StoreError> {
        let daemon_id = daemon_id.to_string();
        self.run(async |client| {
            client
                .execute(
                    "INSERT INTO daemons (daemon_id, heartbeat_ms) VALUES ($1, $2)
                     ON CONFLICT (daemon_id) DO UPDATE SET heartbeat_ms = excluded.heartbeat_ms",
                    &[&daemon_id, &now_ms],
                )
                .await
                .map(|_| ())
        })
    }

    fn rewrite(&mut self, sid: i64, session: &NewSession, owner: &str) -> Result<(), StoreError> {
        let owner = owner.to_string();
        let (changed, current) = self.run(async |client| {
            let changed = client
                .execute(
                    "UPDATE sessions SET record_version = $2, record = $3, agent = $4
                     WHERE sid = $1 AND owner = $5",
                    &[
                        &sid,
                        &(session.record_version as i32),
                        &session.record,
                        &session.agent.name(),
                        &owner,
                    ],
                )
                .await?;
            owner_unless(client, sid, changed)
                .await
                .map(|c| (changed, c))
        })?;
        owned(sid, changed, current)
    }

    fn save_native(&mut self, sid: i64, native: &NativeRow, owner: &str) -> Result<(), StoreError> {
        let owner = owner.to_string();
        let (changed, current) = self.run(async |client| {
            let changed = client
                .execute(
                    "INSERT INTO native_states (sid, agent, body, saved_ms)
                     SELECT $1, $2, $3, $4 FROM sessions WHERE sid = $1 AND owner = $5
                     ON CONFLICT (sid) DO UPDATE SET agent = excluded.agent,
                     body = excluded.body, saved_ms = excluded.saved_ms",
                    &[
                        &sid,
                        &native.agent.name(),
                        &native.body,
                        &native.saved_ms,
                        &owner,
                    ],
                )
                .await?;
            owner_unless(client, sid, changed)
                .await
                .map(|c| (changed, c))
        })?;
        owned(sid, changed, current)
    }

    fn import(
        &mut self,
        session: &NewSession,
        owner: &str,
        events: &mut dyn Iterator<Item = EventRow>,
        state: Option<&StateSnapshot>,
    ) -> Result<i64, StoreError> {
        let owner = owner.to_string();
        let created = self.run(async |client| {
            let tx = client.transaction().await?;
            let Some(row) = tx
                .query_opt(
                    INSERT_SESSION,
                    &[
                        &session.session_id,
                        &(session.record_version as i32),
                        &session.record,
                        &session.agent.name(),
                        &SessionStatus::Idle.stored_name(),
                        &session.created_ms,
                        &owner,
                    ],
                )
                .await?
            else {
                return Ok(None);
            };
            let sid: i64 = row.get(0);
            let mut last = 0;
            loop {
                let chunk: Vec<EventRow> = (&mut *events).take(INSERT_CHUNK).collect();
                if chunk.is_empty() {
                    break;
                }
                last = last.max(insert_events(&tx, sid, &chunk).await?);
            }
            save_state(&tx, sid, last, state).await?;
            tx.commit().await?;
            Ok(Some(sid))
        })?;
        created.ok_or_else(|| StoreError::Exists(session.session_id.clone()))
    }
}

/// The owner of session `sid` (`None` inside when it has none, `None` when it is gone),
/// looked up only when a write to it changed nothing.
async fn owner_unless(
    client: &Client,
    sid: i64,
    changed: u64,
) -> Result<Option<Option<String>>, tokio_postgres::Error> {
    if changed > 0 {
        return Ok(None);
    }
    let row = client
        .query_opt("SELECT owner FROM sessions WHERE sid = $1", &[&sid])
        .await?;
    Ok(row.map(|r| r.get(0)))
}

/// `Ok` when a write to session `sid` changed a row, else why not.
fn owned(sid: i64, changed: u64, current: Option<Option<String>>) -> Result<(), StoreError> {
    if changed > 0 {
        return Ok(());
    }
    Err(match current {
        Some(other) => StoreError::OwnedElsewhere(other.unwrap_or_default()),
        None => StoreError::NotFound(format!("session {sid} was purged")),
    })
}
