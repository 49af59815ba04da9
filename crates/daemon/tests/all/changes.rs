//! What a turn changed, seen by a root daemon whose agents run as another user: the look
//! runs as that user and the daemon keeps the content (the files API's and the scenario
//! table's tests cover the rest).

use crate::common;

use std::time::Duration;

use common::session_in;
use futures::StreamExt;
use sandbox_client::Client;
use sandbox_universal::{EventPayload, FileChangeKind};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_agent_user_the_turns_changes_are_seen_as_that_user() {
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
    std::os::unix::fs::chown(work.path(), Some(user.uid), Some(user.gid)).unwrap();
    // A file only root may read: its change is listed, its content never read.
    let secret = work.path().join("root-only.txt");
    std::fs::write(&secret, "before\n").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let mut args = common::process::daemon_args(&data.path().join("state"), None);
    args.extend(["--agent-user".into(), "sbxtest-agent".into()]);
    let mut command = std::process::Command::new(common::process::BINARY);
    command.args(&args);
    let daemon = common::process::DaemonProcess::spawn_command(command);
    let api = Client::new(&daemon.url, None).unwrap();
    session_in(&api, "u", work.path()).await;
    let mut events = api.stream_events("u", None, false).await.unwrap();
    api.send_message("u", "write a file").await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let event = events.next().await.unwrap().unwrap();
            if let EventPayload::PermissionAsked(asked) = &event.payload {
                // Changes made while the turn runs, whoever makes them, are the turn's.
                std::fs::write(&secret, "after, longer\n").unwrap();
                let shared = work.path().join("shared.txt");
                std::fs::write(&shared, "hello\n").unwrap();
                std::os::unix::fs::chown(&shared, Some(user.uid), Some(user.gid)).unwrap();
                api.reply_permission(
                    "u",
                    &asked.permission_id,
                    sandbox_universal::PermissionReply::Once,
                )
                .await
                .unwrap();
            }
            if let EventPayload::TurnEnded(ended) = event.payload {
                break ended;
            }
        }
    })
    .await
    .unwrap();
    let changes = api.turn_changes("u", &ended.turn_id).await.unwrap();
    assert_eq!(ended.changes, Some(changes.counts));
    let by_path = |path: &str| {
        changes
            .files
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("{path}: {changes:?}"))
            .clone()
    };
    let shared = by_path("shared.txt");
    assert_eq!(shared.change, FileChangeKind::Add, "{shared:?}");
    assert!(
        shared
            .diff
            .as_deref()
            .unwrap_or_default()
            .contains("+hello"),
        "{shared:?}"
    );
    // The built-in mock writes as the daemon (root, private): listed, never read.
    let mock = by_path(sandbox_agents::mock::WRITTEN_FILE);
    assert_eq!(mock.change, FileChangeKind::Add);
    let unreadable = by_path("root-only.txt");
    assert_eq!(unreadable.change, FileChangeKind::Update);
    assert_eq!(unreadable.diff, None);
    assert_eq!(
        unreadable.diff_omitted,
        Some(sandbox_universal::DiffOmitted::Unreadable)
    );
    // The daemon's kept content is the daemon's, not the agent user's.
    let blobs = data.path().join("state/sessions/u/changes/blobs");
    for blob in std::fs::read_dir(&blobs).unwrap() {
        let meta = std::fs::metadata(blob.unwrap().path()).unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), 0);
    }
}
