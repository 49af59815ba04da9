//! The logins the daemon keeps: one file per agent in `<data dir>/credentials/` (the
//! directory 0700, each file 0600, the daemon's own), written whole and atomically.
//!
//! Writers (this daemon's requests and sessions, and a `credentials` command of another
//! process on the same data dir) take an exclusive `flock` on `.lock` for their
//! read-merge-write, so two refreshes at once cannot lose one another's update. Readers need
//! no lock: a file is only ever replaced by a rename.

use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use sandbox_agents::login::{self, Login, LoginChange};
use sandbox_universal::{AgentId, StoredLoginInfo};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::private;

/// The on-disk format of a stored login.
const FORMAT: u32 = 1;

/// One stored login as kept on disk. `Debug` shows no secret.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    format: u32,
    agent: AgentId,
    login: StoredContent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    stored_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refreshed_at: Option<String>,
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum StoredContent {
    File(Value),
    Token(String),
}

impl From<&StoredContent> for Login {
    fn from(content: &StoredContent) -> Self {
        match content {
            StoredContent::File(value) => Login::File(value.clone()),
            StoredContent::Token(token) => Login::Token(token.clone()),
        }
    }
}

/// Why a login could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    /// It is not a login of that agent.
    #[error("not a login of {agent}: {reason}")]
    Invalid {
        /// The agent.
        agent: &'static str,
        /// Why.
        reason: String,
    },
    /// Reading or writing the store failed.
    #[error("the credential store at {path}: {error}")]
    Io {
        /// The file or directory.
        path: String,
        /// What failed.
        error: std::io::Error,
    },
}

/// The logins kept in one data dir.
#[derive(Debug)]
pub struct CredentialStore {
    dir: PathBuf,
}

impl CredentialStore {
    /// The store in `data_dir` (its directory is made on the first write).
    pub fn new(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.join("credentials"),
        }
    }

    fn path(&self, agent: AgentId) -> PathBuf {
        self.dir.join(format!("{}.json", agent.as_str()))
    }

    fn io(&self, path: &Path) -> impl Fn(std::io::Error) -> CredentialError + '_ {
        let path = path.display().to_string();
        move |error| CredentialError::Io {
            path: path.clone(),
            error,
        }
    }

    fn read(&self, agent: AgentId) -> Result<Option<Stored>, CredentialError> {
        let path = self.path(agent);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io(&path)(e)),
        };
        let stored: Stored = serde_json::from_slice(&bytes)
            .map_err(|e| self.io(&path)(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        if stored.format > FORMAT || stored.agent != agent {
            return Err(self.io(&path)(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "written by a newer daemon or for another agent",
            )));
        }
        Ok(Some(stored))
    }

    fn write(&self, stored: &Stored) -> Result<(), CredentialError> {
        let path = self.path(stored.agent);
        let bytes = serde_json::to_vec_pretty(stored).expect("logins serialise");
        private::write_file(&path, &bytes).map_err(self.io(&path))
    }

    /// Holds the writers' lock of the store (made private first) until dropped.
    fn lock(&self) -> Result<WriteLock, CredentialError> {
        private::ensure_dir(&self.dir, 0o700).map_err(self.io(&self.dir))?;
        let path = self.dir.join(".lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(self.io(&path))?;
        // SAFETY: flock on an open descriptor we own; released when the file closes.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(self.io(&path)(std::io::Error::last_os_error()));
        }
        Ok(WriteLock { _file: file })
    }

    /// The login stored for `agent`, if any.
    pub fn login(&self, agent: AgentId) -> Result<Option<Login>, CredentialError> {
        Ok(self.read(agent)?.map(|stored| Login::from(&stored.login)))
    }

    /// What is stored for `agent` (no secret), if anything.
    pub fn info(&self, agent: AgentId) -> Result<Option<StoredLoginInfo>, CredentialError> {
        Ok(self.read(agent)?.map(|stored| describe(&stored)))
    }

    /// Every stored login (no secret), by agent id. An unreadable one is left out and
    /// logged.
    pub fn list(&self) -> Vec<StoredLoginInfo> {
        AgentId::ALL
            .into_iter()
            .filter_map(|agent| match self.info(agent) {
                Ok(info) => info,
                Err(error) => {
                    tracing::warn!(%error, "a stored login cannot be read");
                    None
                }
            })
            .collect()
    }

    /// Stores `login` for `agent` (checked to be one of its logins), replacing what was
    /// there; answers what is stored now and whether it replaced a login.
    pub fn put(
        &self,
        agent: AgentId,
        login: Login,
        source: Option<String>,
    ) -> Result<(StoredLoginInfo, bool), CredentialError> {
        login::describe(agent, &login).map_err(|reason| CredentialError::Invalid {
            agent: agent.as_str(),
            reason,
        })?;
        let _lock = self.lock()?;
        let replaced = self.path(agent).exists();
        let stored = Stored {
            format: FORMAT,
            agent,
            login: match login {
                Login::File(value) => StoredContent::File(value),
                Login::Token(token) => StoredContent::Token(token),
            },
            source,
            stored_at: now(),
            refreshed_at: None,
        };
        self.write(&stored)?;
        Ok((describe(&stored), replaced))
    }

    /// Removes `agent`'s login; answers whether there was one.
    pub fn remove(&self, agent: AgentId) -> Result<bool, CredentialError> {
        let _lock = self.lock()?;
        let path = self.path(agent);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.io(&path)(e)),
        }
    }

    /// Gives the store what a session's agent refreshed in its copy ([`login::merge`]):
    /// under the writers' lock, so a concurrent refresh of another entry is kept. Nothing
    /// is written when the login was removed meanwhile, or the result is not a login any
    /// more.
    pub fn refresh(&self, agent: AgentId, change: &LoginChange) -> Result<bool, CredentialError> {
        let _lock = self.lock()?;
        let Some(mut stored) = self.read(agent)? else {
            return Ok(false);
        };
        let StoredContent::File(current) = &stored.login else {
            return Ok(false);
        };
        let merged = login::merge(&change.base, &change.now, current);
        if &merged == current {
            return Ok(false);
        }
        if let Err(reason) = login::describe(agent, &Login::File(merged.clone())) {
            tracing::warn!(agent = agent.as_str(), %reason, "an agent left a login that is not one; not stored");
            return Ok(false);
        }
        stored.login = StoredContent::File(merged);
        stored.refreshed_at = Some(now());
        self.write(&stored)?;
        Ok(true)
    }
}

/// The writers' lock, released when dropped.
struct WriteLock {
    _file: std::fs::File,
}

fn describe(stored: &Stored) -> StoredLoginInfo {
    let login = Login::from(&stored.login);
    StoredLoginInfo {
        agent: stored.agent,
        file: match login {
            Login::File(_) => login::spec(stored.agent).map(|spec| {
                Path::new(spec.home_dir)
                    .join(spec.file_name)
                    .display()
                    .to_string()
            }),
            Login::Token(_) => None,
        },
        entries: login::describe(stored.agent, &login).unwrap_or_default(),
        source: stored.source.clone(),
        stored_at: stored.stored_at.clone(),
        refreshed_at: stored.refreshed_at.clone(),
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
