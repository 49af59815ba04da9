//! A path inside a workspace as a client names it.

use std::path::{Path, PathBuf};

use super::WorkspaceError;

/// The longest path taken, in bytes (Linux's `PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;

/// The longest name in a path, in bytes (Linux's `NAME_MAX`).
const MAX_NAME_BYTES: usize = 255;

/// A relative, `/`-separated path with no `..`: empty and `.` components are dropped, so
/// `a//b/./c` is `a/b/c` and the empty path is the workspace itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePath {
    parts: Vec<String>,
}

impl WorkspacePath {
    /// Parses what a client sent; refuses absolute paths, `..`, NUL bytes and over-long
    /// paths (400).
    pub fn parse(raw: &str) -> Result<Self, WorkspaceError> {
        let refuse = |why: &str| WorkspaceError::InvalidPath(format!("path `{raw}` {why}"));
        if raw.len() > MAX_PATH_BYTES {
            return Err(WorkspaceError::InvalidPath(format!(
                "a path is at most {MAX_PATH_BYTES} bytes"
            )));
        }
        if raw.contains('\0') {
            return Err(refuse("holds a NUL byte"));
        }
        if raw.starts_with('/') {
            return Err(refuse(
                "is absolute; paths are relative to the session's working directory",
            ));
        }
        let mut parts = Vec::new();
        for part in raw.split('/') {
            match part {
                "" | "." => {}
                ".." => return Err(refuse("names `..`; paths stay inside the workspace")),
                part if part.len() > MAX_NAME_BYTES => {
                    return Err(WorkspaceError::InvalidPath(format!(
                        "a name in the path is longer than {MAX_NAME_BYTES} bytes"
                    )));
                }
                part => parts.push(part.to_string()),
            }
        }
        Ok(Self { parts })
    }

    /// Whether it names the workspace itself.
    pub fn is_root(&self) -> bool {
        self.parts.is_empty()
    }

    /// The path for a directory handle of the workspace (`.` for the workspace itself).
    pub fn relative(&self) -> PathBuf {
        if self.parts.is_empty() {
            PathBuf::from(".")
        } else {
            self.parts.iter().collect()
        }
    }

    /// The path as the API shows it (`a/b/c`; empty for the workspace itself).
    pub fn display(&self) -> String {
        self.parts.join("/")
    }

    /// Its last component (empty for the workspace itself).
    pub fn name(&self) -> &str {
        self.parts.last().map(String::as_str).unwrap_or("")
    }

    /// The directory holding it (the workspace itself for a top-level name).
    pub fn parent(&self) -> Self {
        let mut parts = self.parts.clone();
        parts.pop();
        Self { parts }
    }

    /// `self/name`, for a name read from a directory.
    pub fn child(&self, name: &str) -> Self {
        let mut parts = self.parts.clone();
        parts.push(name.to_string());
        Self { parts }
    }

    /// `self/relative` for a relative path found in an archive, or `None` when it is
    /// absolute or names `..`.
    pub fn join_archived(&self, relative: &Path) -> Option<Self> {
        use std::path::Component;
        let mut parts = self.parts.clone();
        for component in relative.components() {
            match component {
                Component::Normal(part) => parts.push(part.to_str()?.to_string()),
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
            }
        }
        Some(Self { parts })
    }

    /// Whether a symlink at this path with `target` stays inside the workspace when read
    /// as written (lexically, from the link's directory).
    pub fn link_stays_inside(&self, target: &Path) -> bool {
        use std::path::Component;
        let mut depth = self.parts.len().saturating_sub(1);
        for component in target.components() {
            match component {
                Component::Normal(_) => depth += 1,
                Component::CurDir => {}
                Component::ParentDir => match depth.checked_sub(1) {
                    Some(up) => depth = up,
                    None => return false,
                },
                Component::RootDir | Component::Prefix(_) => return false,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_and_never_climb() {
        assert_eq!(
            WorkspacePath::parse("a//b/./c/").unwrap().display(),
            "a/b/c"
        );
        assert!(WorkspacePath::parse("").unwrap().is_root());
        assert!(WorkspacePath::parse("./").unwrap().is_root());
        for bad in ["/etc/passwd", "../x", "a/../../b", "a/..", "a\0b"] {
            let error = WorkspacePath::parse(bad).unwrap_err();
            assert!(matches!(error, WorkspaceError::InvalidPath(_)), "{bad}");
        }
        assert!(WorkspacePath::parse(&"a/".repeat(3000)).is_err());
    }

    #[test]
    fn links_are_checked_from_their_own_directory() {
        let link = WorkspacePath::parse("a/b/link").unwrap();
        assert!(link.link_stays_inside(Path::new("../c")));
        assert!(link.link_stays_inside(Path::new("../../c")));
        assert!(!link.link_stays_inside(Path::new("../../../c")));
        assert!(!link.link_stays_inside(Path::new("/etc")));
        let top = WorkspacePath::parse("link").unwrap();
        assert!(!top.link_stays_inside(Path::new("..")));
        assert!(top.link_stays_inside(Path::new("x/../y")));
        let archived = WorkspacePath::parse("dest").unwrap();
        assert!(archived.join_archived(Path::new("../x")).is_none());
        assert_eq!(
            archived
                .join_archived(Path::new("./x/y"))
                .unwrap()
                .display(),
            "dest/x/y"
        );
    }
}
