//! Serving connections: HTTP/1.1 and HTTP/2 over hyper, with the timeouts that keep a
//! stalled or silent client from holding a connection for ever, and graceful shutdown.
//!
//! - the request head must arrive within the header-read timeout (also the limit an idle
//!   keep-alive connection waits for its next request);
//! - a connection on which no byte moves either way for the idle timeout is closed (SSE
//!   keep-alives count, so streams stay open for hours);
//! - request bodies must arrive within the body timeout (`extract.rs`, 408 problem).
//!
//! What hyper answers itself before the application runs — a request head it cannot
//! parse (400) or larger than [`MAX_HEAD_BYTES`] (431) — has an empty body: there is no
//! hook for it. Heads up to that size reach the application, which refuses long URIs (414)
//! and large headers (431) with problem details.

mod idle;

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

/// Largest request head hyper buffers; larger ones get hyper's bare 431.
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
        .max_buf_size(MAX_HEAD_BYTES);
    builder
        .http2()
        .timer(TokioTimer::new())
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
        let io = TokioIo::new(IdleTimeout::new(stream, timeouts.idle));
        let service = TowerToHyperService::new(ServiceFn(app.clone()));
        let connection = builder
            .serve_connection_with_upgrades(io, service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "a connection ended with an error");
            }
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
