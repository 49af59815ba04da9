//! The throw-away PostgreSQL cluster of the store tests (`scripts/test-postgres.sh`).

/// The admin URL of the test cluster, from `SANDBOX_TEST_POSTGRES_URL`.
pub fn admin_url() -> Option<String> {
    std::env::var("SANDBOX_TEST_POSTGRES_URL")
        .ok()
        .filter(|url| !url.is_empty())
}

/// Creates an empty database named `<prefix>_<random>` in the cluster at `admin_url` and
/// answers its URL.
pub async fn fresh_database(admin_url: &str, prefix: &str) -> String {
    let (client, connection) = tokio_postgres::connect(admin_url, tokio_postgres::NoTls)
        .await
        .expect("the test PostgreSQL cluster answers (scripts/test-postgres.sh)");
    tokio::spawn(connection);
    let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("creating a test database");
    let mut url = reqwest::Url::parse(admin_url).expect("a PostgreSQL URL");
    url.set_path(&format!("/{name}"));
    url.to_string()
}
