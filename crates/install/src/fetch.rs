//! HTTP for installs: small documents (version files, release metadata, packuments) and
//! downloads streamed to disk while hashed. A 5xx answer or a broken connection is tried
//! again with backoff; a 4xx answer is final, and so is a connection nothing accepts.
//!
//! Waiting is bounded twice (see [`crate::config`]): a request must be answered — a
//! download's response head, a document whole — within the answer budget, its retries
//! included, or the install fails naming the silent host ([`InstallError::NoAnswer`]); a
//! download's body may then take as long as it takes, as long as no gap between two chunks
//! exceeds the stall limit.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use sha2::{Digest, Sha256, Sha512};
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

use sandbox_agents::manifest::AgentSpec;
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
    clients: crate::clients::LazyClients,
    retries: u32,
    backoff: Duration,
    answer_timeout: Duration,
    github_token: Option<String>,
    /// The override variable a [`InstallError::NoAnswer`] points to.
    path_var: String,
}

impl Fetcher {
    /// A fetcher following `config`'s timeouts and retries. Proxies from the environment
    /// (`HTTPS_PROXY`, ...) are used, except for loopback URLs.
    pub fn new(config: &InstallConfig) -> Self {
        let (connect, read) = (config.connect_timeout, config.read_timeout);
        Self {
            clients: crate::clients::LazyClients::new(move || {
                reqwest::Client::builder()
                    .connect_timeout(connect)
                    .read_timeout(read)
                    .user_agent(concat!("sandbox-daemon/", env!("CARGO_PKG_VERSION")))
            }),
            retries: config.retries,
            backoff: config.backoff,
            answer_timeout: config.answer_timeout,
            github_token: config.github_token.clone(),
            path_var: "SANDBOX_DAEMON_<AGENT>_PATH".into(),
        }
    }

    /// This fetcher, for installing `spec`: a host that does not answer is reported with
    /// the agent's own override variable as a way out.
    pub fn for_agent(&self, spec: &AgentSpec) -> Self {
        Self {
            path_var: spec.path_var(),
            ..self.clone()
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
        self.clients.get(loopback)
    }

    /// The moment a request sent now must have been answered by.
    fn deadline(&self) -> Instant {
        Instant::now() + self.answer_timeout
    }

    /// A response with a success status, answered before `deadline` (retries and their
    /// pauses included).
    async fn get(
        &self,
        url: &str,
        accept: &str,
        deadline: Instant,
    ) -> Result<reqwest::Response, InstallError> {
        let mut attempt = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.silent(url));
            }
            let mut request = self
                .client_for(url)
                .get(url)
                .header(reqwest::header::ACCEPT, accept);
            if let Some(token) = self.token_for(url) {
                request = request.bearer_auth(token);
            }
            let retry = match tokio::time::timeout(left, request.send()).await {
                Err(_) => return Err(self.silent(url)),
                Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                Ok(Ok(response)) if response.status().is_server_error() => InstallError::Http {
                    url: url.into(),
                    status: response.status().as_u16(),
                },
                Ok(Ok(response)) => {
                    return Err(InstallError::Http {
                        url: url.into(),
                        status: response.status().as_u16(),
                    });
                }
                // Nothing listens there, or no route leads there: trying again within
                // seconds will not change that.
                Ok(Err(error)) if unreachable(&error) => return Err(self.unreachable(url, &error)),
                Ok(Err(error)) if error.is_connect() || error.is_timeout() => {
                    self.unreachable(url, &error)
                }
                Ok(Err(error)) => network(url, &error),
            };
            attempt = self.pause(attempt, url, retry, Some(deadline)).await?;
        }
    }

    /// Waits before the next attempt, or gives up with `error` when retries are spent or
    /// the pause would end past `deadline`.
    async fn pause(
        &self,
        attempt: u32,
        url: &str,
        error: InstallError,
        deadline: Option<Instant>,
    ) -> Result<u32, InstallError> {
        if attempt >= self.retries {
            return Err(error);
        }
        let delay = self.backoff * 2u32.saturating_pow(attempt);
        if deadline.is_some_and(|deadline| Instant::now() + delay >= deadline) {
            return Err(error);
        }
        tracing::warn!(%url, %error, attempt = attempt + 1, ?delay, "install download failed; retrying");
        tokio::time::sleep(delay).await;
        Ok(attempt + 1)
    }

    /// A small document, whole: its answer is its body, so the body too must arrive
    /// within the answer budget.
    async fn document(&self, url: &str, accept: &str) -> Result<Vec<u8>, InstallError> {
        let deadline = self.deadline();
        let mut attempt = 0;
        loop {
            let response = self.get(url, accept, deadline).await?;
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, response.bytes()).await {
                Err(_) => return Err(self.silent(url)),
                Ok(Ok(body)) => return Ok(body.to_vec()),
                Ok(Err(error)) => {
                    attempt = self
                        .pause(attempt, url, network(url, &error), Some(deadline))
                        .await?
                }
            }
        }
    }

    /// A small text document (a version file), trimmed.
    pub async fn text(&self, url: &str) -> Result<String, InstallError> {
        let body = self.document(url, "text/plain, */*").await?;
        Ok(String::from_utf8_lossy(&body).trim().to_string())
    }

    /// A JSON document.
    pub async fn json(&self, url: &str, accept: &str) -> Result<serde_json::Value, InstallError> {
        let body = self.document(url, accept).await?;
        serde_json::from_slice(&body).map_err(|e| InstallError::BadResponse {
            url: url.into(),
            detail: format!("not JSON: {e}"),
        })
    }

    /// Downloads `url` into `dest` (created or truncated), reporting `(bytes, total)` as
    /// bytes arrive. Each attempt must be answered within the answer budget; its body may
    /// then take any time, but not stall longer than the stall limit. A transfer that
    /// breaks off or stalls starts over, up to the retry limit; fewer bytes than the
    /// server announced is a broken transfer.
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
                    attempt = self.pause(attempt, url, error, None).await?;
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
            .get(url, "application/octet-stream, */*", self.deadline())
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

    /// `url`'s host sent no answer within the budget.
    fn silent(&self, url: &str) -> InstallError {
        InstallError::NoAnswer {
            host: host_of(url),
            url: url.into(),
            detail: format!(
                "nothing came back within {} s",
                self.answer_timeout.as_secs_f32()
            ),
            path_var: self.path_var.clone(),
        }
    }

    /// `url`'s host could not be connected to (or timed out), as `error` says.
    fn unreachable(&self, url: &str, error: &reqwest::Error) -> InstallError {
        InstallError::NoAnswer {
            host: host_of(url),
            url: url.into(),
            detail: chain(error),
            path_var: self.path_var.clone(),
        }
    }
}

/// Why a download attempt failed: a transfer that broke off is tried again; anything else
/// (an error status after `get`'s own retries, a local write failure) is final.
enum Failure {
    Transfer(InstallError),
    Final(InstallError),
}

/// `host[:port]` of a URL (the URL itself when it has no host).
fn host_of(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| {
            let host = u.host_str()?.to_string();
            Some(match u.port() {
                Some(port) => format!("{host}:{port}"),
                None => host,
            })
        })
        .unwrap_or_else(|| url.to_string())
}

/// Whether the connection failed for a reason that lasts longer than a retry's pause:
/// refused (no server on that port), or no route to the network or host.
fn unreachable(error: &reqwest::Error) -> bool {
    use std::io::ErrorKind;
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        if let Some(io) = inner.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                ErrorKind::ConnectionRefused
                    | ErrorKind::NetworkUnreachable
                    | ErrorKind::HostUnreachable
            )
        {
            return true;
        }
        source = inner.source();
    }
    false
}

/// The error and its causes, as one line.
fn chain(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        message.push_str(": ");
        message.push_str(&inner.to_string());
        source = inner.source();
    }
    message
}

fn network(url: &str, error: &reqwest::Error) -> InstallError {
    InstallError::Network {
        url: url.into(),
        message: chain(error),
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
