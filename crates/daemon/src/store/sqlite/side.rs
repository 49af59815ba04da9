//! The side tables in SQLite (see `store/side.rs`), on the writer's connection.

use rusqlite::{OptionalExtension, params};

use super::outage;
use super::writes::SqliteWrites;
use crate::store::StoreError;
use crate::store::side::{
    AttemptOutcome, DeliveryRow, DueDelivery, IdempotentRow, SideWrites, WebhookRow, parse_status,
};

/// Queues deliveries of one stored event to every webhook that wants it: the daemon's own
/// and the session's, by type. Run in the event's commit; a repeat of the same event is
/// ignored (the outbox's key).
pub(super) const QUEUE_DELIVERIES: &str = "INSERT OR IGNORE INTO webhook_deliveries
    (webhook_id, sid, session_id, sequence, event_type, event, status, next_attempt_ms, created_ms)
    SELECT w.webhook_id, ?1, s.session_id, ?2, ?3, ?4, 'pending', ?5, ?5
    FROM webhooks w JOIN sessions s ON s.sid = ?1
    WHERE (w.sid IS NULL OR w.sid = ?1)
      AND (w.events = '*' OR instr(w.events, ',' || ?3 || ',') > 0)";

fn webhook_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<WebhookRow> {
    Ok(WebhookRow {
        webhook_id: row.get(0)?,
        sid: row.get(1)?,
        session_id: row.get(2)?,
        url: row.get(3)?,
        events: row.get(4)?,
        secret: row.get(5)?,
        created_ms: row.get(6)?,
    })
}

fn key_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<IdempotentRow> {
    Ok(IdempotentRow {
        fingerprint: row.get(0)?,
        status: row.get::<_, Option<i64>>(1)?.map(|s| s as u16),
        body: row.get(2)?,
        created_ms: row.get(3)?,
    })
}

impl SideWrites for SqliteWrites {
    fn create_webhook(&mut self, webhook: &WebhookRow) -> Result<(), StoreError> {
        self.checkpointer.wrote(1);
        self.conn
            .execute(
                "INSERT INTO webhooks (webhook_id, sid, url, events, secret, created_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    webhook.webhook_id,
                    webhook.sid,
                    webhook.url,
                    webhook.events,
                    webhook.secret,
                    webhook.created_ms
                ],
            )
            .map_err(outage)?;
        self.webhooks = None;
        Ok(())
    }

    fn delete_webhook(&mut self, webhook_id: &str) -> Result<bool, StoreError> {
        self.checkpointer.wrote(1);
        let tx = self.conn.transaction().map_err(outage)?;
        let deleted = tx
            .execute("DELETE FROM webhooks WHERE webhook_id = ?1", [webhook_id])
            .map_err(outage)?;
        tx.execute(
            "DELETE FROM webhook_deliveries WHERE webhook_id = ?1",
            [webhook_id],
        )
        .map_err(outage)?;
        tx.commit().map_err(outage)?;
        self.webhooks = None;
        Ok(deleted > 0)
    }

    fn webhooks(&mut self) -> Result<Vec<WebhookRow>, StoreError> {
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT w.webhook_id, w.sid, s.session_id, w.url, w.events, w.secret, w.created_ms
                 FROM webhooks w LEFT JOIN sessions s ON s.sid = w.sid
                 ORDER BY w.created_ms, w.webhook_id",
            )
            .map_err(outage)?;
        let rows = statement.query_map([], webhook_row).map_err(outage)?;
        rows.collect::<rusqlite::Result<_>>().map_err(outage)
    }

    fn webhook(&mut self, webhook_id: &str) -> Result<Option<WebhookRow>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT w.webhook_id, w.sid, s.session_id, w.url, w.events, w.secret, w.created_ms
                 FROM webhooks w LEFT JOIN sessions s ON s.sid = w.sid WHERE w.webhook_id = ?1",
            )
            .and_then(|mut s| s.query_row([webhook_id], webhook_row).optional())
            .map_err(outage)
    }

    fn deliveries(
        &mut self,
        webhook_id: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<DeliveryRow>, StoreError> {
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT delivery_id, webhook_id, session_id, sequence, event_type, status, attempts,
                 next_attempt_ms, last_status, last_error, created_ms, finished_ms
                 FROM webhook_deliveries WHERE webhook_id = ?1 AND delivery_id > ?2
                 ORDER BY delivery_id LIMIT ?3",
            )
            .map_err(outage)?;
        let rows = statement
            .query_map(params![webhook_id, after, limit as i64], |row| {
                Ok(DeliveryRow {
                    delivery_id: row.get(0)?,
                    webhook_id: row.get(1)?,
                    session_id: row.get(2)?,
                    sequence: row.get::<_, i64>(3)? as u64,
                    event_type: row.get(4)?,
                    status: parse_status(&row.get::<_, String>(5)?),
                    attempts: row.get::<_, i64>(6)? as u32,
                    next_attempt_ms: row.get(7)?,
                    last_status: row.get::<_, Option<i64>>(8)?.map(|s| s as u16),
                    last_error: row.get(9)?,
                    created_ms: row.get(10)?,
                    finished_ms: row.get(11)?,
                })
            })
            .map_err(outage)?;
        rows.collect::<rusqlite::Result<_>>().map_err(outage)
    }

    fn lease_due(
        &mut self,
        now_ms: i64,
        lease_until_ms: i64,
        limit: usize,
        by: &str,
    ) -> Result<Vec<DueDelivery>, StoreError> {
        let tx = self.conn.transaction().map_err(outage)?;
        let due = {
            let mut statement = tx
                .prepare_cached(
                    "UPDATE webhook_deliveries SET lease_until_ms = ?2, leased_by = ?4
                     WHERE delivery_id IN (
                         SELECT delivery_id FROM webhook_deliveries
                         WHERE status = 'pending' AND next_attempt_ms <= ?1 AND lease_until_ms <= ?1
                         ORDER BY next_attempt_ms, delivery_id LIMIT ?3)
                     RETURNING delivery_id",
                )
                .map_err(outage)?;
            let ids = statement
                .query_map(params![now_ms, lease_until_ms, limit as i64, by], |row| {
                    row.get::<_, i64>(0)
                })
                .map_err(outage)?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(outage)?;
            let mut read = tx
                .prepare_cached(
                    "SELECT d.delivery_id, d.webhook_id, w.url, w.secret, d.session_id, d.sequence,
                     d.event, d.attempts
                     FROM webhook_deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id
                     WHERE d.delivery_id = ?1",
                )
                .map_err(outage)?;
            let mut due = Vec::with_capacity(ids.len());
            for id in ids {
                let row = read
                    .query_row([id], |row| {
                        Ok(DueDelivery {
                            delivery_id: row.get(0)?,
                            webhook_id: row.get(1)?,
                            url: row.get(2)?,
                            secret: row.get(3)?,
                            session_id: row.get(4)?,
                            sequence: row.get::<_, i64>(5)? as u64,
                            event: row.get(6)?,
                            attempts: row.get::<_, i64>(7)? as u32,
                        })
                    })
                    .optional()
                    .map_err(outage)?;
                due.extend(row);
            }
            due.sort_by_key(|d| d.delivery_id);
            due
        };
        tx.commit().map_err(outage)?;
        Ok(due)
    }

    fn release_leases(&mut self, by: &str) -> Result<usize, StoreError> {
        self.conn
            .execute(
                "UPDATE webhook_deliveries SET lease_until_ms = 0, leased_by = NULL
                 WHERE leased_by = ?1 AND status = 'pending'",
                [by],
            )
            .map_err(outage)
    }

    fn record_attempt(
        &mut self,
        delivery_id: i64,
        outcome: &AttemptOutcome,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.checkpointer.wrote(1);
        let columns = outcome.columns(now_ms);
        let (status, error, next, finished) = (
            columns.status,
            columns.error,
            columns.next_attempt_ms,
            columns.finished_ms,
        );
        self.conn
            .prepare_cached(
                "UPDATE webhook_deliveries SET status = ?2, attempts = attempts + 1,
                 last_status = ?3, last_error = ?4, next_attempt_ms = ?5, finished_ms = ?6,
                 lease_until_ms = 0, leased_by = NULL WHERE delivery_id = ?1",
            )
            .and_then(|mut s| {
                s.execute(params![
                    delivery_id,
                    status,
                    columns.code,
                    error,
                    next,
                    finished
                ])
            })
            .map_err(outage)?;
        Ok(())
    }

    fn next_due(&mut self) -> Result<Option<i64>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT MIN(MAX(next_attempt_ms, lease_until_ms)) FROM webhook_deliveries
                 WHERE status = 'pending'",
            )
            .and_then(|mut s| s.query_row([], |row| row.get(0)))
            .map_err(outage)
    }

    fn prune_deliveries(&mut self, before_ms: i64) -> Result<usize, StoreError> {
        self.checkpointer.wrote(1);
        self.conn
            .execute(
                "DELETE FROM webhook_deliveries WHERE finished_ms IS NOT NULL AND finished_ms < ?1",
                [before_ms],
            )
            .map_err(outage)
    }

    fn take_key(
        &mut self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        now_ms: i64,
        stale_before_ms: i64,
    ) -> Result<Option<IdempotentRow>, StoreError> {
        self.checkpointer.wrote(1);
        let taken = self
            .conn
            .prepare_cached(
                "INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_ms)
                 VALUES (?1, ?2, ?3, NULL, NULL, ?4)
                 ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint,
                     created_ms = excluded.created_ms
                 WHERE idempotency_keys.status IS NULL AND idempotency_keys.created_ms < ?5",
            )
            .and_then(|mut s| s.execute(params![scope, key, fingerprint, now_ms, stale_before_ms]))
            .map_err(outage)?;
        if taken > 0 {
            return Ok(None);
        }
        self.key(scope, key)
    }

    fn key(&mut self, scope: &str, key: &str) -> Result<Option<IdempotentRow>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT fingerprint, status, body, created_ms FROM idempotency_keys
                 WHERE scope = ?1 AND key = ?2",
            )
            .and_then(|mut s| s.query_row(params![scope, key], key_row).optional())
            .map_err(outage)
    }

    fn finish_key(
        &mut self,
        scope: &str,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError> {
        self.checkpointer.wrote(body.len());
        self.conn
            .prepare_cached(
                "UPDATE idempotency_keys SET status = ?3, body = ?4 WHERE scope = ?1 AND key = ?2",
            )
            .and_then(|mut s| s.execute(params![scope, key, status, body]))
            .map_err(outage)?;
        Ok(())
    }

    fn release_key(&mut self, scope: &str, key: &str) -> Result<(), StoreError> {
        self.checkpointer.wrote(1);
        self.conn
            .prepare_cached(
                "DELETE FROM idempotency_keys WHERE scope = ?1 AND key = ?2 AND status IS NULL",
            )
            .and_then(|mut s| s.execute(params![scope, key]))
            .map_err(outage)?;
        Ok(())
    }

    fn prune_keys(&mut self, before_ms: i64) -> Result<usize, StoreError> {
        self.checkpointer.wrote(1);
        self.conn
            .execute(
                "DELETE FROM idempotency_keys WHERE created_ms < ?1",
                [before_ms],
            )
            .map_err(outage)
    }
}
