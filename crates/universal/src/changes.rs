//! What a turn changed in the session's workspace: the counts `turnEnded` carries and the
//! files with their diffs (`GET /sessions/{id}/turns/{turnId}/changes`).

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::FileChangeKind;

/// How many files a turn added, modified and deleted.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct ChangeCounts {
    /// Files (and symlinks) that appeared.
    pub added: u64,
    /// Files whose content, kind or mode changed.
    pub modified: u64,
    /// Files that went away.
    pub deleted: u64,
}

/// Why a changed file comes without a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DiffOmitted {
    /// One side is not UTF-8 text.
    Binary,
    /// One side is larger than the daemon keeps to diff (1 MiB), or the diff is larger
    /// than it answers per file (256 KiB).
    TooLarge,
    /// The turn's diffs reached the most one answer holds (4 MiB); the file is listed.
    TurnLimit,
    /// Only the mode changed.
    ModeOnly,
    /// The agent user cannot read it (only its size and times tell it changed).
    Unreadable,
}

/// One file a turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// Its path relative to the workspace, `/`-separated.
    pub path: String,
    /// Added (`add`), modified (`update`) or deleted (`delete`), as file change items
    /// name them.
    pub change: FileChangeKind,
    /// Whether it is (or was) a symlink rather than a regular file; a symlink's diff is
    /// of its target.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub symlink: bool,
    /// Its size before the turn, when it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_before: Option<u64>,
    /// Its size after the turn, when it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_after: Option<u64>,
    /// A unified diff (`--- a/path`, `+++ b/path`, hunks with 3 lines of context), for
    /// text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Why there is no diff, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_omitted: Option<DiffOmitted>,
}

/// `GET /sessions/{id}/turns/{turnId}/changes`: what the turn changed in the workspace,
/// whichever agent made the changes (the workspace as the turn started against the
/// workspace as it ended; `.git`, `node_modules` and `.gitignore`d paths left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnChanges {
    /// The turn.
    pub turn_id: String,
    /// How many files it added, modified and deleted (what its `turnEnded` carries).
    pub counts: ChangeCounts,
    /// The changed files, by path.
    pub files: Vec<FileChange>,
    /// When the workspace was looked at as the turn ended.
    pub taken_at: DateTime<Utc>,
}
