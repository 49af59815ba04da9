//! `sandbox-daemon sessions export|import|handover`: moving a session to another daemon
//! or another agent.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use sandbox_client::Client;
use sandbox_universal::HandoverRequest;

use super::client::{ClientArgs, fail, finish};

/// The portable-session subcommands of `sandbox-daemon sessions`.
#[derive(Debug, Subcommand)]
pub enum PortableCommand {
    /// GET /sessions/{id}/export: writes the session's bundle (to stdout, or `--out`).
    Export {
        /// Session id.
        id: String,
        /// Write the bundle to this file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Include each event's native `raw` payload.
        #[arg(long)]
        include_raw: bool,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/import: stores a bundle (from a file, or `-` for stdin) as
    /// session `id`.
    Import {
        /// Id of the imported session.
        id: String,
        /// The bundle file (`-`: standard input).
        bundle: PathBuf,
        /// The session's working directory here (default: the bundle's).
        #[arg(long)]
        cwd: Option<PathBuf>,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/handover: the session goes on with another agent.
    Handover {
        /// Session id.
        id: String,
        /// The agent that continues it.
        #[arg(long)]
        agent: String,
        /// Its model.
        #[arg(long)]
        model: Option<String>,
        /// Its agent mode.
        #[arg(long)]
        agent_mode: Option<String>,
        #[command(flatten)]
        client: ClientArgs,
    },
}

impl PortableCommand {
    /// How to reach the daemon.
    pub fn client(&self) -> &ClientArgs {
        match self {
            Self::Export { client, .. }
            | Self::Import { client, .. }
            | Self::Handover { client, .. } => client,
        }
    }

    /// Runs it.
    pub async fn run(self, client: &Client) -> ExitCode {
        match self {
            Self::Export {
                id,
                out,
                include_raw,
                ..
            } => match client.export_session_text(&id, include_raw).await {
                Ok(text) => {
                    let written = match out {
                        Some(path) => std::fs::write(&path, &text),
                        None => std::io::Write::write_all(&mut std::io::stdout(), &text),
                    };
                    match written {
                        Ok(()) => ExitCode::SUCCESS,
                        Err(e) => {
                            eprintln!("error: writing the bundle: {e}");
                            ExitCode::FAILURE
                        }
                    }
                }
                Err(error) => fail(error),
            },
            Self::Import {
                id, bundle, cwd, ..
            } => {
                let text = if bundle.as_os_str() == "-" {
                    let mut text = Vec::new();
                    std::io::Read::read_to_end(&mut std::io::stdin(), &mut text).map(|_| text)
                } else {
                    std::fs::read(&bundle)
                };
                let text = match text {
                    Ok(text) => text,
                    Err(e) => {
                        eprintln!("error: reading {}: {e}", bundle.display());
                        return ExitCode::FAILURE;
                    }
                };
                let cwd = cwd.map(|p| p.display().to_string());
                finish(client.import_session(&id, text, cwd.as_deref()).await)
            }
            Self::Handover {
                id,
                agent,
                model,
                agent_mode,
                ..
            } => {
                let request = HandoverRequest {
                    agent,
                    model,
                    agent_mode,
                };
                finish(client.handover(&id, &request).await)
            }
        }
    }
}
