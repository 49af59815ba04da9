//! Facts learned by running an installed agent binary (its models, say), kept until the
//! binary changes: cached by its path and modification time.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use sandbox_universal::AgentError;

/// One cached value per binary (the last one asked about).
#[derive(Debug)]
pub struct BinaryCache<T> {
    cached: Mutex<Option<(PathBuf, SystemTime, T)>>,
}

impl<T> Default for BinaryCache<T> {
    fn default() -> Self {
        Self {
            cached: Mutex::new(None),
        }
    }
}

impl<T: Clone> BinaryCache<T> {
    /// The value for `binary`: cached while the binary is unchanged, else learned with
    /// `learn` (a failure is not cached).
    pub async fn get<F>(&self, binary: &Path, learn: impl FnOnce() -> F) -> Result<T, AgentError>
    where
        F: Future<Output = Result<T, AgentError>>,
    {
        let modified = std::fs::metadata(binary)
            .and_then(|m| m.modified())
            .map_err(|e| AgentError::NotInstalled {
                message: format!("{} cannot be read: {e}", binary.display()),
            })?;
        if let Some((path, stamp, value)) = &*self.cached.lock().expect("cache lock")
            && path == binary
            && *stamp == modified
        {
            return Ok(value.clone());
        }
        let value = learn().await?;
        *self.cached.lock().expect("cache lock") =
            Some((binary.to_path_buf(), modified, value.clone()));
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn learned_once_per_binary_version() {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("agent");
        std::fs::write(&binary, "v1").unwrap();
        let cache = BinaryCache::default();
        let runs = AtomicU32::new(0);
        let learn = || async {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<_, AgentError>(7)
        };
        assert_eq!(cache.get(&binary, learn).await.unwrap(), 7);
        assert_eq!(cache.get(&binary, learn).await.unwrap(), 7);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        // A newer binary is asked again.
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&binary)
            .unwrap()
            .set_modified(later)
            .unwrap();
        cache.get(&binary, learn).await.unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        assert!(cache.get(&dir.path().join("gone"), learn).await.is_err());
    }
}
