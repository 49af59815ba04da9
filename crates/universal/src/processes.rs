//! Processes run beside the agent in a session's workspace: `POST .../processes/run` (to
//! its end) and `POST .../processes` (long-running, with a log).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /sessions/{id}/processes/run` and `POST /sessions/{id}/processes`: what to run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProcessRequest {
    /// The program: a name looked up on `PATH`, or a path (relative to `cwd`).
    #[schema(min_length = 1, max_length = 4096)]
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its working directory, relative to the session's (default: the session's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Variables added to the agents' allow-listed environment (protected names such as
    /// `HOME`, `PATH`, `LD_*` and credentials are refused).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `run`: kill it (the whole process group) after this long (default 60,000; a longer
    /// one is cut to the daemon's `--process-timeout`, 1 h unless set).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_number"
    )]
    #[schema(minimum = 1)]
    pub timeout_ms: Option<u64>,
    /// `run`: keep at most this many bytes of stdout and of stderr each (default 1 MiB; more
    /// is cut to the daemon's `--process-output-bytes`, 16 MiB unless set); the rest is read
    /// and dropped.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_number"
    )]
    #[schema(minimum = 0)]
    pub max_output_bytes: Option<u64>,
    /// Long-running only: run it on a pseudo-terminal (stdin, stdout and stderr; its output
    /// logged as `stdout`), reachable as a WebSocket (`GET .../terminal`); `TERM` is
    /// `xterm-256color` unless `env` names one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tty: bool,
    /// With `tty`: the terminal's first size (default 80 columns by 24 rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<TerminalSize>,
}

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TerminalSize {
    /// Columns, 1 to 1,000.
    #[serde(deserialize_with = "cells")]
    #[schema(minimum = 1, maximum = 1000)]
    #[schemars(range(min = 1, max = 1000))]
    pub cols: u16,
    /// Rows, 1 to 1,000.
    #[serde(deserialize_with = "cells")]
    #[schema(minimum = 1, maximum = 1000)]
    #[schemars(range(min = 1, max = 1000))]
    pub rows: u16,
}

impl Default for TerminalSize {
    fn default() -> Self {
        Self { cols: 80, rows: 24 }
    }
}

/// A terminal dimension: a whole number from 1 to 1,000.
fn cells<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u16, D::Error> {
    use serde::de::Error;
    match whole_number(deserializer)? {
        Some(n @ 1..=1000) => Ok(n as u16),
        _ => Err(D::Error::custom(
            "a terminal dimension is a whole number from 1 to 1000",
        )),
    }
}

/// A count JSON may write as `5` or `5.0` (JSON Schema's integers include both).
fn whole_number<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    use serde::de::Error;
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else {
        return Ok(None);
    };
    if let Some(whole) = number.as_u64() {
        return Ok(Some(whole));
    }
    match number.as_f64() {
        Some(float) if float >= 0.0 && float.fract() == 0.0 && float <= u64::MAX as f64 => {
            Ok(Some(float as u64))
        }
        _ => Err(D::Error::custom(format!(
            "invalid number `{number}`, expected a whole number of at least 0"
        ))),
    }
}

/// `POST /sessions/{id}/processes/run`: how a process ended and what it wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessOutput {
    /// Its exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Whether it was killed for running past `timeoutMs`.
    pub timed_out: bool,
    /// What it wrote to stdout (as UTF-8; invalid bytes replaced).
    pub stdout: String,
    /// What it wrote to stderr (as UTF-8; invalid bytes replaced).
    pub stderr: String,
    /// Whether stdout went past `maxOutputBytes` (the rest was dropped).
    pub stdout_truncated: bool,
    /// Whether stderr went past `maxOutputBytes`.
    pub stderr_truncated: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
}

/// Where a long-running process stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProcessStatus {
    /// Still running.
    Running,
    /// It has ended (`exitCode` or `signal` says how).
    Exited,
}

/// A long-running process of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessInfo {
    /// Its id in the session (what the routes take).
    pub process_id: String,
    /// Its operating-system process id (also its process group's).
    pub pid: u32,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory, relative to the session's.
    pub cwd: String,
    /// Running or exited.
    pub status: ProcessStatus,
    /// Its exit code, once it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<DateTime<Utc>>,
    /// The sequence of its last log chunk (0: none yet).
    pub last_sequence: u64,
    /// Whether it runs on a pseudo-terminal (`GET .../terminal` reaches it).
    pub tty: bool,
}

/// `POST /sessions/{id}/processes/{processId}/terminal-ticket`: what opens the terminal's
/// WebSocket without the daemon's token in a URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminalTicket {
    /// The ticket: the `ticket` query parameter of `GET .../terminal`, good for one
    /// connection to this process until `expiresAt`.
    pub ticket: String,
    /// When it stops being accepted.
    pub expires_at: DateTime<Utc>,
    /// The WebSocket's path with the ticket, relative to the daemon's address.
    pub path: String,
}

/// A text frame of a terminal's WebSocket (binary frames carry the terminal's bytes: its
/// output from the daemon, input to it from the client).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum TerminalMessage {
    /// Client to daemon: text typed into the terminal (as a binary frame would be).
    Input {
        /// The text.
        data: String,
    },
    /// Client to daemon: the terminal's new size (the process gets SIGWINCH).
    Resize {
        /// Columns, 1 to 1,000.
        #[schema(minimum = 1, maximum = 1000)]
        cols: u32,
        /// Rows, 1 to 1,000.
        #[schema(minimum = 1, maximum = 1000)]
        rows: u32,
    },
    /// Daemon to client: the process ended; the daemon closes the socket after it.
    #[serde(rename_all = "camelCase")]
    Exit {
        /// Its exit code, when it exited.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// The signal that ended it, when one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
    },
    /// Daemon to client: a text frame it could not act on (the socket stays open).
    Error {
        /// What was wrong.
        message: String,
    },
}

/// `GET /sessions/{id}/processes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessList {
    /// The session's processes, oldest first (running and exited, until deleted).
    pub processes: Vec<ProcessInfo>,
}

/// Which output a log chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LogStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// A piece of a process's output, as it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogChunk {
    /// Its place in the process's log: from 1, contiguous (the SSE frame's `id`).
    pub sequence: u64,
    /// stdout or stderr.
    pub stream: LogStream,
    /// The text (UTF-8; invalid bytes replaced).
    pub data: String,
    /// When it was read.
    pub time: DateTime<Utc>,
}

/// `GET /sessions/{id}/processes/{processId}/logs`: the log after `offset`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessLogs {
    /// The chunks with `sequence > offset` still kept, in order.
    pub chunks: Vec<LogChunk>,
    /// The first sequence still kept; chunks before it were dropped to keep the log
    /// within `--process-log-bytes` (a reader asking for them gets what follows).
    pub first_kept: u64,
    /// The process as it stands (`status` `exited`: no chunk will follow these).
    pub process: ProcessInfo,
}
