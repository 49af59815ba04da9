//! A child process that speaks JSON lines on stdin/stdout (Claude, Codex, Pi).

use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

use super::error::{DriverError, Result};
use super::transcript::{Dir, Transcript};
use crate::offline::Launch;

/// Bytes of stderr kept for error messages.
const STDERR_TAIL: usize = 16 * 1024;

/// The last bytes an agent wrote to stderr.
#[derive(Clone, Debug, Default)]
pub struct StderrTail(Arc<Mutex<String>>);

impl StderrTail {
    /// Keeps reading `stream` into the tail in a background task.
    pub fn follow(stream: impl AsyncRead + Unpin + Send + 'static) -> Self {
        let tail = Self::default();
        let sink = tail.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stream).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "agent-stderr", "{line}");
                let mut text = sink.0.lock().unwrap_or_else(|p| p.into_inner());
                text.push_str(&line);
                text.push('\n');
                if text.len() > STDERR_TAIL {
                    let cut = text.len() - STDERR_TAIL;
                    let cut = (cut..text.len())
                        .find(|i| text.is_char_boundary(*i))
                        .unwrap_or(text.len());
                    text.drain(..cut);
                }
            }
        });
        tail
    }

    /// The text kept so far.
    pub fn text(&self) -> String {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Kills a whole process group (the agent and whatever it started).
pub fn kill_group(pid: Option<u32>, signal: i32) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
        unsafe {
            libc::kill(-pid, signal);
        }
    }
}

/// A running JSON-lines agent. Every line both ways goes to the transcript; the process
/// group is killed when this is dropped.
pub struct StdioAgent {
    child: Child,
    pid: Option<u32>,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<Value>,
    transcript: Transcript,
    stderr: StderrTail,
}

impl StdioAgent {
    /// Starts the agent.
    pub fn spawn(launch: &Launch, transcript: Transcript) -> Result<Self> {
        let mut child = launch.command().spawn()?;
        let pid = child.id();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| DriverError::Protocol("no stdout".into()))?;
        let stderr = StderrTail::follow(
            child
                .stderr
                .take()
                .ok_or_else(|| DriverError::Protocol("no stderr".into()))?,
        );
        let (tx, lines) = mpsc::unbounded_channel();
        let sink = transcript.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if line.trim().is_empty() {
                    continue;
                }
                let msg = sink.push_raw(Dir::Out, None, &line);
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            stdin: child.stdin.take(),
            child,
            pid,
            lines,
            transcript,
            stderr,
        })
    }

    /// Writes one JSON line to the agent's stdin.
    pub async fn send(&mut self, msg: Value) -> Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| DriverError::Protocol("stdin already closed".into()))?;
        let mut line = msg.to_string();
        line.push('\n');
        self.transcript.push(Dir::In, None, msg);
        stdin.write_all(line.as_bytes()).await?;
        stdin.flush().await?;
        Ok(())
    }

    /// The next line from the agent, waiting at most `limit`.
    pub async fn recv(&mut self, what: &str, limit: Duration) -> Result<Value> {
        match tokio::time::timeout(limit, self.lines.recv()).await {
            Ok(Some(msg)) => Ok(msg),
            Ok(None) => {
                let status = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
                let status = match status {
                    Ok(Ok(status)) => status.to_string(),
                    _ => "still running, stdout closed".to_owned(),
                };
                Err(DriverError::Exited {
                    what: what.to_owned(),
                    status,
                    stderr: self.stderr.text(),
                })
            }
            Err(_) => Err(DriverError::Timeout {
                what: what.to_owned(),
                after: limit,
                stderr: self.stderr.text(),
            }),
        }
    }

    /// The tail of the agent's stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// Closes stdin and waits up to `grace` for a clean exit, then kills the group.
    pub async fn close(mut self, grace: Duration) -> Option<ExitStatus> {
        drop(self.stdin.take());
        let status = tokio::time::timeout(grace, self.child.wait())
            .await
            .ok()
            .and_then(|s| s.ok());
        kill_group(self.pid, libc::SIGKILL);
        status
    }
}

impl Drop for StdioAgent {
    fn drop(&mut self) {
        kill_group(self.pid, libc::SIGKILL);
    }
}
