//! Inline commits. With a backend whose commits are quick (SQLite without `--fsync`), what
//! a task appends is committed on the async runtime right after that task yields, by a small
//! task scheduled when the write queue goes from idle to busy, instead of by the writer
//! thread: no thread to wake before the commit nor back after it (about 50 µs of each
//! commit's latency on the 2-core bench machine), and everything one burst appended in one
//! commit. Commits stay one at a time and in queue order (whoever holds the shared writer
//! commits, and a commit finding the writer busy leaves its writes to the holder, which
//! looks again when it lets go); the writer thread keeps the rest (requests, heartbeats,
//! reaping, retries) and takes over when the store fails, a producer waits for room, the
//! queue closes, or no runtime is there to run the task.

use std::sync::Arc;

use super::queue::WriteQueue;
use super::writer::SharedWriter;

/// Sees that what is appended gets committed.
pub(crate) struct Committer {
    shared: Arc<SharedWriter>,
    queue: Arc<WriteQueue>,
    inline: bool,
}

impl Committer {
    /// A committer over `shared`, committing inline when its backend's commits are quick.
    pub(crate) fn new(shared: Arc<SharedWriter>, queue: Arc<WriteQueue>) -> Self {
        Self {
            inline: shared.commits_quickly(),
            shared,
            queue,
        }
    }

    /// Schedules a commit of what is queued (called when the queue stops being idle).
    pub(crate) fn schedule(&self) {
        if self.inline
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let commit = InlineCommit(Some(self.shared.clone()));
            drop(runtime.spawn(async move { commit.run() }));
            return;
        }
        self.queue.notify_work();
    }
}

/// A scheduled inline commit. Dropped without running (the runtime is shutting down), it
/// wakes the writer thread instead, so nothing queued waits for a commit that never comes.
struct InlineCommit(Option<Arc<SharedWriter>>);

impl InlineCommit {
    fn run(mut self) {
        if let Some(shared) = self.0.take() {
            shared.commit_queued();
        }
    }
}

impl Drop for InlineCommit {
    fn drop(&mut self) {
        if let Some(shared) = self.0.take() {
            shared.wake_thread();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::super::{
        NewSession, Store, StoreConfig, StoreError, StoreOptions, StoredEvent, WriteListener,
        sample_event,
    };
    use super::*;

    /// Hears which thread made which sequence durable.
    #[derive(Default)]
    struct Heard(Mutex<Vec<(String, u64)>>);

    impl WriteListener for Heard {
        fn session_id(&self) -> &str {
            "s"
        }
        fn durable(&self, sequence: u64) {
            let thread = std::thread::current().name().unwrap_or("").to_string();
            self.0.lock().unwrap().push((thread, sequence));
        }
        fn write_failed(&self, error: &StoreError) {
            panic!("write failed: {error}")
        }
        fn ownership_lost(&self) {
            panic!("ownership lost")
        }
    }

    async fn open(dir: &std::path::Path, fsync: bool) -> (Arc<Store>, i64) {
        let options = StoreOptions {
            fsync,
            ..StoreOptions::new()
        };
        let store = Store::open(&StoreConfig::Sqlite(dir.join("store.db")), "d", options)
            .await
            .unwrap();
        let sid = store
            .create_session(NewSession {
                session_id: "s".into(),
                record_version: 1,
                record: "{}".into(),
                agent: super::super::StoredAgent::parse("mock".into()),
                created_ms: 0,
            })
            .await
            .unwrap();
        (store, sid)
    }

    fn append_burst(
        store: &Store,
        sid: i64,
        heard: &Arc<Heard>,
        events: std::ops::RangeInclusive<u64>,
    ) {
        let listener: Arc<dyn WriteListener> = heard.clone();
        for sequence in events {
            store.append(
                sid,
                &listener,
                Arc::new(StoredEvent::render(sample_event(sequence, "x"))),
            );
        }
    }

    async fn until_durable(heard: &Heard, sequence: u64) -> Vec<(String, u64)> {
        for _ in 0..500 {
            let seen = heard.0.lock().unwrap().clone();
            if seen.last().is_some_and(|(_, s)| *s >= sequence) {
                return seen;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("never durable: {:?}", heard.0.lock().unwrap());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_is_committed_at_once_on_the_runtime_not_by_the_writer_thread() {
        let dir = tempfile::tempdir().unwrap();
        let (store, sid) = open(dir.path(), false).await;
        // The writer thread, done with its start (the first heartbeat, reaping), waits.
        store.flush().await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let heard = Arc::new(Heard::default());
        // Producers run on the runtime's workers (sessions' tasks, handlers).
        let burst = |events| {
            let (store, heard) = (store.clone(), heard.clone());
            tokio::spawn(async move { append_burst(&store, sid, &heard, events) })
        };
        burst(1..=10).await.unwrap();
        let seen = until_durable(&heard, 10).await;
        assert_eq!(seen.len(), 1, "one commit for the burst: {seen:?}");
        assert_ne!(seen[0].0, "store-writer");
        // And again, once the queue was idle.
        burst(11..=12).await.unwrap();
        let seen = until_durable(&heard, 12).await;
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_ne!(seen[1].0, "store-writer");
        let rows = store.events(sid, 0, 100, false).await.unwrap();
        assert_eq!(rows.len(), 12);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn with_fsync_or_without_a_runtime_the_writer_thread_commits() {
        let dir = tempfile::tempdir().unwrap();
        let (store, sid) = open(dir.path(), true).await;
        let heard = Arc::new(Heard::default());
        append_burst(&store, sid, &heard, 1..=3);
        let seen = until_durable(&heard, 3).await;
        assert!(
            seen.iter().all(|(thread, _)| thread == "store-writer"),
            "{seen:?}"
        );
        drop(store);

        let dir = tempfile::tempdir().unwrap();
        let (store, sid) = open(dir.path(), false).await;
        let heard = Arc::new(Heard::default());
        let (plain, listener) = (store.clone(), heard.clone());
        std::thread::spawn(move || append_burst(&plain, sid, &listener, 1..=3))
            .join()
            .unwrap();
        let seen = until_durable(&heard, 3).await;
        assert!(
            seen.iter().all(|(thread, _)| thread == "store-writer"),
            "{seen:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn what_is_queued_while_the_writer_is_busy_waits_for_its_holder_not_the_thread() {
        let dir = tempfile::tempdir().unwrap();
        let (store, sid) = open(dir.path(), false).await;
        store.flush().await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!store.queue.is_kicked());
        let heard = Arc::new(Heard::default());
        let shared = store.committer.shared.clone();
        // A commit in progress, on another thread.
        let (held, is_held) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn({
            let shared = shared.clone();
            move || {
                let _busy = shared.hold();
                held.send(()).unwrap();
                released.recv().unwrap();
            }
        });
        is_held.recv().unwrap();
        let (producer, listener) = (store.clone(), heard.clone());
        tokio::spawn(async move { append_burst(&producer, sid, &listener, 1..=3) })
            .await
            .unwrap();
        // Its inline commit found the writer busy: it left the burst to the holder,
        // without waking the writer thread.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(heard.0.lock().unwrap().is_empty());
        assert!(!store.queue.is_kicked());
        release.send(()).unwrap();
        holder.join().unwrap();
        // The holder, an inline commit, looks again once it lets go.
        shared.commit_queued();
        let seen = until_durable(&heard, 3).await;
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_ne!(seen[0].0, "store-writer");
    }
}
