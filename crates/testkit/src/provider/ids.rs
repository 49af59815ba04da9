//! Deterministic ids (`msg_fake000001`, ...) so recorded streams differ less between runs.

use std::sync::atomic::{AtomicU64, Ordering};

/// A per-provider id counter.
#[derive(Debug, Default)]
pub struct Ids(AtomicU64);

impl Ids {
    /// The next id with the given prefix.
    pub fn next(&self, prefix: &str) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}_fake{n:06}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_count_up() {
        let ids = super::Ids::default();
        assert_eq!(ids.next("msg"), "msg_fake000001");
        assert_eq!(ids.next("call"), "call_fake000002");
    }
}
