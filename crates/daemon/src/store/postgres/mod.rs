//! The fleet backend: a PostgreSQL database shared by several daemons. Reads use a small
//! connection pool; the writer thread owns one connection (reconnecting after a failure)
//! and drives it on its own single-threaded runtime, so a producer waiting for room can
//! never starve it. Each commit notifies `sandbox_daemon_events` with `"<sid> <sequence>"`
//! so other daemons' SSE readers follow live.

mod reads;
mod side;
mod writes;

pub(crate) use reads::PgReads;
pub(crate) use writes::PgWrites;

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio::sync::{broadcast, oneshot};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, NoTls};

use super::{StoreError, migrations, redact};

/// Read connections in the pool.
const READERS: usize = 4;
/// Rows per multi-row insert.
const INSERT_CHUNK: usize = 5_000;
/// The notification channel of committed events.
const CHANNEL: &str = "sandbox_daemon_events";
/// Serialises concurrent migrations of one database by several daemons.
const MIGRATION_LOCK: i64 = 0x5a4e_4442_0001;

fn outage(error: tokio_postgres::Error) -> StoreError {
    if error.code() == Some(&SqlState::DISK_FULL) {
        StoreError::Full(error.to_string())
    } else {
        StoreError::Unavailable(error.to_string())
    }
}

fn pool_outage(error: deadpool_postgres::PoolError) -> StoreError {
    StoreError::Unavailable(error.to_string())
}

/// How long connecting to the database may take before the store reports it unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

fn config(url: &str) -> Result<tokio_postgres::Config, StoreError> {
    let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
        StoreError::Unavailable(format!("invalid PostgreSQL URL {}: {e}", redact(url)))
    })?;
    // A database that stops answering is noticed, instead of hanging a request (the URL's
    // own `connect_timeout` wins).
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    config
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(15));
    Ok(config)
}

async fn connect(config: &tokio_postgres::Config) -> Result<Client, StoreError> {
    let (client, connection) = config.connect(NoTls).await.map_err(outage)?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(%error, "a PostgreSQL connection closed");
        }
    });
    Ok(client)
}

/// Connects, migrates, and answers the read and write sides.
pub(super) async fn open(url: &str) -> Result<(PgReads, PgWrites), StoreError> {
    let config = config(url)?;
    let mut client = connect(&config).await?;
    migrate(&mut client).await?;
    let manager = Manager::from_config(
        config.clone(),
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(READERS)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .wait_timeout(Some(CONNECT_TIMEOUT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map_err(|e| StoreError::Unavailable(e.to_string()))?;
    let (notifications, _) = broadcast::channel(1024);
    let (stop, stopped) = oneshot::channel();
    tokio::spawn(listen(config.clone(), notifications.clone(), stopped));
    Ok((
        PgReads {
            pool,
            notifications,
            _stop_listening: stop,
        },
        PgWrites::new(config)?,
    ))
}

async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(outage)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(outage)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_ms BIGINT NOT NULL)",
    )
    .await
    .map_err(outage)?;
    let current: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
            &[],
        )
        .await
        .map_err(outage)?
        .get(0);
    migrations::check_not_newer(current, "postgres");
    for migration in migrations::pending(current) {
        tx.batch_execute(migration.postgres).await.map_err(outage)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_ms) VALUES ($1, $2, $3)",
            &[&migration.version, &migration.name, &super::now_ms()],
        )
        .await
        .map_err(outage)?;
    }
    tx.commit().await.map_err(outage)
}

/// Forwards this database's event notifications until `stop` fires, reconnecting after
/// a failure.
async fn listen(
    config: tokio_postgres::Config,
    out: broadcast::Sender<(i64, u64)>,
    mut stop: oneshot::Receiver<()>,
) {
    use futures::StreamExt;
    let forward = async {
        loop {
            if let Ok((client, mut connection)) = config.connect(NoTls).await {
                let (notes, mut received) = tokio::sync::mpsc::unbounded_channel();
                // The connection is driven here; it also carries LISTEN's answer.
                let driver = tokio::spawn(async move {
                    let mut messages =
                        futures::stream::poll_fn(move |cx| connection.poll_message(cx));
                    while let Some(Ok(message)) = messages.next().await {
                        if let tokio_postgres::AsyncMessage::Notification(note) = message {
                            let _ = notes.send(note);
                        }
                    }
                });
                if client
                    .batch_execute(&format!("LISTEN {CHANNEL}"))
                    .await
                    .is_ok()
                {
                    while let Some(note) = received.recv().await {
                        if let Some((sid, sequence)) = note.payload().split_once(' ')
                            && let (Ok(sid), Ok(sequence)) = (sid.parse(), sequence.parse())
                        {
                            let _ = out.send((sid, sequence));
                        }
                    }
                }
                driver.abort();
            }
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
    };
    tokio::select! {
        _ = forward => {}
        _ = &mut stop => {}
    }
}
