//! One look at a workspace: every file and symlink the way git sees it by default
//! (without `.git`, `node_modules` and what `.gitignore` leaves out), each with a content
//! hash, and the content of small text-sized files handed to the blob store so a later
//! look can be diffed against it.
//!
//! Runs on the workspace's user thread (`Workspace::run`): what the agent user cannot
//! read is recorded as unreadable, never read by the daemon. Files are opened beneath the
//! workspace's directory handle, so a symlink swapped in mid-walk leads nowhere outside.
//! A file whose size, times, inode and mode match the previous look (and that was not
//! written within a second of it: the racy case git knows) keeps its hash unread.

use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::ChangeLimits;

/// Names never looked at (as in archive snapshots).
const EXCLUDED_NAMES: [&str; 2] = [".git", "node_modules"];

/// What one look found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The turn this look was taken at the start of (`None`: after a turn's end).
    pub turn: Option<String>,
    /// When the look began, in nanoseconds since the epoch.
    pub scanned_at_ns: i128,
    /// Every file and symlink, by `/`-separated path relative to the workspace.
    pub entries: BTreeMap<String, Entry>,
}

/// One file or symlink.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// A symlink (its content is its target).
    pub symlink: bool,
    /// Its size in bytes.
    pub size: u64,
    /// Its permission bits.
    pub mode: u32,
    /// Its modification time (ns).
    pub mtime_ns: i128,
    /// Its status change time (ns).
    pub ctime_ns: i128,
    /// Its inode.
    pub ino: u64,
    /// The SHA-256 of its content (`unreadable:...` when the workspace's user cannot
    /// read it: then only its metadata tells changes apart).
    pub hash: String,
    /// Whether its content is in the blob store (to be diffed).
    pub kept: bool,
}

/// Why a look was given up.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// More files than `ChangeLimits::max_files`.
    #[error("the workspace holds more than {0} files (outside .git, node_modules and .gitignore)")]
    TooManyFiles(usize),
    /// The blob store did not take content.
    #[error("keeping the workspace's content: {0}")]
    Keep(std::io::Error),
    /// The look took longer than `ChangeLimits::look_time`.
    #[error("looking at the workspace took longer than {0:?}")]
    TooSlow(std::time::Duration),
}

/// Looks at the workspace at `root_path` (open as `root`), reusing `previous`'s hashes for
/// files that did not change; content to keep goes to `keep` (hash, bytes) unless `stored`
/// has it.
/// `skip` (the daemon's data dir, when it lies inside the workspace) is never looked at.
pub fn scan(
    root_path: &Path,
    root: &Dir,
    skip: Option<&Path>,
    previous: &Manifest,
    stored: &HashSet<String>,
    keep: &mut dyn FnMut(String, Vec<u8>) -> std::io::Result<()>,
    limits: &ChangeLimits,
) -> Result<Manifest, ScanError> {
    let scanned_at_ns = now_ns();
    let skip = skip.map(Path::to_path_buf);
    if skip.as_deref() == Some(root_path) {
        // The workspace is the daemon's data dir: nothing in it is the agent's work.
        return Ok(Manifest {
            turn: None,
            scanned_at_ns,
            entries: BTreeMap::new(),
        });
    }
    let mut walker = ignore::WalkBuilder::new(root_path);
    walker
        .standard_filters(false)
        .follow_links(false)
        // Mounts inside the workspace (`/proc`, `/sys`, `/dev` when it is `/`) are not its
        // files, and reading some of them blocks.
        .same_file_system(true)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .filter_entry(move |entry| {
            !EXCLUDED_NAMES.contains(&entry.file_name().to_str().unwrap_or(""))
                && skip.as_deref().is_none_or(|skip| entry.path() != skip)
        });
    // First what is there (metadata only: a workspace over the bounds is given up before
    // any content is read), then what it holds.
    let deadline = std::time::Instant::now() + limits.look_time;
    let mut found_files = Vec::new();
    for found in walker.build().flatten() {
        if std::time::Instant::now() > deadline {
            return Err(ScanError::TooSlow(limits.look_time));
        }
        let Some(kind) = found.file_type() else {
            continue;
        };
        if !(kind.is_file() || kind.is_symlink()) {
            continue;
        }
        let Ok(meta) = found.metadata() else { continue };
        if found_files.len() >= limits.max_files {
            return Err(ScanError::TooManyFiles(limits.max_files));
        }
        let entry = Entry {
            symlink: kind.is_symlink(),
            size: meta.size(),
            mode: meta.mode() & 0o7777,
            mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
            ctime_ns: meta.ctime() as i128 * 1_000_000_000 + meta.ctime_nsec() as i128,
            ino: meta.ino(),
            hash: String::new(),
            kept: false,
        };
        found_files.push((found.into_path(), entry));
    }

    let mut entries = BTreeMap::new();
    let mut sent = HashSet::new();
    let mut kept_bytes = 0u64;
    for (path, mut entry) in found_files {
        if std::time::Instant::now() > deadline {
            return Err(ScanError::TooSlow(limits.look_time));
        }
        let Ok(relative) = path.strip_prefix(root_path) else {
            continue;
        };
        let name = relative.to_string_lossy().into_owned();
        if let Some(before) = previous.entries.get(&name)
            && same_file(before, &entry, previous.scanned_at_ns)
            && (!before.kept || stored.contains(&before.hash))
        {
            entries.insert(name, before.clone());
            if before.kept {
                kept_bytes += before.size;
            }
            continue;
        }
        let content = if entry.symlink {
            std::fs::read_link(&path)
                .map(|target| Content::Whole(target.into_os_string().into_encoded_bytes()))
        } else {
            read_beneath(root, relative, limits.keep_file_bytes)
        };
        match content {
            Ok(content) => {
                let (hash, bytes) = content.into_parts();
                entry.hash = hash;
                if let Some(bytes) = bytes
                    && kept_bytes + bytes.len() as u64 <= limits.keep_total_bytes
                {
                    kept_bytes += bytes.len() as u64;
                    entry.kept = true;
                    if !stored.contains(&entry.hash) && sent.insert(entry.hash.clone()) {
                        keep(entry.hash.clone(), bytes).map_err(ScanError::Keep)?;
                    }
                }
            }
            Err(e) => {
                // Its metadata stands for its content: a write changes size or times.
                entry.hash = format!(
                    "unreadable:{}:{}:{}:{}",
                    e.kind(),
                    entry.size,
                    entry.mtime_ns,
                    entry.ctime_ns
                );
            }
        }
        entries.insert(name, entry);
    }
    Ok(Manifest {
        turn: None,
        scanned_at_ns,
        entries,
    })
}

/// Whether `now` is `before` unchanged: same kind, size, times, inode and mode, and not
/// written so close to the earlier look that a later write could share its time.
fn same_file(before: &Entry, now: &Entry, scanned_at_ns: i128) -> bool {
    const RACY_NS: i128 = 1_000_000_000;
    before.symlink == now.symlink
        && before.size == now.size
        && before.mode == now.mode
        && before.mtime_ns == now.mtime_ns
        && before.ctime_ns == now.ctime_ns
        && before.ino == now.ino
        && now.mtime_ns < scanned_at_ns - RACY_NS
        && now.ctime_ns < scanned_at_ns - RACY_NS
}

/// A file's content as read: whole when small enough to keep, else only its hash.
enum Content {
    Whole(Vec<u8>),
    Hashed(String),
}

impl Content {
    /// Its hash, and the bytes when they were kept.
    fn into_parts(self) -> (String, Option<Vec<u8>>) {
        match self {
            Content::Whole(bytes) => (hash_of(&bytes), Some(bytes)),
            Content::Hashed(hash) => (hash, None),
        }
    }
}

/// Reads a regular file beneath the workspace: whole when it is at most `keep` bytes,
/// else streamed through the hash.
fn read_beneath(root: &Dir, relative: &Path, keep: u64) -> std::io::Result<Content> {
    let mut file = root.open(relative)?;
    let mut head = Vec::new();
    (&mut file).take(keep + 1).read_to_end(&mut head)?;
    if head.len() as u64 <= keep {
        return Ok(Content::Whole(head));
    }
    let mut hasher = Sha256::new();
    hasher.update(&head);
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(Content::Hashed(hex(&hasher.finalize())))
}

/// The SHA-256 of `bytes`, in hex.
pub fn hash_of(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}
