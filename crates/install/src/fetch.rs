//! HTTP for installs: small documents (version files, release metadata, packuments) and
//! downloads streamed to disk while hashed. A 5xx answer or a broken connection is tried
//! again with backoff; a 4xx answer is final. A stalled transfer times out.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use sha2::{Digest, Sha256, Sha512};
use tokio::io::AsyncWriteExt;

use sandbox_agents::release::ReleaseHost;

use crate::config::InstallConfig;
use crate::error::InstallError;

/// What a finished download was.
#[derive(Debug, Clone)]
pub struct Downloaded {
    /// Bytes written.
    pub size: u64,
    /// SHA-256 of the bytes, hex.
    pub sha256: String,
    /// SHA-512 of the bytes (npm's integrity), raw, when asked for.
    pub sha512: Option<Vec<u8>>,
}

/// An HTTP client with the install's timeouts and retry policy.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    direct: reqwest::Client,
    retries: u32,
    backoff: Duration,
    github_token: Option<String>,
}

impl Fetcher {
    /// A fetcher following `config`'s timeouts and retries. Proxies from the environment
    /// (`HTTPS_PROXY`, ...) are used, except for loopback URLs.
    pub fn new(config: &InstallConfig) -> Self {
        let builder = || {
            reqwest::Client::builder()
                .connect_timeout(config.connect_timeout)
                .read_timeout(config.read_timeout)
                .user_agent(concat!("sandbox-daemon/", env!("CARGO_PKG_VERSION")))
        };
        Self {
            client: builder().build().expect("an HTTP client"),
            direct: builder().no_proxy().build().expect("an HTTP client"),
            retries: config.retries,
            backoff: config.backoff,
            github_token: config.github_token.clone(),
        }
    }

    /// The GitHub token, for a request to GitHub's own API host (its rate limit for
    /// anonymous callers is low); never for a mirror or any other host.
    fn token_for(&self, url: &str) -> Option<&str> {
        let host = reqwest::Url::parse(url).ok()?.host_str()?.to_string();
        let api = reqwest::Url::parse(ReleaseHost::GithubApi.default_url()).ok()?;
        (Some(host.as_str()) == api.host_str())
            .then_some(self.github_token.as_deref())
            .flatten()
    }

    fn client_for(&self, url: &str) -> &reqwest::Client {
        let loopback = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .is_some_and(|h| h == "localhost" || h == "[::1]" || h.starts_with("127."));
        if loopback { &self.direct } else { &self.client }
    }

    /// A response with a success status, after retries.
    async fn get(&self, url: &str, accept: &str) -> Result<reqwest::Response, InstallError> {
        let mut attempt = 0;
        loop {
            let mut request = self
                .client_for(url)
                .get(url)
                .header(reqwest::header::ACCEPT, accept);
            if let Some(token) = self.token_for(url) {
                request = request.bearer_auth(token);
            }
            let result = request.send().await;
            let retry = match result {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) if response.status().is_server_error() => InstallError::Http {
                    url: url.into(),
                    status: response.status().as_u16(),
                },
                Ok(response) => {
                    return Err(InstallError::Http {
                        url: url.into(),
                        status: response.status().as_u16(),
                    });
                }
                // Nothing listens there: trying again within seconds will not change that.
                Err(error) if refused(&error) => return Err(network(url, &error)),
                Err(error) => network(url, &error),
            };
            attempt = self.pause(attempt, url, retry).await?;
        }
    }

    /// Waits before the next attempt, or gives up with `error` when retries are spent.
    async fn pause(
        &self,
        attempt: u32,
        url: &str,
        error: InstallError,
    ) -> Result<u32, InstallError> {
        if attempt >= self.retries {
            return Err(error);
        }
        let delay = self.backoff * 2u32.saturating_pow(attempt);
        tracing::warn!(%url, %error, attempt = attempt + 1, ?delay, "install download failed; retrying");
        tokio::time::sleep(delay).await;
        Ok(attempt + 1)
    }

    /// A small text document (a version file), trimmed.
    pub async fn text(&self, url: &str) -> Result<String, InstallError> {
        let mut attempt = 0;
        loop {
            let response = self.get(url, "text/plain, */*").await?;
            match response.text().await {
                Ok(text) => return Ok(text.trim().to_string()),
                Err(error) => attempt = self.pause(attempt, url, network(url, &error)).await?,
            }
        }
    }

    /// A JSON document.
    pub async fn json(&self, url: &str, accept: &str) -> Result<serde_json::Value, InstallError> {
        let mut attempt = 0;
        loop {
            let response = self.get(url, accept).await?;
            match response.bytes().await {
                Ok(body) => {
                    return serde_json::from_slice(&body).map_err(|e| InstallError::BadResponse {
                        url: url.into(),
                        detail: format!("not JSON: {e}"),
                    });
                }
                Err(error) => attempt = self.pause(attempt, url, network(url, &error)).await?,
            }
        }
    }

    /// Downloads `url` into `dest` (created or truncated), reporting `(bytes, total)` as
    /// bytes arrive. A transfer that breaks off starts over, up to the retry limit; fewer
    /// bytes than the server announced is a broken transfer.
    pub async fn download(
        &self,
        url: &str,
        dest: &Path,
        sha512: bool,
        mut progress: impl FnMut(u64, Option<u64>),
    ) -> Result<Downloaded, InstallError> {
        let mut attempt = 0;
        loop {
            match self.download_once(url, dest, sha512, &mut progress).await {
                Ok(done) => return Ok(done),
                Err(Failure::Transfer(error)) => {
                    attempt = self.pause(attempt, url, error).await?;
                }
                Err(Failure::Final(error)) => return Err(error),
            }
        }
    }

    async fn download_once(
        &self,
        url: &str,
        dest: &Path,
        want_sha512: bool,
        progress: &mut impl FnMut(u64, Option<u64>),
    ) -> Result<Downloaded, Failure> {
        // `get` has retried already.
        let response = self
            .get(url, "application/octet-stream, */*")
            .await
            .map_err(Failure::Final)?;
        let total = response.content_length();
        let mut file = tokio::fs::File::create(dest)
            .await
            .map_err(|e| Failure::Final(InstallError::io("creating the download file", dest, e)))?;
        let mut sha256 = Sha256::new();
        let mut sha512 = want_sha512.then(Sha512::new);
        let mut size = 0u64;
        progress(0, total);
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| Failure::Transfer(network(url, &e)))?;
            file.write_all(&chunk)
                .await
                .map_err(|e| Failure::Final(InstallError::io("writing the download", dest, e)))?;
            sha256.update(&chunk);
            if let Some(sha512) = &mut sha512 {
                sha512.update(&chunk);
            }
            size += chunk.len() as u64;
            progress(size, total);
        }
        if let Some(total) = total
            && size != total
        {
            return Err(Failure::Transfer(InstallError::Network {
                url: url.into(),
                message: format!("the transfer ended after {size} of {total} bytes"),
            }));
        }
        file.sync_all()
            .await
            .map_err(|e| Failure::Final(InstallError::io("writing the download", dest, e)))?;
        Ok(Downloaded {
            size,
            sha256: hex(&sha256.finalize()),
            sha512: sha512.map(|h| h.finalize().to_vec()),
        })
    }
}

/// Why a download attempt failed: a transfer that broke off is tried again; anything else
/// (an error status after `get`'s own retries, a local write failure) is final.
enum Failure {
    Transfer(InstallError),
    Final(InstallError),
}

/// Whether the connection was refused (no server on that port).
fn refused(error: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        if let Some(io) = inner.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        source = inner.source();
    }
    false
}

fn network(url: &str, error: &reqwest::Error) -> InstallError {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        message.push_str(": ");
        message.push_str(&inner.to_string());
        source = inner.source();
    }
    InstallError::Network {
        url: url.into(),
        message,
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_github_token_goes_to_github_api_only() {
        let mut config = InstallConfig::new("/x".into());
        config.github_token = Some("ghp_secret".into());
        let fetcher = Fetcher::new(&config);
        assert_eq!(
            fetcher.token_for("https://api.github.com/repos/openai/codex/releases/latest"),
            Some("ghp_secret")
        );
        for elsewhere in [
            "https://github.com/openai/codex/releases/download/rust-v1/codex.tar.gz",
            "http://127.0.0.1:9/repos/openai/codex/releases/latest",
            "https://api.github.com.evil.example/repos",
        ] {
            assert_eq!(fetcher.token_for(elsewhere), None, "{elsewhere}");
        }
        assert_eq!(
            Fetcher::new(&InstallConfig::new("/x".into()))
                .token_for("https://api.github.com/repos"),
            None
        );
    }
}
