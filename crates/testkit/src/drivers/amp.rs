//! Amp: run one command to completion (it cannot hold a session offline).

use std::process::Stdio;
use std::time::{Duration, Instant};

use super::error::{DriverError, Result};
use crate::offline::Launch;

/// How a one-shot run ended.
#[derive(Clone, Debug)]
pub struct Exit {
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Everything printed on stdout.
    pub stdout: String,
    /// Everything printed on stderr.
    pub stderr: String,
    /// Wall time.
    pub elapsed: Duration,
}

/// Runs the launch with stdin closed, killing it after `limit`.
pub async fn run(launch: &Launch, limit: Duration) -> Result<Exit> {
    let started = Instant::now();
    let child = launch.command().stdin(Stdio::null()).spawn()?;
    match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(output) => {
            let output = output?;
            Ok(Exit {
                code: output.status.code(),
                stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
                elapsed: started.elapsed(),
            })
        }
        Err(_) => Err(DriverError::Timeout {
            what: "amp to exit".into(),
            after: limit,
            stderr: String::new(),
        }),
    }
}
