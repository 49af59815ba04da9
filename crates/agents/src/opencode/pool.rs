//! The OpenCode servers of a daemon: one per isolation key ([`ServerKey`]), started when a
//! session first needs it, started again when it died, stopped when its last session lets
//! go. Each server's one event stream is demultiplexed here: an event goes to the session
//! whose OpenCode session id it names, or, for a child session a subagent created, to the
//! session of its parent.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use sandbox_universal::{AgentError, AgentId};

use super::launch::{self, Provider, ServerDirs, ServerKey};
use super::native::{Scope, classify};
use super::policy::{ConfigRefs, OwnServer};
use super::server::{EventHandler, Server, StreamEnd};
use crate::kernel::Gone;
use crate::kernel::server::{Route, ServerLease};
use crate::process::ExitInfo;
use crate::transport::{HttpPeer, Line};

/// Every server of the daemon.
pub struct ServerPool {
    program: PathBuf,
    root: PathBuf,
    slots: Mutex<HashMap<ServerKey, Weak<Slot>>>,
}

impl ServerPool {
    /// Servers of `program`, each with its directories under `root`.
    pub fn new(program: PathBuf, root: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            program,
            root,
            slots: Mutex::new(HashMap::new()),
        })
    }

    /// A hold on the server of `providers` (shared with every session of the same key);
    /// nothing starts until [`Lease::peer`].
    pub fn lease(&self, providers: Vec<Provider>) -> Lease {
        self.lease_for(providers, None)
    }

    /// A hold on the server of `providers` for one session, its own when `own` says what
    /// its process needs (its directories then under the session's, named by the session).
    pub fn lease_for(&self, providers: Vec<Provider>, own: Option<OwnServer>) -> Lease {
        let key = match &own {
            Some(own) => ServerKey::own(&own.session_id),
            None => ServerKey::of(&providers),
        };
        let mut slots = self.slots.lock().expect("pool lock");
        slots.retain(|_, slot| slot.strong_count() > 0);
        let slot = slots.get(&key).and_then(Weak::upgrade).unwrap_or_else(|| {
            let root = own
                .as_ref()
                .map_or(self.root.as_path(), |o| o.root.as_path());
            let slot = Arc::new(Slot {
                program: self.program.clone(),
                dirs: ServerDirs::new(root, &key),
                providers,
                own,
                written: Mutex::new(Vec::new()),
                server: tokio::sync::Mutex::new(None),
                routes: Arc::new(Routes::default()),
            });
            slots.insert(key, Arc::downgrade(&slot));
            slot
        });
        Lease { slot }
    }

    /// How many servers have a session holding them.
    pub fn servers(&self) -> usize {
        let slots = self.slots.lock().expect("pool lock");
        slots.values().filter(|s| s.strong_count() > 0).count()
    }
}

/// One session's hold on its server. The server stops when the last lease is dropped
/// (after [`Lease::release`], or in the background when simply dropped).
pub struct Lease {
    slot: Arc<Slot>,
}

#[async_trait::async_trait]
impl ServerLease for Lease {
    type Protocol = super::convert::Converter;

    const AGENT: AgentId = AgentId::Opencode;

    /// The server's HTTP client, starting the server first if it is not running (never
    /// started, or dead).
    async fn peer(&self) -> Result<HttpPeer, AgentError> {
        let mut server = self.slot.server.lock().await;
        if let Some(running) = server.as_ref()
            && !running.is_dead()
        {
            return Ok(running.peer().clone());
        }
        if let Some(dead) = server.take() {
            drop(dead.stop().await);
        }
        let started = self.slot.start().await?;
        let peer = started.peer().clone();
        *server = Some(started);
        Ok(peer)
    }

    /// Sends the events of OpenCode session `native_id` (and of its children) to `route`.
    fn route(&self, native_id: &str, route: Arc<dyn Route>) {
        let mut table = self.slot.routes.table.lock().expect("routes lock");
        table.sessions.insert(native_id.to_string(), route);
    }

    /// Stops routing `native_id`'s events.
    fn unroute(&self, native_id: &str) {
        let mut table = self.slot.routes.table.lock().expect("routes lock");
        table.sessions.remove(native_id);
        table.children.retain(|_, root| root != native_id);
    }

    /// Lets go of the server, stopping it now if this was its last session.
    async fn release(self) {
        if Arc::strong_count(&self.slot) > 1 {
            return;
        }
        let server = self.slot.server.lock().await.take();
        if let Some(server) = server {
            drop(server.stop().await);
        }
        self.slot.forget_secrets();
    }
}

impl Lease {
    /// The directories of the server (whether or not it runs).
    pub fn dirs(&self) -> &ServerDirs {
        &self.slot.dirs
    }

    /// The pid of the running server, if one runs.
    pub async fn pid(&self) -> Option<u32> {
        self.slot.server.lock().await.as_ref().map(Server::pid)
    }
}

/// One isolation key's server.
struct Slot {
    program: PathBuf,
    dirs: ServerDirs,
    providers: Vec<Provider>,
    /// What a session's own server adds.
    own: Option<OwnServer>,
    /// The secret files written for the running server (removed when it stops).
    written: Mutex<Vec<PathBuf>>,
    server: tokio::sync::Mutex<Option<Server>>,
    routes: Arc<Routes>,
}

impl Slot {
    async fn start(&self) -> Result<Server, AgentError> {
        let failed = |e: std::io::Error| AgentError::SpawnFailed {
            message: format!("preparing opencode's directories: {e}"),
        };
        self.dirs.write(&self.providers).map_err(failed)?;
        let password = launch::password();
        let refs = ConfigRefs::default();
        let mut config = launch::config(&self.providers, &self.dirs, &refs);
        let mut env = BTreeMap::new();
        if let Some(own) = &self.own {
            let written = own
                .configure(&mut config, &self.dirs.secrets, &refs)
                .map_err(failed)?;
            self.written.lock().expect("written lock").extend(written);
            if let Some(user) = crate::user::agent_user() {
                user.own_tree(&self.dirs.secrets).map_err(failed)?;
            }
            env.clone_from(&own.env);
            if let Some(login) = &own.login {
                login.login.seed_home(&self.dirs.home).map_err(failed)?;
            }
        }
        let spec = launch::serve(
            self.program.clone(),
            &self.dirs,
            &refs.render(&config),
            &password,
            &env,
        );
        Server::start(&spec, &password, self.routes.clone()).await
    }

    /// Removes the secret files of a stopped server.
    fn forget_secrets(&self) {
        for path in self.written.lock().expect("written lock").drain(..) {
            drop(std::fs::remove_file(path));
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.forget_secrets();
        // A lease dropped without `release`: stop the server in the background.
        if let Some(server) = self.server.get_mut().take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move { drop(server.stop().await) });
        }
    }
}

/// The routing table of one server's events.
#[derive(Default)]
struct Routes {
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    /// Root OpenCode session id → its route.
    sessions: HashMap<String, Arc<dyn Route>>,
    /// Child session id → the root session it belongs to.
    children: HashMap<String, String>,
}

impl Table {
    /// The root session `id` belongs to, learning a child from its parent.
    fn root_of(&mut self, id: &str, parent: Option<&str>) -> Option<String> {
        if self.sessions.contains_key(id) {
            return Some(id.to_string());
        }
        if let Some(root) = self.children.get(id) {
            return Some(root.clone());
        }
        let root = self.root_of(parent?, None)?;
        self.children.insert(id.to_string(), root.clone());
        Some(root)
    }
}

impl EventHandler for Routes {
    fn event(&self, line: Line) {
        let payload = match line {
            Line::Json(mut envelope) => match envelope.get_mut("payload") {
                Some(payload) => payload.take(),
                None => return,
            },
            Line::NotJson { raw, error } => {
                let routes: Vec<_> = {
                    let table = self.table.lock().expect("routes lock");
                    table.sessions.values().cloned().collect()
                };
                for route in routes {
                    route.not_json(&raw, &error);
                }
                return;
            }
        };
        let route = match classify(&payload) {
            Scope::Session { id, parent } => {
                let mut table = self.table.lock().expect("routes lock");
                table
                    .root_of(&id, parent.as_deref())
                    .and_then(|root| table.sessions.get(&root).cloned())
            }
            Scope::Server => None,
            Scope::Unscoped => {
                tracing::debug!(target: "opencode", event = %payload, "an event of no session");
                None
            }
        };
        if let Some(route) = route {
            route.event(&payload);
        }
    }

    fn ended(&self, end: StreamEnd) {
        let gone = match end {
            StreamEnd::Exited(exit) => Gone {
                why: format!("opencode serve exited ({})", exit.describe()),
                exit,
            },
            StreamEnd::Broken(why) => Gone {
                why: format!("opencode's event stream broke: {why}"),
                exit: ExitInfo::default(),
            },
        };
        let routes: Vec<_> = {
            let mut table = self.table.lock().expect("routes lock");
            table.children.clear();
            table.sessions.values().cloned().collect()
        };
        for route in routes {
            route.server_lost(&gone);
        }
    }
}
