//! A session's workspace files as the API shows them: `GET /sessions/{id}/files` lists,
//! `PUT .../files/content` and `POST .../files/upload` answer with what they wrote.
//!
//! Paths are relative to the session's working directory, `/`-separated, without `.` or
//! `..` components; the empty path is the working directory itself.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What a directory entry is. A symlink is reported as itself, never followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (its `target` says where it points).
    Symlink,
    /// Anything else: a socket, a FIFO, a device node.
    Other,
}

/// One file, directory or link in a workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    /// Its path, relative to the session's working directory.
    pub path: String,
    /// Its name (the path's last component; empty for the working directory itself).
    pub name: String,
    /// What it is.
    pub kind: FileKind,
    /// Its size in bytes (a symlink's: the length of its target).
    pub size: u64,
    /// Its permission bits, e.g. `420` (`0o644`).
    pub mode: u32,
    /// When its content last changed.
    pub modified_at: DateTime<Utc>,
    /// A symlink's target, as written in the link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// `GET /sessions/{id}/files`: a directory's entries, depth first in name order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileListing {
    /// The directory listed (relative to the working directory; empty: the directory itself).
    pub path: String,
    /// How many levels below it were listed.
    pub depth: u32,
    /// Its entries, each directory followed by its own entries (down to `depth`).
    pub entries: Vec<FileEntry>,
    /// Whether entries were left out because the listing reached its limit.
    pub truncated: bool,
}

/// `POST /sessions/{id}/files/upload`: what an archive put into the workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadSummary {
    /// The directory it was extracted into (relative to the working directory).
    pub path: String,
    /// Regular files written.
    pub files: u64,
    /// Directory entries of the archive unpacked (created, or already there).
    pub directories: u64,
    /// Symbolic links created.
    pub symlinks: u64,
    /// Bytes of file content written.
    pub bytes: u64,
}
