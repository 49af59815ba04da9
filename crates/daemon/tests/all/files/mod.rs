//! The files API of a session's workspace, over real HTTP on real files: reads, atomic
//! writes, ranges, listings, deletes (here), uploads (`uploads.rs`) and snapshots
//! (`snapshots.rs`); escapes through `..`, absolute paths, symlinks (one to `/etc`), tar
//! entries and device nodes are refused and nothing is written outside; with
//! `--agent-user`, the daemon reaches files as that user (`reach.rs`, with the CLI and a
//! browser's CORS).

mod reach;
mod snapshots;
mod uploads;

use crate::common;

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use common::{TestDaemon, assert_problem, raw};
pub(super) use common::{problem_slug as slug, session_in};
use reqwest::Method;
use sandbox_client::ArchiveQuery;
use sandbox_universal::FileKind;

pub(super) fn url(daemon: &TestDaemon, id: &str, rest: &str) -> String {
    format!("{}/sessions/{id}/{rest}", daemon.url())
}

/// A tar entry written byte by byte, so names a careful writer refuses (`..`, absolute)
/// can be made.
pub(super) fn raw_entry(
    tar: &mut Vec<u8>,
    name: &str,
    kind: tar::EntryType,
    link: &str,
    body: &[u8],
) {
    let mut header = tar::Header::new_gnu();
    {
        let bytes = header.as_mut_bytes();
        bytes[..name.len()].copy_from_slice(name.as_bytes());
        bytes[157..157 + link.len()].copy_from_slice(link.as_bytes());
    }
    header.set_entry_type(kind);
    header.set_mode(0o644);
    header.set_size(body.len() as u64);
    header.set_mtime(0);
    header.set_cksum();
    tar.extend_from_slice(header.as_bytes());
    tar.extend_from_slice(body);
    tar.resize(tar.len().div_ceil(512) * 512, 0);
}

pub(super) fn finish(mut tar: Vec<u8>) -> Vec<u8> {
    tar.extend_from_slice(&[0u8; 1024]);
    tar
}

/// The entries of a tar.gz, as (name, kind byte, content).
pub(super) fn entries(tar_gz: &[u8]) -> Vec<(String, char, Vec<u8>)> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tar_gz));
    archive
        .entries()
        .unwrap()
        .map(|entry| {
            let mut entry = entry.unwrap();
            let name = entry.path().unwrap().display().to_string();
            let kind = entry.header().entry_type().as_byte() as char;
            let mut content = Vec::new();
            entry.read_to_end(&mut content).unwrap();
            (name, kind, content)
        })
        .collect()
}

#[tokio::test]
async fn files_are_written_atomically_read_in_ranges_listed_and_deleted() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "f", work.path()).await;
    let api = &daemon.client;

    // Written, parents created; then replaced (keeping its mode).
    let (status, _, body) = raw(
        Method::PUT,
        &url(&daemon, "f", "files/content?path=src/deep/a.txt"),
        None,
        Some("application/octet-stream"),
        Some(b"0123456789".to_vec()),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["path"], "src/deep/a.txt");
    assert_eq!(body["kind"], "file");
    assert_eq!(body["size"], 10);
    assert_eq!(body["mode"], 0o644);
    let on_disk = work.path().join("src/deep/a.txt");
    let made = std::fs::metadata(work.path().join("src/deep"))
        .unwrap()
        .mode()
        & 0o777;
    assert_eq!(made, 0o755, "parents are made as the agents make theirs");
    std::fs::set_permissions(&on_disk, std::fs::Permissions::from_mode(0o600)).unwrap();
    let replaced = api
        .write_file(
            "f",
            "src/deep/a.txt",
            b"abcdefghijklmnopqrstuvwxyz".to_vec(),
        )
        .await
        .unwrap();
    assert_eq!(replaced.size, 26);
    assert_eq!(replaced.mode, 0o600, "a replaced file keeps its mode");
    assert_eq!(
        std::fs::read(&on_disk).unwrap(),
        b"abcdefghijklmnopqrstuvwxyz"
    );
    let leftovers: Vec<_> = std::fs::read_dir(work.path().join("src/deep"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["a.txt"], "no temporary file stays");

    // Whole, a range, a suffix, past the end.
    assert_eq!(
        &api.read_file("f", "src/deep/a.txt", None).await.unwrap()[..],
        b"abcdefghijklmnopqrstuvwxyz"
    );
    let response = reqwest::Client::new()
        .get(url(&daemon, "f", "files/content?path=src/deep/a.txt"))
        .header("range", "bytes=2-4")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 206);
    assert_eq!(response.headers()["content-range"], "bytes 2-4/26");
    assert_eq!(&response.bytes().await.unwrap()[..], b"cde");
    assert_eq!(
        &api.read_file("f", "src/deep/a.txt", Some("bytes=-3"))
            .await
            .unwrap()[..],
        b"xyz"
    );
    let response = reqwest::Client::new()
        .get(url(&daemon, "f", "files/content?path=src/deep/a.txt"))
        .header("range", "bytes=26-")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 416);
    assert_eq!(response.headers()["content-range"], "bytes */26");

    // Listed: depth 1, then 3; a symlink is listed with its target, not followed.
    std::os::unix::fs::symlink("src/deep/a.txt", work.path().join("link")).unwrap();
    std::fs::write(work.path().join("b.bin"), [0u8; 3]).unwrap();
    let top = api.list_files("f", None, None).await.unwrap();
    let names: Vec<_> = top.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(names, ["b.bin", "link", "src"]);
    assert_eq!(top.entries[1].kind, FileKind::Symlink);
    assert_eq!(top.entries[1].target.as_deref(), Some("src/deep/a.txt"));
    assert_eq!(top.entries[2].kind, FileKind::Directory);
    let deep = api.list_files("f", Some("src"), Some(3)).await.unwrap();
    let names: Vec<_> = deep.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(names, ["src/deep", "src/deep/a.txt"]);
    assert!(!deep.truncated);
    // Through an inside symlink, a file reads as itself.
    assert_eq!(
        &api.read_file("f", "link", Some("bytes=0-0")).await.unwrap()[..],
        b"a"
    );

    // Deleted: a link (not its target), a non-empty directory only with `recursive`.
    api.delete_file("f", "link", false).await.unwrap();
    assert!(on_disk.exists());
    let error = api.delete_file("f", "src", false).await.unwrap_err();
    assert_eq!(slug(error), (409, "directory-not-empty".into()));
    api.delete_file("f", "src", true).await.unwrap();
    assert!(!work.path().join("src").exists());
    let error = api.delete_file("f", "src", false).await.unwrap_err();
    assert_eq!(slug(error), (404, "file-not-found".into()));
    let error = api.delete_file("f", ".", true).await.unwrap_err();
    assert_eq!(slug(error), (409, "workspace-root".into()));

    // Kinds: a directory is not content, a file is not listed.
    std::fs::create_dir(work.path().join("dir")).unwrap();
    let error = api.read_file("f", "dir", None).await.unwrap_err();
    assert_eq!(slug(error), (409, "wrong-file-kind".into()));
    let error = api.list_files("f", Some("b.bin"), None).await.unwrap_err();
    assert_eq!(slug(error), (409, "wrong-file-kind".into()));
    let error = api.write_file("f", "dir", b"x".to_vec()).await.unwrap_err();
    assert_eq!(slug(error), (409, "wrong-file-kind".into()));
    let error = api.list_files("nobody", None, None).await.unwrap_err();
    assert_eq!(slug(error), (404, "session-not-found".into()));
    let response = raw(
        Method::GET,
        &url(&daemon, "f", "files?depth=0"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&response, 400, "invalid-parameter");
    let response = raw(
        Method::GET,
        &url(&daemon, "f", "files/content"),
        None,
        None,
        None,
    )
    .await;
    assert_problem(&response, 400, "invalid-parameter");
    let error = api.read_file("f", "", None).await.unwrap_err();
    assert_eq!(slug(error), (400, "invalid-parameter".into()));
    let error = api
        .write_file("f", "newdir/", b"x".to_vec())
        .await
        .unwrap_err();
    assert_eq!(slug(error), (400, "invalid-path".into()));
    assert!(!work.path().join("newdir").exists());

    // A write refused before its body was read says the connection closes.
    let response = reqwest::Client::new()
        .put(url(&daemon, "f", "files/content?path=../x"))
        .body(vec![b'x'; 256 << 10])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(response.headers()["connection"], "close");
}

#[tokio::test]
async fn no_path_leads_out_of_the_workspace() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "outside").unwrap();
    std::os::unix::fs::symlink("/etc", work.path().join("etc")).unwrap();
    std::os::unix::fs::symlink(outside.path(), work.path().join("out")).unwrap();
    std::os::unix::fs::symlink("../..", work.path().join("up")).unwrap();
    session_in(&daemon.client, "e", work.path()).await;
    let api = &daemon.client;

    for path in ["../secret", "/etc/passwd", "a/../../b", "a/.."] {
        let error = api.read_file("e", path, None).await.unwrap_err();
        assert_eq!(slug(error), (400, "invalid-path".into()), "{path}");
        let error = api.write_file("e", path, b"x".to_vec()).await.unwrap_err();
        assert_eq!(slug(error), (400, "invalid-path".into()), "{path}");
    }
    // Through symlinks planted in the workspace: to /etc, to a directory outside, upwards.
    let outside_msg = |e: sandbox_client::ClientError| {
        let detail = e.to_string();
        let outside = slug(e) == (403, "outside-workspace".into());
        assert!(outside, "{detail}");
        outside
    };
    assert!(outside_msg(
        api.read_file("e", "etc/passwd", None).await.unwrap_err()
    ));
    assert!(outside_msg(
        api.read_file("e", "etc/hostname", Some("bytes=0-1"))
            .await
            .unwrap_err()
    ));
    assert!(outside_msg(
        api.list_files("e", Some("etc"), None).await.unwrap_err()
    ));
    assert!(outside_msg(
        api.read_file("e", "out/secret", None).await.unwrap_err()
    ));
    assert!(outside_msg(
        api.read_file("e", "up/etc/passwd", None).await.unwrap_err()
    ));
    assert!(outside_msg(
        api.write_file("e", "etc/sandbox-daemon-escape", b"x".to_vec())
            .await
            .unwrap_err()
    ));
    assert!(outside_msg(
        api.write_file("e", "out/secret", b"overwritten".to_vec())
            .await
            .unwrap_err()
    ));
    assert!(outside_msg(
        api.write_file("e", "out/new/file", b"x".to_vec())
            .await
            .unwrap_err()
    ));
    assert!(outside_msg(
        api.delete_file("e", "out/secret", false).await.unwrap_err()
    ));
    // A snapshot never follows a symlink, inside or out.
    let error = api
        .archive_files(
            "e",
            &ArchiveQuery {
                path: Some("out".into()),
                ..ArchiveQuery::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(slug(error), (409, "wrong-file-kind".into()));
    // Nothing was written or removed outside.
    assert!(!Path::new("/etc/sandbox-daemon-escape").exists());
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret")).unwrap(),
        "outside"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    // The links themselves can be deleted (never what they point to).
    api.delete_file("e", "out", true).await.unwrap();
    assert!(outside.path().join("secret").exists());
    assert!(!work.path().join("out").exists());
}
