//! Requests waiting for their responses, for protocols that correlate by id (Codex's
//! JSON-RPC ids, Claude's control `request_id`s). Once the peer is gone every waiting
//! request is failed and new ones are refused, so nothing waits for an answer that cannot
//! come.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

use tokio::sync::oneshot;

/// Pending requests keyed by `K`, each answered with a `V`.
#[derive(Debug)]
pub struct Pending<K, V> {
    state: Mutex<State<K, V>>,
}

#[derive(Debug)]
struct State<K, V> {
    waiting: HashMap<K, oneshot::Sender<V>>,
    closed: bool,
}

impl<K, V> Default for Pending<K, V> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                waiting: HashMap::new(),
                closed: false,
            }),
        }
    }
}

impl<K: Eq + Hash, V> Pending<K, V> {
    /// Registers a request; its receiver gets the answer, or an error once the peer is
    /// gone. `None` when the peer is already gone.
    pub fn register(&self, id: K) -> Option<oneshot::Receiver<V>> {
        let mut state = self.state.lock().expect("pending lock");
        if state.closed {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        state.waiting.insert(id, tx);
        Some(rx)
    }

    /// Answers the request `id`; `false` when nothing waits for it.
    pub fn resolve(&self, id: &K, answer: V) -> bool {
        let waiter = self.state.lock().expect("pending lock").waiting.remove(id);
        waiter.is_some_and(|w| w.send(answer).is_ok())
    }

    /// Stops waiting for `id` (e.g. after a timeout).
    pub fn forget(&self, id: &K) {
        self.state.lock().expect("pending lock").waiting.remove(id);
    }

    /// The peer went away but another may take its place (a respawned process): every
    /// waiting request fails, later ones are accepted.
    pub fn fail_waiting(&self) {
        self.state.lock().expect("pending lock").waiting.clear();
    }

    /// The peer is gone for good: every waiting request fails, later ones are refused.
    pub fn close(&self) {
        let mut state = self.state.lock().expect("pending lock");
        state.closed = true;
        state.waiting.clear();
    }

    /// Whether [`Pending::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().expect("pending lock").closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_reach_their_request_and_closing_fails_the_rest() {
        let pending: Pending<u64, &str> = Pending::default();
        let one = pending.register(1).unwrap();
        let two = pending.register(2).unwrap();
        assert!(pending.resolve(&1, "one"));
        assert!(!pending.resolve(&9, "nobody"));
        assert_eq!(one.await.unwrap(), "one");
        let respawned = pending.register(4).unwrap();
        pending.fail_waiting();
        assert!(respawned.await.is_err());
        pending.close();
        assert!(two.await.is_err(), "a closed peer fails what waits");
        assert!(pending.register(3).is_none(), "and refuses what comes");
        assert!(pending.is_closed());
    }
}
