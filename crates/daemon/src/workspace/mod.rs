//! A session's workspace (its working directory) as the files API reaches it.
//!
//! Invariant (confinement): every file operation resolves its path inside the workspace
//! through a directory handle (`cap_std::fs::Dir`: `openat2` with `RESOLVE_BENEATH` on
//! Linux), so no `..`, absolute path or symlink, however it was planted or raced, leads
//! out; paths are also refused up front when they name `..` or start with `/`. With
//! `--agent-user`, each operation runs on a thread of its own whose filesystem identity is
//! that user's (`as_user`), so the daemon never reads or writes what the agent could not.

mod as_user;
mod error;
mod path;

pub mod archive;
pub mod content;
pub mod listing;
pub mod upload;

use std::path::PathBuf;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use sandbox_agents::user::AgentUser;

pub use error::WorkspaceError;
pub use path::WorkspacePath;

/// Limits of the files API (`--max-upload-bytes`, `--archive-max-file-bytes`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimits {
    /// The largest body `PUT .../files/content` and `POST .../files/upload` take, and the
    /// most bytes an upload's archive may unpack to.
    pub max_upload_bytes: u64,
    /// The most entries an uploaded archive may hold.
    pub max_upload_entries: u64,
    /// An archive snapshot leaves out files larger than this (by default).
    pub archive_max_file_bytes: u64,
    /// An archive snapshot whose files add up to more is refused (by default).
    pub archive_max_bytes: u64,
    /// The most entries one listing answers.
    pub max_list_entries: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        Self {
            max_upload_bytes: 512 << 20,
            max_upload_entries: 100_000,
            archive_max_file_bytes: 1 << 20,
            archive_max_bytes: 12 << 20,
            max_list_entries: 10_000,
        }
    }
}

/// One session's workspace: its root and the user its files are reached as.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    user: Option<AgentUser>,
}

impl Workspace {
    /// The workspace rooted at `root` (the session's working directory), reached as `user`
    /// (`None`: the daemon's own user).
    pub fn new(root: PathBuf, user: Option<AgentUser>) -> Self {
        Self { root, user }
    }

    /// The directory it is rooted at.
    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    /// The user its files are reached as (`None`: the daemon's own).
    pub fn user(&self) -> Option<&AgentUser> {
        self.user.as_ref()
    }

    /// Runs `op` with the workspace's directory open, on a thread of its own acting as the
    /// workspace's user.
    pub async fn run<T, F>(&self, op: F) -> Result<T, WorkspaceError>
    where
        T: Send + 'static,
        F: FnOnce(&Dir) -> Result<T, WorkspaceError> + Send + 'static,
    {
        let root = self.root.clone();
        as_user::run(self.user.clone(), move || {
            let dir = Dir::open_ambient_dir(&root, ambient_authority()).map_err(|e| {
                WorkspaceError::from_io(
                    &format!("the session's working directory `{}`", root.display()),
                    e,
                )
            })?;
            op(&dir)
        })
        .await?
    }
}
