//! Portable sessions: `GET /sessions/{id}/export` (the session as one bundle: record,
//! native state, event log) and `POST /sessions/{id}/import` (a bundle stored as a session
//! of this daemon, whose next message resumes the agent natively).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Utc;
use futures::Stream;
use sandbox_agents::NativeState;
use sandbox_universal::{BUNDLE_FORMAT, ExportedSession, PolicySecrets, SessionInfo};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::bundle::{self, BundleError, CheckedBundle};
use super::manager::SessionManager;
use super::record::SessionRecord;
use super::validate::resolve_cwd;
use super::{SessionError, files, validate_session_id};
use crate::store::Store;

/// Events read from the store per page of an export.
const EXPORT_PAGE: usize = 1000;

/// A session's export, ready to stream: everything before the events, then the events
/// read page by page from the store.
pub struct Export {
    head: String,
    store: Arc<Store>,
    session_id: String,
    sid: i64,
    last_sequence: u64,
    include_raw: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Head<'a> {
    format: u32,
    exported_at: chrono::DateTime<Utc>,
    session: &'a ExportedSession,
    #[serde(skip_serializing_if = "Option::is_none")]
    native: Option<sandbox_universal::NativeBundle>,
}

impl SessionRecord {
    /// The record as a bundle carries it (without secrets: the record holds none).
    pub fn exported(&self) -> ExportedSession {
        ExportedSession {
            session_id: self.session_id.clone(),
            agent: self.agent,
            agent_mode: self.agent_mode.clone(),
            permission_mode: self.permission_mode,
            model: self.model.clone(),
            variant: self.variant.clone(),
            dangerously_skip_permissions: self.dangerously_skip_permissions,
            agent_version: self.agent_version.clone(),
            cwd: self.cwd.display().to_string(),
            created_at: self.created_at,
            policy: self.policy.clone(),
        }
    }
}

impl SessionManager {
    /// Prepares the export of session `id`: its native state is read now (no turn may
    /// run meanwhile), its events as the stream is read.
    pub async fn export(&self, id: &str, include_raw: bool) -> Result<Export, SessionError> {
        let handle = self.open(id).await?;
        let native = handle.export_native().await?;
        handle.core.log().flush().await?;
        let last_sequence = handle.core.log().durable_sequence();
        let head = Head {
            format: BUNDLE_FORMAT,
            exported_at: Utc::now(),
            session: &handle.record.exported(),
            native: native.map(|n| n.to_bundle(handle.record.agent)),
        };
        let mut head = serde_json::to_string(&head).expect("bundles serialise");
        head.pop();
        head.push_str(",\"events\":[");
        Ok(Export {
            head,
            store: self.store.clone(),
            session_id: id.to_string(),
            sid: handle.sid,
            last_sequence,
            include_raw,
        })
    }

    /// Stores the bundle spooled at `path` as session `id`, working in `cwd` (default:
    /// the bundle's), with the agent's native state filed where it looks for it here.
    pub async fn import(
        &self,
        id: &str,
        path: &Path,
        cwd: Option<&str>,
    ) -> Result<SessionInfo, SessionError> {
        validate_session_id(id)?;
        self.store.check_writable()?;
        let rows = path.with_extension("rows");
        let checked = {
            let (path, rows, id) = (path.to_path_buf(), rows.clone(), id.to_string());
            tokio::task::spawn_blocking(move || bundle::check(&path, &id, &rows))
                .await
                .map_err(|e| SessionError::Internal(format!("reading the bundle: {e}")))?
                .map_err(|BundleError(detail)| SessionError::InvalidBundle(detail))?
        };
        let result = self.import_checked(id, checked, cwd).await;
        let _ = std::fs::remove_file(&rows);
        result
    }

    async fn import_checked(
        &self,
        id: &str,
        checked: CheckedBundle,
        cwd: Option<&str>,
    ) -> Result<SessionInfo, SessionError> {
        let session = &checked.session;
        let cwd = resolve_cwd(&self.settings, Some(cwd.unwrap_or(&session.cwd)))?;
        let agent_version = self
            .installs
            .ensure(session.agent, session.agent_version.as_deref())
            .await?;
        self.imports.wait(id).await?;
        let _reservation = self.reserve(id)?;
        if self.store.session(id).await?.is_some() {
            return Err(SessionError::AlreadyExists(id.to_string()));
        }
        let record = SessionRecord {
            session_id: id.to_string(),
            agent: session.agent,
            agent_mode: session.agent_mode.clone(),
            permission_mode: session.permission_mode,
            model: session.model.clone(),
            variant: session.variant.clone(),
            dangerously_skip_permissions: session.dangerously_skip_permissions,
            agent_version,
            cwd,
            created_at: session.created_at,
            policy: session.policy.clone(),
        };
        let dir = self.sessions_dir().join(id);
        files::create_dir(&dir, self.settings.agent_user.as_ref())
            .map_err(|e| SessionError::Internal(format!("preparing {}: {e}", dir.display())))?;
        let mut state = checked.state;
        if let Some(native) = &checked.native {
            let driver = self.registry.get(record.agent);
            let config = record.config(&dir, None, PolicySecrets::default());
            match driver.import_native(&config, native).await {
                Ok(Some(native_id)) => state.native_session_id = Some(native_id),
                Ok(None) => {}
                Err(error) => {
                    let _ = files::remove_dir(&dir);
                    return Err(SessionError::Agent(error));
                }
            }
            self.settings
                .agent_user
                .as_ref()
                .map(|user| user.own_tree(&dir.join(files::AGENT_DIR)))
                .transpose()
                .map_err(|e| SessionError::Internal(format!("handing the files over: {e}")))?;
        }
        let rows = bundle::rows(&checked.rows)
            .map_err(|e| SessionError::Internal(format!("reading the spooled events: {e}")))?;
        let imported = self
            .store
            .import(
                record.to_new_session(),
                Box::new(rows),
                Some(state.snapshot()),
            )
            .await;
        let sid = match imported {
            Ok(sid) => sid,
            Err(error) => {
                let _ = files::remove_dir(&dir);
                return Err(error.into());
            }
        };
        if let Some(native) = &checked.native
            && self.store.backend() == sandbox_universal::StoreBackend::Postgres
        {
            super::travel::save(&self.store, sid, record.agent, native).await?;
        }
        self.info(id).await
    }
}

impl Export {
    /// The bundle as chunks of JSON text; a store failure midway ends the stream with the
    /// error (the client sees a truncated document, which no import accepts).
    pub fn into_stream(self) -> impl Stream<Item = Result<bytes::Bytes, std::io::Error>> {
        let Export {
            head,
            store,
            session_id,
            sid,
            last_sequence,
            include_raw,
        } = self;
        futures::stream::unfold(
            (Some(head), 0u64, Sha256::new(), false),
            move |(head, after, mut hasher, done)| {
                let store = store.clone();
                let session_id = session_id.clone();
                async move {
                    if done {
                        return None;
                    }
                    if let Some(head) = head {
                        return Some((Ok(head.into()), (None, after, hasher, false)));
                    }
                    if after >= last_sequence {
                        let tail = format!(
                            "],\"eventCount\":{after},\"eventsSha256\":\"{}\"}}",
                            bundle::hex(&hasher.finalize_reset())
                        );
                        return Some((Ok(tail.into()), (None, after, hasher, true)));
                    }
                    let limit = EXPORT_PAGE.min((last_sequence - after) as usize);
                    let rows = match store.events(sid, after, limit, include_raw).await {
                        Ok(rows) if !rows.is_empty() => rows,
                        Ok(_) => {
                            let error = std::io::Error::other(format!(
                                "the store has no event after {after} of `{session_id}`"
                            ));
                            return Some((Err(error), (None, after, hasher, true)));
                        }
                        Err(error) => {
                            let error = std::io::Error::other(error.to_string());
                            return Some((Err(error), (None, after, hasher, true)));
                        }
                    };
                    let mut chunk = String::new();
                    let mut last = after;
                    for row in rows {
                        let event = row.decode(&session_id);
                        let json = event.to_json(include_raw);
                        if event.sequence > 1 {
                            chunk.push(',');
                        }
                        chunk.push_str(&json);
                        hasher.update(json.as_bytes());
                        hasher.update(b"\n");
                        last = event.sequence;
                    }
                    Some((Ok(chunk.into()), (None, last, hasher, false)))
                }
            },
        )
    }
}

/// Where an import's body is spooled: a private file under the data dir, removed when
/// dropped.
pub struct Spool {
    /// The file.
    pub path: PathBuf,
}

impl Spool {
    /// A new spool file under `data_dir`.
    pub fn new(data_dir: &Path) -> std::io::Result<Self> {
        let dir = data_dir.join("imports");
        crate::private::ensure_dir(&dir, 0o700)?;
        Ok(Self {
            path: dir.join(format!("{}.bundle", uuid::Uuid::new_v4())),
        })
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads the native state the agent of a loaded session keeps.
impl super::SessionHandle {
    /// The agent's native state (no turn may start while it is read); refused while a
    /// turn runs.
    pub(super) async fn export_native(&self) -> Result<Option<NativeState>, SessionError> {
        let _commands = self.actor.lock().await;
        if let Some(turn) = self.core.snapshot().current_turn {
            return Err(SessionError::TurnRunning {
                session: self.id().to_string(),
                turn,
            });
        }
        // Before its first turn an agent has kept nothing to resume: the importing
        // daemon's agent starts the conversation as a restart would.
        if !self.core.has_turns() {
            return Ok(None);
        }
        let config = self.config()?;
        let native_id = self.core.snapshot().native_session_id;
        self.driver()
            .export_native(&config, native_id.as_deref())
            .await
            .map(Some)
            .map_err(SessionError::Agent)
    }
}
