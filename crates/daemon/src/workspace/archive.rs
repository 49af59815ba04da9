//! `GET /sessions/{id}/files/archive`: a tar.gz snapshot of the workspace (or a directory
//! in it), the way git sees it by default: without `.git`, `node_modules` and what
//! `.gitignore` (or `.git/info/exclude`) leaves out, files over a size left out and listed,
//! and a refusal when the rest adds up to more than a total.

use std::io::{Read, Write};
use std::path::Path;

use cap_std::fs::{Dir, MetadataExt};

use super::{WorkspaceError, WorkspacePath};

/// How a snapshot is taken.
#[derive(Debug, Clone, Copy)]
pub struct ArchiveOptions {
    /// Take everything: `.git`, `node_modules` and ignored paths too.
    pub all: bool,
    /// Files larger than this are left out (and listed).
    pub max_file_bytes: u64,
    /// A snapshot whose files add up to more is refused.
    pub max_bytes: u64,
}

/// What a snapshot holds.
#[derive(Debug, Default)]
pub struct ArchiveSummary {
    /// Regular files.
    pub files: u64,
    /// Directories.
    pub directories: u64,
    /// Symlinks (as links, never followed).
    pub symlinks: u64,
    /// Bytes of file content.
    pub bytes: u64,
    /// Paths left out: over the per-file limit, unreadable, or neither file, directory
    /// nor symlink.
    pub skipped: Vec<String>,
}

/// Names never taken unless `all`.
const EXCLUDED_NAMES: [&str; 2] = [".git", "node_modules"];

/// Writes the snapshot of `path` (relative to the workspace `root`, found at `root_path`)
/// to `out` as tar.gz; its entries are named relative to `path`.
pub fn write(
    root_path: &Path,
    root: &Dir,
    path: &WorkspacePath,
    out: impl Write,
    options: ArchiveOptions,
) -> Result<ArchiveSummary, WorkspaceError> {
    let shown = format!("`{}`", path.display());
    if !path.is_root() {
        let meta = root
            .symlink_metadata(path.relative())
            .map_err(|e| WorkspaceError::from_io(&shown, e))?;
        if !meta.is_dir() {
            return Err(WorkspaceError::WrongKind(format!(
                "{shown} is not a directory (a symlink is not followed)"
            )));
        }
    }
    let base = root_path.join(path.relative());
    let mut walker = ignore::WalkBuilder::new(&base);
    walker
        .standard_filters(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    if !options.all {
        walker
            .git_ignore(true)
            .git_exclude(true)
            .require_git(false)
            .filter_entry(|entry| {
                !EXCLUDED_NAMES.contains(&entry.file_name().to_str().unwrap_or(""))
            });
    }

    let mut summary = ArchiveSummary::default();
    let mut planned = Vec::new();
    for found in walker.build() {
        let found = match found {
            Ok(found) => found,
            Err(e) => {
                summary.skipped.push(format!("(unreadable: {e})"));
                continue;
            }
        };
        let Ok(relative) = found.path().strip_prefix(&base) else {
            continue;
        };
        if relative.as_os_str().is_empty() {
            continue;
        }
        let Some(inside) = path.join_archived(relative) else {
            continue;
        };
        let name = relative.to_string_lossy().into_owned();
        // The walk's own file type is lstat's: a symlink is a symlink.
        match found.file_type() {
            Some(t) if t.is_dir() => planned.push((name, inside, Kind::Directory)),
            Some(t) if t.is_symlink() => planned.push((name, inside, Kind::Symlink)),
            Some(t) if t.is_file() => {
                let size = found.metadata().map(|m| m.len()).unwrap_or(0);
                if size > options.max_file_bytes {
                    summary.skipped.push(name);
                    continue;
                }
                summary.bytes += size;
                if summary.bytes > options.max_bytes {
                    return Err(WorkspaceError::SnapshotTooLarge(format!(
                        "the snapshot of {shown} holds more than {} bytes of files (maxBytes); raise maxBytes, lower maxFileBytes or name a smaller directory",
                        options.max_bytes
                    )));
                }
                planned.push((name, inside, Kind::File(size)));
            }
            _ => summary.skipped.push(name),
        }
    }

    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        out,
        flate2::Compression::fast(),
    ));
    let failed = |e: std::io::Error| WorkspaceError::from_io("writing the snapshot", e);
    summary.bytes = 0;
    for (name, inside, kind) in planned {
        let Ok(meta) = root.symlink_metadata(inside.relative()) else {
            summary.skipped.push(name);
            continue;
        };
        let mut header = tar::Header::new_gnu();
        header.set_mode(meta.mode() & 0o7777);
        header.set_mtime(meta.mtime().max(0) as u64);
        match kind {
            Kind::Directory => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_size(0);
                tar.append_data(&mut header, format!("{name}/"), std::io::empty())
                    .map_err(failed)?;
                summary.directories += 1;
            }
            Kind::Symlink => {
                let Ok(target) = root.read_link_contents(inside.relative()) else {
                    summary.skipped.push(name);
                    continue;
                };
                header.set_entry_type(tar::EntryType::Symlink);
                header.set_size(0);
                tar.append_link(&mut header, &name, target)
                    .map_err(failed)?;
                summary.symlinks += 1;
            }
            Kind::File(size) => {
                // Opened through the workspace's handle: a file swapped for a symlink
                // since the walk cannot lead out.
                let Ok(file) = root.open(inside.relative()) else {
                    summary.skipped.push(name);
                    continue;
                };
                // Exactly the size the header says, even if the file changes meanwhile.
                let content = file.take(size).chain(std::io::repeat(0)).take(size);
                header.set_entry_type(tar::EntryType::Regular);
                header.set_size(size);
                tar.append_data(&mut header, &name, content)
                    .map_err(failed)?;
                summary.files += 1;
                summary.bytes += size;
            }
        }
    }
    tar.into_inner()
        .and_then(|gzip| gzip.finish())
        .and_then(|mut out| out.flush())
        .map_err(failed)?;
    Ok(summary)
}

enum Kind {
    Directory,
    Symlink,
    File(u64),
}
