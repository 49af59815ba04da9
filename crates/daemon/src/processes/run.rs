//! `POST /sessions/{id}/processes/run`: a process run to its end, its output kept up to a
//! limit (the rest read and dropped, so it never blocks on a full pipe), killed with its
//! group past its timeout or when the client goes away.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_universal::ProcessOutput;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::decode::Utf8Pieces;
use super::{Launch, ProcessError};

/// Kills a process group when dropped (the request went away), unless told it ended.
struct GroupGuard(Option<u32>);

impl GroupGuard {
    /// SIGKILL to the group while it is ours.
    fn kill(&self) {
        if let Some(group) = self.0 {
            sandbox_agents::process::signal_group(group, libc::SIGKILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `launch` to its end (or `timeout`), keeping at most `max_output` bytes of each
/// stream.
pub async fn run(
    launch: &Launch,
    timeout: Duration,
    max_output: u64,
) -> Result<ProcessOutput, ProcessError> {
    let started = Instant::now();
    let mut command = sandbox_agents::process::beside_agent(&launch.spec)
        .map_err(|e| ProcessError::Spawn(format!("preparing `{}`: {e}", launch.command)))?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| ProcessError::Spawn(format!("starting `{}`: {e}", launch.command)))?;
    let mut guard = GroupGuard(child.id());
    let out_kept = Arc::new(Mutex::new(Kept::default()));
    let err_kept = Arc::new(Mutex::new(Kept::default()));
    let stdout = tokio::spawn(keep(
        child.stdout.take().expect("piped"),
        max_output,
        out_kept.clone(),
    ));
    let stderr = tokio::spawn(keep(
        child.stderr.take().expect("piped"),
        max_output,
        err_kept.clone(),
    ));
    let (status, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (status.ok(), false),
        Err(_) => {
            // Not reaped yet: the group is ours.
            guard.kill();
            (child.wait().await.ok(), true)
        }
    };
    // Reaped. Children it left holding its pipes keep its group alive (so the group id is
    // still its own): after a moment they are killed, and what was read is kept.
    let readers = async {
        let _ = tokio::join!(stdout, stderr);
    };
    tokio::pin!(readers);
    if tokio::time::timeout(Duration::from_secs(1), &mut readers)
        .await
        .is_err()
    {
        // The group still has members (they hold its pipes), so its id is still its own.
        guard.kill();
        let _ = tokio::time::timeout(Duration::from_secs(1), &mut readers).await;
    }
    let taken = |kept: &Mutex<Kept>| {
        let kept = kept.lock().unwrap_or_else(|e| e.into_inner());
        (kept.text.clone(), kept.seen > max_output)
    };
    let (out, out_cut) = taken(&out_kept);
    let (err, err_cut) = taken(&err_kept);
    guard.0 = None;
    use std::os::unix::process::ExitStatusExt;
    Ok(ProcessOutput {
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        timed_out,
        stdout: out,
        stderr: err,
        stdout_truncated: out_cut,
        stderr_truncated: err_cut,
        duration_ms: started.elapsed().as_millis() as u64,
    })
}

/// What a reader kept of one stream so far.
#[derive(Debug, Default)]
struct Kept {
    text: String,
    seen: u64,
}

/// Reads `from` to its end into `kept`: the text of its first `limit` bytes, and how many
/// bytes came.
async fn keep(mut from: impl AsyncRead + Unpin, limit: u64, kept: Arc<Mutex<Kept>>) {
    let mut buffer = vec![0u8; 16 << 10];
    let mut text = Utf8Pieces::default();
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
        let room = limit.saturating_sub(kept.seen) as usize;
        kept.seen += read as u64;
        if room > 0 {
            let piece = text.push(&buffer[..read.min(room)]);
            kept.text.push_str(&piece);
        }
    }
    let rest = text.finish();
    kept.lock()
        .unwrap_or_else(|e| e.into_inner())
        .text
        .push_str(&rest);
}
