//! The peer the `versus` bench compares against: the closest existing product's published
//! binary (`scripts/install-peer.sh` installs it from npm), run as its users run it
//! (`server --no-token`, its built-in mock agent), and the two servers' mock turns spoken
//! with the same bare client. Only the binary is used; nothing of its code is read.
//! Included with `#[path]` (a bench is its own crate).
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::wire::{Conn, Sse};

type BenchResult<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The variable that carries the installed peer binary into the bench's namespace.
pub const PEER_BIN_VAR: &str = "SANDBOX_PEER_BIN";

/// Installs the peer (cached) with `scripts/install-peer.sh`; answers its binary.
pub fn install() -> BenchResult<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/install-peer.sh");
    let output = Command::new(&script).stderr(Stdio::inherit()).output()?;
    if !output.status.success() {
        return Err(format!("{} failed: {}", script.display(), output.status).into());
    }
    let path = String::from_utf8(output.stdout)?;
    Ok(PathBuf::from(path.trim()))
}

/// One of the two servers under measurement.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    /// The peer's binary.
    Peer,
    /// This daemon.
    Ours,
}

/// A server process started for measurement (killed when dropped).
pub struct Server {
    pub side: Side,
    pub child: Child,
    pub addr: SocketAddr,
}

impl Server {
    /// Starts `binary` of `side` on `port`, its state in `dir` (the peer's HOME, our data
    /// dir), with only `PATH` of this process's environment.
    pub fn spawn(side: Side, binary: &Path, dir: &Path, port: u16) -> BenchResult<Self> {
        let mut command = Command::new(binary);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let port = port.to_string();
        match side {
            Side::Peer => command
                .env("SANDBOX_AGENT_BIN", binary)
                .args(["server", "--no-token", "--no-telemetry", "-H", "127.0.0.1"])
                .args(["-p", &port]),
            Side::Ours => command
                .env("SANDBOX_DAEMON_LOG", "error")
                .args(["--no-token", "--host", "127.0.0.1", "--port", &port])
                .arg("--data-dir")
                .arg(dir.join("data")),
        };
        let child = command
            .spawn()
            .map_err(|e| format!("{}: {e}", binary.display()))?;
        Ok(Self {
            side,
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port.parse::<u16>()?)),
        })
    }

    /// The health route.
    pub fn health_path(&self) -> &'static str {
        match self.side {
            Side::Peer => "/v1/health",
            Side::Ours => "/health",
        }
    }

    /// Resident memory now, KiB (`VmRSS`).
    pub fn rss_kib(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    /// Of that, the process's own memory (`RssAnon`: heap, stacks), KiB; the rest is
    /// mapped files (its binary's and libraries' pages).
    pub fn anon_kib(&self) -> u64 {
        self.status_kib("RssAnon:")
    }

    fn status_kib(&self, field: &str) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(field))
                    .and_then(|v| v.split_whitespace().next()?.parse().ok())
            })
            .unwrap_or(0)
    }

    /// SIGTERM, then SIGKILL after 10 s (the benches' one way of stopping a child).
    pub fn stop(mut self) {
        super::daemon::stop(&mut self.child);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Prepares the peer's HOME: its built-in mock agent installed (as its docs say to).
pub fn prepare_peer_home(binary: &Path, home: &Path) -> BenchResult<()> {
    let status = Command::new(binary)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .args(["install-agent", "mock"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    if !status.success() {
        return Err(format!("the peer's `install-agent mock` failed: {status}").into());
    }
    Ok(())
}

/// A mock conversation kept open on one server: a connection for requests and the SSE
/// stream its events arrive on.
pub struct MockChat {
    side: Side,
    conn: Conn,
    sse: Sse,
    path: String,
    next_id: u64,
}

/// When a measured turn's first streamed text and its end reached the client, from the
/// moment its request was written.
pub struct TurnTimes {
    pub first_delta: std::time::Duration,
    pub ended: std::time::Duration,
}

impl MockChat {
    /// Opens a mock session on `server` (ours: a `mock` session; the peer: an ACP server
    /// of its `mock` agent, initialised, with a session) and its event stream.
    pub fn open(server: &Server, name: &str) -> BenchResult<Self> {
        let mut conn = Conn::connect(server.addr)?;
        let expect = |(status, body): (u16, Vec<u8>), what: &str| -> BenchResult<()> {
            if !(200..300).contains(&status) {
                return Err(format!("{what}: {status} {}", String::from_utf8_lossy(&body)).into());
            }
            Ok(())
        };
        match server.side {
            Side::Ours => {
                let path = format!("/sessions/{name}");
                expect(
                    conn.request("POST", &path, Some(br#"{"agent":"mock"}"#))?,
                    "creating a mock session",
                )?;
                let sse = Sse::open(server.addr, &format!("{path}/events/sse?offset=0"))?;
                let mut chat = Self {
                    side: Side::Ours,
                    conn,
                    sse,
                    path: format!("{path}/messages"),
                    next_id: 0,
                };
                chat.sse.until(b"event: sessionStarted")?;
                Ok(chat)
            }
            Side::Peer => {
                let path = format!("/v1/acp/{name}");
                let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#;
                expect(
                    conn.request("POST", &format!("{path}?agent=mock"), Some(init))?,
                    "initialising the peer's mock agent",
                )?;
                let sse = Sse::open(server.addr, &path)?;
                let new = br#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#;
                expect(
                    conn.request("POST", &path, Some(new))?,
                    "a session of the peer's mock agent",
                )?;
                let mut chat = Self {
                    side: Side::Peer,
                    conn,
                    sse,
                    path,
                    next_id: 3,
                };
                chat.sse.until(br#"data: {"id":2,"#)?;
                Ok(chat)
            }
        }
    }

    /// One mock turn: the prompt `hello` sent, its first streamed text and its end awaited
    /// on the event stream (ours: `itemDelta`, `turnEnded`; the peer: its mock's echo
    /// notification, then the prompt's result envelope), then the request's own answer.
    pub fn turn(&mut self) -> BenchResult<TurnTimes> {
        let (body, end_marker) = match self.side {
            Side::Ours => (
                br#"{"message":"hello"}"#.to_vec(),
                b"event: turnEnded".to_vec(),
            ),
            Side::Peer => {
                let id = self.next_id;
                self.next_id += 1;
                (
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"bench","prompt":[{{"type":"text","text":"hello"}}]}}}}"#
                    )
                    .into_bytes(),
                    format!(r#"data: {{"id":{id},"jsonrpc":"2.0","result""#).into_bytes(),
                )
            }
        };
        let delta_marker: &[u8] = match self.side {
            Side::Ours => b"event: itemDelta",
            Side::Peer => br#""method":"mock/echo""#,
        };
        let sent = std::time::Instant::now();
        self.conn.send("POST", &self.path, Some(&body))?;
        let first_delta = self.sse.until(delta_marker)? - sent;
        let ended = self.sse.until(&end_marker)? - sent;
        let (status, answer) = self.conn.response()?;
        if !(200..300).contains(&status) {
            return Err(format!(
                "{:?} turn: {status} {}",
                self.side,
                String::from_utf8_lossy(&answer)
            )
            .into());
        }
        Ok(TurnTimes { first_delta, ended })
    }
}
