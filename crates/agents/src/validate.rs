//! `validateToken`: ask the model provider whether it accepts a session's credential
//! before the session is reported healthy. Shared by every agent that talks to Anthropic
//! or OpenAI.

use std::time::Duration;

use sandbox_universal::AgentError;

use crate::Credentials;

/// The Anthropic API used when `ANTHROPIC_BASE_URL` is not set.
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The OpenAI API used when `OPENAI_BASE_URL` is not set (OpenAI's convention: with `/v1`).
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Which provider API a credential is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderApi {
    /// Anthropic Messages: `GET {base}/v1/models` with `x-api-key` (or a bearer OAuth token).
    Anthropic,
    /// OpenAI: `GET {base}/models` with a bearer key (the base URL includes `/v1`).
    OpenAi,
}

impl ProviderApi {
    fn default_base_url(self) -> &'static str {
        match self {
            Self::Anthropic => ANTHROPIC_DEFAULT_BASE_URL,
            Self::OpenAi => OPENAI_DEFAULT_BASE_URL,
        }
    }

    fn missing_credential(self) -> &'static str {
        match self {
            Self::Anthropic => {
                "no Anthropic credential: set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN for the daemon, or pass `token`"
            }
            Self::OpenAi => {
                "no OpenAI credential: set OPENAI_API_KEY for the daemon, or pass `token`"
            }
        }
    }
}

/// Checks `credentials` against the provider's model list. 401/403 → `tokenError`; an
/// unreachable provider or a 429/5xx → `providerError`; any other answer means the
/// credential was not rejected.
pub async fn validate(
    api: ProviderApi,
    credentials: &Credentials,
    base_url: Option<&str>,
) -> Result<(), AgentError> {
    let base = base_url
        .unwrap_or(api.default_base_url())
        .trim_end_matches('/');
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()
        .map_err(|e| AgentError::ProviderError {
            message: format!("building an HTTP client failed: {e}"),
            status: None,
        })?;
    let (secret, oauth) = match credentials {
        Credentials::ApiKey(key) => (key, false),
        Credentials::OAuthToken(token) => (token, true),
        Credentials::None => {
            return Err(AgentError::TokenError {
                message: api.missing_credential().into(),
            });
        }
    };
    let (url, request) = match api {
        ProviderApi::Anthropic => {
            let url = format!("{base}/v1/models");
            let request = if oauth {
                client
                    .get(&url)
                    .bearer_auth(secret)
                    .header("anthropic-beta", "oauth-2025-04-20")
            } else {
                client.get(&url).header("x-api-key", secret)
            };
            (url, request.header("anthropic-version", "2023-06-01"))
        }
        ProviderApi::OpenAi => {
            let url = format!("{base}/models");
            let request = client.get(&url).bearer_auth(secret);
            (url, request)
        }
    };
    let response = request
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
