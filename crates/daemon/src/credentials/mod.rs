//! Which credential a session uses, in order: its own `token`, the daemon's environment, a
//! login stored in the daemon ([`CredentialStore`]). A stored login is seeded into the
//! agent's private home by its driver ([`SeededLogin`]); what the agent refreshes there is
//! given back to the store after each turn and when its process stops.

mod store;

use std::sync::Arc;

use sandbox_agents::ProviderEnv;
use sandbox_agents::login::{self, SeededLogin};
use sandbox_universal::{AgentCredentials, AgentError, AgentId, CredentialKind};

pub use store::{CredentialError, CredentialStore};

/// The daemon's credentials: its environment's and its stored logins.
#[derive(Debug)]
pub struct Credentials {
    store: Arc<CredentialStore>,
    env: ProviderEnv,
}

impl Credentials {
    /// Over the daemon's provider environment and the logins stored in `store`.
    pub fn new(store: CredentialStore, env: ProviderEnv) -> Self {
        Self {
            store: Arc::new(store),
            env,
        }
    }

    /// The stored logins.
    pub fn store(&self) -> &Arc<CredentialStore> {
        &self.store
    }

    /// The kinds of credential the daemon's environment holds for `agent`.
    fn environment_kinds(&self, agent: AgentId) -> Vec<CredentialKind> {
        let token_var = login::spec(agent).and_then(|s| s.token_var);
        let mut kinds: Vec<CredentialKind> = sandbox_agents::manifest::spec(agent)
            .credential_vars
            .iter()
            .filter(|var| self.env.get(var).is_some())
            .map(|var| {
                if Some(*var) == token_var {
                    CredentialKind::OauthToken
                } else {
                    CredentialKind::ApiKey
                }
            })
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// Which credentials `agent` has here (`GET /agents`), without revealing them.
    pub fn available(&self, agent: AgentId) -> AgentCredentials {
        let mut available = self.environment_kinds(agent);
        if matches!(self.store.info(agent), Ok(Some(_))) {
            available.push(CredentialKind::StoredLogin);
        }
        AgentCredentials {
            required: agent != AgentId::Mock,
            available,
        }
    }

    /// The stored login a session of `agent` with `token` is given, if it uses one: none
    /// when the session has its own token or the daemon's environment has a credential.
    /// With none of the three, a `tokenError` naming them.
    pub fn for_session(
        &self,
        agent: AgentId,
        token: Option<&str>,
    ) -> Result<Option<Arc<SeededLogin>>, AgentError> {
        if agent == AgentId::Mock
            || token.is_some_and(|t| !t.is_empty())
            || !self.environment_kinds(agent).is_empty()
        {
            return Ok(None);
        }
        match self.store.login(agent) {
            Ok(Some(stored)) => Ok(Some(Arc::new(SeededLogin::new(agent, stored)))),
            Ok(None) => Err(AgentError::TokenError {
                message: no_credential(agent),
            }),
            Err(error) => Err(AgentError::TokenError {
                message: format!(
                    "the stored login of {} cannot be read: {error}",
                    agent.as_str()
                ),
            }),
        }
    }

    /// Gives the store what the agent refreshed in its copy of `login` since the last look
    /// (a failure is logged, and the change is looked at again next time).
    pub async fn give_back(&self, login: &Arc<SeededLogin>) {
        let Some(change) = login.changes() else {
            return;
        };
        let store = self.store.clone();
        let agent = login.agent();
        let stored = {
            let change = change.clone();
            tokio::task::spawn_blocking(move || store.refresh(agent, &change)).await
        };
        match stored {
            Ok(Ok(true)) => {
                tracing::info!(
                    agent = agent.as_str(),
                    "stored the login the agent refreshed"
                )
            }
            Ok(Ok(false)) => {}
            Ok(Err(error)) => {
                tracing::warn!(agent = agent.as_str(), %error, "could not store the login the agent refreshed");
                login.untake(&change);
            }
            Err(error) => {
                tracing::warn!(agent = agent.as_str(), %error, "storing a refreshed login failed");
                login.untake(&change);
            }
        }
    }

    /// Gives back what the agent refreshed, then removes its copy (its process stopped).
    pub async fn finish(&self, login: &Arc<SeededLogin>) {
        self.give_back(login).await;
        login.remove();
    }
}

/// The `tokenError` of a session of `agent` with no credential: the three ways to give
/// one.
pub fn no_credential(agent: AgentId) -> String {
    let vars = sandbox_agents::manifest::spec(agent).credential_vars;
    let env = match vars {
        [] => "a provider key".to_string(),
        [one] => one.to_string(),
        more => format!(
            "{} or {}",
            more[..more.len() - 1].join(", "),
            more[more.len() - 1]
        ),
    };
    format!(
        "{} has no credential: pass the session's `token`, set {env} in the daemon's environment, or store a login (`sandbox-daemon credentials import --agent {id}`, or PUT /credentials/{id})",
        sandbox_agents::context::display_name(agent),
        id = agent.as_str(),
    )
}

#[cfg(test)]
mod tests;
