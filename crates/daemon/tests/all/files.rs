//! The files API of a session's workspace, over real HTTP on real files: reads, atomic
//! writes, ranges, listings, deletes, uploads and snapshots; escapes through `..`,
//! absolute paths, symlinks (one to `/etc`), tar entries and device nodes are refused and
//! nothing is written outside; with `--agent-user`, the daemon reaches files as that user.

use crate::common;

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use common::{TestDaemon, assert_problem, raw};
use reqwest::Method;
use sandbox_client::{ArchiveQuery, Client};
use sandbox_universal::{CreateSessionRequest, FileKind};

/// A mock session working in `cwd`.
async fn session_in(client: &Client, id: &str, cwd: &Path) {
    client
        .create_session(
            id,
            &CreateSessionRequest {
                agent: "mock".into(),
                cwd: Some(cwd.display().to_string()),
                ..CreateSessionRequest::default()
            },
        )
        .await
        .unwrap();
}

fn url(daemon: &TestDaemon, id: &str, rest: &str) -> String {
    format!("{}/sessions/{id}/{rest}", daemon.url())
}

fn slug(error: sandbox_client::ClientError) -> (u16, String) {
    let problem = error.problem().expect("problem details").clone();
    (
        problem.status,
        problem
            .type_uri
            .trim_start_matches("urn:sandbox-daemon:problem:")
            .to_string(),
    )
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

/// A tar entry written byte by byte, so names a careful writer refuses (`..`, absolute)
/// can be made.
fn raw_entry(tar: &mut Vec<u8>, name: &str, kind: tar::EntryType, link: &str, body: &[u8]) {
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

fn finish(mut tar: Vec<u8>) -> Vec<u8> {
    tar.extend_from_slice(&[0u8; 1024]);
    tar
}

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

/// The entries of a tar.gz, as (name, kind byte, content).
fn entries(tar_gz: &[u8]) -> Vec<(String, char, Vec<u8>)> {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_agent_user_files_are_reached_as_that_user() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        crate::security::skip::<()>("a root daemon needs root");
        return;
    }
    let Some(user) = crate::security::test_user("sbxtest-agent") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    std::fs::write(root.join("private.txt"), "root only").unwrap();
    std::fs::set_permissions(
        root.join("private.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::write(root.join("shared.txt"), "everyone").unwrap();
    std::fs::set_permissions(
        root.join("shared.txt"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::create_dir(root.join("locked")).unwrap();
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(root, Some(user.uid), Some(user.gid)).unwrap();

    let mut args = common::process::daemon_args(&data.path().join("state"), None);
    args.extend(["--agent-user".into(), "sbxtest-agent".into()]);
    let mut command = std::process::Command::new(common::process::BINARY);
    command.args(&args);
    let daemon = common::process::DaemonProcess::spawn_command(command);
    let api = Client::new(&daemon.url, None).unwrap();
    session_in(&api, "as-user", root).await;

    let error = api
        .read_file("as-user", "private.txt", None)
        .await
        .unwrap_err();
    assert_eq!(slug(error), (403, "file-permission-denied".into()));
    assert_eq!(
        &api.read_file("as-user", "shared.txt", None).await.unwrap()[..],
        b"everyone"
    );
    let error = api
        .write_file("as-user", "locked/new.txt", b"x".to_vec())
        .await
        .unwrap_err();
    assert_eq!(slug(error), (403, "file-permission-denied".into()));
    assert!(!root.join("locked/new.txt").exists());
    api.write_file(
        "as-user",
        "mine/new.txt",
        b"made by the agent user".to_vec(),
    )
    .await
    .unwrap();
    for made in ["mine", "mine/new.txt"] {
        let meta = std::fs::metadata(root.join(made)).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (user.uid, user.gid), "{made}");
    }
    let mut tar = Vec::new();
    raw_entry(
        &mut tar,
        "up/loaded.txt",
        tar::EntryType::Regular,
        "",
        b"tar",
    );
    api.upload_files("as-user", None, finish(tar))
        .await
        .unwrap();
    assert_eq!(
        std::fs::metadata(root.join("up/loaded.txt")).unwrap().uid(),
        user.uid
    );
    // The snapshot leaves out what the agent user cannot read.
    let archive = api
        .archive_files("as-user", &ArchiveQuery::default())
        .await
        .unwrap();
    let names: Vec<_> = entries(&archive.data)
        .into_iter()
        .map(|(n, ..)| n)
        .collect();
    assert!(!names.contains(&"private.txt".to_string()), "{names:?}");
    assert!(names.contains(&"shared.txt".to_string()), "{names:?}");
    assert_eq!(archive.skipped_paths, ["private.txt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_reaches_every_files_route() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "cli", work.path()).await;
    let local = tempfile::tempdir().unwrap();
    let source = local.path().join("note.txt");
    std::fs::write(&source, "from the cli").unwrap();
    let run = |args: Vec<String>| {
        let daemon = &daemon;
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            crate::cli::run(daemon, &args).await
        }
    };
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();

    let written = crate::cli::json(
        &run(s(&[
            "sessions",
            "files",
            "write",
            "cli",
            "docs/note.txt",
            source.to_str().unwrap(),
        ]))
        .await,
    );
    assert_eq!(written["path"], "docs/note.txt");
    let read = run(s(&[
        "sessions",
        "files",
        "read",
        "cli",
        "docs/note.txt",
        "--range",
        "bytes=5-7",
    ]))
    .await;
    assert!(read.status.success());
    assert_eq!(read.stdout, b"the");
    let listed =
        crate::cli::json(&run(s(&["sessions", "files", "list", "cli", "--depth", "2"])).await);
    assert_eq!(listed["entries"][1]["path"], "docs/note.txt");

    // A local folder goes up as a tar; the snapshot comes back with its summary.
    let folder = local.path().join("folder");
    std::fs::create_dir_all(folder.join("sub")).unwrap();
    std::fs::write(folder.join("sub/x.txt"), "x").unwrap();
    let uploaded = crate::cli::json(
        &run(s(&[
            "sessions",
            "files",
            "upload",
            "cli",
            folder.to_str().unwrap(),
            "--path",
            "copy",
        ]))
        .await,
    );
    assert_eq!(uploaded["files"], 1);
    assert_eq!(
        std::fs::read(work.path().join("copy/sub/x.txt")).unwrap(),
        b"x"
    );
    let out = local.path().join("snap.tar.gz");
    let summary = crate::cli::json(
        &run(s(&[
            "sessions",
            "files",
            "archive",
            "cli",
            "--out",
            out.to_str().unwrap(),
        ]))
        .await,
    );
    assert_eq!(summary["files"], 2);
    let names: Vec<_> = entries(&std::fs::read(&out).unwrap())
        .into_iter()
        .map(|(n, ..)| n)
        .collect();
    assert!(names.contains(&"copy/sub/x.txt".to_string()), "{names:?}");

    let deleted = run(s(&[
        "sessions",
        "files",
        "delete",
        "cli",
        "copy",
        "--recursive",
    ]))
    .await;
    assert!(deleted.status.success());
    assert!(!work.path().join("copy").exists());
    // A refusal is the problem, on stderr, and a failing exit.
    let refused = run(s(&["sessions", "files", "read", "cli", "../x"])).await;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("invalid-path"));
}

#[tokio::test]
async fn a_browser_on_a_listed_origin_can_write_read_ranges_and_see_a_snapshots_summary() {
    let daemon = TestDaemon::start_with(common::Options {
        token: Some("t".into()),
        cors_origins: vec!["http://app.local".into()],
        ..common::Options::default()
    })
    .await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "b", work.path()).await;
    let http = reqwest::Client::new();
    let preflight = http
        .request(Method::OPTIONS, url(&daemon, "b", "files/content?path=a"))
        .header("origin", "http://app.local")
        .header("access-control-request-method", "PUT")
        .header(
            "access-control-request-headers",
            "authorization,content-type,range",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 200);
    let methods = preflight.headers()["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(methods.contains("PUT"), "{methods}");
    let allowed = preflight.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(allowed.contains("range"), "{allowed}");
    let archive = http
        .get(url(&daemon, "b", "files/archive"))
        .header("origin", "http://app.local")
        .bearer_auth("t")
        .send()
        .await
        .unwrap();
    let exposed = archive.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for header in [
        "x-archive-skipped-paths",
        "x-archive-files",
        "content-range",
    ] {
        assert!(exposed.contains(header), "{exposed}");
    }
}
