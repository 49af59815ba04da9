//! Credentials as the API shows them: which kinds an agent has available, and the logins
//! the daemon keeps for it (`/credentials`). Secrets never appear in these types' output:
//! a stored login is described by its entries' names, kinds and expiry only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::AgentId;

/// A kind of credential a session can use.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum CredentialKind {
    /// A provider API key in the daemon's environment (`ANTHROPIC_API_KEY`, ...).
    ApiKey,
    /// An OAuth token in the daemon's environment (`CLAUDE_CODE_OAUTH_TOKEN`).
    OauthToken,
    /// A login stored in the daemon (`PUT /credentials/{agent}`, `credentials import`).
    StoredLogin,
}

/// Which credentials an agent can use on this daemon, without revealing any.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentCredentials {
    /// Whether a session of the agent needs one (not the mock).
    pub required: bool,
    /// The kinds available now, in the order a session uses them (a session's own `token`
    /// comes before all of them).
    pub available: Vec<CredentialKind>,
}

/// What one stored login holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LoginEntryKind {
    /// An OAuth login (a subscription): an access token and usually a refresh token.
    Oauth,
    /// An API key kept in the agent's login file.
    ApiKey,
    /// A long-lived token (Claude's `setup-token`), given to the agent in its environment.
    Token,
    /// Another kind the agent knows (e.g. OpenCode's `wellknown`).
    Other,
}

/// One login inside a stored login file (OpenCode and Pi keep one per provider).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginEntry {
    /// What it is for: a provider (`anthropic`, `openai`), `chatgpt`, `claudeAiOauth`, or
    /// the service URL Amp keys it by.
    pub name: String,
    /// What it holds.
    pub kind: LoginEntryKind,
    /// When its access token expires (RFC 3339), when the login says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// A login the daemon keeps for an agent (`GET /credentials/{agent}`): everything but the
/// secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredLoginInfo {
    /// The agent it is for.
    pub agent: AgentId,
    /// The file a session's private home gets (relative to that home), or none for a
    /// token given in the environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// What it holds.
    pub entries: Vec<LoginEntry>,
    /// Where it was imported from (a path on the importing machine), when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When it was stored (RFC 3339).
    pub stored_at: String,
    /// When an agent last refreshed it and the daemon wrote the refresh back (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refreshed_at: Option<String>,
}

/// `GET /credentials`: the stored logins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsResponse {
    /// One per agent that has one, by agent id.
    pub credentials: Vec<StoredLoginInfo>,
}

/// `PUT /credentials/{agent}`: a login to store. Exactly one of `login` and `token`.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PutCredentialRequest {
    /// The agent's login file as the agent wrote it: Claude's `.credentials.json`, Codex's
    /// `auth.json`, OpenCode's `auth.json`, Amp's `secrets.json`, Pi's `auth.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub login: Option<serde_json::Value>,
    /// A long-lived token instead of a file (Claude: the `sk-ant-oat…` token of
    /// `claude setup-token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Where it came from, for the listing (e.g. the path `credentials import` read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl std::fmt::Debug for PutCredentialRequest {
    /// Names what is there; never the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PutCredentialRequest")
            .field("login", &self.login.as_ref().map(|_| "<redacted>"))
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("source", &self.source)
            .finish()
    }
}
