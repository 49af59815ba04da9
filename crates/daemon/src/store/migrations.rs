//! The one set of schema migrations, in both SQL dialects.
//!
//! Contract (stable: what is on disk): migrations are numbered from 1, applied in order,
//! each once, recorded in `schema_migrations`, and only ever *add* (tables, columns with
//! defaults, indexes), so a build that finds a newer schema (after a rollback) can still
//! read and write it; the records a newer build wrote carry newer versions and are served
//! as `unknown`. Both dialects define the same tables and columns (a test compares them).

/// One schema change, in both dialects.
#[derive(Debug)]
pub struct Migration {
    /// Its number (1, 2, ...).
    pub version: i64,
    /// What it does.
    pub name: &'static str,
    /// SQLite statements.
    pub sqlite: &'static str,
    /// PostgreSQL statements.
    pub postgres: &'static str,
}

/// Every migration, oldest first.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "sessions, events, daemons and purged sessions",
        sqlite: r#"
CREATE TABLE daemons (
    daemon_id     TEXT PRIMARY KEY,
    heartbeat_ms  INTEGER NOT NULL
);
CREATE TABLE sessions (
    sid             INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id      TEXT NOT NULL UNIQUE,
    record_version  INTEGER NOT NULL,
    record          TEXT NOT NULL,
    agent           TEXT NOT NULL,
    status          TEXT NOT NULL,
    created_ms      INTEGER NOT NULL,
    ended_ms        INTEGER,
    last_sequence   INTEGER NOT NULL DEFAULT 0,
    state_version   INTEGER,
    state_sequence  INTEGER,
    state           TEXT,
    owner           TEXT
);
CREATE INDEX sessions_by_status ON sessions (status, sid);
CREATE INDEX sessions_by_end ON sessions (ended_ms) WHERE ended_ms IS NOT NULL;
CREATE TABLE events (
    sid       INTEGER NOT NULL,
    sequence  INTEGER NOT NULL,
    version   INTEGER NOT NULL,
    type      TEXT NOT NULL,
    time_us   INTEGER NOT NULL,
    body      TEXT NOT NULL,
    raw       TEXT,
    PRIMARY KEY (sid, sequence)
) WITHOUT ROWID;
CREATE TABLE purged (
    sid  INTEGER PRIMARY KEY
);
"#,
        postgres: r#"
CREATE TABLE daemons (
    daemon_id     TEXT PRIMARY KEY,
    heartbeat_ms  BIGINT NOT NULL
);
CREATE TABLE sessions (
    sid             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id      TEXT NOT NULL UNIQUE,
    record_version  INTEGER NOT NULL,
    record          TEXT NOT NULL,
    agent           TEXT NOT NULL,
    status          TEXT NOT NULL,
    created_ms      BIGINT NOT NULL,
    ended_ms        BIGINT,
    last_sequence   BIGINT NOT NULL DEFAULT 0,
    state_version   INTEGER,
    state_sequence  BIGINT,
    state           TEXT,
    owner           TEXT
);
CREATE INDEX sessions_by_status ON sessions (status, sid);
CREATE INDEX sessions_by_end ON sessions (ended_ms) WHERE ended_ms IS NOT NULL;
CREATE TABLE events (
    sid       BIGINT NOT NULL,
    sequence  BIGINT NOT NULL,
    version   INTEGER NOT NULL,
    type      TEXT NOT NULL,
    time_us   BIGINT NOT NULL,
    body      TEXT NOT NULL,
    raw       TEXT,
    PRIMARY KEY (sid, sequence)
);
CREATE TABLE purged (
    sid  BIGINT PRIMARY KEY
);
"#,
    },
    Migration {
        version: 2,
        name: "the agents' native state, for sessions that continue on another daemon",
        sqlite: r#"
CREATE TABLE native_states (
    sid       INTEGER PRIMARY KEY,
    agent     TEXT NOT NULL,
    body      TEXT NOT NULL,
    saved_ms  INTEGER NOT NULL
);
"#,
        postgres: r#"
CREATE TABLE native_states (
    sid       BIGINT PRIMARY KEY,
    agent     TEXT NOT NULL,
    body      TEXT NOT NULL,
    saved_ms  BIGINT NOT NULL
);
"#,
    },
    Migration {
        version: 3,
        name: "webhooks with their outbox of deliveries, and idempotency keys",
        sqlite: r#"
CREATE TABLE webhooks (
    webhook_id  TEXT PRIMARY KEY,
    sid         INTEGER,
    url         TEXT NOT NULL,
    events      TEXT NOT NULL,
    secret      TEXT NOT NULL,
    created_ms  INTEGER NOT NULL
);
CREATE INDEX webhooks_by_session ON webhooks (sid) WHERE sid IS NOT NULL;
CREATE TABLE webhook_deliveries (
    delivery_id      INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id       TEXT NOT NULL,
    sid              INTEGER NOT NULL,
    session_id       TEXT NOT NULL,
    sequence         INTEGER NOT NULL,
    event_type       TEXT NOT NULL,
    event            TEXT NOT NULL,
    status           TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms  INTEGER NOT NULL,
    lease_until_ms   INTEGER NOT NULL DEFAULT 0,
    leased_by        TEXT,
    last_status      INTEGER,
    last_error       TEXT,
    created_ms       INTEGER NOT NULL,
    finished_ms      INTEGER,
    UNIQUE (webhook_id, sid, sequence)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_ms) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_ms) WHERE finished_ms IS NOT NULL;
CREATE TABLE idempotency_keys (
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    status       INTEGER,
    body         TEXT,
    created_ms   INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_ms);
"#,
        postgres: r#"
CREATE TABLE webhooks (
    webhook_id  TEXT PRIMARY KEY,
    sid         BIGINT,
    url         TEXT NOT NULL,
    events      TEXT NOT NULL,
    secret      TEXT NOT NULL,
    created_ms  BIGINT NOT NULL
);
CREATE INDEX webhooks_by_session ON webhooks (sid) WHERE sid IS NOT NULL;
CREATE TABLE webhook_deliveries (
    delivery_id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id       TEXT NOT NULL,
    sid              BIGINT NOT NULL,
    session_id       TEXT NOT NULL,
    sequence         BIGINT NOT NULL,
    event_type       TEXT NOT NULL,
    event            TEXT NOT NULL,
    status           TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms  BIGINT NOT NULL,
    lease_until_ms   BIGINT NOT NULL DEFAULT 0,
    leased_by        TEXT,
    last_status      INTEGER,
    last_error       TEXT,
    created_ms       BIGINT NOT NULL,
    finished_ms      BIGINT,
    UNIQUE (webhook_id, sid, sequence)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_ms) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_ms) WHERE finished_ms IS NOT NULL;
CREATE TABLE idempotency_keys (
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    status       INTEGER,
    body         TEXT,
    created_ms   BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_ms);
"#,
    },
];

/// The newest schema version this build knows.
pub fn latest() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// The migrations still to apply on a schema at `current`.
pub fn pending(current: i64) -> impl Iterator<Item = &'static Migration> {
    MIGRATIONS.iter().filter(move |m| m.version > current)
}

/// Warns when the schema is newer than this build (a rollback): it keeps working.
pub fn check_not_newer(current: i64, location: &str) {
    if current > latest() {
        tracing::warn!(
            store = location,
            schema = current,
            known = latest(),
            "the session store was migrated by a newer sandbox-daemon; records it wrote are served as `unknown` events"
        );
    }
}
