//! `sandbox-daemon sessions processes ...`: processes beside the agent.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use futures::StreamExt;
use sandbox_client::{Client, LogFrame};
use sandbox_universal::{LogStream, ProcessRequest, TerminalSize};

use super::client::{ClientArgs, fail, finish};

/// What to run (`run` and `start`).
#[derive(Debug, Args)]
pub struct ProgramArgs {
    /// Session id.
    id: String,
    /// Its working directory, relative to the session's.
    #[arg(long)]
    cwd: Option<String>,
    /// A variable to add, `NAME=VALUE` (repeat for several).
    #[arg(long = "env", value_parser = parse_var)]
    env: Vec<(String, String)>,
    /// The program and its arguments (after `--`).
    #[arg(required = true, last = true)]
    command: Vec<String>,
}

fn parse_var(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .ok_or_else(|| format!("`{text}` is not NAME=VALUE"))
}

impl ProgramArgs {
    fn request(&self) -> ProcessRequest {
        ProcessRequest {
            command: self.command[0].clone(),
            args: self.command[1..].to_vec(),
            cwd: self.cwd.clone(),
            env: self.env.iter().cloned().collect::<BTreeMap<_, _>>(),
            ..ProcessRequest::default()
        }
    }
}

/// The processes subcommands of `sandbox-daemon sessions`.
#[derive(Debug, Subcommand)]
pub enum ProcessesCommand {
    /// POST /sessions/{id}/processes/run: runs a program to its end, prints its exit and
    /// output (JSON).
    Run {
        #[command(flatten)]
        program: ProgramArgs,
        /// Kill it after this many milliseconds (default 60,000).
        #[arg(long)]
        timeout_ms: Option<u64>,
        /// Keep at most this many bytes of each stream (default 1 MiB).
        #[arg(long)]
        max_output_bytes: Option<u64>,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/processes: starts a long-running program (prints it, JSON).
    Start {
        #[command(flatten)]
        program: ProgramArgs,
        /// Run it on a terminal (open it with `sessions processes terminal`).
        #[arg(long)]
        tty: bool,
        /// The terminal's columns (with `--tty`; default 80).
        #[arg(long, requires = "tty")]
        cols: Option<u16>,
        /// The terminal's rows (with `--tty`; default 24).
        #[arg(long, requires = "tty")]
        rows: Option<u16>,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /sessions/{id}/processes: the session's processes.
    List {
        /// Session id.
        id: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /sessions/{id}/processes/{processId}.
    Get {
        /// Session id.
        id: String,
        /// Process id.
        process: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// DELETE /sessions/{id}/processes/{processId}: forgets an exited process.
    Delete {
        /// Session id.
        id: String,
        /// Process id.
        process: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/processes/{processId}/stop: SIGTERM to its group.
    Stop {
        /// Session id.
        id: String,
        /// Process id.
        process: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/processes/{processId}/kill: SIGKILL to its group.
    Kill {
        /// Session id.
        id: String,
        /// Process id.
        process: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /sessions/{id}/processes/{processId}/logs: its output after `--offset` (stdout
    /// to stdout, stderr to stderr); `--follow` goes on until it ends.
    Logs {
        /// Session id.
        id: String,
        /// Process id.
        process: String,
        /// Chunks after this sequence.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// Follow the log until the process ends.
        #[arg(long)]
        follow: bool,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/processes/{processId}/terminal-ticket: a single-use ticket for
    /// the terminal's WebSocket (JSON; for programs that open it themselves).
    TerminalTicket {
        /// Session id.
        id: String,
        /// Process id.
        process: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /sessions/{id}/processes/{processId}/terminal: attaches this terminal to the
    /// process's (raw mode when stdin is a terminal; piped input is typed in as it comes).
    /// Ends when the process does, with its exit code; Ctrl-] detaches and leaves it
    /// running.
    Terminal {
        /// Session id.
        id: String,
        /// Process id.
        process: String,
        #[command(flatten)]
        client: ClientArgs,
    },
}

impl ProcessesCommand {
    /// How to reach the daemon.
    pub fn client(&self) -> &ClientArgs {
        match self {
            Self::Run { client, .. }
            | Self::Start { client, .. }
            | Self::List { client, .. }
            | Self::Get { client, .. }
            | Self::Delete { client, .. }
            | Self::Stop { client, .. }
            | Self::Kill { client, .. }
            | Self::Logs { client, .. }
            | Self::TerminalTicket { client, .. }
            | Self::Terminal { client, .. } => client,
        }
    }

    /// Runs it.
    pub async fn run(self, client: &Client) -> ExitCode {
        match self {
            Self::Run {
                program,
                timeout_ms,
                max_output_bytes,
                ..
            } => {
                let request = ProcessRequest {
                    timeout_ms,
                    max_output_bytes,
                    ..program.request()
                };
                finish(client.run_process(&program.id, &request).await)
            }
            Self::Start {
                program,
                tty,
                cols,
                rows,
                ..
            } => {
                let default = TerminalSize::default();
                let request = ProcessRequest {
                    tty,
                    size: (cols.is_some() || rows.is_some()).then(|| TerminalSize {
                        cols: cols.unwrap_or(default.cols),
                        rows: rows.unwrap_or(default.rows),
                    }),
                    ..program.request()
                };
                finish(client.start_process(&program.id, &request).await)
            }
            Self::TerminalTicket { id, process, .. } => {
                finish(client.terminal_ticket(&id, &process).await)
            }
            Self::Terminal { id, process, .. } => {
                super::terminal::attach(client, &id, &process).await
            }
            Self::List { id, .. } => finish(client.list_processes(&id).await),
            Self::Get { id, process, .. } => finish(client.get_process(&id, &process).await),
            Self::Delete { id, process, .. } => match client.delete_process(&id, &process).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => fail(error),
            },
            Self::Stop { id, process, .. } => finish(client.stop_process(&id, &process).await),
            Self::Kill { id, process, .. } => finish(client.kill_process(&id, &process).await),
            Self::Logs {
                id,
                process,
                offset,
                follow,
                ..
            } => logs(client, &id, &process, offset, follow).await,
        }
    }
}

/// Prints a log's chunks to stdout and stderr as they were written.
async fn logs(client: &Client, id: &str, process: &str, offset: u64, follow: bool) -> ExitCode {
    let print = |stream: LogStream, data: &str| {
        let _ = match stream {
            LogStream::Stdout => std::io::stdout().write_all(data.as_bytes()),
            LogStream::Stderr => std::io::stderr().write_all(data.as_bytes()),
        };
    };
    if !follow {
        return match client.process_logs(id, process, offset).await {
            Ok(page) => {
                for chunk in &page.chunks {
                    print(chunk.stream, &chunk.data);
                }
                ExitCode::SUCCESS
            }
            Err(error) => fail(error),
        };
    }
    let mut frames = match client.follow_process_logs(id, process, offset).await {
        Ok(frames) => frames,
        Err(error) => return fail(error),
    };
    while let Some(frame) = frames.next().await {
        match frame {
            Ok(LogFrame::Log(chunk)) => print(chunk.stream, &chunk.data),
            Ok(LogFrame::Gap { from, to }) => {
                eprintln!("[sandbox-daemon: log chunks {from}..{to} were dropped]")
            }
            Ok(LogFrame::Exit(_)) => break,
            Err(error) => return fail(error),
        }
    }
    let _ = std::io::stdout().flush();
    ExitCode::SUCCESS
}
