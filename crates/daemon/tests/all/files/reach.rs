//! Who reaches the files: a root daemon's `--agent-user`, the CLI, a browser (CORS).

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use common::TestDaemon;
use reqwest::Method;
use sandbox_client::{ArchiveQuery, Client};

use super::{entries, finish, raw_entry, session_in, slug, url};

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
