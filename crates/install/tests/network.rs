//! The network's patience, against loopback servers that misbehave on purpose: a host that
//! accepts connections and never answers, and one whose connection queue is full (its SYNs
//! are dropped, as by a firewall), fail the install within the answer budget with a message
//! naming the host and the ways out; a download that trickles for longer than that budget,
//! but never stalls, completes; one that stalls is cut off.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use sandbox_agents::release::ReleaseHost;
use sandbox_install::fetch::Fetcher;
use sandbox_install::{InstallConfig, InstallError, Installer};
use sandbox_universal::AgentId;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback server that accepts every connection and never sends a byte (connections
/// are held open until the server is dropped).
struct Silent {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Silent {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        });
        Self { addr, task }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The default configuration with every official host replaced by `url`.
fn every_host(dir: &Path, url: &str) -> InstallConfig {
    let mut config = InstallConfig::new(dir.to_path_buf());
    for host in ReleaseHost::ALL {
        config.hosts.insert(host, url.to_string());
    }
    config.npm_registry = Some(format!("{url}/npm"));
    config
}

fn assert_names_host_and_ways_out(error: &InstallError, host: &str, path_var: &str) {
    assert!(matches!(error, InstallError::NoAnswer { .. }), "{error}");
    assert_eq!(error.reason(), "noAnswer");
    let message = error.to_string();
    for part in [
        &format!("{host} did not answer"),
        "--install-mirror",
        "SANDBOX_DAEMON_INSTALL_MIRROR",
        path_var,
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
}

/// The defaults: a host that accepts and never answers fails an install after the 8 s
/// answer budget (retries included), not minutes later.
#[tokio::test]
async fn a_host_that_never_answers_fails_the_install_within_the_budget() {
    let silent = Silent::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = every_host(dir.path(), &silent.url());
    let budget = config.answer_timeout;
    assert_eq!(budget, Duration::from_secs(8));
    let installer = Installer::new(config);
    for agent in [AgentId::Claude, AgentId::Pi] {
        let started = Instant::now();
        let error = installer
            .install(agent, None, false, &|_| {})
            .await
            .unwrap_err();
        let took = started.elapsed();
        eprintln!(
            "{} against a silent host: failed after {took:?}: {error}",
            agent.as_str()
        );
        assert!(
            took >= budget - Duration::from_millis(100) && took < budget + Duration::from_secs(2),
            "{took:?}"
        );
        let var = sandbox_agents::manifest::spec(agent).path_var();
        assert_names_host_and_ways_out(&error, &silent.addr.to_string(), &var);
        assert!(error.to_string().contains("within 8 s"), "{error}");
    }
}

/// A listener whose connection queue is full: the kernel drops new SYNs, as a firewall
/// dropping packets would. Answers it, with the connections that fill it.
fn dropping() -> (std::net::TcpListener, Vec<TcpStream>) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind((Ipv4Addr::LOCALHOST, 0).into()).unwrap();
    let listener = socket.listen(1).unwrap().into_std().unwrap();
    let addr = listener.local_addr().unwrap();
    let mut filling = Vec::new();
    for _ in 0..16 {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
            Ok(stream) => filling.push(stream),
            Err(_) => return (listener, filling),
        }
    }
    panic!("the listen queue of {addr} never filled");
}

/// Packets dropped: each connection attempt times out (4 s), a fresh one follows, and the
/// install fails when the 8 s answer budget is spent.
#[tokio::test]
async fn a_host_dropping_packets_fails_the_install_within_the_budget() {
    let (listener, _filling) = dropping();
    let addr = listener.local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = every_host(dir.path(), &format!("http://{addr}"));
    let budget = config.answer_timeout;
    let installer = Installer::new(config);
    let started = Instant::now();
    let error = installer
        .install(AgentId::Codex, Some("latest"), false, &|_| {})
        .await
        .unwrap_err();
    let took = started.elapsed();
    eprintln!("codex against a host dropping packets: failed after {took:?}: {error}");
    assert!(
        took >= budget - Duration::from_millis(100) && took < budget + Duration::from_secs(2),
        "{took:?}"
    );
    assert_names_host_and_ways_out(&error, &addr.to_string(), "SANDBOX_DAEMON_CODEX_PATH");
}

/// A loopback server answering every request with `len` bytes, sent in `chunks` pieces
/// `gap` apart after the head.
async fn trickle(
    len: usize,
    chunks: usize,
    gap: Duration,
) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let url = format!("http://{}/file", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {len}\r\ncontent-type: application/octet-stream\r\n\r\n"
                );
                if stream.write_all(response.as_bytes()).await.is_err() {
                    return;
                }
                let piece = vec![b'x'; len / chunks];
                for _ in 0..chunks {
                    tokio::time::sleep(gap).await;
                    if stream.write_all(&piece).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, task)
}

fn quick(dir: &Path) -> InstallConfig {
    let mut config = InstallConfig::new(dir.to_path_buf());
    config.answer_timeout = Duration::from_secs(1);
    config.read_timeout = Duration::from_millis(800);
    config.retries = 0;
    config
}

/// A body that keeps coming (3.6 s in 300 ms steps) outlasts a 1 s answer budget and is
/// not cut off: only the wait for the answer and the gaps between bytes are bounded.
#[tokio::test]
async fn a_slow_download_that_keeps_coming_completes() {
    let (url, server) = trickle(12 * 4096, 12, Duration::from_millis(300)).await;
    let dir = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(&quick(dir.path()));
    let started = Instant::now();
    let got = fetcher
        .download(&url, &dir.path().join("file"), false, |_, _| {})
        .await
        .unwrap();
    let took = started.elapsed();
    eprintln!("a trickling 48 KiB download: done after {took:?}");
    assert_eq!(got.size, 12 * 4096);
    assert!(took > Duration::from_secs(3), "{took:?}");
    server.abort();
}

/// A body that stops for longer than the stall limit is a broken transfer.
#[tokio::test]
async fn a_download_that_stalls_is_cut_off() {
    let (url, server) = trickle(4 * 4096, 4, Duration::from_secs(3)).await;
    let dir = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(&quick(dir.path()));
    let started = Instant::now();
    let error = fetcher
        .download(&url, &dir.path().join("file"), false, |_, _| {})
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert!(matches!(error, InstallError::Network { .. }), "{error}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    server.abort();
}

/// A small document is its answer: a version file whose body does not arrive within the
/// budget fails as no answer, even though its head came at once.
#[tokio::test]
async fn a_document_whose_body_never_completes_is_no_answer() {
    let (url, server) = trickle(4 * 16, 4, Duration::from_millis(600)).await;
    let dir = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(&quick(dir.path()));
    let started = Instant::now();
    let error = fetcher.text(&url).await.unwrap_err();
    let took = started.elapsed();
    assert!(matches!(error, InstallError::NoAnswer { .. }), "{error}");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(2),
        "{took:?}"
    );
    server.abort();
}
