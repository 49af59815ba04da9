//! A long-running process: its output kept as a numbered log (bounded, oldest chunks
//! dropped first) that readers page through or follow, and signals to its group.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use sandbox_universal::{LogChunk, LogStream, ProcessInfo, ProcessStatus};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

use super::decode::Utf8Pieces;
use super::groups;
use super::pty::{self, Pty};
use super::{Launch, ProcessError};

/// How long output may still arrive after the process exited (a child it left holding
/// its pipes), before it is reported exited.
const DRAIN_AFTER_EXIT: std::time::Duration = std::time::Duration::from_secs(1);

/// One long-running process.
#[derive(Debug)]
pub struct Managed {
    id: String,
    pid: u32,
    /// Its terminal (`tty: true`).
    pty: Option<Arc<Pty>>,
    state: Mutex<State>,
    /// The last sequence, bumped (also without a new chunk) when the process ends.
    changed: watch::Sender<u64>,
}

#[derive(Debug)]
struct State {
    info: ProcessInfo,
    chunks: VecDeque<LogChunk>,
    bytes: usize,
    limit: usize,
}

/// A page of a process's log.
#[derive(Debug, Clone)]
pub struct LogPage {
    /// The chunks after the offset still kept.
    pub chunks: Vec<LogChunk>,
    /// The first sequence still kept.
    pub first_kept: u64,
    /// The process as it stands.
    pub info: ProcessInfo,
}

impl Managed {
    /// Starts `launch` in a process group of its own (on a terminal of its own when it
    /// asks for one), its output logged.
    pub fn spawn(id: String, launch: Launch, log_bytes: usize) -> Result<Arc<Self>, ProcessError> {
        let preparing =
            |e: std::io::Error| ProcessError::Spawn(format!("preparing `{}`: {e}", launch.command));
        let mut command = sandbox_agents::process::beside_agent(&launch.spec).map_err(preparing)?;
        command.kill_on_drop(true);
        let pty = match launch.tty {
            None => {
                command
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .process_group(0);
                None
            }
            Some(size) => {
                let (pty, slave) = pty::open(size).map_err(preparing)?;
                if let Some(user) = sandbox_agents::user::agent_user() {
                    slave.give_to(user.uid, user.gid).map_err(preparing)?;
                }
                command
                    .stdin(slave.stdio().map_err(preparing)?)
                    .stdout(slave.stdio().map_err(preparing)?)
                    .stderr(slave.stdio().map_err(preparing)?);
                // SAFETY: the closure makes only async-signal-safe system calls (setsid,
                // ioctl) and allocates nothing. setsid also makes its process group.
                unsafe {
                    command.pre_exec(pty::become_terminal_leader);
                }
                Some(pty)
            }
        };
        let mut child = command
            .spawn()
            .map_err(|e| ProcessError::Spawn(format!("starting `{}`: {e}", launch.command)))?;
        // The daemon's copies of the terminal's slave side go with the command: the
        // master's reads end once the process and its children let go of it.
        drop(command);
        let pid = child.id().unwrap_or_default();
        let (changed, _) = watch::channel(0);
        let process = Arc::new(Self {
            id: id.clone(),
            pid,
            pty: pty.map(Arc::new),
            state: Mutex::new(State {
                info: ProcessInfo {
                    process_id: id,
                    pid,
                    command: launch.command,
                    args: launch.args,
                    cwd: launch.cwd,
                    status: ProcessStatus::Running,
                    exit_code: None,
                    signal: None,
                    started_at: Utc::now(),
                    ended_at: None,
                    last_sequence: 0,
                    tty: launch.tty.is_some(),
                },
                chunks: VecDeque::new(),
                bytes: 0,
                limit: log_bytes,
            }),
            changed,
        });
        let readers = match &process.pty {
            Some(pty) => vec![tokio::spawn(
                process
                    .clone()
                    .read(PtyReader(pty.clone()), LogStream::Stdout),
            )],
            None => {
                let stdout = child.stdout.take().expect("piped stdout");
                let stderr = child.stderr.take().expect("piped stderr");
                vec![
                    tokio::spawn(process.clone().read(stdout, LogStream::Stdout)),
                    tokio::spawn(process.clone().read(stderr, LogStream::Stderr)),
                ]
            }
        };
        let watcher = process.clone();
        let on_terminal = process.pty.is_some();
        tokio::spawn(async move {
            let status = child.wait().await;
            if on_terminal {
                // The terminal goes with its process: what it left running on it (a
                // shell's background jobs) is hung up, and killed if it stays.
                groups::signal_session(pid, libc::SIGHUP);
            }
            // What it wrote before it ended is logged before it is reported ended.
            let readers = futures::future::join_all(readers);
            tokio::pin!(readers);
            if tokio::time::timeout(DRAIN_AFTER_EXIT, &mut readers)
                .await
                .is_err()
                && on_terminal
            {
                groups::signal_session(pid, libc::SIGKILL);
                let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, &mut readers).await;
            }
            use std::os::unix::process::ExitStatusExt;
            let (code, signal) = match status {
                Ok(status) => (status.code(), status.signal()),
                Err(_) => (None, None),
            };
            watcher.ended(code, signal);
        });
        Ok(process)
    }

    /// Its terminal, when it runs on one.
    pub fn terminal(&self) -> Option<&Arc<Pty>> {
        self.pty.as_ref()
    }

    /// Its id in the session.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How it stands.
    pub fn info(&self) -> ProcessInfo {
        self.lock().info.clone()
    }

    /// Whether it still runs.
    pub fn is_running(&self) -> bool {
        self.lock().info.status == ProcessStatus::Running
    }

    /// Sends `signal` to its process group while it runs (its group id may belong to
    /// another group once it ended).
    pub fn signal(&self, signal: i32) {
        let state = self.lock();
        // Reported exited only after it was reaped and its pipes drained; until then its
        // group id is its own (a child it left behind is still reached).
        if state.info.status == ProcessStatus::Running {
            match self.pty {
                // Every group on its terminal (a shell's jobs have groups of their own).
                Some(_) => groups::signal_session(self.pid, signal),
                None => sandbox_agents::process::signal_group(self.pid, signal),
            }
        }
    }

    /// Asks it to stop: SIGTERM; a terminal is hung up first (SIGHUP, which an interactive
    /// shell, ignoring SIGTERM, takes as the end and passes on to its jobs).
    pub fn stop(&self) {
        if self.pty.is_some() {
            self.signal(libc::SIGHUP);
        }
        self.signal(libc::SIGTERM);
    }

    /// SIGKILL to its group.
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
    }

    /// SIGKILL to its group — or every group on its terminal — also once it has exited:
    /// what it left behind (a background job, a `nohup`) ends with its session.
    pub fn kill_all(&self) {
        if self.is_running() {
            self.kill();
        } else if self.pty.is_some() {
            groups::signal_session(self.pid, libc::SIGKILL);
        } else {
            groups::signal_group_if_alive(self.pid, libc::SIGKILL);
        }
    }

    /// Notified whenever a chunk is logged or the process ends.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// The chunks with a sequence above `offset` still kept, at most `limit`.
    pub fn page(&self, offset: u64, limit: usize) -> LogPage {
        let state = self.lock();
        let first_kept = state
            .chunks
            .front()
            .map(|c| c.sequence)
            .unwrap_or(state.info.last_sequence + 1);
        let chunks = state
            .chunks
            .iter()
            .skip_while(|c| c.sequence <= offset)
            .take(limit)
            .cloned()
            .collect();
        LogPage {
            chunks,
            first_kept,
            info: state.info.clone(),
        }
    }

    async fn read(self: Arc<Self>, mut from: impl ReadSome, stream: LogStream) {
        let mut buffer = vec![0u8; 16 << 10];
        let mut text = Utf8Pieces::default();
        loop {
            let read = match from.read_some(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            self.log(stream, text.push(&buffer[..read]));
        }
        self.log(stream, text.finish());
    }

    fn log(&self, stream: LogStream, data: String) {
        if data.is_empty() {
            return;
        }
        let mut state = self.lock();
        state.info.last_sequence += 1;
        let sequence = state.info.last_sequence;
        state.bytes += data.len();
        state.chunks.push_back(LogChunk {
            sequence,
            stream,
            data,
            time: Utc::now(),
        });
        // The newest chunk always stays, however large.
        while state.bytes > state.limit && state.chunks.len() > 1 {
            let dropped = state.chunks.pop_front().expect("more than one chunk");
            state.bytes -= dropped.data.len();
        }
        drop(state);
        self.changed.send_replace(sequence);
    }

    fn ended(&self, code: Option<i32>, signal: Option<i32>) {
        let mut state = self.lock();
        state.info.status = ProcessStatus::Exited;
        state.info.exit_code = code;
        state.info.signal = signal;
        state.info.ended_at = Some(Utc::now());
        let last = state.info.last_sequence;
        drop(state);
        self.changed.send_modify(|seen| *seen = last);
    }
}

/// What a process's output is read from: a pipe or its terminal.
trait ReadSome: Send + 'static {
    /// Reads some bytes; `Ok(0)` at the end.
    fn read_some(
        &mut self,
        buffer: &mut [u8],
    ) -> impl std::future::Future<Output = std::io::Result<usize>> + Send;
}

impl<R: AsyncRead + Unpin + Send + 'static> ReadSome for R {
    async fn read_some(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        self.read(buffer).await
    }
}

/// A terminal's output side.
struct PtyReader(Arc<Pty>);

impl ReadSome for PtyReader {
    async fn read_some(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buffer).await
    }
}
