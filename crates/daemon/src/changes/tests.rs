//! Change tracking on real files: what a turn added, modified and deleted, the diffs and
//! why some are left out, what is never looked at, the stat cache, and the bounds.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use sandbox_universal::{DiffOmitted, FileChangeKind};

use super::*;

fn tracker(session: &Path, workspace: &Path, limits: ChangeLimits) -> ChangeTracker {
    ChangeTracker::new(
        session,
        session,
        Workspace::new(workspace.to_path_buf(), None),
        limits,
    )
}

fn write(root: &Path, name: &str, content: impl AsRef<[u8]>) {
    let path = root.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

#[tokio::test]
async fn a_turn_shows_what_was_added_modified_and_deleted_with_diffs() {
    let session = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    write(root, "kept.txt", "one\ntwo\nthree\n");
    write(root, "edited.txt", "alpha\nbeta\ngamma\n");
    write(root, "gone.txt", "bye\n");
    write(root, "mode.sh", "echo hi\n");
    write(root, ".gitignore", "ignored/\n*.log\n");
    let changes = tracker(session.path(), root, ChangeLimits::default());
    changes.begin("turn_1").await.unwrap();

    write(root, "edited.txt", "alpha\nBETA\ngamma\n");
    std::fs::remove_file(root.join("gone.txt")).unwrap();
    write(root, "src/new.rs", "fn main() {}\n");
    write(root, "image.bin", [0u8, 1, 2, 0, 255]);
    write(root, "big.txt", "x".repeat((1 << 20) + 1));
    std::fs::set_permissions(root.join("mode.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("kept.txt", root.join("link")).unwrap();
    // What git would not see is not looked at.
    write(root, "ignored/a.txt", "x");
    write(root, "debug.log", "x");
    write(root, "node_modules/pkg/index.js", "x");
    write(root, ".git/HEAD", "ref: refs/heads/main\n");

    let counts = changes.end("turn_1").await.unwrap();
    assert_eq!((counts.added, counts.modified, counts.deleted), (4, 2, 1));
    let found = turn_changes(session.path(), "turn_1").unwrap();
    assert_eq!(found.counts, counts);
    let by_path = |path: &str| {
        found
            .files
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("{path} in {:?}", found.files))
    };
    let paths: Vec<&str> = found.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "big.txt",
            "edited.txt",
            "gone.txt",
            "image.bin",
            "link",
            "mode.sh",
            "src/new.rs"
        ]
    );

    let edited = by_path("edited.txt");
    assert_eq!(edited.change, FileChangeKind::Update);
    let diff = edited.diff.as_deref().unwrap();
    assert!(
        diff.starts_with("--- a/edited.txt\n+++ b/edited.txt\n"),
        "{diff}"
    );
    assert!(diff.contains("-beta\n+BETA\n"), "{diff}");
    let added = by_path("src/new.rs");
    assert_eq!(added.change, FileChangeKind::Add);
    assert!(
        added
            .diff
            .as_deref()
            .unwrap()
            .contains("--- /dev/null\n+++ b/src/new.rs")
    );
    assert!(added.diff.as_deref().unwrap().contains("+fn main() {}"));
    let gone = by_path("gone.txt");
    assert_eq!(gone.change, FileChangeKind::Delete);
    assert!(gone.diff.as_deref().unwrap().contains("-bye"));
    assert_eq!(gone.size_before, Some(4));
    assert_eq!(by_path("image.bin").diff_omitted, Some(DiffOmitted::Binary));
    assert_eq!(by_path("big.txt").diff_omitted, Some(DiffOmitted::TooLarge));
    assert_eq!(by_path("mode.sh").diff_omitted, Some(DiffOmitted::ModeOnly));
    let link = by_path("link");
    assert!(link.symlink);
    assert!(link.diff.as_deref().unwrap().contains("+kept.txt"));

    // Only what the last look names stays kept.
    let kept = Blobs::new(session.path().join("changes/blobs")).hashes();
    assert!(kept.contains(&scan::hash_of(b"alpha\nBETA\ngamma\n")));
    assert!(!kept.contains(&scan::hash_of(b"alpha\nbeta\ngamma\n")));
    assert!(!kept.contains(&scan::hash_of(b"bye\n")));

    // A turn that changes nothing shows nothing (the stat cache answers for the files).
    changes.begin("turn_2").await.unwrap();
    let none = changes.end("turn_2").await.unwrap();
    assert_eq!(none, ChangeCounts::default());
    assert!(
        turn_changes(session.path(), "turn_2")
            .unwrap()
            .files
            .is_empty()
    );
}

#[tokio::test]
async fn an_edit_that_keeps_size_and_time_is_still_seen() {
    let session = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(work.path(), "same.txt", "aaaa\n");
    let changes = tracker(session.path(), work.path(), ChangeLimits::default());
    changes.begin("turn_1").await.unwrap();
    let file = work.path().join("same.txt");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    write(work.path(), "same.txt", "bbbb\n");
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let counts = changes.end("turn_1").await.unwrap();
    assert_eq!(counts.modified, 1);
}

#[tokio::test]
async fn a_turn_not_looked_at_as_it_began_has_no_changes() {
    let session = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let changes = tracker(session.path(), work.path(), ChangeLimits::default());
    assert!(matches!(
        changes.end("turn_1").await,
        Err(ChangeError::NotBegun(_))
    ));
    changes.begin("turn_1").await.unwrap();
    assert!(matches!(
        changes.end("turn_2").await,
        Err(ChangeError::NotBegun(_))
    ));
    assert!(turn_changes(session.path(), "turn_2").is_none());
    assert!(turn_changes(session.path(), "../etc").is_none());

    // A workspace past the bound is not tracked, loudly.
    for i in 0..5 {
        write(work.path(), &format!("f{i}"), "x");
    }
    let small = tracker(
        session.path(),
        work.path(),
        ChangeLimits {
            max_files: 3,
            ..ChangeLimits::default()
        },
    );
    let error = small.begin("turn_3").await.unwrap_err();
    assert!(error.to_string().contains("more than 3 files"), "{error}");
    assert!(matches!(
        small.end("turn_3").await,
        Err(ChangeError::NotBegun(_))
    ));
}
