//! Faults, on the real daemon binary: SIGKILL in the middle of a flood, a full disk, a
//! database that goes away, corrupted and newer records, and the migration from a
//! JSON-lines data dir. Nothing stored is lost, renumbered or served twice.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::process::{DaemonProcess, TmpfsNamespace, daemon_args, namespaces_required};
use common::proxy::Proxy;
use common::{
    Options, TestDaemon, all_events, assert_contiguous, create_mock, promptly, status_of,
    test_store,
};
use futures::StreamExt;
use sandbox_client::{Client, ClientError, EventsQuery};
use sandbox_daemon::store::StoreConfig;
use sandbox_universal::{
    AgentError, CreateSessionRequest, EventPayload, ItemStatus, StopReason, StoreStatus,
    UniversalEvent, UnknownReason,
};

fn client(daemon: &DaemonProcess) -> Client {
    Client::new(&daemon.url, None).unwrap()
}

/// Reads a stream until the `n`th `turnEnded` counted from its start.
async fn until_turn_ended(
    stream: &mut sandbox_client::EventStream,
    n: usize,
    into: &mut Vec<UniversalEvent>,
) {
    let mut ended = 0;
    tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(event) = stream.next().await {
            let event = event.unwrap();
            let end = matches!(event.payload, EventPayload::TurnEnded(_));
            into.push(event);
            if end {
                ended += 1;
                if ended == n {
                    return;
                }
            }
        }
        panic!("the stream ended before turnEnded");
    })
    .await
    .expect("turnEnded within a minute");
}

/// Every `itemStarted` has its `itemCompleted`.
fn assert_no_open_item(events: &[UniversalEvent]) {
    let mut open = std::collections::BTreeSet::new();
    for event in events {
        match &event.payload {
            EventPayload::ItemStarted(i) => {
                open.insert(i.item.item_id.clone());
            }
            EventPayload::ItemCompleted(i) => {
                open.remove(&i.item.item_id);
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "items left open: {open:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_flood_loses_nothing_a_reader_saw() {
    let dir = tempfile::tempdir().unwrap();
    let store = test_store().await;
    let daemon = DaemonProcess::spawn(dir.path(), store.as_ref());
    let api = client(&daemon);
    create_mock(&api, "f").await;
    let mut stream = api.stream_events("f", None, false).await.unwrap();
    api.send_message("f", "flood 200000").await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < 30_000 {
        seen.push(stream.next().await.unwrap().unwrap());
    }
    daemon.kill();
    drop(stream);

    let daemon = DaemonProcess::spawn(dir.path(), store.as_ref());
    let api = client(&daemon);
    let last = seen.last().unwrap().sequence;
    let mut resumed = api.resume_events("f", last, false).await.unwrap();
    let mut rest = Vec::new();
    until_turn_ended(&mut resumed, 1, &mut rest).await;
    let mut all = seen.clone();
    all.extend(rest.iter().cloned());
    assert_contiguous(&all, "f");

    // What the reader saw before the kill is exactly what the log holds.
    let log = all_events(&api, "f").await;
    assert_eq!(
        log[..all.len()],
        all[..],
        "no gap, no duplicate, nothing rewritten"
    );
    assert_eq!(log.len(), all.len(), "the turn's end is the last event");
    // The interrupted turn is closed: an error, the open item failed, then turnEnded.
    let error = rest
        .iter()
        .position(|e| matches!(e.payload, EventPayload::Error(_)))
        .expect("an error event explains the interruption");
    let EventPayload::Error(AgentError::ProcessExited { message, .. }) = &rest[error].payload
    else {
        panic!("{:?}", rest[error].payload)
    };
    assert!(message.contains("not shut down cleanly"), "{message}");
    let closing: Vec<&EventPayload> = rest[error + 1..].iter().map(|e| &e.payload).collect();
    assert!(
        matches!(closing[..], [
            EventPayload::ItemCompleted(item),
            EventPayload::TurnEnded(ended),
        ] if item.item.status == ItemStatus::Failed && ended.stop_reason == StopReason::Error),
        "{closing:?}"
    );
    assert_no_open_item(&log);

    // The session goes on, numbering continuing.
    let mut stream = api
        .resume_events("f", log.len() as u64, false)
        .await
        .unwrap();
    api.send_message("f", "again").await.unwrap();
    let mut next = Vec::new();
    until_turn_ended(&mut stream, 1, &mut next).await;
    assert_eq!(next[0].sequence, log.len() as u64 + 1);
    daemon.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_new_work_and_loses_nothing() {
    if matches!(test_store().await, Some(StoreConfig::Postgres(_))) {
        eprintln!("a full disk is the embedded store's fault; PostgreSQL has its outage test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = TmpfsNamespace::new(dir.path(), "32m") else {
        assert!(
            !namespaces_required(),
            "cannot mount a tmpfs in a mount namespace here"
        );
        eprintln!("SKIPPED a_full_disk_refuses_new_work_and_loses_nothing: no mount namespaces");
        return;
    };
    let args = daemon_args(dir.path(), None);
    let daemon = DaemonProcess::spawn_command(disk.command(&args));
    let api = client(&daemon);
    create_mock(&api, "a").await;
    create_mock(&api, "idle").await;
    let mut stream = api.stream_events("a", None, false).await.unwrap();

    // A turn under way when the disk fills up.
    api.send_message("a", "slow").await.unwrap();
    let mut events = Vec::new();
    while !matches!(
        events.last().map(|e: &UniversalEvent| &e.payload),
        Some(EventPayload::ItemDelta(_))
    ) {
        events.push(stream.next().await.unwrap().unwrap());
    }
    disk.fill("filler");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while api.health().await.unwrap().store.status != StoreStatus::Full {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the store never reports full"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused = |error: ClientError| error.problem().map(|p| (p.status, p.type_uri.clone()));
    let full = Some((507, "urn:sandbox-daemon:problem:store-full".to_string()));
    let create_error = api
        .create_session(
            "b",
            &CreateSessionRequest {
                agent: "mock".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(refused(create_error), full);
    assert_eq!(
        refused(api.send_message("idle", "hi").await.unwrap_err()),
        full
    );
    // What is stored stays readable.
    let readable = all_events(&api, "a").await;
    assert!(!readable.is_empty());
    assert_contiguous(&readable, "a");

    disk.free("filler");
    until_turn_ended(&mut stream, 1, &mut events).await;
    assert_contiguous(&events, "a");
    assert!(
        events.iter().any(|e| matches!(
            &e.payload,
            EventPayload::Error(AgentError::StoreError { message }) if message.contains("full")
        )),
        "the session was told"
    );
    let slow = events
        .iter()
        .filter(|e| matches!(&e.payload, EventPayload::ItemDelta(d) if d.delta.starts_with("slow")))
        .count();
    assert_eq!(
        slow, 50,
        "every delta written while the disk was full is there"
    );
    assert_eq!(api.health().await.unwrap().store.status, StoreStatus::Ok);
    create_mock(&api, "b").await;

    // Durable across a restart, in the same tmpfs.
    daemon.terminate();
    let daemon = DaemonProcess::spawn_command(disk.command(&args));
    let api = client(&daemon);
    assert_eq!(all_events(&api, "a").await[..events.len()], events[..]);
    daemon.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_refuses_new_work_and_loses_nothing() {
    let Some(StoreConfig::Postgres(url)) = test_store().await else {
        eprintln!("a database outage is PostgreSQL's fault; SQLite has its full-disk test");
        return;
    };
    let mut url = reqwest::Url::parse(&url).unwrap();
    let upstream = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap_or(5432));
    let proxy = Proxy::start(upstream.parse().unwrap()).await;
    url.set_port(Some(proxy.addr.port())).unwrap();
    let daemon = TestDaemon::start_with(Options {
        store: Some(StoreConfig::Postgres(url.to_string())),
        ..Options::default()
    })
    .await;
    daemon.mock_session("a").await;
    daemon.mock_session("idle").await;
    let mut stream = daemon.client.stream_events("a", None, false).await.unwrap();

    // A turn under way when the database goes away.
    daemon.client.send_message("a", "slow").await.unwrap();
    let mut events = Vec::new();
    while !matches!(
        events.last().map(|e: &UniversalEvent| &e.payload),
        Some(EventPayload::ItemDelta(_))
    ) {
        events.push(stream.next().await.unwrap().unwrap());
    }
    proxy.cut();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while daemon.client.health().await.unwrap().store.status != StoreStatus::Unavailable {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the outage is never reported"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // No client waits for the database: reads answer (from what is loaded, or a 503),
    // writes that must log are refused, cancel stops the agent.
    let http = reqwest::Client::new();
    for path in [
        "/sessions",
        "/sessions/a",
        "/sessions/idle/events?offset=0&limit=10",
    ] {
        let (status, kind) = status_of(path, http.get(format!("{}{path}", daemon.url()))).await;
        assert!(
            status == 200 || (status == 503 && kind.ends_with("store-unavailable")),
            "{path}: {status} {kind}"
        );
    }
    let message = promptly(
        "POST /sessions/idle/messages",
        daemon.client.send_message("idle", "hi"),
    )
    .await
    .unwrap_err();
    assert_eq!(message.problem().unwrap().status, 503);
    assert!(
        message
            .problem()
            .unwrap()
            .type_uri
            .ends_with("store-unavailable")
    );

    proxy.restore();
    until_turn_ended(&mut stream, 1, &mut events).await;
    assert_contiguous(&events, "a");
    assert!(events.iter().any(|e| matches!(
        e.payload,
        EventPayload::Error(AgentError::StoreError { .. })
    )));
    let slow = events
        .iter()
        .filter(|e| matches!(&e.payload, EventPayload::ItemDelta(d) if d.delta.starts_with("slow")))
        .count();
    assert_eq!(slow, 50, "every delta written during the outage is there");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while daemon.client.health().await.unwrap().store.status != StoreStatus::Ok {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the store never recovers"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    daemon.client.send_message("idle", "hi").await.unwrap();
    daemon.wait_turn_ended("idle", 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupted_and_newer_records_keep_their_place_in_a_real_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = test_store().await;
    let daemon = DaemonProcess::spawn(dir.path(), store.as_ref());
    let api = client(&daemon);
    create_mock(&api, "c").await;
    let mut stream = api.stream_events("c", None, false).await.unwrap();
    api.send_message("c", "flood 500").await.unwrap();
    let mut before = Vec::new();
    until_turn_ended(&mut stream, 1, &mut before).await;
    daemon.terminate();

    let sid = "(SELECT sid FROM sessions WHERE session_id = 'c')";
    let corrupt = format!(
        "UPDATE events SET body = '{{\"sequence\":100,\"ti' WHERE sequence = 100 AND sid = {sid};
         UPDATE events SET version = 7, type = 'itemTeleported',
           body = '{{\"sequence\":200,\"type\":\"itemTeleported\",\"data\":{{}}}}'
           WHERE sequence = 200 AND sid = {sid};"
    );
    common::store_access::execute(dir.path(), store.as_ref(), &corrupt).await;

    let daemon = DaemonProcess::spawn(dir.path(), store.as_ref());
    let api = client(&daemon);
    let after = all_events(&api, "c").await;
    assert_contiguous(&after, "c");
    assert_eq!(after.len(), before.len());
    for (was, is) in before.iter().zip(&after) {
        match is.sequence {
            100 => assert!(matches!(&is.payload,
                EventPayload::Unknown(u) if u.reason == UnknownReason::Unreadable)),
            200 => assert!(matches!(&is.payload,
                EventPayload::Unknown(u) if u.reason == UnknownReason::NewerVersion
                    && u.schema_version == 7 && u.stored_type == "itemTeleported")),
            _ => assert_eq!(was, is),
        }
    }
    let mut stream = api
        .resume_events("c", after.len() as u64, false)
        .await
        .unwrap();
    api.send_message("c", "more").await.unwrap();
    let mut more = Vec::new();
    until_turn_ended(&mut stream, 1, &mut more).await;
    assert_eq!(more[0].sequence, after.len() as u64 + 1);
    daemon.terminate();
}

/// Writes a data dir as the JSON-lines daemon left it: a session record (with its
/// credential) and a log with an unreadable line in the middle, a line from a newer build
/// and a torn last line, in the middle of a turn.
fn legacy_data_dir(root: &Path) -> Vec<UniversalEvent> {
    use sandbox_universal::{
        AgentId, EventSource, Item, ItemEvent, ItemKind, ItemRole, SessionStarted, TurnStarted,
    };
    let dir = root.join("sessions/old");
    std::fs::create_dir_all(dir.join("agent")).unwrap();
    std::fs::write(
        dir.join("session.json"),
        serde_json::json!({
            "sessionId": "old", "agent": "mock", "agentMode": null,
            "permissionMode": "default", "model": null, "variant": null,
            "token": "sk-legacy", "dangerouslySkipPermissions": false,
            "agentVersion": null, "cwd": root.display().to_string(),
            "createdAt": "2026-01-02T03:04:05Z"
        })
        .to_string(),
    )
    .unwrap();
    let event = |sequence, payload| UniversalEvent {
        sequence,
        time: chrono::Utc::now(),
        session_id: "old".into(),
        native_session_id: None,
        source: EventSource::Daemon,
        synthetic: true,
        payload,
        raw: None,
    };
    let item = Item::new("itm_1", ItemKind::Message, ItemStatus::InProgress)
        .with_role(ItemRole::Assistant);
    let written = vec![
        event(
            1,
            EventPayload::SessionStarted(SessionStarted {
                agent: AgentId::Mock,
                model: None,
                agent_mode: None,
                permission_mode: None,
                cwd: None,
                agent_version: None,
            }),
        ),
        event(
            2,
            EventPayload::TurnStarted(TurnStarted {
                turn_id: "turn_1".into(),
            }),
        ),
        UniversalEvent {
            raw: Some(serde_json::json!({"native": "start"})),
            ..event(3, EventPayload::ItemStarted(ItemEvent { item }))
        },
    ];
    let mut log = String::new();
    for e in &written {
        log.push_str(&serde_json::to_string(e).unwrap());
        log.push('\n');
    }
    log.push_str("{\"sequence\":4,\"this line is\0 garbage\n");
    log.push_str("{\"sequence\":5,\"type\":\"telepathy\",\"data\":{}}\n");
    log.push_str("{\"sequence\":6,\"time\":\"2026-01-02T03:04:05Z\",\"ty");
    std::fs::write(dir.join("events.jsonl"), log).unwrap();
    written
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_lines_data_dir_is_imported_on_first_start() {
    let dir = tempfile::tempdir().unwrap();
    let store = test_store().await;
    let written = legacy_data_dir(dir.path());
    let daemon = DaemonProcess::spawn(dir.path(), store.as_ref());
    let api = client(&daemon);

    let events = all_events(&api, "old").await;
    assert_contiguous(&events, "old");
    let without_raw: Vec<UniversalEvent> = written
        .into_iter()
        .map(|e| UniversalEvent { raw: None, ..e })
        .collect();
    assert_eq!(events[..3], without_raw[..]);
    let raw = api
        .get_events(
            "old",
            &EventsQuery {
                offset: Some(2),
                limit: Some(1),
                include_raw: true,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        raw.events[0].raw,
        Some(serde_json::json!({"native": "start"}))
    );
    for (place, reason) in [
        (4, UnknownReason::Unreadable),
        (5, UnknownReason::Unreadable),
        (6, UnknownReason::Unreadable),
    ] {
        let EventPayload::Unknown(unknown) = &events[place - 1].payload else {
            panic!(
                "line {place} should be kept as unknown: {:?}",
                events[place - 1]
            )
        };
        assert_eq!(unknown.reason, reason);
    }
    // The interrupted turn was closed after the imported lines.
    assert!(matches!(events[6].payload, EventPayload::Error(_)));
    assert!(matches!(
        &events.last().unwrap().payload,
        EventPayload::TurnEnded(_)
    ));
    assert_no_open_item(&events);
    let info = api.get_session("old").await.unwrap();
    assert_eq!(info.created_at.to_rfc3339(), "2026-01-02T03:04:05+00:00");

    let session_dir = dir.path().join("sessions/old");
    assert!(!session_dir.join("session.json").exists());
    assert!(session_dir.join("session.json.imported").exists());
    assert!(session_dir.join("events.jsonl.imported").exists());
    assert_eq!(
        std::fs::read_to_string(session_dir.join("token")).unwrap(),
        "sk-legacy"
    );
    let record = common::store_access::query(
        dir.path(),
        store.as_ref(),
        "SELECT record FROM sessions WHERE session_id = 'old'",
    )
    .await;
    assert!(
        !record[0][0].contains("sk-legacy"),
        "credentials stay out of the store"
    );

    // A second start imports nothing twice; the session goes on.
    daemon.terminate();
    let daemon = DaemonProcess::spawn(dir.path(), store.as_ref());
    let api = client(&daemon);
    assert_eq!(all_events(&api, "old").await, events);
    let mut stream = api
        .resume_events("old", events.len() as u64, false)
        .await
        .unwrap();
    api.send_message("old", "hello").await.unwrap();
    let mut next = Vec::new();
    until_turn_ended(&mut stream, 1, &mut next).await;
    assert_eq!(next[0].sequence, events.len() as u64 + 1);
    daemon.terminate();
}
