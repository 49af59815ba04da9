//! Migrating a data dir written before the store: every `sessions/<id>/session.json` and
//! `events.jsonl` is imported (each session in one transaction), then moved aside as
//! `*.imported`. Nothing is dropped: a line this build cannot read is imported at its
//! place as a record that is served as an `unknown` event. The import runs in the
//! background; requests for a session not imported yet wait for it (or get a 503).

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use chrono::Utc;
use sandbox_universal::UniversalEvent;
use tokio::sync::watch;

use super::SessionError;
use super::files;
use super::manager::SessionManager;
use super::record::{RECORD_VERSION, SessionRecord};
use super::state::CoreState;
use crate::store::{
    EVENT_VERSION, EventRow, NewSession, Store, StoreError, Stored, UNCHECKED_VERSION,
};

/// The legacy record file.
const RECORD_FILE: &str = "session.json";
/// The legacy event log.
const EVENTS_FILE: &str = "events.jsonl";
/// Written once every legacy session is imported, so later starts skip the scan.
const MARKER: &str = ".jsonl-imported";
/// How long a request waits for its session's import before a 503.
const WAIT: Duration = Duration::from_secs(10);

/// Which sessions are still being imported.
#[derive(Debug, Default)]
pub struct Imports {
    pending: Mutex<Option<HashSet<String>>>,
    scanning: Mutex<bool>,
    changed: watch::Sender<u64>,
}

impl Imports {
    fn is_waiting(&self, id: &str) -> bool {
        *self.scanning.lock().expect("imports lock")
            || self
                .pending
                .lock()
                .expect("imports lock")
                .as_ref()
                .is_some_and(|p| p.contains(id))
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// Waits until session `id` is not waiting to be imported; a 503 after a while.
    pub async fn wait(&self, id: &str) -> Result<(), SessionError> {
        let mut changed = self.changed.subscribe();
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.is_waiting(id) {
            if tokio::time::timeout_at(deadline, changed.changed())
                .await
                .is_err()
            {
                return Err(SessionError::Restoring(id.to_string()));
            }
        }
        Ok(())
    }
}

/// Whether `data_dir` may hold sessions to import; if so, requests wait from now on until
/// [`import_all`] has looked.
pub fn begin(manager: &SessionManager) -> bool {
    let needed = !manager.sessions_dir().join(MARKER).exists();
    *manager.imports.scanning.lock().expect("imports lock") = needed;
    needed
}

/// Imports every legacy session of the data dir (see the module docs).
pub async fn import_all(manager: &SessionManager) {
    let sessions_dir = manager.sessions_dir();
    let found = tokio::task::spawn_blocking({
        let dir = sessions_dir.clone();
        move || scan(&dir)
    })
    .await
    .unwrap_or_default();
    let imports = &manager.imports;
    *imports.pending.lock().expect("imports lock") =
        Some(found.iter().map(|s| s.id.clone()).collect());
    *imports.scanning.lock().expect("imports lock") = false;
    imports.bump();
    if !found.is_empty() {
        tracing::warn!(
            sessions = found.len(),
            "importing sessions from JSON-lines files"
        );
    }
    let mut complete = true;
    for legacy in found {
        // A directory someone else owns (or can write) is never imported: what it says
        // could make the daemon run an agent where an attacker chose. Said at every start.
        if let Err(error) = crate::private::check_dir(&legacy.dir) {
            complete = false;
            tracing::error!(session = %legacy.id, %error, "not importing a JSON-lines session");
            if let Some(pending) = imports.pending.lock().expect("imports lock").as_mut() {
                pending.remove(&legacy.id);
            }
            imports.bump();
            continue;
        }
        match import_one(manager.store(), &legacy).await {
            Ok(events) => {
                tracing::info!(session = %legacy.id, events, "imported a JSON-lines session")
            }
            Err(error) => {
                complete = false;
                tracing::error!(session = %legacy.id, %error, "could not import a JSON-lines session; its files stay where they are");
            }
        }
        if let Some(pending) = imports.pending.lock().expect("imports lock").as_mut() {
            pending.remove(&legacy.id);
        }
        imports.bump();
    }
    if complete
        && let Err(error) = std::fs::create_dir_all(&sessions_dir)
            .and_then(|()| crate::private::write_file(&sessions_dir.join(MARKER), b"imported\n"))
    {
        tracing::warn!(%error, "could not mark the JSON-lines import done");
    }
    *imports.pending.lock().expect("imports lock") = None;
    imports.bump();
}

/// A legacy session found on disk.
struct Legacy {
    id: String,
    dir: PathBuf,
    session: NewSession,
    token: Option<String>,
}

/// Every session directory holding a legacy record, oldest first.
fn scan(sessions_dir: &Path) -> Vec<Legacy> {
    let Ok(entries) = std::fs::read_dir(sessions_dir) else {
        return Vec::new();
    };
    let mut found: Vec<Legacy> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(RECORD_FILE).is_file())
        .filter_map(|dir| {
            let id = dir.file_name()?.to_str()?.to_string();
            Some(read_record(id, dir))
        })
        .collect();
    found.sort_by(|a, b| (a.session.created_ms, &a.id).cmp(&(b.session.created_ms, &b.id)));
    found
}

/// Reads a legacy record; one this build cannot read is imported as it is (and listed as
/// unreadable).
fn read_record(id: String, dir: PathBuf) -> Legacy {
    let path = dir.join(RECORD_FILE);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let value: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    let token = value
        .as_ref()
        .and_then(|v| v.get("token"))
        .and_then(|t| t.as_str())
        .map(str::to_string);
    let session = match serde_json::from_str::<SessionRecord>(&text) {
        Ok(record) if record.session_id == id => record.to_new_session(),
        _ => {
            let mtime = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .map(chrono::DateTime::<Utc>::from)
                .unwrap_or_else(|_| Utc::now());
            NewSession {
                session_id: id.clone(),
                record_version: RECORD_VERSION,
                record: text,
                // Kept as found: an agent this build does not know stays readable.
                agent: Stored::parse(
                    value
                        .as_ref()
                        .and_then(|v| v.get("agent"))
                        .and_then(|a| a.as_str())
                        .unwrap_or_default()
                        .to_string(),
                ),
                created_ms: mtime.timestamp_millis(),
            }
        }
    };
    Legacy {
        id,
        dir,
        session,
        token,
    }
}

/// The lines of a legacy log, each with its place (from 1), skipping empty lines.
fn lines(path: &Path) -> std::io::Result<impl Iterator<Item = (u64, Vec<u8>)> + use<>> {
    let file = std::fs::File::open(path)?;
    Ok(BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
        .filter(|line| !line.is_empty())
        .zip(1u64..)
        .map(|(line, place)| (place, line)))
}

/// The row of one legacy line at `place`. A readable event keeps its JSON (with `raw`
/// split off); anything else is kept as text.
fn row(place: u64, line: &[u8]) -> EventRow {
    match serde_json::from_slice::<UniversalEvent>(line) {
        Ok(mut event) => {
            let raw = event.raw.take().map(|raw| raw.to_string());
            EventRow {
                sequence: place,
                version: EVENT_VERSION,
                event_type: event.payload.event_type().as_str().to_string(),
                time_us: event.time.timestamp_micros(),
                body: serde_json::to_string(&event).expect("events serialise"),
                raw,
            }
        }
        Err(_) => {
            let value: Option<serde_json::Value> = serde_json::from_slice(line).ok();
            let field = |name: &str| {
                value
                    .as_ref()
                    .and_then(|v| v.get(name))
                    .and_then(|t| t.as_str())
                    .map(str::to_string)
            };
            EventRow {
                sequence: place,
                version: UNCHECKED_VERSION,
                event_type: field("type").unwrap_or_else(|| "unknown".into()),
                time_us: field("time")
                    .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
                    .map_or(0, |t| t.timestamp_micros()),
                // Kept as text; bytes no text column holds (invalid UTF-8, NUL) become U+FFFD.
                body: String::from_utf8_lossy(line).replace('\0', "\u{FFFD}"),
                raw: None,
            }
        }
    }
}

/// The state of a legacy log, through the reducer.
fn replay(path: &Path) -> std::io::Result<(CoreState, u64)> {
    let mut state = CoreState::default();
    let mut count = 0;
    if path.exists() {
        for (place, line) in lines(path)? {
            count = place;
            if let Ok(mut event) = serde_json::from_slice::<UniversalEvent>(&line) {
                event.sequence = place;
                state.apply(&event);
            }
        }
    }
    state.sequence = count;
    Ok((state, count))
}

async fn import_one(store: &Store, legacy: &Legacy) -> Result<u64, StoreError> {
    let io = |e: std::io::Error| StoreError::Unavailable(format!("{}: {e}", legacy.dir.display()));
    let events_path = legacy.dir.join(EVENTS_FILE);
    let (state, count) = tokio::task::spawn_blocking({
        let path = events_path.clone();
        move || replay(&path)
    })
    .await
    .map_err(|e| StoreError::Unavailable(e.to_string()))?
    .map_err(io)?;
    if let Some(token) = &legacy.token {
        files::save_token(&legacy.dir, token).map_err(io)?;
    }
    let events: Box<dyn Iterator<Item = EventRow> + Send> = if events_path.exists() {
        Box::new(
            lines(&events_path)
                .map_err(io)?
                .map(|(place, line)| row(place, &line)),
        )
    } else {
        Box::new(std::iter::empty())
    };
    match store
        .import(legacy.session.clone(), events, Some(state.snapshot()))
        .await
    {
        Ok(_) => {}
        Err(StoreError::Exists(_)) => {
            // Imported by an earlier start that stopped before moving the files aside?
            let stored = store.session(&legacy.id).await?;
            let same = stored.is_some_and(|row| {
                row.record == legacy.session.record && row.last_sequence == count
            });
            if !same {
                return Err(StoreError::Exists(legacy.id.clone()));
            }
        }
        Err(error) => return Err(error),
    }
    for name in [RECORD_FILE, EVENTS_FILE] {
        let from = legacy.dir.join(name);
        if from.exists() {
            std::fs::rename(&from, legacy.dir.join(format!("{name}.imported"))).map_err(io)?;
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_lines_keep_their_place_and_text() {
        let good = crate::store::sample_event(1, "a");
        let line = serde_json::to_vec(&good).unwrap();
        let kept = row(1, &line);
        assert_eq!(kept.event_type, "itemDelta");
        assert_eq!(kept.raw.as_deref(), Some(r#"{"native":"a"}"#));
        assert!(!kept.body.contains("native"));
        let torn = row(2, b"{\"sequence\":2,\"type\":\"itemDelta\",\"ti");
        assert_eq!(row(7, b"a\0b\xff").body, "a\u{FFFD}b\u{FFFD}");
        assert_eq!(torn.sequence, 2);
        assert_eq!(torn.event_type, "unknown");
        assert_eq!(torn.body, "{\"sequence\":2,\"type\":\"itemDelta\",\"ti");
        let newer = row(
            3,
            br#"{"sequence":3,"type":"telepathy","time":"2026-01-01T00:00:00Z"}"#,
        );
        assert_eq!(newer.event_type, "telepathy");
        assert!(newer.time_us > 0);
    }
}
