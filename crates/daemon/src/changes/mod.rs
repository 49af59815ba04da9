//! What each turn changed in its session's workspace, whichever agent made the changes:
//! a look at the workspace as the turn starts and as it ends (`scan`), compared
//! (`diff`), the result kept per turn for `GET /sessions/{id}/turns/{turnId}/changes`
//! and its counts carried by `turnEnded`.
//!
//! Why not git: the daemon is one binary and the sandbox may have no git; and a look
//! must never touch the user's own repository (its index, objects or locks) while the
//! agent works in it. The looks keep git's view all the same (`.gitignore`, no `.git`,
//! no `node_modules`) and a stat cache as git's index does.
//!
//! Stored under the session's dir, private to the daemon: `changes/base.json` (the last
//! look, the stat cache), `changes/blobs/<sha256>` (the content of files up to 1 MiB in
//! it, at most 32 MiB, pruned to it after each turn) and `changes/turns/<turnId>.json` (each turn's
//! result). These are local to the daemon that ran the turn, like the agent's own files;
//! nothing here is needed to read the event log. Bounded: a look stays on the
//! workspace's filesystem, gives up past `max_files` or `look_time`, keeps at most
//! `keep_total_bytes` of content, and a turn's answer holds at most `turn_diff_bytes` of
//! diffs. The look at a turn's start happens before the agent is handed the message, so
//! it delays the turn: by the time it takes to read the workspace once, then (with the
//! stat cache) by what changed.

mod blobs;
mod diff;
mod scan;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Utc;
use sandbox_universal::{ChangeCounts, TurnChanges};

use crate::workspace::{Workspace, WorkspaceError};
use blobs::Blobs;
use scan::{Manifest, ScanError};

/// Bounds of change tracking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeLimits {
    /// A workspace with more files (outside what is left out) is not tracked.
    pub max_files: usize,
    /// Files up to this size are kept to be diffed.
    pub keep_file_bytes: u64,
    /// At most this much content is kept per look.
    pub keep_total_bytes: u64,
    /// A file's diff larger than this is left out (`tooLarge`).
    pub file_diff_bytes: usize,
    /// A turn's diffs add up to at most this (`turnLimit` for the rest).
    pub turn_diff_bytes: usize,
    /// A look that takes longer is given up (the turn's changes are then not known).
    pub look_time: std::time::Duration,
}

impl Default for ChangeLimits {
    fn default() -> Self {
        Self {
            max_files: 50_000,
            keep_file_bytes: 1 << 20,
            keep_total_bytes: 32 << 20,
            file_diff_bytes: 256 << 10,
            turn_diff_bytes: 4 << 20,
            look_time: std::time::Duration::from_secs(15),
        }
    }
}

/// Why a turn's changes are not known.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// The workspace could not be looked at.
    #[error("{0}")]
    Workspace(#[from] WorkspaceError),
    /// The look was given up.
    #[error("{0}")]
    Scan(#[from] ScanError),
    /// The daemon's own files could not be written.
    #[error("keeping the workspace's state: {0}")]
    Io(#[from] std::io::Error),
    /// No look was taken as the turn started (the daemon restarted, or it failed).
    #[error("the workspace was not looked at as turn `{0}` started")]
    NotBegun(String),
}

/// One session's change tracking.
#[derive(Debug)]
pub struct ChangeTracker {
    dir: PathBuf,
    workspace: Workspace,
    /// The daemon's data dir when it lies inside the workspace: never looked at (its
    /// store and every session's files change all the time).
    skip: Option<PathBuf>,
    limits: ChangeLimits,
    blobs: Blobs,
    /// The last look (as `base.json` holds it), once read; shared with the look that
    /// uses it as its stat cache, never copied.
    last: tokio::sync::Mutex<Option<Arc<Manifest>>>,
    /// The hashes in the blob store, once listed (every change to it goes through here).
    kept: Arc<std::sync::Mutex<Option<HashSet<String>>>>,
    /// Whether `turns/` was made (by this tracker).
    made_turns_dir: Arc<std::sync::atomic::AtomicBool>,
    /// Whether this tracker wrote `base.json` (after that, only a changed look rewrites it).
    wrote_base: std::sync::atomic::AtomicBool,
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl ChangeTracker {
    /// Tracking of `workspace` for the session whose dir is `session_dir`, inside the
    /// daemon's `data_dir`.
    pub fn new(
        session_dir: &Path,
        data_dir: &Path,
        workspace: Workspace,
        limits: ChangeLimits,
    ) -> Self {
        let dir = session_dir.join("changes");
        let root = std::fs::canonicalize(workspace.root())
            .unwrap_or_else(|_| workspace.root().to_path_buf());
        let data = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
        let skip = data.strip_prefix(&root).ok().map(|inside| {
            if inside.as_os_str().is_empty() {
                workspace.root().to_path_buf()
            } else {
                workspace.root().join(inside)
            }
        });
        Self {
            skip,
            blobs: Blobs::new(dir.join("blobs")),
            dir,
            workspace,
            limits,
            last: tokio::sync::Mutex::new(None),
            kept: Arc::new(std::sync::Mutex::new(None)),
            made_turns_dir: Default::default(),
            wrote_base: Default::default(),
        }
    }

    /// Looks at the workspace as `turn_id` starts.
    pub async fn begin(&self, turn_id: &str) -> Result<(), ChangeError> {
        let mut last = self.last.lock().await;
        let previous = match last.take() {
            Some(previous) => previous,
            None => Arc::new(self.read_base().await),
        };
        let mut look = match self.look(previous).await {
            Ok(look) => look,
            Err(error) => {
                // No content kept for a look that was given up (the base on disk then finds
                // none of its own either, and is only a stat cache).
                let blobs = self.blobs.clone();
                let _ = tokio::task::spawn_blocking(move || blobs.retain(&HashSet::new())).await;
                *lock(&self.kept) = Some(HashSet::new());
                return Err(error);
            }
        };
        // Kept in memory only: the turn's end is compared against it by this tracker,
        // and a turn cut short by a restart has no known changes anyway.
        look.turn = Some(turn_id.to_string());
        *last = Some(Arc::new(look));
        Ok(())
    }

    /// Looks at the workspace as `turn_id` ends, keeps what changed since it started
    /// and answers the counts.
    pub async fn end(&self, turn_id: &str) -> Result<ChangeCounts, ChangeError> {
        let mut last = self.last.lock().await;
        let start = match last.take() {
            Some(start) => start,
            None => Arc::new(self.read_base().await),
        };
        if start.turn.as_deref() != Some(turn_id) {
            *last = Some(start);
            return Err(ChangeError::NotBegun(turn_id.to_string()));
        }
        let end = match self.look(start.clone()).await {
            Ok(end) => end,
            Err(error) => {
                *last = Some(start);
                return Err(error);
            }
        };
        let blobs = self.blobs.clone();
        let limits = self.limits;
        let turn = turn_id.to_string();
        let dir = self.dir.clone();
        let unchanged = start.entries == end.entries;
        let kept = self.kept.clone();
        let made_turns_dir = self.made_turns_dir.clone();
        let (counts, end) = tokio::task::spawn_blocking(move || {
            let (counts, files) = diff::compare(&start, &end, &blobs, &limits);
            let changes = TurnChanges {
                turn_id: turn.clone(),
                counts,
                files,
                taken_at: Utc::now(),
            };
            let turns = dir.join("turns");
            if !made_turns_dir.swap(true, std::sync::atomic::Ordering::Relaxed) {
                crate::private::ensure_dir(&turns, 0o700)?;
            }
            let json = serde_json::to_vec(&changes).expect("changes serialize");
            std::fs::write(turns.join(format!("{turn}.json")), json)?;
            if !unchanged {
                // Content the new base no longer names is not needed again.
                let keep: HashSet<String> = end
                    .entries
                    .values()
                    .filter(|e| e.kept)
                    .map(|e| e.hash.clone())
                    .collect();
                blobs.retain(&keep);
                *lock(&kept) = Some(keep);
            }
            Ok::<_, std::io::Error>((counts, end))
        })
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))??;
        // The stat cache on disk (for the next agent process or daemon) changes only when
        // the workspace did.
        if !unchanged
            || !self
                .wrote_base
                .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            self.write_base(&end).await?;
        }
        *last = Some(Arc::new(end));
        Ok(counts)
    }

    /// Takes one look, reusing `previous` as a stat cache. Kept content is written by the
    /// daemon: on the look's own thread when the workspace is reached as the daemon's user,
    /// else by a writer beside the look, which runs as the agent user.
    async fn look(&self, previous: Arc<Manifest>) -> Result<Manifest, ChangeError> {
        let stored = self.stored().await;
        let root = self.workspace.root().to_path_buf();
        let skip = self.skip.clone();
        let limits = self.limits;
        let blobs = self.blobs.clone();
        let kept = self.kept.clone();
        if self.workspace.user().is_none() {
            let look = self
                .workspace
                .run(move |dir| {
                    let mut keep = |hash: String, bytes: Vec<u8>| {
                        blobs.put(&hash, &bytes)?;
                        lock(&kept).get_or_insert_with(HashSet::new).insert(hash);
                        Ok(())
                    };
                    let skip = skip.as_deref();
                    Ok(scan::scan(
                        &root, dir, skip, &previous, &stored, &mut keep, &limits,
                    ))
                })
                .await??;
            return Ok(look);
        }
        let (send, received) = std::sync::mpsc::sync_channel::<(String, Vec<u8>)>(8);
        let writer = tokio::task::spawn_blocking(move || {
            for (hash, bytes) in received {
                blobs.put(&hash, &bytes)?;
                lock(&kept).get_or_insert_with(HashSet::new).insert(hash);
            }
            Ok::<_, std::io::Error>(())
        });
        let looked = self
            .workspace
            .run(move |dir| {
                let mut keep = |hash: String, bytes: Vec<u8>| {
                    send.send((hash, bytes))
                        .map_err(|_| std::io::Error::other("the writer stopped"))
                };
                let skip = skip.as_deref();
                Ok(scan::scan(
                    &root, dir, skip, &previous, &stored, &mut keep, &limits,
                ))
            })
            .await;
        let written = writer
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let look = looked??;
        written?;
        Ok(look)
    }

    /// The hashes of the content kept (read from disk once, then followed in memory).
    async fn stored(&self) -> HashSet<String> {
        if let Some(known) = lock(&self.kept).as_ref() {
            return known.clone();
        }
        let blobs = self.blobs.clone();
        let found = tokio::task::spawn_blocking(move || blobs.hashes())
            .await
            .unwrap_or_default();
        lock(&self.kept).get_or_insert_with(|| found).clone()
    }

    async fn read_base(&self) -> Manifest {
        tokio::fs::read(self.dir.join("base.json"))
            .await
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    async fn write_base(&self, look: &Manifest) -> std::io::Result<()> {
        let dir = self.dir.clone();
        let json = serde_json::to_vec(look).expect("a look serializes");
        tokio::task::spawn_blocking(move || {
            crate::private::ensure_dir(&dir, 0o700)?;
            // No fsync: a base lost to a crash costs one turn's changes, never the log.
            let temp = dir.join("base.json.tmp");
            std::fs::write(&temp, json)?;
            std::fs::rename(temp, dir.join("base.json"))
        })
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?
    }
}

/// What turn `turn_id` of the session whose dir is `session_dir` changed, when known.
pub fn turn_changes(session_dir: &Path, turn_id: &str) -> Option<TurnChanges> {
    if !turn_id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return None;
    }
    let path = session_dir
        .join("changes")
        .join("turns")
        .join(format!("{turn_id}.json"));
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

#[cfg(test)]
mod tests;
