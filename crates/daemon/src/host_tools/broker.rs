//! The broker: per-session bearer tokens for the daemon's MCP endpoint, and what each
//! token lets its agent call.
//!
//! Invariants: a token is minted when a session's agent starts (a new one at each start),
//! is valid only on that session's URL and for that session's tools, and is revoked when
//! the agent stops, the session is let go or ends (the [`Grant`] is dropped) — and a
//! request for an ended session is refused whatever the token. Tokens are never the
//! daemon's own, never stored, never logged; they reach only the agent, through the
//! session's MCP configuration.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use sandbox_universal::{HOST_MCP_SERVER, HostTool, McpServer};
use subtle::ConstantTimeEq;

use super::http::HttpToolCaller;
use crate::session::SessionCore;

/// What one session's token reaches.
pub struct Scope {
    /// The session.
    pub session_id: String,
    /// Its host tools (http headers included).
    pub tools: Vec<HostTool>,
    /// Whether `ask_user` is offered.
    pub ask_user: bool,
    /// The session's workspace (images a result names by path are read there).
    pub cwd: PathBuf,
    /// The session's core (weak: the broker never keeps a session alive).
    pub core: Weak<SessionCore>,
    /// Tool-call items earlier calls were matched with.
    pub(super) claimed: Mutex<Vec<String>>,
}

impl Scope {
    /// A scope for `core`'s session.
    pub fn new(
        core: &Arc<SessionCore>,
        tools: Vec<HostTool>,
        ask_user: bool,
        cwd: PathBuf,
    ) -> Self {
        Self {
            session_id: core.session_id().to_string(),
            tools,
            ask_user,
            cwd,
            core: Arc::downgrade(core),
            claimed: Mutex::new(Vec::new()),
        }
    }
}

struct Entry {
    token: String,
    scope: Arc<Scope>,
    serial: u64,
}

/// The daemon's host tool broker: the MCP endpoint's tokens and the http tool caller.
pub struct HostBroker {
    endpoint: OnceLock<String>,
    grants: Mutex<HashMap<String, Entry>>,
    serial: std::sync::atomic::AtomicU64,
    caller: HttpToolCaller,
}

impl std::fmt::Debug for HostBroker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBroker")
            .field("endpoint", &self.endpoint.get())
            .finish_non_exhaustive()
    }
}

/// A session's live token; revoked when dropped.
pub struct Grant {
    broker: Weak<HostBroker>,
    session_id: String,
    serial: u64,
    /// The MCP server entry that hands the endpoint and token to the agent.
    pub server: McpServer,
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grant")
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl Drop for Grant {
    fn drop(&mut self) {
        if let Some(broker) = self.broker.upgrade() {
            let mut grants = broker.lock();
            if grants
                .get(&self.session_id)
                .is_some_and(|e| e.serial == self.serial)
            {
                grants.remove(&self.session_id);
            }
        }
    }
}

impl HostBroker {
    /// A broker signing http tool calls with `secret` (none: http tools are refused).
    pub fn new(secret: Option<Vec<u8>>) -> Arc<Self> {
        Arc::new(Self {
            endpoint: OnceLock::new(),
            grants: Mutex::new(HashMap::new()),
            serial: Default::default(),
            caller: HttpToolCaller::new(secret),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.grants.lock().expect("host grants lock")
    }

    /// Sets where agents reach the daemon (the bound address; an unspecified address is
    /// reached on loopback). The first call wins.
    pub fn set_endpoint(&self, mut addr: SocketAddr) {
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        let _ = self.endpoint.set(format!("http://{addr}"));
    }

    /// The http tool caller.
    pub fn caller(&self) -> &HttpToolCaller {
        &self.caller
    }

    /// Mints the token of `scope`'s session (replacing any earlier one) and answers the
    /// MCP server entry the agent gets. Fails when the daemon serves no HTTP endpoint.
    pub fn mint(self: &Arc<Self>, scope: Scope) -> Result<Grant, String> {
        let endpoint = self
            .endpoint
            .get()
            .ok_or("the daemon serves no HTTP endpoint its agents could reach for host tools")?;
        let token = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let session_id = scope.session_id.clone();
        let serial = self
            .serial
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let server = McpServer::Http {
            url: format!("{endpoint}{}", mcp_path(&session_id)),
            headers: BTreeMap::from([("Authorization".to_string(), format!("Bearer {token}"))]),
        };
        self.lock().insert(
            session_id.clone(),
            Entry {
                token,
                scope: Arc::new(scope),
                serial,
            },
        );
        Ok(Grant {
            broker: Arc::downgrade(self),
            session_id,
            serial,
            server,
        })
    }

    /// The scope `bearer` grants on session `session_id`'s URL, if any (and the session
    /// has not ended).
    pub fn authorize(&self, session_id: &str, bearer: &str) -> Option<Arc<Scope>> {
        let grants = self.lock();
        let entry = grants.get(session_id)?;
        if !bool::from(entry.token.as_bytes().ct_eq(bearer.as_bytes())) {
            return None;
        }
        let core = entry.scope.core.upgrade()?;
        (!core.is_ended()).then(|| entry.scope.clone())
    }

    /// The live token of session `session_id`'s agent, for an embedder (or a test) that
    /// plays the agent's part in-process; the HTTP API never shows it.
    pub fn token_of(&self, session_id: &str) -> Option<String> {
        self.lock().get(session_id).map(|e| e.token.clone())
    }

    /// How many sessions hold a live token.
    pub fn live_grants(&self) -> usize {
        self.lock().len()
    }
}

/// The path of session `id`'s MCP endpoint.
pub fn mcp_path(session_id: &str) -> String {
    format!("/sessions/{session_id}/mcp")
}

/// The name the host server has in the agent's MCP configuration.
pub const SERVER_NAME: &str = HOST_MCP_SERVER;
