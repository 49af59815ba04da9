//! The `sandbox-daemon` binary.

use std::process::ExitCode;

use clap::Parser;
use sandbox_daemon::cli::{Cli, run};

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SANDBOX_DAEMON_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    run(Cli::parse()).await
}
