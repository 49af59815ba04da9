//! `testkit mirror`: the install tests' loopback mirror, started from a shell (the web UI's
//! browser tests install an agent through a daemon from it and watch the progress).

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use sandbox_testkit::agents::Agent;
use sandbox_testkit::mirror::{Layouts, Mirror, Pace};

/// `testkit mirror`'s options.
#[derive(Args, Debug)]
pub struct MirrorArgs {
    /// Answer every request only after this many milliseconds.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// Stream every file body at most this many KiB a second (default: unthrottled), so
    /// an install's `downloading` progress is seen moving.
    #[arg(long)]
    rate_kib_per_sec: Option<u64>,
    /// Publish only this agent (repeatable; default: every agent the test kit installed).
    #[arg(long = "agent")]
    agents: Vec<String>,
}

/// Builds the layouts, serves them, prints the URL, and serves until told to stop.
pub fn run(args: &MirrorArgs) -> ExitCode {
    let agents = match selected(&args.agents) {
        Ok(agents) => agents,
        Err(e) => {
            eprintln!("testkit mirror: {e}");
            return ExitCode::from(2);
        }
    };
    let layouts = Layouts::shared();
    publish(layouts, &agents);
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let code = runtime.block_on(async {
        let mirror = match Mirror::serve(layouts.root()).await {
            Ok(mirror) => mirror,
            Err(e) => {
                eprintln!("testkit mirror: cannot listen on 127.0.0.1: {e}");
                return ExitCode::FAILURE;
            }
        };
        mirror.set_pace(Pace {
            delay: Duration::from_millis(args.delay_ms),
            bytes_per_second: args.rate_kib_per_sec.map(|k| k.saturating_mul(1024)),
        });
        let line = serde_json::json!({ "url": mirror.url() }).to_string();
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "{line}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
        drop(stdout);
        eprintln!(
            "testkit mirror: serving {} at {}",
            layouts.root().display(),
            mirror.url()
        );
        let why = stopped().await;
        eprintln!(
            "testkit mirror: {why}; stopping after {} requests",
            mirror.requests().len()
        );
        ExitCode::SUCCESS
    });
    drop(runtime);
    if let Err(e) = std::fs::remove_dir_all(layouts.root()) {
        eprintln!("testkit mirror: removing {}: {e}", layouts.root().display());
    }
    code
}

/// The agents asked for, or every agent.
fn selected(ids: &[String]) -> Result<Vec<Agent>, String> {
    if ids.is_empty() {
        return Ok(Agent::ALL.to_vec());
    }
    ids.iter()
        .map(|id| Agent::from_id(id).ok_or_else(|| format!("unknown agent `{id}`")))
        .collect()
}

/// Publishes each agent's release layout (Pi and Amp on the npm registry too); an agent
/// the test kit has not installed is skipped, loudly.
fn publish(layouts: &Layouts, agents: &[Agent]) {
    for &agent in agents {
        let started = Instant::now();
        let done = match agent {
            Agent::Pi => layouts.npm().is_some(),
            Agent::Amp => layouts
                .amp_npm()
                .and_then(|()| layouts.release(agent))
                .is_some(),
            _ => layouts.release(agent).is_some(),
        };
        if done {
            eprintln!(
                "testkit mirror: published {agent} {} in {:.1} s",
                agent.version(),
                started.elapsed().as_secs_f64()
            );
        }
    }
}

/// Waits for SIGTERM, SIGINT or the end of stdin, and says which.
async fn stopped() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("a SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("a SIGINT handler");
    // A thread of its own: a blocked read of stdin must not hold up the runtime's exit.
    let (closed, stdin_closed) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut sink = [0u8; 4096];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
        let _ = closed.send(());
    });
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
        _ = stdin_closed => "stdin closed",
    }
}
