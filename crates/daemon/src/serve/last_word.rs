//! Keeping hyper's bare refusals off the wire. hyper answers an HTTP/1 request head it
//! cannot take — unparseable, with a `Content-Length` or `Transfer-Encoding` it cannot
//! frame, a URL or head over its limits — with a status line, `connection: close`,
//! `content-length: 0` and a `date`, and nothing else (`Server::on_error` in hyper's
//! `proto/h1/role.rs`), then shuts the connection down and returns the parse error.
//!
//! [`LastWord`] wraps a connection's I/O. When what hyper writes ends with exactly such an
//! answer, it writes what came before, keeps the answer back and leaves the socket open at
//! hyper's shutdown; when hyper lets go of the I/O, the socket, the kept-back answer and
//! whether a request head was arriving are handed back ([`Handback`]) to the connection's
//! task, which answers with problem details instead (`refusal.rs`) or, if the connection
//! did not end with the parse error that answer belongs to, sends it as it was. So nothing
//! is lost either way: the daemon's own answers never look like that (each error it makes
//! is problem details with a body, and its bodies — JSON and SSE frames — never contain a
//! carriage return), and one that did would only be sent at the end of its connection.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::oneshot;

/// The longest answer hyper writes for a refused head.
const MAX_REFUSAL_BYTES: usize = 192;

/// The statuses hyper answers refused heads with.
const REFUSAL_STATUSES: [u16; 3] = [400, 414, 431];

/// A connection's I/O, minus hyper's bare refusal (see the module documentation).
pub struct LastWord<S> {
    inner: Option<S>,
    /// hyper's refusal, kept back.
    held: Option<Refusal>,
    /// Bytes written to `inner` before anything else: a kept-back answer that turned out
    /// not to be a refusal.
    pending: Vec<u8>,
    /// Bytes arrived since the last bytes went out: a request (head) is arriving.
    unanswered: bool,
    /// Bytes arrived since the last bytes went out, none of them a line feed: the request
    /// line has not ended.
    line_open: bool,
    /// The end of the first line that arrived since the last bytes went out (the request
    /// line: its last bytes name the HTTP version).
    line_end: Vec<u8>,
    handback: Option<oneshot::Sender<Handback<S>>>,
}

/// hyper's answer to a head it refused, as it wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Its status: 400, 414 or 431.
    pub status: u16,
    /// The bytes hyper wrote.
    pub bytes: Vec<u8>,
}

/// What [`LastWord`] hands back when hyper lets go of the connection.
pub struct Handback<S> {
    /// The connection.
    pub stream: S,
    /// Bytes hyper wrote that are still to be sent (a kept-back answer that was not a
    /// refusal, when hyper let go before they could go out).
    pub unsent: Vec<u8>,
    /// hyper's refusal, not sent.
    pub refusal: Option<Refusal>,
    /// Whether bytes had arrived since the daemon last wrote: a head was arriving.
    pub unanswered: bool,
    /// Whether none of those bytes ended a line: the request line had not ended.
    pub line_open: bool,
    /// The last bytes (at most [`LINE_END_BYTES`]) of the first line among them, without
    /// its line break.
    pub line_end: Vec<u8>,
}

/// How much of a request line's end [`Handback::line_end`] keeps.
pub const LINE_END_BYTES: usize = 32;

impl<S> LastWord<S> {
    /// Wraps `inner`; the receiver gets it back when the wrapper is dropped.
    pub fn new(inner: S) -> (Self, oneshot::Receiver<Handback<S>>) {
        let (sender, receiver) = oneshot::channel();
        let wrapper = Self {
            inner: Some(inner),
            held: None,
            pending: Vec::new(),
            unanswered: false,
            line_open: false,
            line_end: Vec::new(),
            handback: Some(sender),
        };
        (wrapper, receiver)
    }

    fn inner(&mut self) -> Pin<&mut S>
    where
        S: Unpin,
    {
        Pin::new(self.inner.as_mut().expect("present until dropped"))
    }
}

impl<S> Drop for LastWord<S> {
    fn drop(&mut self) {
        if let (Some(stream), Some(handback)) = (self.inner.take(), self.handback.take()) {
            let _ = handback.send(Handback {
                stream,
                unsent: std::mem::take(&mut self.pending),
                refusal: self.held.take(),
                unanswered: self.unanswered,
                line_open: self.line_open,
                line_end: self
                    .line_end
                    .split_off(self.line_end.len().saturating_sub(LINE_END_BYTES)),
            });
        }
    }
}

impl<S: AsyncWrite + Unpin> LastWord<S> {
    /// Writes out `pending` (a kept-back answer that was not a refusal) first.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            let written = self.inner().poll_write(cx, &pending);
            self.pending = pending;
            match written {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    self.answered();
                    self.pending.drain(..n);
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Writes `bufs` (`total` bytes), keeping back a refusal hyper put at their end.
    fn write(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
        total: usize,
    ) -> Poll<io::Result<usize>> {
        if let Some(held) = self.held.take() {
            // hyper wrote on: what was kept back was not its last word after all.
            self.pending = held.bytes;
        }
        ready!(self.poll_pending(cx))?;
        // Every refusal ends a head; most writes (bodies, SSE frames) do not.
        let last_byte = bufs.iter().rev().find_map(|b| b.last());
        if last_byte != Some(&b'\n') {
            return self.written(cx, bufs);
        }
        let tail = tail(bufs, MAX_REFUSAL_BYTES.min(total));
        let Some((at, status)) = refusal_at_end(&tail) else {
            return self.written(cx, bufs);
        };
        let start = total - (tail.len() - at);
        if start > 0 {
            let before = truncate(bufs, start);
            let n = ready!(self.written(cx, &before))?;
            if n < start {
                return Poll::Ready(Ok(n));
            }
        }
        self.held = Some(Refusal {
            status,
            bytes: tail[at..].to_vec(),
        });
        Poll::Ready(Ok(total))
    }

    fn written(&mut self, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
        let written = if bufs.len() == 1 {
            self.inner().poll_write(cx, &bufs[0])
        } else {
            self.inner().poll_write_vectored(cx, bufs)
        };
        if let Poll::Ready(Ok(n)) = written
            && n > 0
        {
            self.answered();
        }
        written
    }
}

impl<S> LastWord<S> {
    fn answered(&mut self) {
        self.unanswered = false;
        self.line_open = false;
    }

    fn received(&mut self, bytes: &[u8]) {
        if !self.unanswered {
            self.unanswered = true;
            self.line_open = true;
            self.line_end.clear();
        }
        if !self.line_open {
            return;
        }
        let line = match bytes.iter().position(|&b| b == b'\n') {
            Some(end) => {
                self.line_open = false;
                &bytes[..end]
            }
            None => bytes,
        };
        self.line_end.extend_from_slice(line);
        if !self.line_open && self.line_end.last() == Some(&b'\r') {
            self.line_end.pop();
        }
        // One more while the line is open: it may end with the `\r` of its line break.
        let keep = LINE_END_BYTES + usize::from(self.line_open);
        let excess = self.line_end.len().saturating_sub(keep);
        self.line_end.drain(..excess);
    }
}

/// The last `n` bytes of `bufs`.
fn tail(bufs: &[IoSlice<'_>], n: usize) -> Vec<u8> {
    let mut tail = Vec::with_capacity(n);
    let mut left = n;
    for buf in bufs.iter().rev() {
        if left == 0 {
            break;
        }
        let take = left.min(buf.len());
        tail.splice(0..0, buf[buf.len() - take..].iter().copied());
        left -= take;
    }
    tail
}

/// The first `n` bytes of `bufs`.
fn truncate<'a>(bufs: &'a [IoSlice<'a>], n: usize) -> Vec<IoSlice<'a>> {
    let mut out = Vec::with_capacity(bufs.len());
    let mut left = n;
    for buf in bufs {
        if left == 0 {
            break;
        }
        let take = left.min(buf.len());
        out.push(IoSlice::new(&buf[..take]));
        left -= take;
    }
    out
}

/// Where hyper's refusal starts in `tail` and its status, when `tail` ends with one: a
/// complete response head with one of hyper's refusal statuses whose only headers are
/// `connection: close`, `content-length: 0` and perhaps `date`.
fn refusal_at_end(tail: &[u8]) -> Option<(usize, u16)> {
    if !tail.ends_with(b"\r\n\r\n") {
        return None;
    }
    let at = tail.windows(7).rposition(|w| w == b"HTTP/1.")?;
    let head = &tail[at..];
    let mut headers = [httparse::EMPTY_HEADER; 4];
    let mut response = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(len)) = response.parse(head) else {
        return None;
    };
    let status = response.code?;
    if len != head.len() || !REFUSAL_STATUSES.contains(&status) {
        return None;
    }
    let (mut close, mut empty) = (false, false);
    for header in response.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("connection") && header.value == b"close" {
            close = true;
        } else if name.eq_ignore_ascii_case("content-length") && header.value == b"0" {
            empty = true;
        } else if !name.eq_ignore_ascii_case("date") {
            return None;
        }
    }
    (close && empty).then_some((at, status))
}

impl<S: AsyncRead + Unpin> AsyncRead for LastWord<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = this.inner().poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = read
            && buf.filled().len() > before
        {
            this.received(&buf.filled()[before..]);
        }
        read
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for LastWord<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().write(cx, &[IoSlice::new(data)], data.len())
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let total = bufs.iter().map(|b| b.len()).sum();
        self.get_mut().write(cx, bufs, total)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.as_ref().is_some_and(S::is_write_vectored)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        this.inner().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.held.is_some() {
            // The connection's task answers, then shuts the connection down.
            return Poll::Ready(Ok(()));
        }
        ready!(this.poll_pending(cx))?;
        this.inner().poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const REFUSAL: &[u8] = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\ndate: Thu, 26 Nov 2026 14:03:32 GMT\r\n\r\n";

    #[test]
    fn only_hyper_s_bare_refusal_is_recognized() {
        assert_eq!(refusal_at_end(REFUSAL), Some((0, 400)));
        let after_a_response =
            [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}", REFUSAL].concat();
        assert_eq!(refusal_at_end(&after_a_response), Some((40, 400)));
        for other in [
            // An answer of the daemon's own: a body, a content type.
            &b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"[..],
            // Not a refusal status.
            b"HTTP/1.1 204 No Content\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
            // Keeps the connection open.
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n",
            // Not at the end.
            &[REFUSAL, b"x"].concat(),
            // A body.
            b"{\"detail\":\"HTTP/1.1 400\"}",
        ] {
            assert_eq!(refusal_at_end(other), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn tails_and_prefixes_span_slices() {
        let bufs = [
            IoSlice::new(b"abc"),
            IoSlice::new(b""),
            IoSlice::new(b"defg"),
        ];
        assert_eq!(tail(&bufs, 5), b"cdefg");
        assert_eq!(tail(&bufs, 7), b"abcdefg");
        let before: Vec<u8> = truncate(&bufs, 4).iter().flat_map(|b| b.to_vec()).collect();
        assert_eq!(before, b"abcd");
    }

    #[tokio::test]
    async fn the_refusal_is_kept_back_and_handed_back_with_the_socket() {
        let (client, server) = tokio::io::duplex(4096);
        let (mut wrapper, handback) = LastWord::new(server);
        let mut client = client;
        client.write_all(b"GARBAGE\r\n\r\n").await.unwrap();
        let mut request = [0u8; 11];
        wrapper.read_exact(&mut request).await.unwrap();
        let answer = [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}", REFUSAL].concat();
        wrapper.write_all(&answer).await.unwrap();
        wrapper.flush().await.unwrap();
        wrapper.shutdown().await.unwrap();
        drop(wrapper);
        let Handback {
            mut stream,
            unsent,
            refusal,
            unanswered,
            ..
        } = handback.await.unwrap();
        assert!(unsent.is_empty());
        assert_eq!(refusal.unwrap().status, 400);
        assert!(!unanswered);
        // The socket is still open: only what came before the refusal went out.
        stream.write_all(b"mine").await.unwrap();
        drop(stream);
        let mut seen = Vec::new();
        client.read_to_end(&mut seen).await.unwrap();
        assert_eq!(
            seen,
            [&answer[..answer.len() - REFUSAL.len()], b"mine"].concat()
        );
    }

    #[tokio::test]
    async fn what_follows_a_kept_back_answer_sends_it_first() {
        let (client, server) = tokio::io::duplex(4096);
        let (mut wrapper, handback) = LastWord::new(server);
        let mut client = client;
        wrapper.write_all(REFUSAL).await.unwrap();
        wrapper.write_all(b"more").await.unwrap();
        wrapper.shutdown().await.unwrap();
        drop(wrapper);
        let handback = handback.await.unwrap();
        assert!(handback.refusal.is_none() && handback.unsent.is_empty());
        drop(handback);
        let mut seen = Vec::new();
        client.read_to_end(&mut seen).await.unwrap();
        assert_eq!(seen, [REFUSAL, b"more"].concat());
    }

    #[tokio::test]
    async fn bytes_read_since_the_last_answer_are_a_head_arriving() {
        let (client, server) = tokio::io::duplex(4096);
        let (mut wrapper, handback) = LastWord::new(server);
        let mut client = client;
        client.write_all(b"GET /").await.unwrap();
        let mut bytes = [0u8; 5];
        wrapper.read_exact(&mut bytes).await.unwrap();
        client.write_all(b"x HTTP/1.1\r\n").await.unwrap();
        let mut bytes = [0u8; 12];
        wrapper.read_exact(&mut bytes).await.unwrap();
        wrapper.write_all(b"answer").await.unwrap();
        client.write_all(b"GET /").await.unwrap();
        let mut bytes = [0u8; 5];
        wrapper.read_exact(&mut bytes).await.unwrap();
        drop(wrapper);
        let handback = handback.await.unwrap();
        assert!(handback.unanswered && handback.line_open);
        assert_eq!(handback.line_end, b"GET /");
    }

    #[tokio::test]
    async fn the_end_of_the_request_line_is_kept() {
        let (client, server) = tokio::io::duplex(4096);
        let (mut wrapper, handback) = LastWord::new(server);
        let mut client = client;
        let request = format!("GET /{} HTTP/3.0\r\nHost: x\r\n", "a".repeat(100));
        client.write_all(request.as_bytes()).await.unwrap();
        let mut bytes = vec![0u8; request.len()];
        wrapper.read_exact(&mut bytes).await.unwrap();
        drop(wrapper);
        let handback = handback.await.unwrap();
        assert!(handback.unanswered && !handback.line_open);
        assert_eq!(
            handback.line_end,
            format!("{} HTTP/3.0", "a".repeat(23)).as_bytes()
        );
    }
}
