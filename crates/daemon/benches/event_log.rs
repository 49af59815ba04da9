//! Event-log benchmark: K sessions × N events through the log to M SSE readers per session,
//! over real HTTP on loopback. Prints delivered events/s and append-to-delivery latency
//! percentiles.
//!
//! `cargo bench -p sandbox-daemon --bench event_log -- [--sessions K] [--events N] [--readers M]`

use std::collections::HashMap;
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::StreamExt;
use sandbox_agents::ProviderEnv;
use sandbox_agents::locate::BinaryLocator;
use sandbox_client::Client;
use sandbox_daemon::app::HttpSettings;
use sandbox_daemon::server::{ServerConfig, start};
use sandbox_daemon::session::SessionSettings;
use sandbox_universal::{CreateSessionRequest, EventPayload};

struct Args {
    sessions: usize,
    events: usize,
    readers: usize,
}

fn args() -> Args {
    let mut parsed = Args {
        sessions: 10,
        events: 10_000,
        readers: 2,
    };
    let argv: Vec<String> = std::env::args().collect();
    for pair in argv.windows(2) {
        let value = || pair[1].parse().expect("a number");
        match pair[0].as_str() {
            "--sessions" => parsed.sessions = value(),
            "--events" => parsed.events = value(),
            "--readers" => parsed.readers = value(),
            _ => {}
        }
    }
    parsed
}

fn report(label: &str, latencies: &[Duration]) {
    println!(
        "{label} append-to-delivery latency: p50 {:?}  p99 {:?}  max {:?}",
        percentile(latencies, 0.50),
        percentile(latencies, 0.99),
        latencies.last().copied().unwrap_or_default()
    );
}

/// Creates K sessions with M readers each, sends `message` to each, and collects every
/// reader's per-event latency until `turnEnded`. Returns sorted latencies and the wall time.
async fn phase(
    client: &Client,
    args: &Args,
    name: &str,
    message: &str,
) -> (Vec<Duration>, Duration) {
    let mut readers = Vec::new();
    for s in 0..args.sessions {
        let id = format!("{name}{s}");
        let request = CreateSessionRequest {
            agent: "mock".into(),
            ..Default::default()
        };
        assert!(client.create_session(&id, &request).await.unwrap().healthy);
        for _ in 0..args.readers {
            let mut stream = client.stream_events(&id, None, false).await.unwrap();
            readers.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                while let Some(event) = stream.next().await {
                    let event = event.unwrap();
                    // Deltas only: sessionStarted was logged before the reader connected.
                    match event.payload {
                        EventPayload::ItemDelta(_) => {
                            latencies.push((Utc::now() - event.time).to_std().unwrap_or_default());
                        }
                        EventPayload::TurnEnded(_) => break,
                        _ => {}
                    }
                }
                latencies
            }));
        }
    }
    let started = Instant::now();
    for s in 0..args.sessions {
        client
            .send_message(&format!("{name}{s}"), message)
            .await
            .unwrap();
    }
    let mut latencies: Vec<Duration> = Vec::new();
    for reader in readers {
        latencies.extend(reader.await.unwrap());
    }
    let elapsed = started.elapsed();
    latencies.sort();
    (latencies, elapsed)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() {
    let args = args();
    let data = tempfile::tempdir().unwrap();
    let server = start(ServerConfig {
        host: "127.0.0.1".into(),
        port: 0,
        http: HttpSettings::default(),
        sessions: SessionSettings::new(data.path().into(), data.path().into()),
        store: None,
        store_options: sandbox_daemon::store::StoreOptions::new(),
        provider_env: ProviderEnv::default(),
        locator: BinaryLocator::new(HashMap::new(), None, None),
        executable: None,
        install: None,
        auto_install: false,
        shutdown_timeout: sandbox_daemon::server::DEFAULT_SHUTDOWN_TIMEOUT,
    })
    .await
    .unwrap();
    let client = Client::new(&server.url(), None).unwrap();
    println!(
        "sessions={} events/session≈{} readers/session={}",
        args.sessions, args.events, args.readers
    );
    let flood = format!("flood {}", args.events);
    let (latencies, elapsed) = phase(&client, &args, "flood", &flood).await;
    println!(
        "saturated: delivered {} deltas in {:.3}s: {:.0} deltas/s",
        latencies.len(),
        elapsed.as_secs_f64(),
        latencies.len() as f64 / elapsed.as_secs_f64()
    );
    report("saturated", &latencies);
    // Paced: the mock's `slow` script appends a delta every 20 ms, so readers are never behind.
    let (latencies, _) = phase(&client, &args, "paced", "slow").await;
    report("paced (50 events/s/session)", &latencies);
    server.stop().await.unwrap();
}
