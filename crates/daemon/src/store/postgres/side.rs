//! The side tables in PostgreSQL (see `store/side.rs`), on the writer's connection.

use tokio_postgres::Row;

use super::writes::PgWrites;
use crate::store::StoreError;
use crate::store::side::{
    AttemptOutcome, DeliveryRow, DueDelivery, IdempotentRow, SideWrites, WebhookRow, parse_status,
};

fn webhook_row(row: &Row) -> WebhookRow {
    WebhookRow {
        webhook_id: row.get(0),
        sid: row.get(1),
        session_id: row.get(2),
        url: row.get(3),
        events: row.get(4),
        secret: row.get(5),
        created_ms: row.get(6),
    }
}

fn key_row(row: &Row) -> IdempotentRow {
    IdempotentRow {
        fingerprint: row.get(0),
        status: row.get::<_, Option<i32>>(1).map(|s| s as u16),
        body: row.get(2),
        created_ms: row.get(3),
    }
}

impl SideWrites for PgWrites {
    fn create_webhook(&mut self, webhook: &WebhookRow) -> Result<(), StoreError> {
        self.run(async |client| {
            client
                .execute(
                    "INSERT INTO webhooks (webhook_id, sid, url, events, secret, created_ms)
                     VALUES ($1, $2, $3, $4, $5, $6)",
                    &[
                        &webhook.webhook_id,
                        &webhook.sid,
                        &webhook.url,
                        &webhook.events,
                        &webhook.secret,
                        &webhook.created_ms,
                    ],
                )
                .await
        })?;
        Ok(())
    }

    fn delete_webhook(&mut self, webhook_id: &str) -> Result<bool, StoreError> {
        self.run(async |client| {
            let tx = client.transaction().await?;
            let deleted = tx
                .execute("DELETE FROM webhooks WHERE webhook_id = $1", &[&webhook_id])
                .await?;
            tx.execute(
                "DELETE FROM webhook_deliveries WHERE webhook_id = $1",
                &[&webhook_id],
            )
            .await?;
            tx.commit().await?;
            Ok(deleted > 0)
        })
    }

    fn webhooks(&mut self) -> Result<Vec<WebhookRow>, StoreError> {
        self.run(async |client| {
            let rows = client
                .query(
                    "SELECT w.webhook_id, w.sid, s.session_id, w.url, w.events, w.secret, w.created_ms
                     FROM webhooks w LEFT JOIN sessions s ON s.sid = w.sid
                     ORDER BY w.created_ms, w.webhook_id",
                    &[],
                )
                .await?;
            Ok(rows.iter().map(webhook_row).collect())
        })
    }

    fn webhook(&mut self, webhook_id: &str) -> Result<Option<WebhookRow>, StoreError> {
        self.run(async |client| {
            let row = client
                .query_opt(
                    "SELECT w.webhook_id, w.sid, s.session_id, w.url, w.events, w.secret, w.created_ms
                     FROM webhooks w LEFT JOIN sessions s ON s.sid = w.sid WHERE w.webhook_id = $1",
                    &[&webhook_id],
                )
                .await?;
            Ok(row.as_ref().map(webhook_row))
        })
    }

    fn deliveries(
        &mut self,
        webhook_id: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<DeliveryRow>, StoreError> {
        self.run(async |client| {
            let rows = client
                .query(
                    "SELECT delivery_id, webhook_id, session_id, sequence, event_type, status, attempts,
                     next_attempt_ms, last_status, last_error, created_ms, finished_ms
                     FROM webhook_deliveries WHERE webhook_id = $1 AND delivery_id > $2
                     ORDER BY delivery_id LIMIT $3",
                    &[&webhook_id, &after, &(limit as i64)],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|row| DeliveryRow {
                    delivery_id: row.get(0),
                    webhook_id: row.get(1),
                    session_id: row.get(2),
                    sequence: row.get::<_, i64>(3) as u64,
                    event_type: row.get(4),
                    status: parse_status(row.get(5)),
                    attempts: row.get::<_, i32>(6) as u32,
                    next_attempt_ms: row.get(7),
                    last_status: row.get::<_, Option<i32>>(8).map(|s| s as u16),
                    last_error: row.get(9),
                    created_ms: row.get(10),
                    finished_ms: row.get(11),
                })
                .collect())
        })
    }

    fn lease_due(
        &mut self,
        now_ms: i64,
        lease_until_ms: i64,
        limit: usize,
        by: &str,
    ) -> Result<Vec<DueDelivery>, StoreError> {
        // `SKIP LOCKED`: daemons sharing the store lease disjoint deliveries.
        self.run(async |client| {
            let rows = client
                .query(
                    "WITH due AS (
                         SELECT delivery_id FROM webhook_deliveries
                         WHERE status = 'pending' AND next_attempt_ms <= $1 AND lease_until_ms <= $1
                         ORDER BY next_attempt_ms, delivery_id LIMIT $3
                         FOR UPDATE SKIP LOCKED
                     ), leased AS (
                         UPDATE webhook_deliveries d SET lease_until_ms = $2, leased_by = $4
                         FROM due WHERE d.delivery_id = due.delivery_id
                         RETURNING d.delivery_id, d.webhook_id, d.session_id, d.sequence, d.event,
                             d.attempts
                     )
                     SELECT l.delivery_id, l.webhook_id, w.url, w.secret, l.session_id, l.sequence,
                         l.event, l.attempts
                     FROM leased l JOIN webhooks w ON w.webhook_id = l.webhook_id
                     ORDER BY l.delivery_id",
                    &[&now_ms, &lease_until_ms, &(limit as i64), &by],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|row| DueDelivery {
                    delivery_id: row.get(0),
                    webhook_id: row.get(1),
                    url: row.get(2),
                    secret: row.get(3),
                    session_id: row.get(4),
                    sequence: row.get::<_, i64>(5) as u64,
                    event: row.get(6),
                    attempts: row.get::<_, i32>(7) as u32,
                })
                .collect())
        })
    }

    fn release_leases(&mut self, by: &str) -> Result<usize, StoreError> {
        self.run(async |client| {
            client
                .execute(
                    "UPDATE webhook_deliveries SET lease_until_ms = 0, leased_by = NULL
                     WHERE leased_by = $1 AND status = 'pending'",
                    &[&by],
                )
                .await
        })
        .map(|n| n as usize)
    }

    fn record_attempt(
        &mut self,
        delivery_id: i64,
        outcome: &AttemptOutcome,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let columns = outcome.columns(now_ms);
        let (status, error, next, finished) = (
            columns.status,
            columns.error,
            columns.next_attempt_ms,
            columns.finished_ms,
        );
        let code = columns.code.map(i32::from);
        self.run(async |client| {
            client
                .execute(
                    "UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1,
                     last_status = $3, last_error = $4, next_attempt_ms = $5, finished_ms = $6,
                     lease_until_ms = 0, leased_by = NULL WHERE delivery_id = $1",
                    &[&delivery_id, &status, &code, &error, &next, &finished],
                )
                .await
        })?;
        Ok(())
    }

    fn next_due(&mut self) -> Result<Option<i64>, StoreError> {
        self.run(async |client| {
            let row = client
                .query_one(
                    "SELECT MIN(GREATEST(next_attempt_ms, lease_until_ms)) FROM webhook_deliveries
                     WHERE status = 'pending'",
                    &[],
                )
                .await?;
            Ok(row.get::<_, Option<i64>>(0))
        })
    }

    fn prune_deliveries(&mut self, before_ms: i64) -> Result<usize, StoreError> {
        self.run(async |client| {
            client
                .execute(
                    "DELETE FROM webhook_deliveries WHERE finished_ms IS NOT NULL AND finished_ms < $1",
                    &[&before_ms],
                )
                .await
        })
        .map(|n| n as usize)
    }

    fn take_key(
        &mut self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        now_ms: i64,
        stale_before_ms: i64,
    ) -> Result<Option<IdempotentRow>, StoreError> {
        let taken = self.run(async |client| {
            client
                .execute(
                    "INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_ms)
                     VALUES ($1, $2, $3, NULL, NULL, $4)
                     ON CONFLICT (scope, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
                         created_ms = EXCLUDED.created_ms
                     WHERE idempotency_keys.status IS NULL AND idempotency_keys.created_ms < $5",
                    &[&scope, &key, &fingerprint, &now_ms, &stale_before_ms],
                )
                .await
        })?;
        if taken > 0 {
            return Ok(None);
        }
        self.key(scope, key)
    }

    fn key(&mut self, scope: &str, key: &str) -> Result<Option<IdempotentRow>, StoreError> {
        self.run(async |client| {
            let row = client
                .query_opt(
                    "SELECT fingerprint, status, body, created_ms FROM idempotency_keys
                     WHERE scope = $1 AND key = $2",
                    &[&scope, &key],
                )
                .await?;
            Ok(row.as_ref().map(key_row))
        })
    }

    fn finish_key(
        &mut self,
        scope: &str,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError> {
        let status = i32::from(status);
        self.run(async |client| {
            client
                .execute(
                    "UPDATE idempotency_keys SET status = $3, body = $4 WHERE scope = $1 AND key = $2",
                    &[&scope, &key, &status, &body],
                )
                .await
        })?;
        Ok(())
    }

    fn release_key(&mut self, scope: &str, key: &str) -> Result<(), StoreError> {
        self.run(async |client| {
            client
                .execute(
                    "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND status IS NULL",
                    &[&scope, &key],
                )
                .await
        })?;
        Ok(())
    }

    fn prune_keys(&mut self, before_ms: i64) -> Result<usize, StoreError> {
        self.run(async |client| {
            client
                .execute(
                    "DELETE FROM idempotency_keys WHERE created_ms < $1",
                    &[&before_ms],
                )
                .await
        })
        .map(|n| n as usize)
    }
}
