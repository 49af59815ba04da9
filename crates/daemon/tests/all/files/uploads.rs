//! Uploads: unpacked safely, or refused whole with nothing written.

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::{TestDaemon, assert_problem, raw};
use reqwest::Method;

use super::{finish, raw_entry, session_in, slug, url};

#[tokio::test]
async fn uploads_unpack_safely_or_write_nothing() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), work.path().join("out")).unwrap();
    session_in(&daemon.client, "u", work.path()).await;
    let api = &daemon.client;

    // A good tar.gz: directories, files with their modes, an inside symlink.
    let mut good = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Directory);
    header.set_mode(0o755);
    header.set_size(0);
    good.append_data(&mut header, "app/", std::io::empty())
        .unwrap();
    let mut header = tar::Header::new_gnu();
    header.set_mode(0o755);
    header.set_size(7);
    good.append_data(&mut header, "app/run.sh", &b"echo hi"[..])
        .unwrap();
    let mut header = tar::Header::new_gnu();
    header.set_mode(0o644);
    header.set_size(5);
    good.append_data(&mut header, "app/lib/data.txt", &b"hello"[..])
        .unwrap();
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Symlink);
    header.set_size(0);
    good.append_link(&mut header, "app/current", "lib/data.txt")
        .unwrap();
    let good = good.into_inner().unwrap().finish().unwrap();
    let summary = api.upload_files("u", Some("dest"), good).await.unwrap();
    assert_eq!(
        (
            summary.files,
            summary.directories,
            summary.symlinks,
            summary.bytes
        ),
        (2, 1, 1, 12)
    );
    assert_eq!(summary.path, "dest");
    let run = work.path().join("dest/app/run.sh");
    assert_eq!(std::fs::read(&run).unwrap(), b"echo hi");
    assert_eq!(std::fs::metadata(&run).unwrap().mode() & 0o777, 0o755);
    assert_eq!(
        std::fs::read(work.path().join("dest/app/current")).unwrap(),
        b"hello"
    );

    // Refused archives write nothing, even their good entries before the bad one.
    let bad = |name: &str, kind: tar::EntryType, link: &str| {
        let mut tar = Vec::new();
        raw_entry(&mut tar, "fine.txt", tar::EntryType::Regular, "", b"fine");
        raw_entry(&mut tar, name, kind, link, b"");
        finish(tar)
    };
    let cases = [
        bad("../escape", tar::EntryType::Regular, ""),
        bad("a/../../escape", tar::EntryType::Regular, ""),
        bad("/tmp/sandbox-daemon-absolute", tar::EntryType::Regular, ""),
        bad("null", tar::EntryType::Char, ""),
        bad("disk", tar::EntryType::Block, ""),
        bad("pipe", tar::EntryType::Fifo, ""),
        bad("hard", tar::EntryType::Link, "/etc/passwd"),
        bad("etc", tar::EntryType::Symlink, "/etc"),
        bad("sub/up", tar::EntryType::Symlink, "../../.."),
    ];
    for (i, archive) in cases.into_iter().enumerate() {
        let dest = format!("refused{i}");
        let error = api
            .upload_files("u", Some(&dest), archive)
            .await
            .unwrap_err();
        assert_eq!(
            slug(error),
            (422, "archive-entry-refused".into()),
            "case {i}"
        );
        assert!(
            !work.path().join(&dest).exists(),
            "case {i} wrote something"
        );
    }
    assert!(!Path::new("/tmp/sandbox-daemon-absolute").exists());
    assert!(!work.path().parent().unwrap().join("escape").exists());

    // An entry through a symlink planted in the workspace goes nowhere outside.
    let mut tar = Vec::new();
    raw_entry(&mut tar, "out/planted", tar::EntryType::Regular, "", b"x");
    let error = api.upload_files("u", None, finish(tar)).await.unwrap_err();
    assert_eq!(slug(error), (403, "outside-workspace".into()));
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);

    // Not an archive; not an archive's content type.
    let error = api
        .upload_files("u", None, b"this is not a tar archive at all".repeat(40))
        .await
        .unwrap_err();
    assert_eq!(slug(error), (422, "invalid-archive".into()));
    let response = raw(
        Method::POST,
        &url(&daemon, "u", "files/upload"),
        None,
        Some("application/json"),
        Some(b"{}".to_vec()),
    )
    .await;
    assert_problem(&response, 415, "unsupported-media-type");
    assert!(
        response.2["detail"]
            .as_str()
            .unwrap()
            .contains("application/x-tar")
    );
}

#[tokio::test]
async fn an_upload_over_the_entry_limit_is_refused_whole() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "l", work.path()).await;
    let limit = sandbox_daemon::workspace::FileLimits::default().max_upload_entries;
    let mut tar = Vec::new();
    for i in 0..=limit {
        raw_entry(
            &mut tar,
            &format!("d{i}/"),
            tar::EntryType::Directory,
            "",
            b"",
        );
    }
    let error = daemon
        .client
        .upload_files("l", None, finish(tar))
        .await
        .unwrap_err();
    assert_eq!(slug(error), (413, "files-limit-exceeded".into()));
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}
