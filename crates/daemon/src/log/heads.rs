//! The last known sequence of every session someone watches, by store key: a loaded
//! session's log publishes its appends here, the store's notifications publish commits of
//! other daemons, and SSE followers wait on it whether or not the session is loaded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::watch;

/// Watch channels of session heads, alive while a log or a follower holds them.
#[derive(Debug, Default)]
pub struct Heads {
    map: Mutex<HashMap<i64, Weak<watch::Sender<u64>>>>,
}

impl Heads {
    /// The head channel of session `sid` (created when nobody holds it).
    pub fn sender(&self, sid: i64) -> Arc<watch::Sender<u64>> {
        let mut map = self.map.lock().expect("heads lock");
        if let Some(sender) = map.get(&sid).and_then(Weak::upgrade) {
            return sender;
        }
        if map.len() >= 64 && map.len().is_power_of_two() {
            map.retain(|_, weak| weak.strong_count() > 0);
        }
        let sender = Arc::new(watch::Sender::new(0));
        map.insert(sid, Arc::downgrade(&sender));
        sender
    }

    /// Raises the head of session `sid` to `sequence`, if anyone watches it.
    pub fn publish(&self, sid: i64, sequence: u64) {
        let sender = self
            .map
            .lock()
            .expect("heads lock")
            .get(&sid)
            .and_then(Weak::upgrade);
        if let Some(sender) = sender {
            sender.send_if_modified(|head| {
                let raise = *head < sequence;
                *head = (*head).max(sequence);
                raise
            });
        }
    }

    /// Number of sessions watched (for tests and the benchmark).
    pub fn len(&self) -> usize {
        self.map
            .lock()
            .expect("heads lock")
            .values()
            .filter(|w| w.strong_count() > 0)
            .count()
    }

    /// Whether nobody watches any session.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn followers_and_logs_share_one_head_per_session() {
        let heads = Heads::default();
        let log_side = heads.sender(7);
        let follower_side = heads.sender(7);
        let mut rx = follower_side.subscribe();
        log_side.send_replace(3);
        rx.changed().await.unwrap();
        assert_eq!(*rx.borrow(), 3);
        heads.publish(7, 2);
        assert_eq!(*rx.borrow_and_update(), 3, "a head never goes back");
        heads.publish(7, 9);
        assert_eq!(*rx.borrow_and_update(), 9);
        drop((log_side, follower_side, rx));
        assert!(heads.is_empty());
        heads.publish(7, 10);
        assert_eq!(*heads.sender(7).borrow(), 0, "a dropped head starts over");
    }
}
