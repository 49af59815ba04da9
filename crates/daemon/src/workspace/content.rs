//! A file's content: reading it, writing it atomically (a temporary file beside it, then a
//! rename), and deleting files and directories.

use cap_std::fs::{Dir, OpenOptions, Permissions, PermissionsExt};
use sandbox_universal::FileEntry;

use super::listing::entry_of;
use super::{WorkspaceError, WorkspacePath};

fn shown(path: &WorkspacePath) -> String {
    format!("`{}`", path.display())
}

/// Opens the regular file at `path` (a symlink to one inside the workspace is followed)
/// for reading, with its metadata.
pub fn open(
    root: &Dir,
    path: &WorkspacePath,
) -> Result<(std::fs::File, FileEntry), WorkspaceError> {
    if path.is_root() {
        return Err(WorkspaceError::Root(
            "the workspace itself is a directory; name a file in it".into(),
        ));
    }
    let file = root
        .open(path.relative())
        .map_err(|e| WorkspaceError::from_io(&shown(path), e))?;
    let meta = file
        .metadata()
        .map_err(|e| WorkspaceError::from_io(&shown(path), e))?;
    if !meta.is_file() {
        return Err(WorkspaceError::WrongKind(format!(
            "{} is not a regular file",
            shown(path)
        )));
    }
    Ok((file.into_std(), entry_of(path, &meta, None)))
}

/// A write under way: the temporary file the body goes to, renamed over the target when
/// complete.
#[derive(Debug)]
pub struct PendingWrite {
    /// Where the body is written.
    pub file: std::fs::File,
    temp: WorkspacePath,
    target: WorkspacePath,
    mode: u32,
    /// Whether it replaces a file that was there.
    pub replaces: bool,
}

/// Starts writing `path`: creates its missing parent directories and an empty temporary
/// file beside it. A file it replaces keeps its permission bits; a new one gets the
/// agents' umask applied to 0666.
pub fn begin_write(root: &Dir, path: &WorkspacePath) -> Result<PendingWrite, WorkspaceError> {
    if path.is_root() {
        return Err(WorkspaceError::Root(
            "the workspace itself is a directory; name a file in it".into(),
        ));
    }
    let parent = path.parent();
    make_dirs(root, &parent)?;
    let (mode, replaces) = match root.symlink_metadata(path.relative()) {
        Ok(meta) if meta.is_dir() => {
            return Err(WorkspaceError::WrongKind(format!(
                "{} is a directory",
                shown(path)
            )));
        }
        Ok(meta) if meta.is_file() => (meta.permissions().mode() & 0o7777, true),
        Ok(_) => (0o666 & !sandbox_agents::process::agent_umask(), true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            (0o666 & !sandbox_agents::process::agent_umask(), false)
        }
        Err(e) => return Err(WorkspaceError::from_io(&shown(path), e)),
    };
    let temp = parent.child(&format!(
        ".{}.{}.partial",
        path.name(),
        uuid::Uuid::new_v4().simple()
    ));
    let file = root
        .open_with(
            temp.relative(),
            OpenOptions::new().write(true).create_new(true),
        )
        .map_err(|e| WorkspaceError::from_io(&shown(path), e))?;
    Ok(PendingWrite {
        file: file.into_std(),
        temp,
        target: path.clone(),
        mode,
        replaces,
    })
}

/// Creates `path` and the directories above it where missing. A symlink on the way is
/// followed only to a directory inside the workspace (else 403 `outside-workspace`); a
/// file on the way is 409 `wrong-file-kind`.
pub fn make_dirs(root: &Dir, path: &WorkspacePath) -> Result<(), WorkspaceError> {
    let mut at = WorkspacePath::parse("").expect("the root parses");
    for part in path.display().split('/').filter(|p| !p.is_empty()) {
        at = at.child(part);
        let io = |e| WorkspaceError::from_io(&shown(&at), e);
        match root.symlink_metadata(at.relative()) {
            Ok(meta) if meta.is_dir() => {}
            // Followed within the workspace only: an escape is refused here.
            Ok(meta) if meta.is_symlink() => {
                if !root.metadata(at.relative()).map_err(io)?.is_dir() {
                    return Err(WorkspaceError::WrongKind(format!(
                        "{} is not a directory",
                        shown(&at)
                    )));
                }
            }
            Ok(_) => {
                return Err(WorkspaceError::WrongKind(format!(
                    "{} is not a directory",
                    shown(&at)
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match root.create_dir(at.relative()) {
                    // As the agents make theirs (the daemon's own umask is 077).
                    Ok(()) => root
                        .set_permissions(
                            at.relative(),
                            Permissions::from_mode(0o777 & !sandbox_agents::process::agent_umask()),
                        )
                        .map_err(io)?,
                    // Made meanwhile by someone else: fine if it is a directory.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(io(e)),
                }
            }
            Err(e) => return Err(io(e)),
        }
    }
    Ok(())
}

/// Puts a completely written (and synced) temporary file in place.
pub fn finish_write(root: &Dir, pending: PendingWrite) -> Result<FileEntry, WorkspaceError> {
    let PendingWrite {
        file,
        temp,
        target,
        mode,
        ..
    } = pending;
    let placed = (|| {
        root.set_permissions(temp.relative(), Permissions::from_mode(mode))?;
        drop(file);
        root.rename(temp.relative(), root, target.relative())
    })();
    if let Err(e) = placed {
        let _ = root.remove_file(temp.relative());
        return Err(WorkspaceError::from_io(&shown(&target), e));
    }
    let meta = root
        .symlink_metadata(target.relative())
        .map_err(|e| WorkspaceError::from_io(&shown(&target), e))?;
    Ok(entry_of(&target, &meta, None))
}

/// Drops a write that did not complete: its temporary file goes.
pub fn abandon_write(root: &Dir, pending: PendingWrite) {
    drop(pending.file);
    let _ = root.remove_file(pending.temp.relative());
}

/// Deletes the file, symlink (never what it points to) or directory at `path`; a
/// directory with entries only when `recursive`.
pub fn delete(root: &Dir, path: &WorkspacePath, recursive: bool) -> Result<(), WorkspaceError> {
    if path.is_root() {
        return Err(WorkspaceError::Root(
            "the workspace itself cannot be deleted; name something in it".into(),
        ));
    }
    let meta = root
        .symlink_metadata(path.relative())
        .map_err(|e| WorkspaceError::from_io(&shown(path), e))?;
    let removed = if !meta.is_dir() {
        root.remove_file(path.relative())
    } else if recursive {
        root.remove_dir_all(path.relative())
    } else {
        root.remove_dir(path.relative())
    };
    removed.map_err(|e| WorkspaceError::from_io(&shown(path), e))
}
