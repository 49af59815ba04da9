//! What the manager does on its own: stopping agents at shutdown, letting unused sessions
//! go, purging expired ones, closing turns a crash left running.

use std::sync::Arc;

use chrono::Utc;

use super::handle::SessionHandle;
use super::manager::SessionManager;

impl SessionManager {
    /// Stops every running agent but keeps the sessions for the next start (daemon
    /// shutdown), ends SSE streams, then waits until everything is durable.
    pub async fn suspend_all(&self) {
        self.closing.send_replace(true);
        let handles: Vec<Arc<SessionHandle>> = self
            .loaded
            .lock()
            .expect("sessions lock")
            .values()
            .filter_map(|slot| slot.get().cloned())
            .collect();
        let suspends = handles.iter().map(|h| h.suspend());
        for result in futures::future::join_all(suspends).await {
            if let Err(error) = result {
                tracing::warn!(%error, "stopping a session at shutdown failed");
            }
        }
        if let Err(error) = self.store.flush().await {
            tracing::error!(%error, "not every event is durable at shutdown");
        }
    }

    /// Lets go of loaded sessions nobody uses: no agent running, nothing unwritten, no
    /// reference but the map's, unused for a while. Answers how many were let go.
    pub fn evict_unused(&self) -> usize {
        let mut loaded = self.loaded.lock().expect("sessions lock");
        let before = loaded.len();
        loaded.retain(|_, slot| {
            let Some(handle) = slot.get() else {
                return true;
            };
            let idle_agent = handle
                .actor
                .try_lock()
                .is_ok_and(|s| s.as_ref().is_none_or(|c| c.is_closed()));
            let unused = Arc::strong_count(handle) == 1
                && Arc::strong_count(&handle.core) == 1
                && handle.unused_for() >= self.settings.evict_after;
            !(idle_agent && unused && handle.core.log().is_durable())
        });
        before - loaded.len()
    }

    /// Purges sessions that ended longer than `--retain-ended` ago.
    pub async fn purge_expired(&self) -> usize {
        let Some(retain) = self.settings.retain_ended else {
            return 0;
        };
        let before = Utc::now().timestamp_millis() - retain.as_millis() as i64;
        let ids = match self.store.ended_before(before).await {
            Ok(ids) => ids,
            Err(error) => {
                tracing::warn!(%error, "listing expired sessions failed");
                return 0;
            }
        };
        let mut purged = 0;
        for id in ids {
            match self.purge(&id).await {
                Ok(()) => purged += 1,
                Err(error) => {
                    tracing::warn!(session = %id, %error, "purging an expired session failed")
                }
            }
        }
        purged
    }

    /// Closes the turns a crash left running, in sessions this daemon may own.
    pub async fn recover_interrupted(&self) {
        let ids = match self.store.interrupted().await {
            Ok(ids) => ids,
            Err(error) => {
                tracing::warn!(%error, "listing interrupted sessions failed");
                return;
            }
        };
        for id in ids {
            if let Err(error) = self.view(&id).await {
                tracing::warn!(session = %id, %error, "recovering an interrupted session failed");
            }
        }
    }
}
