//! OpenCode through the daemon, measured against OpenCode on its own: the pinned
//! `opencode` (from `scripts/install-test-agents.sh`) against the test kit's fake model
//! provider (no pacing, a plain text reply).
//!
//! - turn: N turns of the same prompt through the daemon (one session on its server, which
//!   stays up between turns; from just before `POST /sessions/{id}/messages` to
//!   `turnEnded` on the session's SSE stream) against N runs of `opencode run <prompt>`,
//!   the CLI a user would run for one prompt (a process per prompt, with the daemon's own
//!   server config, providers and private HOME); after 2 warm-up turns of each, alternating.
//! - memory: 10 sessions sharing one server (the daemon's credentials) against 10 sessions
//!   each with its own `token` (a server each): the summed resident memory of the
//!   `opencode` processes after one turn in every session, and the daemon's own.
//!
//! `cargo bench -p sandbox-daemon --bench opencode -- [--turns 20] [--sessions 10]
//!  [--daemon <binary>] [--no-netns]`
//!
//! It re-executes itself in a loopback-only network namespace, like `real_turn`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use sandbox_agents::ProviderEnv;
use sandbox_agents::opencode::launch::{self, ServerDirs, ServerKey};
use sandbox_client::Client;
use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::netns;
use sandbox_testkit::provider::script::REPLY_TEXT;
use sandbox_testkit::provider::{FakeProvider, Script};
use sandbox_testkit::scenarios::TURN_LIMIT;
use sandbox_universal::CreateSessionRequest;

#[path = "support/daemon.rs"]
mod daemon;

use daemon::{Daemon, daemon_turn, summary};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const PROMPT: &str = "say hi";
const WARM_UP: usize = 2;
const KEY: &str = "sk-ant-bench";

struct Args {
    turns: usize,
    sessions: usize,
    daemon: Option<PathBuf>,
}

fn args(argv: &[String]) -> Result<Args> {
    let mut args = Args {
        turns: 20,
        sessions: 10,
        daemon: None,
    };
    for pair in argv.windows(2) {
        match pair[0].as_str() {
            "--turns" => args.turns = pair[1].parse()?,
            "--sessions" => args.sessions = pair[1].parse()?,
            "--daemon" => args.daemon = Some(pair[1].clone().into()),
            _ => {}
        }
    }
    if args.turns == 0 || args.sessions == 0 {
        return Err("--turns and --sessions must be at least 1".into());
    }
    Ok(args)
}

/// One `opencode run PROMPT` in `cwd`, started the way the daemon starts its servers.
async fn opencode_run(
    exe: &Path,
    dirs: &ServerDirs,
    env: &ProviderEnv,
    cwd: &Path,
) -> Result<Duration> {
    let providers = launch::providers(env, None, None);
    let spec = launch::serve_shared(exe.to_path_buf(), dirs, &providers, &launch::password());
    let started = Instant::now();
    let output = tokio::time::timeout(
        TURN_LIMIT,
        tokio::process::Command::new(&spec.program)
            .args(["run", PROMPT])
            .env_clear()
            .envs(&spec.env)
            .current_dir(cwd)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .map_err(|_| "opencode run: no answer in time")??;
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || !stdout.contains(REPLY_TEXT) {
        return Err(format!(
            "opencode run: {}, stdout {stdout:?}, stderr {:?}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(elapsed)
}

/// The pids of `exe`'s processes and their summed resident memory in MiB.
fn resident(exe: &Path) -> (usize, f64) {
    let exe = exe.canonicalize().unwrap_or_else(|_| exe.to_owned());
    let mut count = 0;
    let mut kib = 0u64;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == exe) {
            count += 1;
            kib += rss_kib(pid);
        }
    }
    (count, kib as f64 / 1024.0)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn session(client: &Client, id: &str, cwd: &Path, token: Option<String>) -> Result<()> {
    std::fs::create_dir_all(cwd)?;
    let request = CreateSessionRequest {
        agent: "opencode".into(),
        cwd: Some(cwd.display().to_string()),
        token,
        ..CreateSessionRequest::default()
    };
    if !client.create_session(id, &request).await?.healthy {
        return Err(format!("{id}: not healthy").into());
    }
    Ok(())
}

/// `n` sessions (each with its own token when `own_tokens`), one turn in each; the memory
/// of the OpenCode processes and of the daemon then. The sessions are ended after.
async fn memory(
    daemon: &Daemon,
    exe: &Path,
    dir: &Path,
    n: usize,
    own_tokens: bool,
) -> Result<String> {
    let client = &daemon.client;
    let label = if own_tokens { "own" } else { "shared" };
    let ids: Vec<String> = (0..n).map(|i| format!("{label}-{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        let token = own_tokens.then(|| format!("sk-ant-bench-token-{i}"));
        session(client, id, &dir.join(id), token).await?;
    }
    for id in &ids {
        let mut stream = client.stream_events(id, None, false).await?;
        daemon_turn(client, id, PROMPT, REPLY_TEXT, &mut stream, TURN_LIMIT).await?;
    }
    let (servers, mib) = resident(exe);
    let daemon_mib = rss_kib(daemon.child.id()) as f64 / 1024.0;
    for id in &ids {
        client.end_session(id).await?;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while resident(exe).0 > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(format!(
        "{:<34}{servers:>9}{mib:>14.0}{daemon_mib:>12.1}",
        format!(
            "{n} sessions, {label} server{}",
            if own_tokens { "s" } else { "" }
        ),
    ))
}

async fn run(args: Args) -> Result<()> {
    let binary = args
        .daemon
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sandbox-daemon")));
    let exe = agents::executable(Agent::OpenCode)?;
    let script = Script {
        event_delay: Duration::ZERO,
        ..Script::default()
    };
    let provider = FakeProvider::builder().script(script).start().await?;
    let dir = tempfile::tempdir()?;
    let data_dir = dir.path().join("daemon");
    std::fs::create_dir_all(&data_dir)?;
    let env = vec![
        ("ANTHROPIC_BASE_URL".to_string(), provider.base_url()),
        ("ANTHROPIC_API_KEY".to_string(), KEY.to_string()),
        (Agent::OpenCode.path_env(), exe.display().to_string()),
    ];
    let daemon = Daemon::spawn(&binary, &data_dir, &env)?;
    println!(
        "opencode: {} cores, daemon {}, {} turns of each path after {WARM_UP} warm-up turns{}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        binary.display(),
        args.turns,
        if netns::inside() {
            ", loopback-only namespace"
        } else {
            ", NOT isolated (--no-netns)"
        },
    );

    let client = &daemon.client;
    session(client, "turns", &dir.path().join("turns"), None).await?;
    let mut stream = client.stream_events("turns", None, false).await?;
    let provider_env = ProviderEnv::default()
        .with("ANTHROPIC_API_KEY", KEY)
        .with("ANTHROPIC_BASE_URL", provider.base_url());
    let run_dirs = ServerDirs::new(
        &dir.path().join("run"),
        &ServerKey::of(&launch::providers(&provider_env, None, None)),
    );
    run_dirs.write(&launch::providers(&provider_env, None, None))?;
    let run_cwd = dir.path().join("run-cwd");
    std::fs::create_dir_all(&run_cwd)?;
    let (mut through_daemon, mut run_alone) = (Vec::new(), Vec::new());
    for i in 0..WARM_UP + args.turns {
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        let mut pair = [Duration::ZERO; 2];
        for path in order {
            pair[path] = if path == 0 {
                daemon_turn(client, "turns", PROMPT, REPLY_TEXT, &mut stream, TURN_LIMIT).await?
            } else {
                opencode_run(&exe, &run_dirs, &provider_env, &run_cwd).await?
            };
        }
        if i >= WARM_UP {
            through_daemon.push(pair[0].as_secs_f64() * 1e3);
            run_alone.push(pair[1].as_secs_f64() * 1e3);
        }
    }
    drop(stream);
    client.end_session("turns").await?;
    let [d50, d99, dmin] = summary(&through_daemon);
    let [r50, r99, rmin] = summary(&run_alone);
    println!(
        "{:<34}{:>9}{:>9}{:>9}",
        "turn", "p50 ms", "p99 ms", "min ms"
    );
    println!(
        "{:<34}{d50:>9.1}{d99:>9.1}{dmin:>9.1}",
        "daemon (server kept up)"
    );
    println!(
        "{:<34}{r50:>9.1}{r99:>9.1}{rmin:>9.1}",
        "`opencode run` (process per prompt)"
    );
    println!("opencode run / daemon, p50: {:.1}x", r50 / d50);

    let shared = memory(&daemon, &exe, dir.path(), args.sessions, false).await?;
    let own = memory(&daemon, &exe, dir.path(), args.sessions, true).await?;
    println!(
        "{:<34}{:>9}{:>14}{:>12}",
        "memory after a turn in each", "servers", "opencode MiB", "daemon MiB"
    );
    println!("{shared}\n{own}");
    Ok(())
}

fn main() -> ExitCode {
    daemon::isolated_main("opencode", |argv| async move { run(args(&argv)?).await })
}
