//! What a login holds, checked against the shape its agent writes: the entries' names,
//! kinds and expiry, never a secret. A login that is not of its agent's shape is refused
//! with the reason, so a file of the wrong agent is not seeded into a session.

use sandbox_universal::{AgentId, LoginEntry, LoginEntryKind};
use serde_json::{Map, Value};

use super::Login;

/// The entries of `login` for `agent`, or why it is not a login of that agent.
pub fn describe(agent: AgentId, login: &Login) -> Result<Vec<LoginEntry>, String> {
    let file = match login {
        Login::Token(token) => return token_entry(agent, token),
        Login::File(Value::Object(file)) => file,
        Login::File(_) => return Err("a login file is a JSON object".into()),
    };
    let entries = match agent {
        AgentId::Claude => claude(file)?,
        AgentId::Codex => codex(file)?,
        AgentId::Opencode => per_provider(file, "type", &[("api", LoginEntryKind::ApiKey)])?,
        AgentId::Pi => per_provider(file, "type", &[("api_key", LoginEntryKind::ApiKey)])?,
        AgentId::Amp => amp(file)?,
        AgentId::Mock => return Err("the mock agent needs no login".into()),
    };
    if entries.is_empty() {
        return Err("it holds no login".into());
    }
    Ok(entries)
}

fn token_entry(agent: AgentId, token: &str) -> Result<Vec<LoginEntry>, String> {
    if agent != AgentId::Claude {
        return Err(format!(
            "{} takes its login file (`login`), not a token",
            agent.as_str()
        ));
    }
    if token.trim().is_empty() || token.chars().any(char::is_whitespace) {
        return Err("the token is empty or has spaces in it".into());
    }
    Ok(vec![LoginEntry {
        name: "oauthToken".into(),
        kind: LoginEntryKind::Token,
        expires_at: None,
    }])
}

/// `{"claudeAiOauth": {"accessToken", "refreshToken", "expiresAt" (ms), ...}}`.
fn claude(file: &Map<String, Value>) -> Result<Vec<LoginEntry>, String> {
    let oauth = file
        .get("claudeAiOauth")
        .ok_or("no `claudeAiOauth`: not a Claude Code `.credentials.json`")?;
    require_string(oauth, "accessToken", "claudeAiOauth")?;
    Ok(vec![LoginEntry {
        name: "claudeAiOauth".into(),
        kind: LoginEntryKind::Oauth,
        expires_at: oauth
            .get("expiresAt")
            .and_then(Value::as_i64)
            .and_then(rfc3339_ms),
    }])
}

/// `{"OPENAI_API_KEY": null | "sk-…", "tokens": {"id_token", "access_token",
/// "refresh_token", "account_id"}, "last_refresh": "…"}`.
fn codex(file: &Map<String, Value>) -> Result<Vec<LoginEntry>, String> {
    let mut entries = Vec::new();
    if let Some(tokens) = file.get("tokens").filter(|t| !t.is_null()) {
        require_string(tokens, "access_token", "tokens")?;
        entries.push(LoginEntry {
            name: "chatgpt".into(),
            kind: LoginEntryKind::Oauth,
            expires_at: tokens
                .get("access_token")
                .and_then(Value::as_str)
                .and_then(jwt_expiry),
        });
    }
    match file.get("OPENAI_API_KEY") {
        Some(Value::String(key)) if !key.is_empty() => entries.push(LoginEntry {
            name: "apiKey".into(),
            kind: LoginEntryKind::ApiKey,
            expires_at: None,
        }),
        None | Some(Value::Null) | Some(Value::String(_)) => {}
        Some(_) => return Err("`OPENAI_API_KEY` is not a string".into()),
    }
    if entries.is_empty() {
        return Err("neither `tokens` nor `OPENAI_API_KEY`: not a Codex `auth.json`".into());
    }
    Ok(entries)
}

/// One entry per provider, `{"<provider>": {"type": "oauth" | <api>, …}}` (OpenCode's and
/// Pi's `auth.json`); an OAuth entry needs its `access` token.
fn per_provider(
    file: &Map<String, Value>,
    tag: &str,
    others: &[(&str, LoginEntryKind)],
) -> Result<Vec<LoginEntry>, String> {
    let mut entries = Vec::new();
    for (provider, entry) in file {
        let kind = match entry.get(tag).and_then(Value::as_str) {
            Some("oauth") => {
                require_string(entry, "access", provider)?;
                LoginEntryKind::Oauth
            }
            Some(other) => others
                .iter()
                .find(|(name, _)| *name == other)
                .map_or(LoginEntryKind::Other, |(_, kind)| *kind),
            None => {
                return Err(format!("`{provider}` has no `{tag}`: not a provider login"));
            }
        };
        entries.push(LoginEntry {
            name: provider.clone(),
            kind,
            expires_at: entry
                .get("expires")
                .and_then(Value::as_i64)
                .and_then(rfc3339_ms),
        });
    }
    Ok(entries)
}

/// `{"apiKey@<service URL>": "<key>"}`.
fn amp(file: &Map<String, Value>) -> Result<Vec<LoginEntry>, String> {
    let mut entries = Vec::new();
    for (name, value) in file {
        if let Some(service) = name.strip_prefix("apiKey@") {
            if value.as_str().is_none_or(str::is_empty) {
                return Err(format!("`{name}` is not a key"));
            }
            entries.push(LoginEntry {
                name: service.to_string(),
                kind: LoginEntryKind::ApiKey,
                expires_at: None,
            });
        }
    }
    if entries.is_empty() {
        return Err("no `apiKey@…` entry: not an Amp `secrets.json`".into());
    }
    Ok(entries)
}

fn require_string(object: &Value, field: &str, within: &str) -> Result<(), String> {
    match object.get(field) {
        Some(Value::String(s)) if !s.is_empty() => Ok(()),
        _ => Err(format!("`{within}` has no `{field}`")),
    }
}

fn rfc3339_ms(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// The `exp` claim of a JWT access token (ChatGPT's), without checking its signature:
/// for display only.
fn jwt_expiry(token: &str) -> Option<String> {
    use base64::Engine;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    let exp = claims.get("exp")?.as_i64()?;
    rfc3339_ms(exp.checked_mul(1000)?)
}
