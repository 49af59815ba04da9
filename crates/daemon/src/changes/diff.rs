//! Two looks at a workspace compared: the files added, modified and deleted between
//! them, with unified diffs of text (kept content only, each diff and the whole answer
//! bounded).

use std::time::Duration;

use sandbox_universal::{ChangeCounts, DiffOmitted, FileChange, FileChangeKind};

use super::ChangeLimits;
use super::blobs::Blobs;
use super::scan::{Entry, Manifest};

/// The longest a diff of one file may take before it settles for a coarser one.
const DIFF_TIME: Duration = Duration::from_millis(500);

/// What changed from `before` to `after`, by path.
pub fn compare(
    before: &Manifest,
    after: &Manifest,
    blobs: &Blobs,
    limits: &ChangeLimits,
) -> (ChangeCounts, Vec<FileChange>) {
    let mut counts = ChangeCounts::default();
    let mut files = Vec::new();
    let mut diff_bytes = 0usize;
    let paths: std::collections::BTreeSet<&String> =
        before.entries.keys().chain(after.entries.keys()).collect();
    for path in paths {
        let old = before.entries.get(path);
        let new = after.entries.get(path);
        let change = match (old, new) {
            (None, Some(_)) => FileChangeKind::Add,
            (Some(_), None) => FileChangeKind::Delete,
            (Some(a), Some(b))
                if a.hash != b.hash || a.symlink != b.symlink || a.mode != b.mode =>
            {
                FileChangeKind::Update
            }
            _ => continue,
        };
        match change {
            FileChangeKind::Add => counts.added += 1,
            FileChangeKind::Update => counts.modified += 1,
            FileChangeKind::Delete => counts.deleted += 1,
        }
        let (diff, mut omitted) = match diff_of(path, old, new, blobs, limits) {
            Ok(diff) => (Some(diff), None),
            Err(reason) => (None, Some(reason)),
        };
        let diff = diff.filter(|diff| {
            if diff_bytes + diff.len() > limits.turn_diff_bytes {
                omitted = Some(DiffOmitted::TurnLimit);
                return false;
            }
            diff_bytes += diff.len();
            true
        });
        files.push(FileChange {
            path: path.clone(),
            change,
            symlink: old.is_some_and(|e| e.symlink) || new.is_some_and(|e| e.symlink),
            size_before: old.map(|e| e.size),
            size_after: new.map(|e| e.size),
            diff,
            diff_omitted: omitted,
        });
    }
    (counts, files)
}

/// The unified diff of one changed path, or why there is none.
fn diff_of(
    path: &str,
    old: Option<&Entry>,
    new: Option<&Entry>,
    blobs: &Blobs,
    limits: &ChangeLimits,
) -> Result<String, DiffOmitted> {
    if let (Some(a), Some(b)) = (old, new)
        && a.hash == b.hash
        && a.symlink == b.symlink
    {
        return Err(DiffOmitted::ModeOnly);
    }
    let text = |entry: Option<&Entry>| -> Result<String, DiffOmitted> {
        let Some(entry) = entry else {
            return Ok(String::new());
        };
        if entry.hash.starts_with("unreadable:") {
            return Err(DiffOmitted::Unreadable);
        }
        if !entry.kept {
            return Err(DiffOmitted::TooLarge);
        }
        let bytes = blobs.get(&entry.hash).ok_or(DiffOmitted::TooLarge)?;
        if bytes.contains(&0) {
            return Err(DiffOmitted::Binary);
        }
        String::from_utf8(bytes).map_err(|_| DiffOmitted::Binary)
    };
    let (a, b) = (text(old)?, text(new)?);
    let diff = similar::TextDiff::configure()
        .timeout(DIFF_TIME)
        .diff_lines(&a, &b);
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".into()
    };
    let to = if new.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".into()
    };
    let unified = diff
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string();
    if unified.len() > limits.file_diff_bytes {
        return Err(DiffOmitted::TooLarge);
    }
    Ok(unified)
}
