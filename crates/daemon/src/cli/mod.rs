//! The `sandbox-daemon` command line: the server (default) and one subcommand per HTTP
//! endpoint, built on the `sandbox-client` crate.

mod acp;
mod client;
mod credentials;
mod demo;
mod files;
mod install;
mod operations;
mod policy;
mod portable;
mod processes;
mod server;
mod terminal;
mod tool_calls;
mod ui;
mod webhooks;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use client::{AgentsCommand, ClientArgs, SessionsCommand};
pub use operations::OPERATIONS;
pub use server::ServerArgs;

/// Run coding agents inside a sandbox and drive them over HTTP.
#[derive(Debug, Parser)]
#[command(
    name = "sandbox-daemon",
    version,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Server options (when no subcommand is given).
    #[command(flatten)]
    pub server: ServerArgs,
    /// A subcommand; without one the daemon starts.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Everything the binary can do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the daemon (the same as giving no subcommand).
    Server(Box<ServerArgs>),
    /// Run a complete mock-agent session in-process and print its events (no API keys).
    Demo,
    /// Write the generated OpenAPI document and universal JSON Schema.
    Spec {
        /// Directory to write into.
        #[arg(long, default_value = "spec")]
        out: PathBuf,
        /// Only check that the files in `--out` are up to date (exit 1 when stale).
        #[arg(long)]
        check: bool,
    },
    /// GET /health.
    Health(ClientArgs),
    /// GET /openapi.json.
    Openapi(ClientArgs),
    /// Agents: list, models, modes, install.
    #[command(subcommand)]
    Agents(AgentsCommand),
    /// Sessions: create, message, read events, answer permissions and questions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Logins the daemon keeps for agents: import this machine's, list, put, remove.
    #[command(subcommand)]
    Credentials(credentials::CredentialsCommand),
    /// Webhooks: deliver chosen events of every session to a URL, signed; their deliveries.
    #[command(subcommand)]
    Webhooks(webhooks::WebhooksCommand),
    /// Print the URL of the daemon's web inspector (`/ui/`).
    Ui(ui::UiArgs),
    /// Speak the Agent Client Protocol on stdio (for editors), over a daemon.
    Acp(acp::AcpArgs),
}

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> ExitCode {
    match cli.command {
        None => server::run(cli.server).await,
        Some(Command::Server(args)) => server::run(*args).await,
        Some(Command::Demo) => demo::run().await,
        Some(Command::Spec { out, check }) => spec(&out, check),
        Some(Command::Health(args)) => client::health(args).await,
        Some(Command::Openapi(args)) => client::openapi(args).await,
        Some(Command::Agents(command)) => client::agents(command).await,
        Some(Command::Sessions(command)) => client::sessions(command).await,
        Some(Command::Credentials(command)) => credentials::run(command).await,
        Some(Command::Webhooks(command)) => webhooks::run(command).await,
        Some(Command::Ui(args)) => ui::run(args),
        Some(Command::Acp(args)) => acp::run(args).await,
    }
}

fn spec(out: &std::path::Path, check: bool) -> ExitCode {
    if check {
        let stale = crate::spec::stale(out);
        if stale.is_empty() {
            println!("{} is up to date", out.display());
            return ExitCode::SUCCESS;
        }
        eprintln!(
            "stale spec files in {}: {} (run `sandbox-daemon spec --out {}`)",
            out.display(),
            stale.join(", "),
            out.display()
        );
        return ExitCode::FAILURE;
    }
    match crate::spec::write(out) {
        Ok(()) => {
            println!("wrote {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("writing {}: {e}", out.display());
            ExitCode::FAILURE
        }
    }
}
