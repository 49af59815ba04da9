//! `validateToken`: ask the provider whether it accepts the session's credential before
//! the session is reported healthy.

use std::time::Duration;

use sandbox_universal::AgentError;

use crate::Credentials;

/// The Anthropic API used when `ANTHROPIC_BASE_URL` is not set.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// `GET {base}/v1/models` with the credential (`x-api-key`, or a bearer token plus the
/// OAuth beta header for OAuth tokens). 401/403 → `tokenError`; an unreachable provider
/// or a 429/5xx → `providerError`; any other answer means the credential was not
/// rejected.
pub async fn validate(credentials: &Credentials, base_url: Option<&str>) -> Result<(), AgentError> {
    let base = base_url.unwrap_or(DEFAULT_BASE_URL).trim_end_matches('/');
    let url = format!("{base}/v1/models");
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()
        .map_err(|e| AgentError::ProviderError {
            message: format!("building an HTTP client failed: {e}"),
            status: None,
        })?;
    let request = match credentials {
        Credentials::ApiKey(key) => client.get(&url).header("x-api-key", key),
        Credentials::OAuthToken(token) => client
            .get(&url)
            .bearer_auth(token)
            .header("anthropic-beta", "oauth-2025-04-20"),
        Credentials::None => {
            return Err(AgentError::TokenError {
                message: "no Anthropic credential: set ANTHROPIC_API_KEY or \
                          CLAUDE_CODE_OAUTH_TOKEN for the daemon, or pass `token`"
                    .into(),
            });
        }
    };
    let response = request
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .map_err(|e| AgentError::ProviderError {
            message: format!("could not reach {base} to validate the credential: {e}"),
            status: None,
        })?;
    let status = response.status().as_u16();
    match status {
        401 | 403 => {
            let body = response.text().await.unwrap_or_default();
            let excerpt: String = body.chars().take(300).collect();
            Err(AgentError::TokenError {
                message: format!("{base} rejected the credential (HTTP {status}): {excerpt}"),
            })
        }
        429 | 500..=599 => Err(AgentError::ProviderError {
            message: format!("{base} could not validate the credential now (HTTP {status})"),
            status: Some(status),
        }),
        _ => {
            if !(200..300).contains(&status) {
                tracing::warn!(status, %url, "credential check inconclusive; assuming it is valid");
            }
            Ok(())
        }
    }
}
