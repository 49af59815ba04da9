//! Reaching into a test daemon's store (SQLite in its data dir, or its PostgreSQL
//! database) to plant what a crash, a corruption or a newer build would leave there.

use std::path::Path;

use sandbox_daemon::store::StoreConfig;

/// Runs SQL statements (either dialect-neutral SQL or what the backend takes).
pub async fn execute(data_dir: &Path, store: Option<&StoreConfig>, sql: &str) {
    match store {
        None | Some(StoreConfig::Sqlite(_)) => {
            let path = sqlite_path(data_dir, store);
            let sql = sql.to_string();
            tokio::task::spawn_blocking(move || {
                rusqlite::Connection::open(path)
                    .unwrap()
                    .execute_batch(&sql)
                    .unwrap()
            })
            .await
            .unwrap();
        }
        Some(StoreConfig::Postgres(url)) => postgres(url).await.batch_execute(sql).await.unwrap(),
    }
}

/// The rows of a query, every column as text.
pub async fn query(data_dir: &Path, store: Option<&StoreConfig>, sql: &str) -> Vec<Vec<String>> {
    match store {
        None | Some(StoreConfig::Sqlite(_)) => {
            let path = sqlite_path(data_dir, store);
            let sql = sql.to_string();
            tokio::task::spawn_blocking(move || {
                let conn = rusqlite::Connection::open(path).unwrap();
                let mut statement = conn.prepare(&sql).unwrap();
                let columns = statement.column_count();
                statement
                    .query_map([], |row| {
                        Ok((0..columns)
                            .map(|i| match row.get_ref(i).unwrap() {
                                rusqlite::types::ValueRef::Null => "NULL".to_string(),
                                rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                                rusqlite::types::ValueRef::Real(n) => n.to_string(),
                                rusqlite::types::ValueRef::Text(t) => {
                                    String::from_utf8_lossy(t).into_owned()
                                }
                                rusqlite::types::ValueRef::Blob(b) => format!("{b:?}"),
                            })
                            .collect())
                    })
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            })
            .await
            .unwrap()
        }
        Some(StoreConfig::Postgres(url)) => {
            let client = postgres(url).await;
            // The simple protocol answers every column as text.
            client
                .simple_query(sql)
                .await
                .unwrap()
                .into_iter()
                .filter_map(|message| match message {
                    tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                        (0..row.len())
                            .map(|i| row.get(i).unwrap_or("NULL").to_string())
                            .collect(),
                    ),
                    _ => None,
                })
                .collect()
        }
    }
}

fn sqlite_path(data_dir: &Path, store: Option<&StoreConfig>) -> std::path::PathBuf {
    match store {
        Some(StoreConfig::Sqlite(path)) => path.clone(),
        _ => data_dir.join("store.db"),
    }
}

async fn postgres(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}
/// With `SANDBOX_TEST_STORE=postgres`: a fresh database of the test cluster, reached
/// through the cluster's Unix socket (`-k` of `scripts/test-postgres.sh`, in
/// `SANDBOX_TEST_POSTGRES_DIR`), which a loopback-only network namespace does not cut off;
/// `None` after a loud skip otherwise.
pub async fn shared_store_over_socket() -> Option<String> {
    if std::env::var("SANDBOX_TEST_STORE").as_deref() != Ok("postgres") {
        eprintln!("a shared store needs PostgreSQL: runs with SANDBOX_TEST_STORE=postgres");
        return None;
    }
    let tcp = sandbox_testkit::postgres::admin_url()
        .expect("SANDBOX_TEST_POSTGRES_URL names the test cluster (scripts/test-postgres.sh)");
    let url = reqwest::Url::parse(&tcp).expect("a PostgreSQL URL");
    let dir = std::env::var("SANDBOX_TEST_POSTGRES_DIR")
        .unwrap_or_else(|_| "/tmp/sandbox-daemon-test-pg".into());
    let socket_host = dir.replace('/', "%2F");
    let admin = format!(
        "postgres://{}@{socket_host}:{}{}",
        url.username(),
        url.port().unwrap_or(5432),
        url.path()
    );
    let fresh = sandbox_testkit::postgres::fresh_database(&admin, "sdtest").await;
    // `fresh_database` keeps the admin URL's host: the socket.
    Some(fresh)
}
