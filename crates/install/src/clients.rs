//! HTTP clients built on first use. Building a client loads the system's root
//! certificates (milliseconds of parsing and hundreds of KiB kept), which a daemon that
//! never makes an outbound request should not pay for at start-up.

use std::sync::{Arc, OnceLock};

/// A pair of clients from one recipe, built together when first asked for: one through
/// the environment's proxies (`HTTPS_PROXY`, ...), one straight to loopback endpoints.
/// Clones share the pair.
#[derive(Clone)]
pub struct LazyClients {
    recipe: Arc<dyn Fn() -> reqwest::ClientBuilder + Send + Sync>,
    built: Arc<OnceLock<[reqwest::Client; 2]>>,
}

impl std::fmt::Debug for LazyClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyClients")
            .field("built", &self.built.get().is_some())
            .finish_non_exhaustive()
    }
}

impl LazyClients {
    /// Clients made by `recipe` (the direct one with `no_proxy()` added), not built yet.
    pub fn new(recipe: impl Fn() -> reqwest::ClientBuilder + Send + Sync + 'static) -> Self {
        Self {
            recipe: Arc::new(recipe),
            built: Arc::new(OnceLock::new()),
        }
    }

    /// The direct client (for a loopback endpoint) or the one through the proxies.
    pub fn get(&self, direct: bool) -> &reqwest::Client {
        let [proxied, straight] = self.built.get_or_init(|| {
            let build = |builder: reqwest::ClientBuilder| {
                builder
                    .build()
                    .expect("an HTTP client (TLS roots and resolver)")
            };
            [build((self.recipe)()), build((self.recipe)().no_proxy())]
        });
        if direct { straight } else { proxied }
    }

    /// Whether the clients were built (for tests of laziness).
    pub fn is_built(&self) -> bool {
        self.built.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_built_on_first_use_and_shared_by_clones() {
        let clients = LazyClients::new(reqwest::Client::builder);
        let clone = clients.clone();
        assert!(!clients.is_built());
        let direct = clients.get(true) as *const _;
        assert!(clone.is_built());
        assert_eq!(direct, clone.get(true) as *const _);
        assert_ne!(direct, clone.get(false) as *const _);
    }
}
