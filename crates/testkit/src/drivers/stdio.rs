//! A child process that speaks JSON lines on stdin/stdout (Claude, Codex, Pi), on the
//! agents crate's [`AgentProcess`] (the same spawning, stderr tail and process-group
//! signalling the daemon uses).

use std::time::Duration;

use sandbox_agents::process::{AgentProcess, ExitInfo};
use serde_json::Value;
use tokio::sync::mpsc;

use super::error::{DriverError, Result};
use super::transcript::{Dir, Transcript};
use crate::offline::Launch;

/// A running JSON-lines agent. Every line both ways goes to the transcript; the process
/// group is killed when this is dropped.
pub struct StdioAgent {
    process: AgentProcess,
    lines: mpsc::UnboundedReceiver<Value>,
    transcript: Transcript,
}

impl StdioAgent {
    /// Starts the agent.
    pub fn spawn(launch: &Launch, transcript: Transcript) -> Result<Self> {
        let (process, mut stdout) = AgentProcess::spawn(&launch.spec())?;
        let (tx, lines) = mpsc::unbounded_channel();
        let sink = transcript.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stdout.next_line().await {
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
            process,
            lines,
            transcript,
        })
    }

    /// Writes one JSON line to the agent's stdin.
    pub async fn send(&mut self, msg: Value) -> Result<()> {
        self.transcript.push(Dir::In, None, msg.clone());
        self.process.write_json(&msg).await?;
        Ok(())
    }

    /// The next line from the agent, waiting at most `limit`.
    pub async fn recv(&mut self, what: &str, limit: Duration) -> Result<Value> {
        match tokio::time::timeout(limit, self.lines.recv()).await {
            Ok(Some(msg)) => Ok(msg),
            Ok(None) => {
                let status =
                    tokio::time::timeout(Duration::from_secs(2), self.process.wait()).await;
                let status = match status {
                    Ok(info) => info.describe(),
                    Err(_) => "still running, stdout closed".to_owned(),
                };
                Err(DriverError::Exited {
                    what: what.to_owned(),
                    status,
                    stderr: self.process.stderr_tail(),
                })
            }
            Err(_) => Err(DriverError::Timeout {
                what: what.to_owned(),
                after: limit,
                stderr: self.process.stderr_tail(),
            }),
        }
    }

    /// The tail of the agent's stderr.
    pub fn stderr_tail(&self) -> String {
        self.process.stderr_tail()
    }

    /// Closes stdin and waits up to `grace` for a clean exit, then kills the group.
    pub async fn close(mut self, grace: Duration) -> Option<ExitInfo> {
        self.process.close_stdin();
        let exit = tokio::time::timeout(grace, self.process.wait()).await.ok();
        self.process.signal(libc::SIGKILL);
        exit
    }
}
