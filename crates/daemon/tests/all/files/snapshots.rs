//! Snapshots: what git would leave out, the per-file and total limits.

use crate::common;

use common::{TestDaemon, assert_problem, raw};
use reqwest::Method;
use sandbox_client::ArchiveQuery;

use super::{entries, session_in, slug, url};

#[tokio::test]
async fn snapshots_leave_out_what_git_would_and_keep_to_their_limits() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    for (path, content) in [
        (".git/config", &b"[core]"[..]),
        (".gitignore", b"*.log\nbuild/\n"),
        ("node_modules/x/index.js", b"x"),
        ("src/main.rs", b"fn main() {}"),
        ("debug.log", b"noise"),
        ("build/out.o", b"object"),
    ] {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), content).unwrap();
    }
    std::fs::write(root.join("big.bin"), vec![7u8; (1 << 20) + 1]).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("passwd")).unwrap();
    session_in(&daemon.client, "s", root).await;
    let api = &daemon.client;

    let archive = api
        .archive_files("s", &ArchiveQuery::default())
        .await
        .unwrap();
    let listed: Vec<_> = entries(&archive.data)
        .into_iter()
        .map(|(name, kind, content)| (name, kind, String::from_utf8_lossy(&content).into_owned()))
        .collect();
    assert_eq!(
        listed,
        [
            (".gitignore".to_string(), '0', "*.log\nbuild/\n".to_string()),
            ("passwd".into(), '2', String::new()),
            ("src/".into(), '5', String::new()),
            ("src/main.rs".into(), '0', "fn main() {}".into()),
        ]
    );
    assert_eq!((archive.files, archive.skipped), (2, 1));
    assert_eq!(archive.skipped_paths, ["big.bin"]);

    // Everything, with the big file let in.
    let all = api
        .archive_files(
            "s",
            &ArchiveQuery {
                all: true,
                max_file_bytes: Some(2 << 20),
                ..ArchiveQuery::default()
            },
        )
        .await
        .unwrap();
    let names: Vec<_> = entries(&all.data).into_iter().map(|(n, ..)| n).collect();
    for expected in [
        ".git/config",
        "big.bin",
        "build/out.o",
        "debug.log",
        "node_modules/x/index.js",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    assert_eq!(all.skipped, 0);

    // A directory of it; over the total.
    let src = api
        .archive_files(
            "s",
            &ArchiveQuery {
                path: Some("src".into()),
                ..ArchiveQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(entries(&src.data)[0].0, "main.rs");
    let error = api
        .archive_files(
            "s",
            &ArchiveQuery {
                all: true,
                max_file_bytes: Some(2 << 20),
                max_bytes: Some(100),
                ..ArchiveQuery::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(slug(error), (409, "archive-too-large".into()));
    let response = raw(
        Method::GET,
        &url(&daemon, "s", "files/archive?maxBytes=1073741825"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&response, 400, "invalid-parameter");
}
