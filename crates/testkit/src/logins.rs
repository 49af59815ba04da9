//! Fake login files in each agent's own shape (never real secrets), and the OAuth token
//! endpoint's answers the fake provider gives (`POST /oauth/token`), so tests can seed a
//! stored login and watch an agent refresh it offline.
//!
//! The tokens are the keys the fake provider is told to accept: a model call proves which
//! one the agent sent.

use base64::Engine;
use serde_json::{Value, json};

/// The access token of the fake Claude subscription login.
pub const CLAUDE_ACCESS: &str = "sk-ant-oat01-fake-login-access-5e7a";
/// The key of the fake OpenCode and Pi logins (an API-key entry of their `auth.json`).
pub const PROVIDER_LOGIN_KEY: &str = "sk-ant-fake-login-key-91c4";
/// The key of the fake Amp login.
pub const AMP_LOGIN_KEY: &str = "sgamp-fake-login-key-3d2e";
/// The refresh token the token endpoint hands out.
pub const REFRESHED_REFRESH_TOKEN: &str = "rt-fake-refreshed-2c9b";
/// The refresh token of the fake logins before any refresh.
pub const REFRESH_TOKEN: &str = "rt-fake-login-refresh-8f01";
/// The ChatGPT account of the fake Codex login.
pub const ACCOUNT_ID: &str = "acct-fake-login-0001";

/// An unsigned JWT with these claims (agents decode them; nothing checks a signature).
pub fn jwt(claims: &Value) -> String {
    let part = |value: &Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string().as_bytes())
    };
    format!(
        "{}.{}.fake-signature",
        part(&json!({"alg": "RS256", "typ": "JWT"})),
        part(claims)
    )
}

/// The ChatGPT claims of the fake account, expiring at `exp` (seconds), marked `mark`.
fn chatgpt_claims(exp: i64, mark: &str) -> Value {
    json!({
        "iss": "https://auth.openai.com",
        "aud": ["app_fake"],
        "sub": "auth0|fake",
        "email": "fake@example.com",
        "email_verified": true,
        "iat": 1_700_000_000,
        "exp": exp,
        "mark": mark,
        "https://api.openai.com/auth": {
            "chatgpt_plan_type": "pro",
            "chatgpt_user_id": "user-fake",
            "chatgpt_account_id": ACCOUNT_ID,
            "user_id": "user-fake",
        },
    })
}

/// The access token of the fake Codex login: expired long ago, so Codex refreshes it
/// before its first call.
pub fn codex_expired_access() -> String {
    jwt(&chatgpt_claims(1_000_000_000, "expired"))
}

/// The access token the token endpoint hands out (valid until 2096).
pub fn refreshed_access() -> String {
    jwt(&chatgpt_claims(4_000_000_000, "refreshed"))
}

/// The id token of the fake ChatGPT account.
pub fn id_token() -> String {
    jwt(&chatgpt_claims(4_000_000_000, "id"))
}

/// Codex's `auth.json` of a ChatGPT subscription whose access token has expired.
pub fn codex() -> Value {
    json!({
        "auth_mode": "chatgpt",
        "OPENAI_API_KEY": null,
        "tokens": {
            "id_token": id_token(),
            "access_token": codex_expired_access(),
            "refresh_token": REFRESH_TOKEN,
            "account_id": ACCOUNT_ID,
        },
        "last_refresh": "2026-01-01T00:00:00Z",
    })
}

/// Claude Code's `.credentials.json` of a subscription, valid until 2096.
pub fn claude() -> Value {
    json!({"claudeAiOauth": {
        "accessToken": CLAUDE_ACCESS,
        "refreshToken": REFRESH_TOKEN,
        "expiresAt": 4_000_000_000_000_i64,
        "scopes": ["user:inference", "user:profile"],
        "subscriptionType": "max",
    }})
}

/// OpenCode's `auth.json` with an Anthropic key (OpenCode's subscription logins reach
/// their vendors' servers only, at URLs it does not let anyone move).
pub fn opencode() -> Value {
    json!({"anthropic": {"type": "api", "key": PROVIDER_LOGIN_KEY}})
}

/// Pi's `auth.json` of a Claude subscription, valid until 2096.
pub fn pi() -> Value {
    json!({"anthropic": {
        "type": "oauth",
        "access": CLAUDE_ACCESS,
        "refresh": REFRESH_TOKEN,
        "expires": 4_000_000_000_000_i64,
    }})
}

/// Amp's `secrets.json` for the service at `url` (Amp keys it by its URL exactly as
/// `AMP_URL` names it; its own is `https://ampcode.com/`).
pub fn amp(url: &str) -> Value {
    json!({format!("apiKey@{url}"): AMP_LOGIN_KEY})
}

/// The token endpoint's answer to a refresh (Codex's and Claude's shape).
pub fn token_response() -> Value {
    json!({
        "access_token": refreshed_access(),
        "refresh_token": REFRESHED_REFRESH_TOKEN,
        "id_token": id_token(),
        "expires_in": 3600,
        "token_type": "Bearer",
        "scope": "user:inference user:profile",
    })
}

/// Every token the fake logins hold or the token endpoint hands out: the provider
/// accepts them as keys, and none may leak.
pub fn secrets() -> Vec<String> {
    vec![
        CLAUDE_ACCESS.into(),
        PROVIDER_LOGIN_KEY.into(),
        AMP_LOGIN_KEY.into(),
        REFRESH_TOKEN.into(),
        REFRESHED_REFRESH_TOKEN.into(),
        codex_expired_access(),
        refreshed_access(),
    ]
}
