//! Serving connections: HTTP/1.1 and HTTP/2 over hyper, with the timeouts that keep a
//! stalled or silent client from holding a connection for ever, and graceful shutdown.
//!
//! - the request head must arrive within the header-read timeout (also the limit an idle
//!   keep-alive connection waits for its next request);
//! - a connection on which no byte moves either way for the idle timeout is closed (SSE
//!   keep-alives count, so streams stay open for hours);
//! - request bodies must arrive within the body timeout (`extract.rs`, 408 problem).
//!
//! Every error answer is problem details, those made before the application runs too.
//! Heads up to [`MAX_HEAD_BYTES`] with up to [`MAX_HEADER_FIELDS`] fields reach the
//! application, which refuses long URLs (414) and large headers (431) itself (`guard.rs`).
//! What hyper refuses on HTTP/1 — a head it cannot parse (400 `malformed-request`), a
//! well-formed HTTP version other than 1.0 and 1.1 (505), a `Content-Length` or
//! `Transfer-Encoding` it cannot frame (400 `invalid-framing`), a URL over its 64 KiB or a
//! head over its limits (414, 431) — it would answer with a bare status: [`LastWord`]
//! keeps that off the wire and hands the socket back, and `refusal.rs` answers with
//! problem details and `Connection: close` instead. A head that has started to arrive but
//! does not complete within the header-read timeout gets 408 `request-timeout` the same
//! way (an idle keep-alive connection is closed without a word). A malformed chunked body
//! is the application's 400 `invalid-framing` (`extract.rs`). On HTTP/2, hyper's header
//! limit is the same [`MAX_HEAD_BYTES`], so heads the application refuses reach it; a
//! header block over that is refused by the h2 library with a bare 431 (and malformed
//! frames or requests with a stream or connection reset, not a response).

mod idle;
mod last_word;
mod refusal;

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower_service::Service;

pub use idle::IdleTimeout;
use last_word::LastWord;

use crate::guard::MAX_HEADER_FIELDS;

/// Largest request head hyper buffers (HTTP/1) or decodes (HTTP/2); larger ones are
/// refused before the application runs.
pub const MAX_HEAD_BYTES: usize = 2 << 20;

/// Connection timeouts.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionTimeouts {
    /// The request head must arrive within this (and an idle keep-alive connection waits
    /// this long for its next request).
    pub header_read: Duration,
    /// A connection with no byte moving either way this long is closed.
    pub idle: Duration,
}

impl Default for ConnectionTimeouts {
    fn default() -> Self {
        Self {
            header_read: Duration::from_secs(30),
            idle: Duration::from_secs(120),
        }
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then stops accepting and waits for
/// the open connections to finish (the caller bounds that wait).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    timeouts: ConnectionTimeouts,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(timeouts.header_read)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADER_FIELDS);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(MAX_HEAD_BYTES as u32)
        .keep_alive_interval(Some(timeouts.idle / 2))
        .keep_alive_timeout(timeouts.header_read);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of descriptors or memory: wait instead of spinning.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let (io, mut handback) = LastWord::new(IdleTimeout::new(stream, timeouts.idle));
        let service = TowerToHyperService::new(ServiceFn(app.clone()));
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(io), service)
            .into_owned();
        let connection = graceful.watch(connection);
        let header_read = timeouts.header_read;
        tokio::spawn(async move {
            let ended = connection.await;
            if let Err(error) = &ended {
                tracing::debug!(%error, "a connection ended with an error");
            }
            // The connection (and with it the I/O) is dropped by now: the socket is back,
            // unless an upgrade took it.
            let Ok(handback) = handback.try_recv() else {
                return;
            };
            let problem = ended
                .err()
                .and_then(|error| refusal::problem(error.as_ref(), &handback, header_read));
            refusal::finish(handback, problem).await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The router as a service of hyper's requests.
#[derive(Clone)]
struct ServiceFn(Router);

impl Service<Request<hyper::body::Incoming>> for ServiceFn {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = <Router as Service<Request<Body>>>::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        Service::<Request<Body>>::poll_ready(&mut self.0, cx)
    }

    fn call(&mut self, request: Request<hyper::body::Incoming>) -> Self::Future {
        self.0.call(request.map(Body::new))
    }
}
