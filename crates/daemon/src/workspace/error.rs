//! What a files API operation fails with; `error/` renders each as problem details.

/// A workspace operation's failure.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// A path that is never taken: absolute, naming `..`, with a NUL byte (400).
    #[error("{0}")]
    InvalidPath(String),
    /// A path that resolves outside the workspace through a symlink (403).
    #[error("{0}")]
    Outside(String),
    /// The workspace's user may not do this (403).
    #[error("{0}")]
    PermissionDenied(String),
    /// Nothing at that path (404).
    #[error("{0}")]
    NotFound(String),
    /// A file where a directory is needed, or the other way round (409).
    #[error("{0}")]
    WrongKind(String),
    /// A directory deleted without `recursive` that is not empty (409).
    #[error("{0}")]
    NotEmpty(String),
    /// A body or archive over a limit (413).
    #[error("{0}")]
    TooLarge(String),
    /// A snapshot whose files add up to more than asked (409).
    #[error("{0}")]
    SnapshotTooLarge(String),
    /// The workspace itself named where something in it is needed (409).
    #[error("{0}")]
    Root(String),
    /// A `Range` beyond the end of the file (416).
    #[error("range not satisfiable: the file has {size} bytes")]
    RangeNotSatisfiable {
        /// The file's size.
        size: u64,
    },
    /// An upload that is not a readable tar or tar.gz archive (422).
    #[error("{0}")]
    InvalidArchive(String),
    /// An upload holding an entry that is never extracted: escaping, absolute, a device
    /// node, a hard link (422).
    #[error("{0}")]
    EntryRefused(String),
    /// The disk holding the workspace is full (507).
    #[error("{0}")]
    Full(String),
    /// Anything else the filesystem or the daemon failed at (500).
    #[error("{0}")]
    Internal(String),
}

/// What cap-std says when a path would resolve outside its directory.
const ESCAPE_MESSAGE: &str = "a path led outside of the filesystem";

impl WorkspaceError {
    /// Names what an I/O error on `what` means for a client.
    pub fn from_io(what: &str, error: std::io::Error) -> Self {
        use std::io::ErrorKind;
        let detail = format!("{what}: {error}");
        if error.to_string().contains(ESCAPE_MESSAGE) {
            return Self::Outside(format!(
                "{what} resolves outside the session's workspace (through a symlink)"
            ));
        }
        if error.raw_os_error() == Some(libc::ENAMETOOLONG) {
            return Self::InvalidPath(format!(
                "{what}: a name is longer than the filesystem allows"
            ));
        }
        match error.kind() {
            ErrorKind::NotFound => Self::NotFound(detail),
            ErrorKind::PermissionDenied => Self::PermissionDenied(detail),
            ErrorKind::NotADirectory => {
                Self::WrongKind(format!("{what}: a path component is not a directory"))
            }
            ErrorKind::IsADirectory => Self::WrongKind(format!("{what} is a directory")),
            ErrorKind::DirectoryNotEmpty => Self::NotEmpty(format!(
                "{what} is a directory that is not empty; pass recursive=true to delete it with its contents"
            )),
            ErrorKind::StorageFull | ErrorKind::QuotaExceeded => Self::Full(detail),
            _ => Self::Internal(detail),
        }
    }
}
