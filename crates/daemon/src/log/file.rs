//! A durable event log: in memory for readers, and appended to a JSON-lines file (one full
//! event per line, `raw` included) so a session survives a daemon restart.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sandbox_universal::UniversalEvent;
use tokio::sync::watch;

use super::{EventLog, MemoryLog, StoredEvent};

/// An [`EventLog`] backed by a JSON-lines file.
#[derive(Debug)]
pub struct FileLog {
    memory: MemoryLog,
    path: PathBuf,
    file: Mutex<File>,
}

impl FileLog {
    /// Opens (or creates) the log at `path`, loading the events already in it. A torn last
    /// line (a crash in the middle of a write) is dropped; so is anything after a gap.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let mut events = Vec::new();
        let mut valid_bytes = 0u64;
        if path.exists() {
            let reader = BufReader::new(File::open(path)?);
            for line in reader.split(b'\n') {
                let line = line?;
                let Ok(event) = serde_json::from_slice::<UniversalEvent>(&line) else {
                    tracing::warn!(path = %path.display(), "dropping an unreadable event line");
                    break;
                };
                if event.sequence != events.len() as u64 + 1 {
                    tracing::warn!(path = %path.display(), "dropping events after a sequence gap");
                    break;
                }
                valid_bytes += line.len() as u64 + 1;
                events.push(event);
            }
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        if file.metadata()?.len() != valid_bytes {
            file.set_len(valid_bytes)?;
        }
        Ok(Self {
            memory: MemoryLog::with_events(events),
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// Where the log lives.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl EventLog for FileLog {
    fn append(&self, event: UniversalEvent) -> Arc<StoredEvent> {
        let mut file = self.file.lock().expect("log file lock");
        let stored = self.memory.append(event);
        let mut line = serde_json::to_vec(&stored.event).expect("events serialize");
        line.push(b'\n');
        if let Err(error) = file.write_all(&line) {
            // The event stays readable from memory; only its durability is lost.
            tracing::error!(path = %self.path.display(), %error, "writing the event log failed");
        }
        stored
    }

    fn read(&self, after: u64, limit: usize) -> Vec<Arc<StoredEvent>> {
        self.memory.read(after, limit)
    }

    fn last_sequence(&self) -> u64 {
        self.memory.last_sequence()
    }

    fn subscribe(&self) -> watch::Receiver<u64> {
        self.memory.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::sample_event as event;

    #[test]
    fn events_survive_reopening_with_their_raw_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        {
            let log = FileLog::open(&path).unwrap();
            log.append(event("a"));
            log.append(event("b"));
        }
        let log = FileLog::open(&path).unwrap();
        assert_eq!(log.last_sequence(), 2);
        let events = log.read(0, 10);
        assert_eq!(
            events[1].event.raw,
            Some(serde_json::json!({"native": "b"}))
        );
        assert_eq!(log.append(event("c")).event.sequence, 3);
        assert_eq!(FileLog::open(&path).unwrap().last_sequence(), 3);
    }

    #[test]
    fn a_torn_last_line_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        {
            let log = FileLog::open(&path).unwrap();
            log.append(event("a"));
        }
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"sequence\":2,\"ti").unwrap();
        drop(file);
        let log = FileLog::open(&path).unwrap();
        assert_eq!(log.last_sequence(), 1);
        assert_eq!(log.append(event("b")).event.sequence, 2);
        let reopened = FileLog::open(&path).unwrap();
        assert_eq!(reopened.last_sequence(), 2);
    }
}
