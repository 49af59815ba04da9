//! The content the change tracker keeps to diff against: one private file per content
//! hash under the session's `changes/blobs`, written by the daemon (never by the agent
//! user), and pruned to what the last look still names.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A session's kept content.
#[derive(Debug, Clone)]
pub struct Blobs {
    dir: PathBuf,
}

impl Blobs {
    /// The store in `dir` (made private on first use).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    fn path(&self, hash: &str) -> Option<PathBuf> {
        // Hashes are ours (hex); anything else names no file.
        hash.bytes()
            .all(|b| b.is_ascii_hexdigit())
            .then(|| self.dir.join(hash))
    }

    /// Keeps `bytes` under `hash` (once).
    pub fn put(&self, hash: &str, bytes: &[u8]) -> std::io::Result<()> {
        let Some(path) = self.path(hash) else {
            return Ok(());
        };
        if path.exists() {
            return Ok(());
        }
        crate::private::ensure_dir(&self.dir, 0o700)?;
        // No fsync: a blob lost to a crash only costs that file's diff.
        let temp = path.with_extension("tmp");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(bytes)?;
        std::fs::rename(temp, path)
    }

    /// The content kept under `hash`.
    pub fn get(&self, hash: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path(hash)?).ok()
    }

    /// The hashes kept.
    pub fn hashes(&self) -> HashSet<String> {
        list(&self.dir)
    }

    /// Removes what `keep` does not name.
    pub fn retain(&self, keep: &HashSet<String>) {
        for hash in list(&self.dir) {
            if !keep.contains(&hash) {
                let _ = std::fs::remove_file(self.dir.join(hash));
            }
        }
    }
}

fn list(dir: &Path) -> HashSet<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| !name.ends_with(".tmp"))
                .collect()
        })
        .unwrap_or_default()
}
