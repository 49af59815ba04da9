//! What the daemon adds to a real agent turn: the pinned Claude Code and Codex CLIs (from
//! `scripts/install-test-agents.sh`) against the test kit's fake model provider, with no
//! pacing (a plain text reply), driven two ways on one long-lived process each:
//!
//! - daemon: the real daemon binary (a child process), one session per agent; time from
//!   just before `POST /sessions/{id}/messages` to `turnEnded` on the session's SSE stream
//!   (one stream, open for the whole run);
//! - native: the test kit's driver (`drivers::{claude, codex}`) on the kit's offline
//!   launch (the daemon's own arguments and environment); time from just before the user
//!   message is written to the turn's last line (`result` / `turn/completed`).
//!
//! After 3 warm-up pairs, N pairs of one daemon and one native turn (which goes first
//! alternates; `--gap-ms` of idle before each turn); every reply is checked (text, stop
//! reason, one plain-text model call, the same model on both paths). Printed per agent:
//! p50, p99 and min of each path and of the paired difference daemon − native, and the CPU
//! time per turn of each path's agent process and of the daemon itself (from `/proc`).
//!
//! `cargo bench -p sandbox-daemon --bench real_turn -- [--turns 30] [--agents claude,codex]
//!  [--gap-ms 50] [--daemon <binary>] [--no-netns]`
//!
//! It re-executes itself in a loopback-only network namespace (`sandbox_testkit::netns`) so
//! the agents can reach nothing but 127.0.0.1, and refuses to run where that is impossible
//! unless `--no-netns` is given. `--daemon` measures another build of the daemon instead of
//! this one. Without `--bench` (`cargo test --benches`, `--all-targets`) it does nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::drivers::Transcript;
use sandbox_testkit::drivers::claude::{self, Claude};
use sandbox_testkit::drivers::codex::Codex;
use sandbox_testkit::netns;
use sandbox_testkit::offline::{self, Sandbox};
use sandbox_testkit::provider::script::REPLY_TEXT;
use sandbox_testkit::provider::{FakeProvider, Script};
use sandbox_testkit::scenarios::{START_LIMIT, TURN_LIMIT};
use sandbox_universal::CreateSessionRequest;

#[path = "support/daemon.rs"]
mod daemon;

use daemon::{Daemon, daemon_turn, summary};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The prompt of every turn on both paths (no keyword: the fake model answers `REPLY_TEXT`).
const PROMPT: &str = "say hi";
const WARM_UP: usize = 3;

struct Args {
    turns: usize,
    agents: Vec<Agent>,
    daemon: Option<PathBuf>,
    gap: Duration,
}

fn args(argv: &[String]) -> Result<Args> {
    let mut args = Args {
        turns: 30,
        agents: vec![Agent::Claude, Agent::Codex],
        daemon: None,
        gap: Duration::from_millis(50),
    };
    for pair in argv.windows(2) {
        match pair[0].as_str() {
            "--turns" => args.turns = pair[1].parse()?,
            "--gap-ms" => args.gap = Duration::from_millis(pair[1].parse()?),
            "--daemon" => args.daemon = Some(pair[1].clone().into()),
            "--agents" => {
                args.agents = pair[1]
                    .split(',')
                    .map(|id| match Agent::from_id(id) {
                        Some(agent @ (Agent::Claude | Agent::Codex)) => Ok(agent),
                        _ => Err(format!("--agents: `{id}` is not claude or codex")),
                    })
                    .collect::<std::result::Result<_, _>>()?
            }
            _ => {}
        }
    }
    if args.turns == 0 {
        return Err("--turns must be at least 1".into());
    }
    Ok(args)
}

/// The same agent driven natively by the test kit.
enum Native {
    Claude(Claude),
    Codex(Box<Codex>),
}

impl Native {
    async fn start(agent: Agent, exe: &Path, sandbox: &Sandbox, provider: &str) -> Result<Self> {
        let transcript = Transcript::default();
        Ok(match agent {
            Agent::Claude => {
                let launch = offline::claude::launch(exe, sandbox, provider);
                Self::Claude(Claude::start(&launch, transcript, START_LIMIT).await?)
            }
            _ => {
                let launch = offline::codex::launch(exe, sandbox, provider)?;
                Self::Codex(Box::new(
                    Codex::start(&launch, transcript, START_LIMIT).await?,
                ))
            }
        })
    }

    /// One native turn: user message written → `result` / `turn/completed`; checks the reply.
    async fn turn(&mut self) -> Result<Duration> {
        let started = Instant::now();
        match self {
            Self::Claude(agent) => {
                let turn = agent.turn(PROMPT, TURN_LIMIT, |_| Vec::new()).await?;
                let elapsed = started.elapsed();
                claude::expect_result_text(&turn, REPLY_TEXT)?;
                Ok(elapsed)
            }
            Self::Codex(agent) => {
                let turn = agent.turn(PROMPT, TURN_LIMIT, |_| Vec::new()).await?;
                let elapsed = started.elapsed();
                let text = turn
                    .lines
                    .iter()
                    .map(|m| &m["params"]["item"])
                    .filter(|item| item["type"] == "agentMessage")
                    .filter_map(|item| item["text"].as_str())
                    .next_back();
                let status = &turn.completed["turn"]["status"];
                if status != "completed" || text != Some(REPLY_TEXT) {
                    return Err(
                        format!("native codex turn: status {status}, reply {text:?}").into(),
                    );
                }
                Ok(elapsed)
            }
        }
    }
}

/// What the provider saw since the last call: one plain-text model call, whose model is
/// added to `models`. Forgets the requests.
fn check_calls(provider: &FakeProvider, path: &str, models: &mut BTreeSet<String>) -> Result<()> {
    let calls = provider.model_requests();
    provider.clear_requests();
    if calls.len() != 1 || !calls[0].reply.starts_with("text") {
        let seen: Vec<_> = calls
            .iter()
            .map(|c| (c.path.clone(), c.reply.clone()))
            .collect();
        return Err(format!("{path}: expected one plain-text model call, saw {seen:?}").into());
    }
    models.insert(calls[0].model().unwrap_or("(none)").to_owned());
    Ok(())
}

/// The fields of `/proc/<pid>/stat` after the command name (state, ppid, …).
fn proc_stat(pid: u32) -> Vec<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields = stat.rsplit(')').next().unwrap_or_default();
    fields.split_whitespace().map(str::to_owned).collect()
}

/// CPU time a process has used so far (user + system, exited threads included), ns; in
/// clock ticks (usually 10 ms), so per-turn figures are good to ±1 tick / turns.
fn cpu_ns(pid: u32) -> u64 {
    let fields = proc_stat(pid);
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    // SAFETY: sysconf(3) has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    ticks * 1_000_000_000 / hz
}

/// The children of `parent` running `exe` (the agent processes), from `/proc`.
fn agent_pids(parent: u32, exe: &Path) -> Vec<u32> {
    let exe = exe.canonicalize().unwrap_or_else(|_| exe.to_owned());
    let procs = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    procs
        .filter_map(|p| p.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            proc_stat(pid).get(1) == Some(&parent.to_string())
                && std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == exe)
        })
        .collect()
}

/// CPU time of the daemon, of its agent and of the native agent, ns.
fn cpu_now(daemon: u32, daemon_agent: &[u32], native_agent: &[u32]) -> [u64; 3] {
    let sum = |pids: &[u32]| pids.iter().map(|&p| cpu_ns(p)).sum();
    [cpu_ns(daemon), sum(daemon_agent), sum(native_agent)]
}

#[derive(Default)]
struct Figures {
    daemon: Vec<f64>,
    native: Vec<f64>,
    model: String,
    /// CPU per measured turn, ms: the daemon, its agent, the native agent.
    cpu: [f64; 3],
}

async fn bench_agent(
    agent: Agent,
    exe: &Path,
    daemon: &Daemon,
    provider: &FakeProvider,
    dir: &Path,
    args: &Args,
) -> Result<Figures> {
    let (turns, gap) = (args.turns, args.gap);
    let id = format!("bench-{agent}");
    let cwd = dir.join(format!("daemon-{agent}"));
    std::fs::create_dir_all(&cwd)?;
    let request = CreateSessionRequest {
        agent: agent.id().into(),
        cwd: Some(cwd.display().to_string()),
        // Claude: the CLI's default on both paths; Codex: the offline launch's model.
        model: (agent == Agent::Codex).then(|| offline::codex::MODEL.to_owned()),
        ..CreateSessionRequest::default()
    };
    let client = &daemon.client;
    if !client.create_session(&id, &request).await?.healthy {
        return Err(format!("{agent}: the daemon's session is not healthy").into());
    }
    let mut stream = client.stream_events(&id, None, false).await?;
    let sandbox = Sandbox::create(&dir.join(format!("native-{agent}")))?;
    let mut native = Native::start(agent, exe, &sandbox, &provider.base_url()).await?;
    provider.clear_requests();
    let (mut daemon_models, mut native_models) = (BTreeSet::new(), BTreeSet::new());
    let mut figures = Figures::default();
    let daemon_pid = daemon.child.id();
    let (daemon_agent, native_agent) = (
        agent_pids(daemon_pid, exe),
        agent_pids(std::process::id(), exe),
    );
    let mut cpu_start = [0; 3];
    for i in 0..WARM_UP + turns {
        if i == WARM_UP {
            cpu_start = cpu_now(daemon_pid, &daemon_agent, &native_agent);
        }
        // Which path goes first alternates, so neither always follows the other's
        // after-turn work (the daemon's store writes, the CLI's own bookkeeping).
        let mut pair = [Duration::ZERO; 2];
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for path in order {
            tokio::time::sleep(gap).await;
            if path == 0 {
                pair[0] =
                    daemon_turn(client, &id, PROMPT, REPLY_TEXT, &mut stream, TURN_LIMIT).await?;
                check_calls(provider, &format!("{agent} daemon"), &mut daemon_models)?;
            } else {
                pair[1] = native.turn().await?;
                check_calls(provider, &format!("{agent} native"), &mut native_models)?;
            }
        }
        if i >= WARM_UP {
            figures.daemon.push(pair[0].as_secs_f64() * 1e3);
            figures.native.push(pair[1].as_secs_f64() * 1e3);
        }
    }
    if daemon_models != native_models || daemon_models.len() != 1 {
        return Err(format!(
            "{agent}: models differ: daemon {daemon_models:?}, native {native_models:?}"
        )
        .into());
    }
    figures.model = daemon_models.pop_first().unwrap_or_default();
    let cpu_end = cpu_now(daemon_pid, &daemon_agent, &native_agent);
    for (k, cpu) in figures.cpu.iter_mut().enumerate() {
        *cpu = cpu_end[k].saturating_sub(cpu_start[k]) as f64 / 1e6 / turns as f64;
    }
    drop((stream, native)); // the native agent's process group is killed
    client.end_session(&id).await?;
    Ok(figures)
}

/// p50, p99 (nearest rank) and min of `values`, ms.
async fn run(args: Args) -> Result<()> {
    let binary = args
        .daemon
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sandbox-daemon")));
    let paths: Vec<(Agent, PathBuf)> = args
        .agents
        .iter()
        .map(|&agent| Ok((agent, agents::executable(agent)?)))
        .collect::<Result<_>>()?;
    let script = Script {
        event_delay: Duration::ZERO,
        ..Script::default()
    };
    let provider = FakeProvider::builder().script(script).start().await?;
    let dir = tempfile::tempdir()?;
    let data_dir = dir.path().join("daemon");
    std::fs::create_dir_all(&data_dir)?;
    let provider_url = provider.base_url();
    let mut env: Vec<(String, String)> = vec![
        ("ANTHROPIC_BASE_URL".into(), provider_url.clone()),
        ("ANTHROPIC_API_KEY".into(), offline::claude::API_KEY.into()),
        ("OPENAI_BASE_URL".into(), format!("{provider_url}/v1")),
        ("OPENAI_API_KEY".into(), "sk-fake".into()),
    ];
    for (agent, path) in &paths {
        env.push((agent.path_env().to_string(), path.display().to_string()));
    }
    let daemon = Daemon::spawn(&binary, &data_dir, &env)?;
    println!(
        "real_turn: {} cores, daemon {}, {} turn pairs per agent after {WARM_UP} warm-up pairs, {} ms apart{}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        binary.display(),
        args.turns,
        args.gap.as_millis(),
        if netns::inside() {
            ", loopback-only namespace"
        } else {
            ", NOT isolated (--no-netns)"
        },
    );
    let mut table = vec![format!(
        "{:<8}{:<17}{:>9}{:>9}{:>9}{:>12}{:>12}",
        "agent", "path", "p50 ms", "p99 ms", "min ms", "agent cpu", "daemon cpu"
    )];
    for (agent, exe) in &paths {
        let figures = bench_agent(*agent, exe, &daemon, &provider, dir.path(), &args)
            .await
            .map_err(|e| format!("{agent}: {e}"))?;
        println!(
            "{agent} {} (model {}): done",
            agent.version(),
            figures.model
        );
        let diff: Vec<f64> = (figures.daemon.iter().zip(&figures.native))
            .map(|(d, n)| d - n)
            .collect();
        let [daemon_cpu, agent_cpu, native_cpu] = figures.cpu.map(|ms| format!("{ms:.2}"));
        let cpu_diff = format!("{:.2}", figures.cpu[1] - figures.cpu[2]);
        for (path, values, agent_cpu, daemon_cpu) in [
            ("daemon", &figures.daemon, agent_cpu, daemon_cpu.clone()),
            ("native", &figures.native, native_cpu, "-".into()),
            ("daemon − native", &diff, cpu_diff, daemon_cpu),
        ] {
            let [p50, p99, min] = summary(values);
            table.push(format!(
                "{:<8}{path:<17}{p50:>9.2}{p99:>9.2}{min:>9.2}{agent_cpu:>12}{daemon_cpu:>12}",
                agent.id()
            ));
        }
    }
    drop(daemon);
    println!("{}", table.join("\n"));
    println!(
        "(cpu: ms of CPU per measured turn, from /proc; `agent` is the CLI process the path drives)"
    );
    Ok(())
}

fn main() -> ExitCode {
    daemon::isolated_main("real_turn", |argv| async move { run(args(&argv)?).await })
}
