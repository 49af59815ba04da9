//! The client side of the app-server's JSON-RPC: numbered requests awaiting their
//! response, notifications, and responses to the server's own requests, written by the
//! shared [`LineWriter`] so every task can send.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sandbox_universal::AgentError;
use serde_json::{Value, json};
use tokio::process::ChildStdin;

use crate::codex::native::RpcError;
use crate::transport::{LineWriter, Pending};

/// Sends requests and notifications to one app-server and matches responses.
#[derive(Debug)]
pub struct Rpc {
    outgoing: LineWriter,
    pending: Pending<u64, Result<Value, RpcError>>,
    next_id: AtomicU64,
}

fn gone() -> AgentError {
    crate::transport::not_running("the codex app-server is not running")
}

impl Rpc {
    /// A client writing to `stdin` (through a task spawned here).
    pub fn new(stdin: ChildStdin) -> Self {
        Self {
            outgoing: LineWriter::spawn(stdin),
            pending: Pending::default(),
            next_id: AtomicU64::new(1),
        }
    }

    /// Sends a request and waits for its result.
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, AgentError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let rx = self.pending.register(id).ok_or_else(gone)?;
        self.send(json!({"id": id, "method": method, "params": params}))?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(error))) => Err(AgentError::AgentReported {
                message: format!("codex rejected `{method}`: {}", error.message),
                code: Some(error.code.to_string()),
            }),
            Ok(Err(_)) => Err(gone()),
            Err(_) => {
                self.pending.forget(&id);
                Err(AgentError::Timeout {
                    message: format!("codex did not answer `{method}` within {timeout:?}"),
                })
            }
        }
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<(), AgentError> {
        let mut message = json!({"method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(message)
    }

    /// Sends a complete message (e.g. the response to a server request).
    pub fn send(&self, message: Value) -> Result<(), AgentError> {
        if self.pending.is_closed() {
            return Err(gone());
        }
        self.outgoing.send(message).map_err(|_| gone())
    }

    /// Delivers a response to the request waiting for it (unknown ids are ignored).
    pub fn resolve(&self, id: &Value, outcome: Result<Value, RpcError>) {
        let delivered = id
            .as_u64()
            .is_some_and(|key| self.pending.resolve(&key, outcome));
        if !delivered {
            tracing::debug!(target: "codex", %id, "response to no pending request");
        }
    }

    /// The process is gone: every waiting and later call fails.
    pub fn close(&self) {
        self.pending.close();
    }
}
