//! `POST /sessions/{id}/files/upload`: a tar or tar.gz archive unpacked into the workspace.
//!
//! The archive is read twice: first every entry is checked (its path relative and not
//! climbing, no device node, FIFO or hard link, symlinks pointing inside the workspace,
//! the counts and sizes within the limits), so a refused archive writes nothing; then it
//! is unpacked, every write confined to the workspace.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use cap_std::fs::{Dir, OpenOptions, Permissions, PermissionsExt};
use sandbox_universal::UploadSummary;
use tar::EntryType;

use super::content::make_dirs;
use super::{FileLimits, WorkspaceError, WorkspacePath};

/// What one archive entry becomes.
enum Planned {
    File,
    Directory,
    Symlink(std::path::PathBuf),
    /// Metadata the archive format carries for other entries (PAX, GNU long names).
    Skipped,
}

/// Unpacks `archive` (a spooled upload: tar, or tar.gz by its magic bytes) into `dest`.
pub fn extract(
    root: &Dir,
    dest: &WorkspacePath,
    mut archive: std::fs::File,
    limits: &FileLimits,
) -> Result<UploadSummary, WorkspaceError> {
    let mut entries = 0u64;
    let mut bytes = 0u64;
    for_each_entry(&mut archive, |path, kind, entry| {
        let planned = plan(dest, path, kind, entry)?;
        if matches!(planned, Planned::Skipped) {
            return Ok(());
        }
        entries += 1;
        if entries > limits.max_upload_entries {
            return Err(WorkspaceError::TooLarge(format!(
                "the archive holds more than {} entries (--max-upload-entries)",
                limits.max_upload_entries
            )));
        }
        bytes += entry.header().size().unwrap_or(0);
        if bytes > limits.max_upload_bytes {
            return Err(WorkspaceError::TooLarge(format!(
                "the archive unpacks to more than {} bytes (--max-upload-bytes)",
                limits.max_upload_bytes
            )));
        }
        Ok(())
    })?;

    make_dirs(root, dest)?;
    let mut summary = UploadSummary {
        path: dest.display(),
        files: 0,
        directories: 0,
        symlinks: 0,
        bytes: 0,
    };
    let mut dir_modes = Vec::new();
    for_each_entry(&mut archive, |path, kind, entry| {
        let planned = plan(dest, path, kind, entry)?;
        let Some(target) = dest.join_archived(path) else {
            return Ok(());
        };
        let shown = || format!("`{}`", target.display());
        let io = |e| WorkspaceError::from_io(&shown(), e);
        let mode = entry.header().mode().ok().map(|m| m & 0o777);
        match planned {
            Planned::Skipped => {}
            Planned::Directory => {
                if !target.is_root() {
                    make_room(root, &target, true)?;
                    make_dirs(root, &target)?;
                    if let Some(mode) = mode {
                        dir_modes.push((target.clone(), mode));
                    }
                }
                summary.directories += 1;
            }
            Planned::File => {
                make_parent(root, &target)?;
                make_room(root, &target, false)?;
                let mut file = root
                    .open_with(
                        target.relative(),
                        OpenOptions::new().write(true).create_new(true),
                    )
                    .map_err(io)?;
                summary.bytes += std::io::copy(entry, &mut file).map_err(io)?;
                let mode = mode.unwrap_or(0o666 & !sandbox_agents::process::agent_umask());
                file.set_permissions(Permissions::from_mode(mode))
                    .map_err(io)?;
                summary.files += 1;
            }
            Planned::Symlink(link) => {
                make_parent(root, &target)?;
                make_room(root, &target, false)?;
                root.symlink(&link, target.relative()).map_err(io)?;
                summary.symlinks += 1;
            }
        }
        Ok(())
    })?;
    // Directory modes last, deepest first: a read-only directory is filled before it is
    // made read-only.
    for (path, mode) in dir_modes.into_iter().rev() {
        root.set_permissions(path.relative(), Permissions::from_mode(mode | 0o700))
            .map_err(|e| WorkspaceError::from_io(&format!("`{}`", path.display()), e))?;
    }
    Ok(summary)
}

/// Checks one entry: what it becomes, or why it is refused.
fn plan(
    dest: &WorkspacePath,
    path: &Path,
    kind: EntryType,
    entry: &tar::Entry<'_, Box<dyn Read + '_>>,
) -> Result<Planned, WorkspaceError> {
    let shown = path.display();
    let planned = match kind {
        EntryType::XGlobalHeader
        | EntryType::XHeader
        | EntryType::GNULongName
        | EntryType::GNULongLink => return Ok(Planned::Skipped),
        EntryType::Regular | EntryType::Continuous => Planned::File,
        EntryType::Directory => Planned::Directory,
        EntryType::Symlink => {
            let link = entry
                .link_name()
                .ok()
                .flatten()
                .ok_or_else(|| {
                    WorkspaceError::InvalidArchive(format!("symlink `{shown}` has no target"))
                })?
                .into_owned();
            Planned::Symlink(link)
        }
        EntryType::Link => {
            return Err(WorkspaceError::EntryRefused(format!(
                "entry `{shown}` is a hard link; hard links are not extracted"
            )));
        }
        EntryType::Char | EntryType::Block | EntryType::Fifo => {
            return Err(WorkspaceError::EntryRefused(format!(
                "entry `{shown}` is a device node or FIFO; only files, directories and symlinks are extracted"
            )));
        }
        other => {
            return Err(WorkspaceError::EntryRefused(format!(
                "entry `{shown}` is of tar type {:?}; only files, directories and symlinks are extracted",
                other.as_byte() as char
            )));
        }
    };
    let target = dest.join_archived(path).ok_or_else(|| {
        WorkspaceError::EntryRefused(format!(
            "entry `{shown}` is absolute or names `..`; entries stay inside the workspace"
        ))
    })?;
    if let Planned::Symlink(link) = &planned
        && !target.link_stays_inside(link)
    {
        return Err(WorkspaceError::EntryRefused(format!(
            "symlink `{shown}` points to `{}`, outside the workspace",
            link.display()
        )));
    }
    Ok(planned)
}

/// Calls `each` with every entry of the archive, from its start.
fn for_each_entry(
    archive: &mut std::fs::File,
    mut each: impl FnMut(
        &Path,
        EntryType,
        &mut tar::Entry<'_, Box<dyn Read + '_>>,
    ) -> Result<(), WorkspaceError>,
) -> Result<(), WorkspaceError> {
    let unreadable = |e: std::io::Error| {
        WorkspaceError::InvalidArchive(format!(
            "the upload is not a readable tar or tar.gz archive: {e}"
        ))
    };
    archive.seek(SeekFrom::Start(0)).map_err(unreadable)?;
    let mut magic = [0u8; 2];
    let gzip = archive.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    archive.seek(SeekFrom::Start(0)).map_err(unreadable)?;
    let reader: Box<dyn Read + '_> = if gzip {
        Box::new(flate2::read::GzDecoder::new(&*archive))
    } else {
        Box::new(&*archive)
    };
    let mut tar = tar::Archive::new(reader);
    for entry in tar.entries().map_err(unreadable)? {
        let mut entry = entry.map_err(unreadable)?;
        let path = entry.path().map_err(unreadable)?.into_owned();
        let kind = entry.header().entry_type();
        each(&path, kind, &mut entry)?;
    }
    Ok(())
}

/// Creates the missing directories above `target`.
fn make_parent(root: &Dir, target: &WorkspacePath) -> Result<(), WorkspaceError> {
    make_dirs(root, &target.parent())
}

/// Clears `target` for a new entry: a file or symlink there goes (never what a symlink
/// points to); a directory stays for a directory entry and is refused for anything else.
fn make_room(
    root: &Dir,
    target: &WorkspacePath,
    for_directory: bool,
) -> Result<(), WorkspaceError> {
    match root.symlink_metadata(target.relative()) {
        Ok(meta) if meta.is_dir() => {
            if for_directory {
                Ok(())
            } else {
                Err(WorkspaceError::WrongKind(format!(
                    "`{}` is a directory in the workspace; the archive has a file there",
                    target.display()
                )))
            }
        }
        Ok(_) => root
            .remove_file(target.relative())
            .map_err(|e| WorkspaceError::from_io(&format!("`{}`", target.display()), e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(WorkspaceError::from_io(
            &format!("`{}`", target.display()),
            e,
        )),
    }
}
