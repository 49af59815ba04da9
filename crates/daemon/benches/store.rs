//! Store benchmark on the real daemon binary (a child process, measured from /proc):
//!
//! - flood: one `flood N` session with one SSE reader: events/s delivered, RSS during and
//!   after, after a restart, and during an SSE replay of the whole log from offset 0;
//! - startup: `/health` right after a restart with S sessions and ~E events stored;
//! - turn: mock turn latency (message → `turnEnded` on SSE), p50 / p99;
//! - scale: 10,000 sessions stored and 1,000 idle ones open, under an open-files limit of
//!   1,024: RSS and open file descriptors.
//!
//! `cargo bench -p sandbox-daemon --bench store -- [--backend sqlite|postgres|both]
//!  [--events 1000000] [--sessions 1000] [--stored 10000] [--open 1000] [--turns 300]
//!  [--daemon <binary>] [--phases flood,startup,turn,scale]`
//! PostgreSQL needs `SANDBOX_TEST_POSTGRES_URL` (scripts/test-postgres.sh); `--daemon`
//! measures another build's turn latency (e.g. the previous release) for comparison.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use sandbox_client::Client;
use sandbox_universal::CreateSessionRequest;

#[path = "support/daemon.rs"]
mod daemon;

struct Args {
    backends: Vec<String>,
    events: u64,
    sessions: u64,
    stored: u64,
    open: u64,
    turns: usize,
    daemon: Option<PathBuf>,
    phases: Vec<String>,
}

fn args() -> Args {
    let mut args = Args {
        backends: vec!["sqlite".into()],
        events: 1_000_000,
        sessions: 1_000,
        stored: 10_000,
        open: 1_000,
        turns: 300,
        daemon: None,
        phases: ["flood", "startup", "turn", "scale"]
            .map(String::from)
            .to_vec(),
    };
    let argv: Vec<String> = std::env::args().collect();
    for pair in argv.windows(2) {
        let value = || pair[1].clone();
        let number = || pair[1].parse().expect("a number");
        match pair[0].as_str() {
            "--backend" => {
                args.backends = match pair[1].as_str() {
                    "both" => vec!["sqlite".into(), "postgres".into()],
                    other => vec![other.into()],
                }
            }
            "--events" => args.events = number(),
            "--sessions" => args.sessions = number(),
            "--stored" => args.stored = number(),
            "--open" => args.open = number(),
            "--turns" => args.turns = number() as usize,
            "--daemon" => args.daemon = Some(value().into()),
            "--phases" => args.phases = value().split(',').map(String::from).collect(),
            _ => {}
        }
    }
    args
}

/// The store argument for a fresh store of `backend` (PostgreSQL: a new database).
async fn fresh_store(backend: &str) -> Option<String> {
    if backend != "postgres" {
        return None;
    }
    let admin = sandbox_testkit::postgres::admin_url()
        .expect("--backend postgres needs SANDBOX_TEST_POSTGRES_URL (scripts/test-postgres.sh)");
    Some(sandbox_testkit::postgres::fresh_database(&admin, "sdbench").await)
}

/// A daemon process under measurement.
struct Daemon {
    child: Child,
    url: String,
    spawned: Instant,
    listening: Duration,
}

impl Daemon {
    fn spawn(binary: &Path, data_dir: &Path, store: Option<&str>, nofile: Option<u64>) -> Self {
        let mut command = Command::new(binary);
        command
            .args(["--no-token", "--port", "0", "--data-dir"])
            .arg(data_dir)
            .env("SANDBOX_DAEMON_LOG", "error")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(store) = store {
            command.args(["--store", store]);
        }
        if let Some(limit) = nofile {
            use std::os::unix::process::CommandExt;
            // SAFETY: setrlimit between fork and exec touches only this process.
            unsafe {
                command.pre_exec(move || {
                    let rlimit = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let spawned = Instant::now();
        let mut child = command.spawn().expect("the daemon starts");
        let url =
            daemon::listening_url(&mut child, false).expect("the daemon says where it listens");
        let listening = spawned.elapsed();
        Self {
            child,
            url,
            spawned,
            listening,
        }
    }

    fn client(&self) -> Client {
        Client::new(&self.url, None).unwrap()
    }

    fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// Resident memory now, MiB.
    fn rss_mib(&self) -> f64 {
        self.status_kib("VmRSS:") as f64 / 1024.0
    }

    /// Open file descriptors.
    fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// SIGTERM, then SIGKILL if it has not exited within 10 s.
    fn stop(mut self) {
        if !daemon::stop(&mut self.child) {
            eprintln!("the daemon did not stop within 10 s of SIGTERM; killed");
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn create(client: &Client, id: &str) {
    let request = CreateSessionRequest {
        agent: "mock".into(),
        ..Default::default()
    };
    assert!(client.create_session(id, &request).await.unwrap().healthy);
}

/// Reads SSE frames from `offset` until `turnEnded` (or `frames` frames), checking that ids
/// are contiguous; answers the number of frames. Parses only the `id:` and `event:` lines:
/// this measures the daemon, not a JSON parser.
async fn read_sse(url: &str, id: &str, offset: u64, until: Until) -> u64 {
    let response = reqwest::Client::new()
        .get(format!("{url}/sessions/{id}/events/sse?offset={offset}"))
        .send()
        .await
        .unwrap();
    let mut body = response.bytes_stream();
    let mut expected = offset + 1;
    let mut pending = Vec::new();
    let mut frames = 0;
    while let Some(chunk) = body.next().await {
        pending.extend_from_slice(&chunk.unwrap());
        let mut start = 0;
        while let Some(end) = pending[start..].iter().position(|&b| b == b'\n') {
            let line = &pending[start..start + end];
            start += end + 1;
            if let Some(seq) = line.strip_prefix(b"id: ") {
                let seq: u64 = std::str::from_utf8(seq).unwrap().parse().unwrap();
                assert_eq!(seq, expected, "contiguous ids");
                expected += 1;
                frames += 1;
                if let Until::Frames(n) = until
                    && frames == n
                {
                    return frames;
                }
            } else if line == b"event: turnEnded" && until == Until::TurnEnded {
                return frames;
            }
        }
        pending.drain(..start);
    }
    frames
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    TurnEnded,
    Frames(u64),
}

/// Samples `daemon`'s RSS until `done` resolves; answers the maximum, MiB.
async fn peak_rss<T>(daemon: &Daemon, done: impl std::future::Future<Output = T>) -> (T, f64) {
    let mut peak: f64 = 0.0;
    tokio::pin!(done);
    loop {
        tokio::select! {
            value = &mut done => return (value, peak.max(daemon.rss_mib())),
            () = tokio::time::sleep(Duration::from_millis(50)) => peak = peak.max(daemon.rss_mib()),
        }
    }
}

async fn flood(binary: &Path, backend: &str, events: u64) {
    let dir = tempfile::tempdir().unwrap();
    let store = fresh_store(backend).await;
    let daemon = Daemon::spawn(binary, dir.path(), store.as_deref(), None);
    let client = daemon.client();
    create(&client, "flood").await;
    let reader = read_sse(&daemon.url, "flood", 0, Until::TurnEnded);
    let started = Instant::now();
    client
        .send_message("flood", &format!("flood {events}"))
        .await
        .unwrap();
    let (frames, during) = peak_rss(&daemon, reader).await;
    let elapsed = started.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = daemon.rss_mib();
    println!(
        "[{backend}] flood {events}: {frames} events to one SSE reader in {:.2}s = {:.0} events/s; RSS peak {during:.1} MiB, {after:.1} MiB after",
        elapsed.as_secs_f64(),
        frames as f64 / elapsed.as_secs_f64()
    );
    daemon.stop();
    let disk = dir_size(dir.path());
    let daemon = Daemon::spawn(binary, dir.path(), store.as_deref(), None);
    let client = daemon.client();
    client.health().await.unwrap();
    let info = client.get_session("flood").await.unwrap();
    let restarted = daemon.rss_mib();
    let replay = read_sse(&daemon.url, "flood", 0, Until::Frames(info.event_count));
    let started = Instant::now();
    let (replayed, replay_peak) = peak_rss(&daemon, replay).await;
    println!(
        "[{backend}] after a restart: RSS {restarted:.1} MiB; SSE replay of all {replayed} events from offset 0 in {:.2}s ({:.0} events/s), RSS peak {replay_peak:.1} MiB{}",
        started.elapsed().as_secs_f64(),
        replayed as f64 / started.elapsed().as_secs_f64(),
        if backend == "sqlite" {
            format!("; store {:.0} MiB on disk", disk as f64 / (1 << 20) as f64)
        } else {
            String::new()
        }
    );
    daemon.stop();
}

fn dir_size(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

async fn startup(binary: &Path, backend: &str, sessions: u64, events: u64) {
    let dir = tempfile::tempdir().unwrap();
    let store = fresh_store(backend).await;
    let daemon = Daemon::spawn(binary, dir.path(), store.as_deref(), None);
    let client = daemon.client();
    let per_session = (events / sessions).max(1);
    let started = Instant::now();
    futures::stream::iter(0..sessions)
        .for_each_concurrent(8, |i| {
            let client = client.clone();
            let url = daemon.url.clone();
            async move {
                let id = format!("s{i}");
                create(&client, &id).await;
                let reader = read_sse(&url, &id, 1, Until::TurnEnded);
                client
                    .send_message(&id, &format!("flood {per_session}"))
                    .await
                    .unwrap();
                reader.await;
            }
        })
        .await;
    println!(
        "[{backend}] stored {sessions} sessions × ~{per_session} events in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    daemon.stop();
    let daemon = Daemon::spawn(binary, dir.path(), store.as_deref(), None);
    let asked = Instant::now();
    let health = reqwest::get(format!("{}/health", daemon.url))
        .await
        .unwrap();
    assert!(health.status().is_success());
    let latency = asked.elapsed();
    let first_health = daemon.spawned.elapsed();
    println!(
        "[{backend}] restart with {sessions} sessions / ~{} events stored: listening after {:.1} ms, first /health answered in {:.2} ms ({:.1} ms after the process started), RSS {:.1} MiB",
        sessions * per_session,
        daemon.listening.as_secs_f64() * 1e3,
        latency.as_secs_f64() * 1e3,
        first_health.as_secs_f64() * 1e3,
        daemon.rss_mib()
    );
    daemon.stop();
}

async fn turns(binary: &Path, label: &str, store: Option<String>, turns: usize) {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::spawn(binary, dir.path(), store.as_deref(), None);
    let client = daemon.client();
    create(&client, "t").await;
    let mut stream = client.stream_events("t", None, false).await.unwrap();
    stream.next().await; // sessionStarted
    let mut latencies = Vec::with_capacity(turns);
    for _ in 0..turns {
        let started = Instant::now();
        client.send_message("t", "hello").await.unwrap();
        loop {
            let event = stream.next().await.unwrap().unwrap();
            if matches!(event.payload, sandbox_universal::EventPayload::TurnEnded(_)) {
                break;
            }
        }
        latencies.push(started.elapsed());
    }
    drop(stream);
    latencies.sort();
    let at = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    println!(
        "[{label}] mock turn (message → turnEnded over SSE), {turns} turns: p50 {:.2} ms, p99 {:.2} ms",
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3
    );
    daemon.stop();
}

async fn scale(binary: &Path, backend: &str, stored: u64, open: u64) {
    let dir = tempfile::tempdir().unwrap();
    let store = fresh_store(backend).await;
    let daemon = Daemon::spawn(binary, dir.path(), store.as_deref(), Some(1024));
    let client = daemon.client();
    let started = Instant::now();
    futures::stream::iter(0..stored)
        .for_each_concurrent(16, |i| {
            let client = client.clone();
            async move { create(&client, &format!("s{i}")).await }
        })
        .await;
    println!(
        "[{backend}] created {stored} sessions in {:.1}s under `ulimit -n 1024`: RSS {:.1} MiB, {} open fds",
        started.elapsed().as_secs_f64(),
        daemon.rss_mib(),
        daemon.fds()
    );
    // Ending them all lets them go (after 10 s unused; memory is trimmed every 5 s).
    futures::stream::iter(0..stored)
        .for_each_concurrent(16, |i| {
            let client = client.clone();
            async move {
                client.end_session(&format!("s{i}")).await.unwrap();
            }
        })
        .await;
    tokio::time::sleep(Duration::from_secs(17)).await;
    println!(
        "[{backend}] all {stored} ended, 17 s later: RSS {:.1} MiB",
        daemon.rss_mib()
    );
    daemon.stop();
    let daemon = Daemon::spawn(binary, dir.path(), store.as_deref(), Some(1024));
    let client = daemon.client();
    let idle = daemon.rss_mib();
    // Re-create (ended ones are purged) and open `open` of them.
    futures::stream::iter(0..open)
        .for_each_concurrent(16, |i| {
            let client = client.clone();
            let url = daemon.url.clone();
            async move {
                let id = format!("s{i}");
                client.delete_session(&id).await.unwrap();
                create(&client, &id).await;
                let reader = read_sse(&url, &id, 1, Until::TurnEnded);
                client.send_message(&id, "hello").await.unwrap();
                reader.await;
            }
        })
        .await;
    let listed = client.list_all_sessions().await.unwrap().sessions.len();
    println!(
        "[{backend}] {listed} sessions stored, after a restart: RSS {idle:.1} MiB; with {open} of them open (agents running, idle): RSS {:.1} MiB, {} open fds (limit 1,024)",
        daemon.rss_mib(),
        daemon.fds()
    );
    daemon.stop();
}

#[tokio::main]
async fn main() {
    let args = args();
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_sandbox-daemon"));
    println!(
        "store benchmark: {} cores, daemon {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        binary.display()
    );
    for backend in &args.backends {
        for phase in &args.phases {
            match phase.as_str() {
                "flood" => flood(&binary, backend, args.events).await,
                "startup" => startup(&binary, backend, args.sessions, args.events).await,
                "turn" => {
                    turns(&binary, backend, fresh_store(backend).await, args.turns).await;
                    if let Some(other) = &args.daemon
                        && backend == "sqlite"
                    {
                        turns(other, &format!("{}", other.display()), None, args.turns).await;
                    }
                }
                "scale" => scale(&binary, backend, args.stored, args.open).await,
                other => panic!("unknown phase `{other}`"),
            }
        }
    }
}
