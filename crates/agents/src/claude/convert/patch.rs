//! Patches in the Codex patch format (`*** Begin Patch` … `*** End Patch`, the input of
//! Amp's `apply_patch`) as file changes: one part per file, with a unified diff.

use std::path::Path;

use sandbox_universal::{ContentPart, FileChangeKind};

/// The files a patch adds, updates or deletes (paths made absolute against `cwd`), each
/// with its diff.
pub fn file_changes(patch: &str, cwd: &str) -> Vec<ContentPart> {
    let mut changes: Vec<(String, FileChangeKind, String)> = Vec::new();
    for line in patch.lines() {
        let header = [
            ("*** Add File: ", FileChangeKind::Add),
            ("*** Update File: ", FileChangeKind::Update),
            ("*** Delete File: ", FileChangeKind::Delete),
        ]
        .into_iter()
        .find_map(|(prefix, kind)| line.strip_prefix(prefix).map(|path| (path.trim(), kind)));
        if let Some((path, kind)) = header {
            let relative = path.trim_start_matches('/');
            let old = match kind {
                FileChangeKind::Add => "/dev/null".to_string(),
                _ => format!("a/{relative}"),
            };
            let new = match kind {
                FileChangeKind::Delete => "/dev/null".to_string(),
                _ => format!("b/{relative}"),
            };
            changes.push((path.to_string(), kind, format!("--- {old}\n+++ {new}\n")));
            continue;
        }
        let Some((_, kind, diff)) = changes.last_mut() else {
            continue;
        };
        if line.starts_with("*** End") {
            continue;
        }
        if let Some(to) = line.strip_prefix("*** Move to: ") {
            diff.push_str(&format!("rename to {}\n", to.trim()));
            continue;
        }
        if *kind == FileChangeKind::Add && !diff.contains("@@") {
            diff.push_str("@@\n");
        }
        diff.push_str(line);
        diff.push('\n');
    }
    changes
        .into_iter()
        .map(|(path, change_kind, diff)| ContentPart::FileChange {
            path: Path::new(cwd).join(path).display().to_string(),
            change_kind,
            diff: Some(diff),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_a_patch_is_a_change_with_its_diff() {
        let patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n+world\n\
                     *** Update File: src/a.rs\n@@ fn main\n-old\n+new\n\
                     *** Delete File: gone.txt\n*** End Patch\n";
        let changes = file_changes(patch, "/w");
        assert_eq!(changes.len(), 3);
        let ContentPart::FileChange {
            path,
            change_kind,
            diff,
        } = &changes[0]
        else {
            panic!()
        };
        assert_eq!(
            (path.as_str(), *change_kind),
            ("/w/notes.txt", FileChangeKind::Add)
        );
        assert_eq!(
            diff.as_deref(),
            Some("--- /dev/null\n+++ b/notes.txt\n@@\n+hello\n+world\n")
        );
        let ContentPart::FileChange { diff, .. } = &changes[1] else {
            panic!()
        };
        assert_eq!(
            diff.as_deref(),
            Some("--- a/src/a.rs\n+++ b/src/a.rs\n@@ fn main\n-old\n+new\n")
        );
        let ContentPart::FileChange { change_kind, .. } = &changes[2] else {
            panic!()
        };
        assert_eq!(*change_kind, FileChangeKind::Delete);
        assert!(file_changes("not a patch", "/w").is_empty());
        let ContentPart::FileChange { path, .. } = &file_changes(
            "*** Begin Patch\n*** Delete File: /abs/x\n*** End Patch\n",
            "/w",
        )[0] else {
            panic!()
        };
        assert_eq!(path, "/abs/x", "absolute paths stay");
    }
}
