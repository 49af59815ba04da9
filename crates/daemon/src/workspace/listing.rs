//! `GET /sessions/{id}/files`: a directory's entries, a few levels down.

use cap_std::fs::{Dir, Metadata, MetadataExt};
use chrono::{DateTime, Utc};
use sandbox_universal::{FileEntry, FileKind, FileListing};

use super::{WorkspaceError, WorkspacePath};

/// The deepest listing taken.
pub const MAX_DEPTH: u32 = 32;

/// Lists `path` (a directory, or a symlink to one inside the workspace) `depth` levels
/// down (1: its own entries), at most `limit` entries, each directory's entries in name
/// order right after it. Symlinks are listed, never followed.
pub fn list(
    root: &Dir,
    path: &WorkspacePath,
    depth: u32,
    limit: usize,
) -> Result<FileListing, WorkspaceError> {
    let shown = || format!("`{}`", path.display());
    let dir = if path.is_root() {
        root.try_clone()
            .map_err(|e| WorkspaceError::from_io("the workspace", e))?
    } else {
        let meta = root
            .metadata(path.relative())
            .map_err(|e| WorkspaceError::from_io(&shown(), e))?;
        if !meta.is_dir() {
            return Err(WorkspaceError::WrongKind(format!(
                "{} is not a directory",
                shown()
            )));
        }
        root.open_dir(path.relative())
            .map_err(|e| WorkspaceError::from_io(&shown(), e))?
    };
    let mut listing = FileListing {
        path: path.display(),
        depth,
        entries: Vec::new(),
        truncated: false,
    };
    walk(&dir, path, depth, limit, &mut listing)?;
    Ok(listing)
}

fn walk(
    dir: &Dir,
    path: &WorkspacePath,
    depth: u32,
    limit: usize,
    listing: &mut FileListing,
) -> Result<(), WorkspaceError> {
    let shown = || format!("`{}`", path.display());
    let mut names: Vec<String> = Vec::new();
    for entry in dir
        .entries()
        .map_err(|e| WorkspaceError::from_io(&shown(), e))?
    {
        let entry = entry.map_err(|e| WorkspaceError::from_io(&shown(), e))?;
        // A name that is not UTF-8 cannot be named in the API; it is left out.
        if let Ok(name) = entry.file_name().into_string() {
            names.push(name);
        }
    }
    names.sort();
    for name in names {
        if listing.entries.len() >= limit {
            listing.truncated = true;
            return Ok(());
        }
        let child = path.child(&name);
        // Gone since it was read: left out.
        let Ok(meta) = dir.symlink_metadata(&name) else {
            continue;
        };
        let target = meta
            .is_symlink()
            .then(|| dir.read_link_contents(&name).ok())
            .flatten()
            .map(|t| t.to_string_lossy().into_owned());
        listing.entries.push(entry_of(&child, &meta, target));
        if meta.is_dir() && depth > 1 {
            match dir.open_dir(&name) {
                Ok(sub) => walk(&sub, &child, depth - 1, limit, listing)?,
                // One unreadable directory does not hide the rest.
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}
                Err(e) => {
                    return Err(WorkspaceError::from_io(
                        &format!("`{}`", child.display()),
                        e,
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The API's view of one file's metadata.
pub fn entry_of(path: &WorkspacePath, meta: &Metadata, target: Option<String>) -> FileEntry {
    let kind = if meta.is_symlink() {
        FileKind::Symlink
    } else if meta.is_dir() {
        FileKind::Directory
    } else if meta.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    };
    FileEntry {
        path: path.display(),
        name: path.name().to_string(),
        kind,
        size: meta.size(),
        mode: meta.mode() & 0o7777,
        modified_at: DateTime::<Utc>::from_timestamp(meta.mtime(), meta.mtime_nsec() as u32)
            .unwrap_or_default(),
        target,
    }
}
