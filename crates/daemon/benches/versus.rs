//! The daemon side by side with the closest existing product's published binary (the
//! peer, `@sandbox-agent/cli-linux-x64`, installed from npm by `scripts/install-peer.sh`),
//! in one run, interleaved, measured by the same bare client:
//!
//! - start-up: process start → first `200` on the health route, p50 / p99 (ours on a fresh
//!   data dir and on one it has used before);
//! - idle RSS: resident memory 1 s after that first answer, and how much of it is the
//!   process's own (`RssAnon`; the rest is its binary's and libraries' mapped pages);
//! - mock turn: prompt sent → first streamed text, and → the turn's end, on the event
//!   stream (SSE), p50 / p99, one long-lived session each;
//! - health throughput: `GET` the health route over 32 kept-alive connections, requests/s
//!   (by `wrk -t2 -c32` when it is installed, else by the bench's own client).
//!
//! Each figure is printed for both with the ratio ours / peer (or peer / ours for
//! throughput: above 1 means ours is ahead). Medians and p99 are over interleaved samples so
//! both see the same machine.
//!
//! `cargo bench -p sandbox-daemon --bench versus -- [--starts 20] [--turns 2000]
//!  [--load-seconds 3] [--peer <binary>] [--daemon <binary>] [--smoke] [--no-netns]`
//!
//! `--smoke` runs every phase a few times (CI runs it on the debug build: no figures are
//! asserted). It re-executes itself in a loopback-only network namespace unless
//! `--no-netns`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[path = "support/daemon.rs"]
mod daemon;
#[path = "support/peer.rs"]
mod peer;
#[path = "support/wire.rs"]
mod wire;

use peer::{MockChat, Server, Side};

type BenchResult<T> = std::result::Result<T, Box<dyn std::error::Error>>;

struct Args {
    starts: usize,
    turns: usize,
    load: Duration,
    idle_wait: Duration,
    peer: PathBuf,
    daemon: PathBuf,
}

fn args(argv: &[String]) -> BenchResult<Args> {
    let smoke = argv.iter().any(|a| a == "--smoke");
    let mut args = Args {
        starts: if smoke { 2 } else { 20 },
        turns: if smoke { 5 } else { 2000 },
        load: Duration::from_secs_f64(if smoke { 0.2 } else { 3.0 }),
        idle_wait: Duration::from_millis(if smoke { 100 } else { 1000 }),
        peer: std::env::var_os(peer::PEER_BIN_VAR)
            .map(PathBuf::from)
            .ok_or("the peer's binary was not installed")?,
        daemon: PathBuf::from(env!("CARGO_BIN_EXE_sandbox-daemon")),
    };
    for pair in argv.windows(2) {
        let number = || pair[1].parse::<f64>();
        match pair[0].as_str() {
            "--starts" => args.starts = number()? as usize,
            "--turns" => args.turns = number()? as usize,
            "--load-seconds" => args.load = Duration::from_secs_f64(number()?),
            "--peer" => args.peer = pair[1].clone().into(),
            "--daemon" => args.daemon = pair[1].clone().into(),
            _ => {}
        }
    }
    Ok(args)
}

/// Samples of one figure for both sides.
#[derive(Default)]
struct Pair {
    peer: Vec<f64>,
    ours: Vec<f64>,
}

impl Pair {
    fn push(&mut self, side: Side, value: f64) {
        match side {
            Side::Peer => self.peer.push(value),
            Side::Ours => self.ours.push(value),
        }
    }

    /// One line: both medians (and p99 when `tail`), and ours / peer of the medians.
    fn print(&self, what: &str, unit: &str, tail: bool) {
        let [peer_p50, peer_p99, _] = daemon::summary(&self.peer);
        let [ours_p50, ours_p99, _] = daemon::summary(&self.ours);
        let p99 = |v: f64| {
            if tail {
                format!(" (p99 {v:.3})")
            } else {
                String::new()
            }
        };
        println!(
            "{what:<44} peer {peer_p50:>9.3}{}  ours {ours_p50:>9.3}{} {unit}  ours/peer {:.2}×",
            p99(peer_p99),
            p99(ours_p99),
            ours_p50 / peer_p50
        );
    }
}

/// Start-up and idle memory: each round starts the peer, ours on a fresh data dir and ours
/// on the data dir of its previous round, in turn.
fn starts(args: &Args, peer_home: &std::path::Path) -> BenchResult<()> {
    let mut first_ok = Pair::default();
    let mut restart_ok = Vec::new();
    let mut rss = Pair::default();
    let mut anon = Pair::default();
    let used = tempfile::tempdir()?;
    for round in 0..args.starts {
        for (side, fresh) in [(Side::Peer, false), (Side::Ours, true), (Side::Ours, false)] {
            let fresh_dir = tempfile::tempdir()?;
            let (binary, dir) = match (side, fresh) {
                (Side::Peer, _) => (&args.peer, peer_home),
                (Side::Ours, true) => (&args.daemon, fresh_dir.path()),
                (Side::Ours, false) => (&args.daemon, used.path()),
            };
            let port = wire::free_port();
            let started = Instant::now();
            let server = Server::spawn(side, binary, dir, port)?;
            let answered =
                wire::first_ok(server.addr, server.health_path(), Duration::from_secs(10))
                    .ok_or_else(|| {
                        format!("{side:?} did not answer its health route within 10 s")
                    })?;
            let ms = (answered - started).as_secs_f64() * 1e3;
            if side == Side::Ours && !fresh {
                // The first round's "used" dir is new: count it from the second.
                if round > 0 || args.starts == 1 {
                    restart_ok.push(ms);
                }
            } else {
                first_ok.push(side, ms);
            }
            if fresh || side == Side::Peer {
                std::thread::sleep(args.idle_wait);
                rss.push(side, server.rss_kib() as f64 / 1024.0);
                anon.push(side, server.anon_kib() as f64 / 1024.0);
            }
            server.stop();
        }
    }
    first_ok.print("start → first 200 on health (ours: fresh dir)", "ms", true);
    let [p50, p99, _] = daemon::summary(&restart_ok);
    println!(
        "{:<44} {:>14} ours {p50:>9.3} (p99 {p99:.3}) ms  ours/peer {:.2}×",
        "  … ours on a data dir used before",
        "",
        p50 / daemon::summary(&first_ok.peer)[0]
    );
    rss.print(
        &format!("idle RSS {:?} after the first answer", args.idle_wait),
        "MiB",
        false,
    );
    anon.print("  … of which its own memory (RssAnon)", "MiB", false);
    Ok(())
}

/// Mock turns, alternating between the two servers.
fn turns(args: &Args, peer_home: &std::path::Path) -> BenchResult<()> {
    let ours_dir = tempfile::tempdir()?;
    let servers = [
        Server::spawn(Side::Peer, &args.peer, peer_home, wire::free_port())?,
        Server::spawn(Side::Ours, &args.daemon, ours_dir.path(), wire::free_port())?,
    ];
    let mut chats = Vec::new();
    for server in &servers {
        wire::first_ok(server.addr, server.health_path(), Duration::from_secs(10))
            .ok_or("a server did not start")?;
        chats.push(MockChat::open(server, "bench")?);
    }
    // Warm both up (connections, the peer's agent process, our session's agent).
    for chat in &mut chats {
        for _ in 0..args.turns.min(50) {
            chat.turn()?;
        }
    }
    let mut first = Pair::default();
    let mut ended = Pair::default();
    for _ in 0..args.turns {
        for (chat, server) in chats.iter_mut().zip(&servers) {
            let times = chat.turn()?;
            first.push(server.side, times.first_delta.as_secs_f64() * 1e3);
            ended.push(server.side, times.ended.as_secs_f64() * 1e3);
        }
    }
    println!("mock turns, {} each, interleaved:", args.turns);
    first.print("  send → first streamed text on SSE", "ms", true);
    ended.print("  send → turn ended on SSE", "ms", true);
    let mut rss = Pair::default();
    for server in &servers {
        rss.push(server.side, server.rss_kib() as f64 / 1024.0);
    }
    rss.print("  RSS after the turns", "MiB", false);
    drop(chats);
    for server in servers {
        server.stop();
    }
    Ok(())
}

/// Requests per second of `GET path` over `connections` kept-alive connections for
/// `duration` (a multi-threaded client using both cores, like wrk).
async fn load(
    addr: std::net::SocketAddr,
    path: &'static str,
    connections: usize,
    duration: Duration,
) -> BenchResult<f64> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let request = format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\n\r\n").into_bytes();
    let deadline = tokio::time::Instant::now() + duration;
    let tasks: Vec<_> = (0..connections)
        .map(|_| {
            let request = request.clone();
            tokio::spawn(async move {
                let mut stream = tokio::net::TcpStream::connect(addr).await?;
                stream.set_nodelay(true)?;
                let mut buf = Vec::with_capacity(4096);
                let mut chunk = [0u8; 4096];
                let mut done = 0u64;
                while tokio::time::Instant::now() < deadline {
                    stream.write_all(&request).await?;
                    loop {
                        if let Some(end) = wire::find(&buf, b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                            let length: usize = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse().ok())
                                .ok_or_else(|| std::io::Error::other("no content-length"))?;
                            if buf.len() >= end + 4 + length {
                                if !head.starts_with("http/1.1 200") {
                                    return Err(std::io::Error::other(head));
                                }
                                buf.drain(..end + 4 + length);
                                break;
                            }
                        }
                        let n = stream.read(&mut chunk).await?;
                        if n == 0 {
                            return Err(std::io::ErrorKind::UnexpectedEof.into());
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    done += 1;
                }
                Ok::<u64, std::io::Error>(done)
            })
        })
        .collect();
    let started = Instant::now();
    let mut total = 0;
    for task in tasks {
        total += task.await??;
    }
    Ok(total as f64 / started.elapsed().as_secs_f64())
}

/// Requests per second of `GET path` by `wrk` (2 threads, 32 connections), if it is
/// installed (`None` when it is not).
fn wrk(addr: std::net::SocketAddr, path: &str, duration: Duration) -> BenchResult<Option<f64>> {
    let seconds = duration.as_secs().max(1);
    let output = match std::process::Command::new("wrk")
        .args(["-t2", "-c32", &format!("-d{seconds}s")])
        .arg(format!("http://{addr}{path}"))
        .output()
    {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let text = String::from_utf8_lossy(&output.stdout);
    if text.contains("Non-2xx") || text.contains("Socket errors") {
        return Err(format!("wrk saw errors: {text}").into());
    }
    let rate = text
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("wrk printed no rate: {text}"))?;
    Ok(Some(rate))
}

/// Health throughput, peer and ours in turn, twice each: by `wrk` when it is installed
/// (whole seconds), else by the bench's own client.
async fn throughput(args: &Args, peer_home: &std::path::Path) -> BenchResult<()> {
    let ours_dir = tempfile::tempdir()?;
    let servers = [
        Server::spawn(Side::Peer, &args.peer, peer_home, wire::free_port())?,
        Server::spawn(Side::Ours, &args.daemon, ours_dir.path(), wire::free_port())?,
    ];
    for server in &servers {
        wire::first_ok(server.addr, server.health_path(), Duration::from_secs(10))
            .ok_or("a server did not start")?;
    }
    let mut rates = Pair::default();
    let mut client = "wrk -t2 -c32";
    for _ in 0..2 {
        for server in &servers {
            let by_wrk = match client {
                "wrk -t2 -c32" => wrk(server.addr, server.health_path(), args.load)?,
                _ => None,
            };
            let rate = match by_wrk {
                Some(rate) => rate,
                None => {
                    client = "the bench's client, 32 connections";
                    load(server.addr, server.health_path(), 32, args.load).await?
                }
            };
            rates.push(server.side, rate / 1e3);
        }
    }
    let [peer, _, _] = daemon::summary(&rates.peer);
    let [ours, _, _] = daemon::summary(&rates.ours);
    println!(
        "{:<44} peer {peer:>9.1}  ours {ours:>9.1} k req/s  ours/peer {:.2}×",
        format!("health req/s, {client}, {:?} × 2", args.load),
        ours / peer
    );
    for server in servers {
        server.stop();
    }
    Ok(())
}

async fn run(argv: Vec<String>) -> BenchResult<()> {
    let args = args(&argv)?;
    let peer_home = tempfile::tempdir()?;
    peer::prepare_peer_home(&args.peer, peer_home.path())?;
    println!(
        "versus: {} cores; peer {} ; ours {}{}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        args.peer.display(),
        args.daemon.display(),
        if sandbox_testkit::netns::inside() {
            " (loopback-only namespace)"
        } else {
            " (NOT isolated: --no-netns)"
        }
    );
    let home = peer_home.path().to_path_buf();
    let args = std::sync::Arc::new(args);
    let blocking = {
        let (args, home) = (args.clone(), home.clone());
        tokio::task::spawn_blocking(move || -> Result<(), String> {
            starts(&args, &home).map_err(|e| e.to_string())?;
            turns(&args, &home).map_err(|e| e.to_string())
        })
    };
    blocking.await??;
    throughput(&args, &home).await
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let given = argv.iter().any(|a| a == "--peer");
    if !sandbox_testkit::netns::inside() && !given && argv.iter().any(|a| a == "--bench") {
        // Installed outside the namespace (npm needs its registry), handed in by variable.
        match peer::install() {
            // SAFETY: single-threaded here; nothing else reads the environment yet.
            Ok(path) => unsafe { std::env::set_var(peer::PEER_BIN_VAR, path) },
            Err(e) => {
                eprintln!("versus: installing the peer failed: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    daemon::isolated_main("versus", |argv| async move { run(argv).await })
}
