//! A full disk, on the real daemon binary with its data dir on a small tmpfs in a private
//! mount namespace: no client ever waits for the disk. Reads answer at once, writes that
//! must log answer 507 within a second, cancel and end still stop the agent and answer,
//! nothing durable is lost, and a SIGTERM while the disk is full exits within the
//! configured bound, naming what it could not write.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::process::{DaemonProcess, TmpfsNamespace, daemon_args, namespaces_required};
use common::{all_events, assert_contiguous, create_mock, promptly, status_of, test_store};
use sandbox_client::{Client, EventsQuery};
use sandbox_daemon::store::StoreConfig;
use sandbox_universal::{
    AgentError, EventPayload, SessionStatus, StopReason, StoreStatus, UniversalEvent,
};

async fn wait_health(api: &Client, status: StoreStatus) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.health().await.unwrap().store.status != status {
        assert!(
            Instant::now() < deadline,
            "the store never reports {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Waits until the store reports full or `session`'s last turn is closed (`true`).
async fn full_or_closed(api: &Client, session: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if api.health().await.unwrap().store.status == StoreStatus::Full {
            return false;
        }
        let count = api.get_session(session).await.unwrap().event_count;
        let query = EventsQuery {
            offset: Some(count.saturating_sub(1)),
            limit: Some(1),
            include_raw: false,
        };
        let last = api.get_events(session, &query).await.unwrap().events.pop();
        if last.is_some_and(|e| matches!(e.payload, EventPayload::TurnEnded(_))) {
            return true;
        }
        assert!(
            Instant::now() < deadline,
            "the store never reports full, nor is the turn closed"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A daemon on a fresh tmpfs, or `None` where this machine has no mount namespaces.
fn disk(dir: &Path, test: &str) -> Option<TmpfsNamespace> {
    let disk = TmpfsNamespace::new(dir, "32m");
    if disk.is_none() {
        assert!(
            !namespaces_required(),
            "cannot mount a tmpfs in a mount namespace here"
        );
        eprintln!("SKIPPED {test}: no mount namespaces");
    }
    disk
}

async fn embedded_store() -> bool {
    if matches!(test_store().await, Some(StoreConfig::Postgres(_))) {
        eprintln!("a full disk is the embedded store's fault; PostgreSQL has its outage test");
        return false;
    }
    true
}

fn post(http: &reqwest::Client, url: String, body: serde_json::Value) -> reqwest::RequestBuilder {
    http.post(url).json(&body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_never_hangs_a_client() {
    if !embedded_store().await {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = disk(dir.path(), "a_full_disk_never_hangs_a_client") else {
        return;
    };
    let args = daemon_args(dir.path(), None);
    let daemon = DaemonProcess::spawn_command(disk.command(&args));
    let api = Client::new(&daemon.url, None).unwrap();
    let http = reqwest::Client::new();
    let url = |path: &str| format!("{}{path}", daemon.url);
    for id in ["flood", "idle", "ender", "asker", "doomed"] {
        create_mock(&api, id).await;
    }
    api.send_message("asker", "permission").await.unwrap();
    let asked = loop {
        let info = api.get_session("asker").await.unwrap();
        if let Some(asked) = info.pending_permissions.first() {
            break asked.permission_id.clone();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };

    // A producer far faster than the disk, when the disk fills up: it runs into the
    // back-pressure limit and waits for room that does not come.
    api.send_message("flood", "flood 3000000").await.unwrap();
    disk.fill("filler");
    wait_health(&api, StoreStatus::Full).await;
    // Let the producer reach the limit and wait there.
    tokio::time::sleep(Duration::from_millis(500)).await;

    // Reads of durable data answer at once.
    let page = promptly("GET /sessions", api.list_sessions(&Default::default()))
        .await
        .unwrap();
    assert_eq!(page.sessions.len(), 5);
    let flood = promptly("GET /sessions/flood", api.get_session("flood"))
        .await
        .unwrap();
    assert_eq!(flood.status, SessionStatus::Running);
    promptly("GET /sessions/idle", api.get_session("idle"))
        .await
        .unwrap();
    let events = promptly(
        "GET /sessions/flood/events",
        api.get_events(
            "flood",
            &sandbox_client::EventsQuery {
                offset: Some(0),
                limit: Some(100),
                include_raw: false,
            },
        ),
    )
    .await
    .unwrap();
    assert!(!events.events.is_empty());
    let mut stream = promptly("SSE", api.stream_events("flood", None, false))
        .await
        .unwrap();
    let first = promptly("SSE's first event", futures::StreamExt::next(&mut stream))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.sequence, 1);
    drop(stream);

    // Writes that must log are refused at once.
    let full = (507, "urn:sandbox-daemon:problem:store-full".to_string());
    let created = status_of(
        "POST /sessions/new",
        post(
            &http,
            url("/sessions/new"),
            serde_json::json!({"agent": "mock"}),
        ),
    )
    .await;
    assert_eq!(created, full);
    let message = status_of(
        "POST /sessions/idle/messages",
        post(
            &http,
            url("/sessions/idle/messages"),
            serde_json::json!({"message": "hi"}),
        ),
    )
    .await;
    assert_eq!(message, full);
    let busy = status_of(
        "POST /sessions/flood/messages",
        post(
            &http,
            url("/sessions/flood/messages"),
            serde_json::json!({"message": "hi"}),
        ),
    )
    .await;
    assert_eq!(busy, full);

    let reply = status_of(
        "POST /sessions/asker/permissions/{id}/reply",
        post(
            &http,
            url(&format!("/sessions/asker/permissions/{asked}/reply")),
            serde_json::json!({"reply": "once"}),
        ),
    )
    .await;
    assert_eq!(reply, full);
    let deleted = status_of(
        "DELETE /sessions/doomed",
        http.delete(url("/sessions/doomed")),
    )
    .await;
    assert_eq!(deleted, full);

    // Cancel and end stop the agent and answer; their events wait for the disk.
    let cancelled = status_of(
        "POST /sessions/flood/cancel",
        post(&http, url("/sessions/flood/cancel"), serde_json::json!({})),
    )
    .await;
    assert_eq!(cancelled.0, 202, "{cancelled:?}");
    let ended = status_of(
        "POST /sessions/ender/end",
        post(&http, url("/sessions/ender/end"), serde_json::json!({})),
    )
    .await;
    assert_eq!(ended.0, 200, "{ended:?}");
    promptly("GET /sessions/flood after cancel", api.get_session("flood"))
        .await
        .unwrap();

    // Space comes back: everything appended is committed, in order, with no gap.
    disk.free("filler");
    wait_health(&api, StoreStatus::Ok).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let flood_log = loop {
        let log = all_events(&api, "flood").await;
        if matches!(
            log.last().map(|e| &e.payload),
            Some(EventPayload::TurnEnded(_))
        ) {
            break log;
        }
        assert!(Instant::now() < deadline, "the cancelled turn never ends");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_contiguous(&flood_log, "flood");
    let Some(EventPayload::TurnEnded(ended_turn)) = flood_log.last().map(|e| &e.payload) else {
        unreachable!()
    };
    assert_eq!(ended_turn.stop_reason, StopReason::Cancelled);
    assert!(
        has_store_error(&flood_log),
        "the flooding session was told the disk is full"
    );
    let ender_log = all_events(&api, "ender").await;
    assert_contiguous(&ender_log, "ender");
    assert!(matches!(
        ender_log.last().map(|e| &e.payload),
        Some(EventPayload::SessionEnded(_))
    ));
    // What was refused can be done now.
    api.reply_permission("asker", &asked, sandbox_universal::PermissionReply::Once)
        .await
        .unwrap();
    api.delete_session("doomed").await.unwrap();
    // The session goes on, numbering continuing.
    api.send_message("flood", "again").await.unwrap();
    let info = api.get_session("flood").await.unwrap();
    assert!(info.event_count > flood_log.len() as u64);
    daemon.terminate();
}

fn has_store_error(events: &[UniversalEvent]) -> bool {
    events.iter().any(|e| {
        matches!(
            &e.payload,
            EventPayload::Error(AgentError::StoreError { message }) if message.contains("full")
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_on_a_full_disk_exits_in_time_and_names_what_it_lost() {
    if !embedded_store().await {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = disk(
        dir.path(),
        "sigterm_on_a_full_disk_exits_in_time_and_names_what_it_lost",
    ) else {
        return;
    };
    let mut args = daemon_args(dir.path(), None);
    args.extend(["--shutdown-timeout".into(), "3s".into()]);
    let daemon = DaemonProcess::spawn_command(disk.command(&args));
    let api = Client::new(&daemon.url, None).unwrap();
    create_mock(&api, "flood").await;
    api.send_message("flood", "flood 3000000").await.unwrap();
    disk.fill("filler");
    wait_health(&api, StoreStatus::Full).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let durable = api.get_session("flood").await.unwrap().event_count;

    let started = Instant::now();
    let (status, stderr) = daemon.terminate_within(Duration::from_secs(8));
    let took = started.elapsed();
    eprintln!("SIGTERM on a full disk: exited in {took:?} with {status}");
    assert!(
        took < Duration::from_secs(6),
        "a 3 s shutdown bound took {took:?}"
    );
    assert!(!status.success(), "losing events is not a clean exit");
    let line = stderr
        .lines()
        .find(|l| l.contains("could not be written"))
        .unwrap_or_else(|| panic!("no loud report of the lost events: {stderr}"));
    assert!(line.contains("flood"), "{line}");

    // A daemon starting on the full disk serves what is stored, and closes the interrupted
    // turn. That write fails and the store reports full, unless it fits in space the store's
    // files already hold: SQLite writes its log again from the start once it has been
    // checkpointed, into pages the filesystem gave it before the disk filled.
    let before = disk.usage();
    let daemon = DaemonProcess::spawn_command(disk.command(&daemon_args(dir.path(), None)));
    let api = Client::new(&daemon.url, None).unwrap();
    let closed_in_place = full_or_closed(&api, "flood").await;
    eprintln!(
        "restarted on the full disk: {}; before: {before}; now: {}",
        if closed_in_place {
            "closed the turn in place"
        } else {
            "store full"
        },
        disk.usage()
    );
    let stored = promptly(
        "GET /sessions/flood/events on a full disk",
        all_events(&api, "flood"),
    )
    .await;
    let info = promptly(
        "GET /sessions/flood on a full disk",
        api.get_session("flood"),
    )
    .await
    .unwrap();
    assert_eq!(info.event_count, stored.len() as u64);
    assert_contiguous(&stored, "flood");
    if closed_in_place {
        assert!(
            stored.len() as u64 > durable,
            "the closing follows what was durable"
        );
    } else {
        assert_eq!(stored.len() as u64, durable, "what was durable is there");
    }

    // Space comes back: the interrupted turn is closed, after what was durable.
    disk.free("filler");
    wait_health(&api, StoreStatus::Ok).await;
    let log = all_events(&api, "flood").await;
    assert_eq!(log[..stored.len()], stored[..]);
    assert_contiguous(&log, "flood");
    assert!(log.len() as u64 > durable);
    assert!(matches!(
        log.last().map(|e| &e.payload),
        Some(EventPayload::TurnEnded(_))
    ));
    daemon.terminate();
}
