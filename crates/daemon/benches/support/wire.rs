//! A bare HTTP/1.1 client over blocking sockets, for measuring servers rather than a client
//! library: one request per write, the answer read as it arrives, SSE streams scanned for a
//! marker without parsing JSON. The same code measures the daemon and the peer.
//! Included with `#[path]` (a bench is its own crate).
#![allow(dead_code)]

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long any single read may wait before the measurement fails.
const READ_LIMIT: Duration = Duration::from_secs(30);

/// One kept-alive connection.
pub struct Conn {
    stream: TcpStream,
    host: String,
    /// Bytes read but not yet consumed.
    pending: Vec<u8>,
}

impl Conn {
    /// Connects to `addr` (no Nagle delay, reads limited to 30 s).
    pub fn connect(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(READ_LIMIT))?;
        Ok(Self {
            stream,
            host: addr.to_string(),
            pending: Vec::with_capacity(16 * 1024),
        })
    }

    /// Writes one request (a JSON body when given) in a single write.
    pub fn send(&mut self, method: &str, path: &str, body: Option<&[u8]>) -> io::Result<()> {
        let mut request = format!("{method} {path} HTTP/1.1\r\nhost: {}\r\n", self.host);
        if let Some(body) = body {
            request.push_str(&format!(
                "content-type: application/json\r\ncontent-length: {}\r\n",
                body.len()
            ));
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body.unwrap_or_default());
        self.stream.write_all(&bytes)
    }

    /// Reads one answer: its status and body (`content-length` or chunked).
    pub fn response(&mut self) -> io::Result<(u16, Vec<u8>)> {
        let head_end = self.fill_until(|b| find(b, b"\r\n\r\n"))?;
        let head = String::from_utf8_lossy(&self.pending[..head_end]).to_ascii_lowercase();
        self.pending.drain(..head_end + 4);
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::other(format!("not an HTTP answer: {head:?}")))?;
        let header = |name: &str| {
            head.lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
        };
        let body = if let Some(length) = header("content-length:") {
            let length: usize = length.parse().map_err(io::Error::other)?;
            self.fill_until(|b| (b.len() >= length).then_some(length))?;
            self.pending.drain(..length).collect()
        } else if header("transfer-encoding:").is_some_and(|v| v.contains("chunked")) {
            self.chunked()?
        } else {
            Vec::new()
        };
        Ok((status, body))
    }

    /// `send` then `response`.
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
    ) -> io::Result<(u16, Vec<u8>)> {
        self.send(method, path, body)?;
        self.response()
    }

    fn chunked(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let line_end = self.fill_until(|b| find(b, b"\r\n"))?;
            let size = std::str::from_utf8(&self.pending[..line_end])
                .ok()
                .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
                .ok_or_else(|| io::Error::other("a malformed chunk size"))?;
            self.pending.drain(..line_end + 2);
            self.fill_until(|b| (b.len() >= size + 2).then_some(()))?;
            body.extend(self.pending.drain(..size));
            self.pending.drain(..2);
            if size == 0 {
                return Ok(body);
            }
        }
    }

    /// Reads until `found` finds something in what is pending; answers it.
    fn fill_until<T>(&mut self, found: impl Fn(&[u8]) -> Option<T>) -> io::Result<T> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(value) = found(&self.pending) {
                return Ok(value);
            }
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.pending.extend_from_slice(&chunk[..n]);
        }
    }
}

/// An open SSE stream, scanned for markers.
pub struct Sse {
    conn: Conn,
}

impl Sse {
    /// `GET path` with `accept: text/event-stream`; fails unless the answer is 200.
    pub fn open(addr: SocketAddr, path: &str) -> io::Result<Self> {
        let mut conn = Conn::connect(addr)?;
        let request = format!(
            "GET {path} HTTP/1.1\r\nhost: {}\r\naccept: text/event-stream\r\n\r\n",
            conn.host
        );
        conn.stream.write_all(request.as_bytes())?;
        let head_end = conn.fill_until(|b| find(b, b"\r\n\r\n"))?;
        let head = String::from_utf8_lossy(&conn.pending[..head_end]).into_owned();
        if !head.starts_with("HTTP/1.1 200") {
            return Err(io::Error::other(format!("SSE refused: {head}")));
        }
        conn.pending.drain(..head_end + 4);
        Ok(Self { conn })
    }

    /// Reads until `marker` arrives; answers when the read that brought it returned, and
    /// drops everything up to the marker's end.
    pub fn until(&mut self, marker: &[u8]) -> io::Result<Instant> {
        let mut chunk = [0u8; 64 * 1024];
        let mut arrived = Instant::now();
        loop {
            if let Some(at) = find(&self.conn.pending, marker) {
                self.conn.pending.drain(..at + marker.len());
                return Ok(arrived);
            }
            // Keep only a marker's length of what was scanned.
            let keep = self.conn.pending.len().saturating_sub(marker.len());
            self.conn.pending.drain(..keep);
            let n = self.conn.stream.read(&mut chunk)?;
            arrived = Instant::now();
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.conn.pending.extend_from_slice(&chunk[..n]);
        }
    }
}

/// Where `needle` first occurs in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Polls `GET path` on `addr` until it answers 200 (a refused connection is retried at
/// once); answers when it did, or `None` after `limit`.
pub fn first_ok(addr: SocketAddr, path: &str, limit: Duration) -> Option<Instant> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(mut conn) = Conn::connect(addr)
            && let Ok((200, _)) = conn.request("GET", path, None)
        {
            return Some(Instant::now());
        }
        std::thread::sleep(Duration::from_micros(50));
    }
    None
}

/// A free loopback port (bound, then released for the server to take).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}
