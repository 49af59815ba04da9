//! The `sandbox-daemon` binary.

use std::process::ExitCode;

use clap::Parser;
use sandbox_daemon::cli::{Cli, run};

fn main() -> ExitCode {
    // Run by Amp as its permission program (`delegate`): ask the daemon, answer, exit.
    if sandbox_agents::amp::relay::is_helper() {
        return sandbox_agents::amp::relay::helper();
    }
    sandbox_daemon::memory::limit_arenas();
    sandbox_daemon::secrets::protect_process();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SANDBOX_DAEMON_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: starting the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(Cli::parse()))
}
