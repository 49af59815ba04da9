//! A TCP proxy on loopback that a test can cut and restore: a database that goes away and
//! comes back, as the daemon sees it.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

#[derive(Default)]
struct State {
    cut: bool,
    connections: Vec<AbortHandle>,
}

/// Forwards connections to `upstream` until cut.
pub struct Proxy {
    /// The address to connect to instead of the upstream.
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    accept: AbortHandle,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if shared.lock().unwrap().cut {
                    continue; // dropped: the connection is refused at once
                }
                let task = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                shared.lock().unwrap().connections.push(task.abort_handle());
            }
        })
        .abort_handle();
        Self {
            addr,
            state,
            accept,
        }
    }

    /// Drops every connection and refuses new ones.
    pub fn cut(&self) {
        let mut state = self.state.lock().unwrap();
        state.cut = true;
        for connection in state.connections.drain(..) {
            connection.abort();
        }
    }

    /// Accepts connections again.
    pub fn restore(&self) {
        self.state.lock().unwrap().cut = false;
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}
