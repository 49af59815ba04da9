//! `fake-provider --port P`: runs the fake model provider until Ctrl-C and prints its URL.

use std::path::PathBuf;

use clap::Parser;
use sandbox_testkit::provider::FakeProvider;

/// The fake model provider of the sandbox-daemon test kit, on 127.0.0.1.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Port to bind on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Append every request (secrets redacted) as a JSON line to this file.
    #[arg(long)]
    request_log: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let mut builder = FakeProvider::builder().port(args.port);
    if let Some(path) = args.request_log {
        builder = builder.request_log(path);
    }
    let provider = builder.start().await?;
    println!("{}", provider.base_url());
    tokio::signal::ctrl_c().await?;
    drop(provider);
    Ok(())
}
