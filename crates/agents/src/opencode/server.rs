//! One running `opencode serve`: started on a free loopback port, its URL read from the
//! line it prints, checked healthy behind its password, and its one event stream
//! (`GET /global/event`) read by a task that hands every event to the caller. The server
//! hosts many sessions; routing its events to them is the caller's (see the driver).

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_universal::AgentError;
use tokio::io::{AsyncBufRead, Lines};
use tokio::task::JoinHandle;

use super::launch::USER;
use crate::process::{AgentProcess, ExitInfo, ProcessSpec};
use crate::transport::{HttpError, HttpPeer, Line};

/// How long a server may take to listen and answer its health check (a cold start is
/// 2–4 s alone, much more on a busy 2-core machine).
pub const START_TIMEOUT: Duration = Duration::from_secs(90);
/// How long one HTTP request to the server may take: as long as a start, since the first
/// requests of a cold server (its providers and models) are part of its start, and took
/// over 30 s on a 2-core machine busy with other builds and agents.
pub const REQUEST_TIMEOUT: Duration = START_TIMEOUT;
/// The health route.
pub const HEALTH: &str = "/global/health";
/// The one event stream of every directory's sessions.
pub const EVENTS: &str = "/global/event";
/// What the server prints once it listens, followed by its URL.
const LISTENING: &str = "opencode server listening on ";

/// Why the event stream ended.
#[derive(Debug)]
pub enum StreamEnd {
    /// The server process exited.
    Exited(ExitInfo),
    /// The stream broke or closed while the process still ran.
    Broken(String),
}

/// What the event task calls.
pub trait EventHandler: Send + Sync + 'static {
    /// One event of the stream (`{"directory", "payload": {"type", "properties"}}`), or a
    /// data payload that is not JSON.
    fn event(&self, line: Line);
    /// The stream is over (the server is gone or unusable); no more events come.
    fn ended(&self, end: StreamEnd);
}

/// A running server.
pub struct Server {
    process: AgentProcess,
    peer: HttpPeer,
    url: String,
    events: JoinHandle<()>,
}

impl Server {
    /// Starts `spec` (an `opencode serve` from [`super::launch::serve`]) with `password`,
    /// waits until it listens and is healthy, and opens its event stream for `handler`.
    pub async fn start(
        spec: &ProcessSpec,
        password: &str,
        handler: Arc<dyn EventHandler>,
    ) -> Result<Self, AgentError> {
        let (mut process, mut stdout) =
            AgentProcess::spawn(spec).map_err(|e| spawn_error(spec, &e))?;
        process.close_stdin();
        let deadline = Instant::now() + START_TIMEOUT;
        let started = async {
            let url = listening_url(&mut stdout, &process, deadline).await?;
            // Its stdout says nothing more that matters; keep the pipe drained.
            tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
            let peer = HttpPeer::new(url.clone(), REQUEST_TIMEOUT)?.with_basic_auth(USER, password);
            peer.wait_ready(HEALTH, deadline)
                .await
                .map_err(|e| e.into_agent_error("opencode did not become healthy"))?;
            let stream = peer
                .events(EVENTS)
                .await
                .map_err(|e| e.into_agent_error("opencode's event stream"))?;
            Ok::<_, AgentError>((url, peer, stream))
        };
        let (url, peer, mut stream) = match started.await {
            Ok(started) => started,
            Err(error) => {
                let exit = process.stop(Duration::from_secs(3)).await;
                return Err(with_stderr(error, &exit));
            }
        };
        let mut exit = process.exit_watch();
        let events = tokio::spawn(async move {
            while let Some(line) = stream.next().await {
                handler.event(line);
            }
            let why = stream.ended_with_error().map_or_else(
                || "the event stream closed".to_string(),
                HttpError::to_string,
            );
            // A stream that ends with its process is an exit; give the exit a moment to be
            // seen so it is reported as one.
            let exited =
                tokio::time::timeout(Duration::from_secs(2), exit.wait_for(Option::is_some))
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .and_then(|info| info.clone());
            handler.ended(match exited {
                Some(info) => StreamEnd::Exited(info),
                None => StreamEnd::Broken(why),
            });
        });
        Ok(Self {
            process,
            peer,
            url,
            events,
        })
    }

    /// The HTTP client of the server (authenticated).
    pub fn peer(&self) -> &HttpPeer {
        &self.peer
    }

    /// The server's base URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Whether the process has exited or its event stream is over.
    pub fn is_dead(&self) -> bool {
        self.process.exited().is_some() || self.events.is_finished()
    }

    /// Stops the server (SIGTERM, SIGKILL after a grace period); the handler hears
    /// [`StreamEnd::Exited`].
    pub async fn stop(mut self) -> ExitInfo {
        let exit = self.process.stop(Duration::from_secs(3)).await;
        let _ = tokio::time::timeout(Duration::from_secs(5), &mut self.events).await;
        exit
    }
}

/// Reads stdout until the server says where it listens.
async fn listening_url<R: AsyncBufRead + Unpin>(
    stdout: &mut Lines<R>,
    process: &AgentProcess,
    deadline: Instant,
) -> Result<String, AgentError> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    let found = tokio::time::timeout(remaining, async {
        while let Ok(Some(line)) = stdout.next_line().await {
            if let Some(url) = line.trim().strip_prefix(LISTENING) {
                return Some(url.trim_end_matches('/').to_string());
            }
        }
        None
    })
    .await;
    match found {
        Ok(Some(url)) if url.starts_with("http://127.0.0.1:") => Ok(url),
        Ok(Some(url)) => Err(AgentError::protocol(format!(
            "opencode listens on {url}, not on loopback"
        ))),
        Ok(None) => {
            let exit = process.wait().await;
            Err(exit.error(format!(
                "opencode serve exited before listening ({})",
                exit.describe()
            )))
        }
        Err(_) => Err(AgentError::Timeout {
            message: format!(
                "opencode serve did not listen within {} s",
                START_TIMEOUT.as_secs()
            ),
        }),
    }
}

fn spawn_error(spec: &ProcessSpec, error: &std::io::Error) -> AgentError {
    if error.kind() == std::io::ErrorKind::NotFound {
        AgentError::NotInstalled {
            message: format!("opencode was not found at {}", spec.program.display()),
        }
    } else {
        AgentError::SpawnFailed {
            message: format!("could not start {}: {error}", spec.program.display()),
        }
    }
}

/// Adds the server's last stderr lines to a start-up error.
fn with_stderr(error: AgentError, exit: &ExitInfo) -> AgentError {
    if exit.stderr_tail.is_empty() || matches!(error, AgentError::ProcessExited { .. }) {
        return error;
    }
    let message = format!("{}; stderr: {}", error.message(), exit.stderr_tail);
    match error {
        AgentError::Timeout { .. } => AgentError::Timeout { message },
        _ => AgentError::SpawnFailed { message },
    }
}
