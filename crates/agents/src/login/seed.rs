//! A stored login given to one agent process: its driver writes the file into the
//! process's private home ([`SeededLogin::seed`]); the daemon reads back what the agent
//! refreshed ([`SeededLogin::changes`]) and removes the file when the process stops
//! ([`SeededLogin::remove`]).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sandbox_universal::AgentId;
use serde_json::Value;

use super::Login;

/// A stored login on its way into one agent process's home. `Debug` shows no secret.
pub struct SeededLogin {
    agent: AgentId,
    login: Login,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Where it was written.
    paths: Vec<PathBuf>,
    /// What the file held when the daemon last took it back (or wrote it).
    synced: Option<Value>,
    /// The newest content known: what a copy written again holds.
    current: Option<Value>,
}

impl std::fmt::Debug for SeededLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock().expect("login lock");
        f.debug_struct("SeededLogin")
            .field("agent", &self.agent)
            .field("login", &self.login)
            .field("paths", &state.paths)
            .finish()
    }
}

/// What an agent changed in its copy of the login since the daemon last looked. `Debug`
/// shows no secret.
#[derive(Clone, PartialEq)]
pub struct LoginChange {
    /// What the copy held before.
    pub base: Value,
    /// What it holds now.
    pub now: Value,
}

impl std::fmt::Debug for LoginChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoginChange(<redacted>)")
    }
}

impl SeededLogin {
    /// The login `login` of `agent`, not written anywhere yet.
    pub fn new(agent: AgentId, login: Login) -> Self {
        let synced = match &login {
            Login::File(value) => Some(value.clone()),
            Login::Token(_) => None,
        };
        Self {
            agent,
            login,
            state: Mutex::new(State {
                paths: Vec::new(),
                current: synced.clone(),
                synced,
            }),
        }
    }

    /// The agent it is for.
    pub fn agent(&self) -> AgentId {
        self.agent
    }

    /// The token, when the login is one (given to the agent in its environment).
    pub fn token(&self) -> Option<&str> {
        match &self.login {
            Login::Token(token) => Some(token),
            Login::File(_) => None,
        }
    }

    /// The login file, when the login is one.
    pub fn file(&self) -> Option<&Value> {
        match &self.login {
            Login::File(value) => Some(value),
            Login::Token(_) => None,
        }
    }

    /// Whether the login is a file the agent reads from its home.
    pub fn is_file(&self) -> bool {
        matches!(self.login, Login::File(_))
    }

    /// Writes the login file at `path` (its parent is created private), readable by the
    /// agent's user only: mode 0600, owned by the agent user when agents run as one. A
    /// token login writes nothing. Written again (a restarted process), it holds what the
    /// agent last left, not the login as first given: a refresh is never rolled back.
    pub fn seed(&self, path: &Path) -> std::io::Result<()> {
        let Some(value) = self.state.lock().expect("login lock").current.clone() else {
            return Ok(());
        };
        let value = &value;
        let parent = path.parent().expect("a login file has a directory");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
        let user = crate::user::agent_user();
        let mut file = tempfile::Builder::new()
            .prefix(".login")
            .permissions(std::fs::Permissions::from_mode(0o600))
            .tempfile_in(parent)?;
        file.write_all(&serde_json::to_vec_pretty(value).expect("JSON values serialise"))?;
        file.as_file().sync_all()?;
        let file = file.persist(path).map_err(|e| e.error)?;
        drop(file);
        if let Some(user) = user {
            user.own_tree(path)?;
        }
        let mut state = self.state.lock().expect("login lock");
        if !state.paths.iter().any(|p| p == path) {
            state.paths.push(path.to_path_buf());
        }
        Ok(())
    }

    /// [`Self::seed`] at the agent's own place in the private HOME `home` (where it looks
    /// when no variable moves it, see [`super::LoginSpec::session_path`]).
    pub fn seed_home(&self, home: &Path) -> std::io::Result<()> {
        match super::spec(self.agent) {
            Some(spec) => self.seed(&spec.session_path(home)),
            None => Ok(()),
        }
    }

    /// What the agent changed in its copy since it was written or last taken back, if
    /// anything (a copy it removed or left unreadable is no change: nothing to give back).
    /// The change counts as taken back: the next call compares with it.
    pub fn changes(&self) -> Option<LoginChange> {
        let mut state = self.state.lock().expect("login lock");
        let path = state.paths.first()?.clone();
        let base = state.synced.clone()?;
        let now: Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
        if now == base {
            return None;
        }
        state.synced = Some(now.clone());
        state.current = Some(now.clone());
        Some(LoginChange { base, now })
    }

    /// Puts a change back as not taken (storing it failed; the next look tries again).
    pub fn untake(&self, change: &LoginChange) {
        self.state.lock().expect("login lock").synced = Some(change.base.clone());
    }

    /// Removes every copy written (the agent process stopped).
    pub fn remove(&self) {
        let paths = std::mem::take(&mut self.state.lock().expect("login lock").paths);
        for path in paths {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "could not remove a seeded login")
                }
            }
        }
    }
}
