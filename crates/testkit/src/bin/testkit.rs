//! `testkit`: runs scenarios against the real agents (through the daemon's own drivers) and
//! re-records fixtures from what the drivers' runners tap.
//!
//! ```text
//! testkit list
//! testkit record --agent claude --scenario tool-allow
//! testkit record --all
//! testkit record --agent codex --codex-model default --out /tmp/code-mode
//! testkit pins --write      # regenerate scripts/test-agents.tsv from the manifest
//! testkit mirror --rate-kib-per-sec 65536   # a loopback install mirror, until stdin closes
//! ```
//! `record` re-executes itself inside a loopback-only network namespace. With
//! `RUST_LOG=agent_stderr=debug` the agents' stderr is shown.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use sandbox_testkit::agents::Agent;
use sandbox_testkit::drivers::transcript::to_jsonl;
use sandbox_testkit::netns;
use sandbox_testkit::scenarios::{self, Options, Scenario};

#[path = "testkit/mirror_cmd.rs"]
mod mirror_cmd;

/// Test kit of sandbox-daemon: real agent CLIs against the fake model provider.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Lists the scenarios.
    List,
    /// Prints the pinned test agents as `scripts/install-test-agents.sh` reads them
    /// (`scripts/test-agents.tsv`), generated from the agents' manifest.
    Pins {
        /// Write `scripts/test-agents.tsv` instead of printing.
        #[arg(long)]
        write: bool,
    },
    /// Runs scenarios and writes their native transcripts (every message the daemon's runner
    /// exchanged with the agent) to `<out>/<agent>/<scenario>.jsonl`.
    Record {
        /// Agent id (claude, codex, opencode, pi).
        #[arg(long, required_unless_present = "all")]
        agent: Option<String>,
        /// Scenario name; all of the agent's scenarios when omitted.
        #[arg(long)]
        scenario: Option<String>,
        /// Every scenario of every agent.
        #[arg(long, conflicts_with_all = ["agent", "scenario"])]
        all: bool,
        /// Fixture directory (default: `fixtures/` at the repository root).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Directory for the agents' HOME and work dirs (fixed, so paths in fixtures
        /// stay the same between recordings).
        #[arg(long, default_value = "/tmp/sandbox-testkit-record")]
        scratch: PathBuf,
        /// Also write the requests the fake provider received (secrets redacted, one
        /// JSON line each, with the reply given) to `<dir>/<agent>/<scenario>.requests.jsonl`.
        #[arg(long)]
        requests: Option<PathBuf>,
        /// The model of Codex threads, or `default` to name none (Codex's default model,
        /// which uses code mode). Default: `gpt-5.5`, or `SANDBOX_TESTKIT_CODEX_MODEL`.
        #[arg(long)]
        codex_model: Option<String>,
    },
    /// Serves a loopback mirror of the agents' download hosts and an npm registry (`/npm`),
    /// filled with the test kit's pinned agents, for a daemon's `--install-mirror`. Prints
    /// `{"url":"http://127.0.0.1:PORT"}` once serving, then serves until SIGTERM, SIGINT or
    /// the end of its stdin.
    Mirror(mirror_cmd::MirrorArgs),
}

fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .unwrap_or(manifest)
        .to_path_buf()
}

fn repo_fixtures() -> PathBuf {
    repo_root().join("fixtures")
}

fn selected(
    agent: Option<&str>,
    scenario: Option<&str>,
    all: bool,
) -> Result<Vec<Scenario>, String> {
    if all {
        return Ok(scenarios::all());
    }
    let id = agent.unwrap_or_default();
    let agent = Agent::from_id(id).ok_or_else(|| format!("unknown agent `{id}`"))?;
    let list: Vec<Scenario> = scenarios::all()
        .into_iter()
        .filter(|s| s.agent == agent && scenario.is_none_or(|name| s.name == name))
        .collect();
    if list.is_empty() {
        Err(format!("no scenario {agent}/{}", scenario.unwrap_or("*")))
    } else {
        Ok(list)
    }
}

fn write_requests(dir: &Path, run: &scenarios::Run) -> Result<(), String> {
    let dir = dir.join(run.scenario.agent.id());
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let file = dir.join(format!("{}.requests.jsonl", run.scenario.name));
    let text: String = run
        .requests
        .iter()
        .filter_map(|r| serde_json::to_string(r).ok())
        .map(|line| line + "\n")
        .collect();
    std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))
}

async fn record(
    list: Vec<Scenario>,
    out: &Path,
    scratch: &Path,
    requests: Option<&Path>,
    options: &Options,
) -> Result<(), String> {
    let started = std::time::Instant::now();
    for scenario in list {
        let root = scratch.join(scenario.agent.id()).join(scenario.name);
        let _ = std::fs::remove_dir_all(&root);
        let run = scenarios::run_with(scenario.agent, scenario.name, &root, options.clone())
            .await
            .map_err(|e| e.to_string())?;
        let dir = out.join(scenario.agent.id());
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let file = dir.join(format!("{}.jsonl", scenario.name));
        std::fs::write(&file, to_jsonl(&run.transcript))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        if let Some(dir) = requests {
            write_requests(dir, &run)?;
        }
        println!(
            "recorded {}/{}: {} lines, {} model calls, {:.1} s -> {}",
            scenario.agent,
            scenario.name,
            run.transcript.len(),
            run.model_requests().len(),
            run.elapsed.as_secs_f64(),
            file.display()
        );
    }
    println!("done in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Mirror(args) => mirror_cmd::run(&args),
        Command::List => {
            for s in scenarios::all() {
                println!("{:<9} {:<18} {}", s.agent.id(), s.name, s.about);
            }
            ExitCode::SUCCESS
        }
        Command::Pins { write: false } => {
            print!("{}", sandbox_agents::manifest::test_agents_tsv());
            ExitCode::SUCCESS
        }
        Command::Pins { write: true } => {
            let path = repo_root().join(sandbox_testkit::agents::TEST_AGENTS_TSV);
            match std::fs::write(&path, sandbox_agents::manifest::test_agents_tsv()) {
                Ok(()) => {
                    println!("wrote {}", path.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("testkit: {}: {e}", path.display());
                    ExitCode::FAILURE
                }
            }
        }
        Command::Record {
            agent,
            scenario,
            all,
            out,
            scratch,
            requests,
            codex_model,
        } => {
            if !netns::inside() {
                return reexec_isolated();
            }
            let list = match selected(agent.as_deref(), scenario.as_deref(), all) {
                Ok(list) => list,
                Err(e) => {
                    eprintln!("testkit: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let out = out.unwrap_or_else(repo_fixtures);
            let mut options = Options::default();
            if let Some(model) = codex_model {
                options.codex_model = (model != "default").then_some(model);
            }
            let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
            match runtime.block_on(record(list, &out, &scratch, requests.as_deref(), &options)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("testkit: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// Runs this same command line again inside a loopback-only namespace.
fn reexec_isolated() -> ExitCode {
    let exe = std::env::current_exe().expect("current executable");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let status = netns::isolated_command(&exe, &args)
        .and_then(|mut cmd| cmd.status().map_err(|e| e.to_string()));
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)),
        Err(why) => {
            eprintln!("testkit: cannot create a loopback-only network namespace: {why}");
            ExitCode::FAILURE
        }
    }
}
