//! What the benchmarks share about the daemon child they run: where it listens and how it
//! is stopped; for the real-agent benches, a daemon configured like a user's, one measured
//! turn, and a `main` that re-executes itself in a loopback-only network namespace.
//! Included with `#[path]` (a bench is its own crate; each uses part of this).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use sandbox_client::{Client, EventStream};
use sandbox_universal::{EventPayload, ItemKind, ItemRole, StopReason};

type BenchResult<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Reads the daemon's stderr until it says where it listens (`None` if it exits first);
/// its other lines are printed prefixed with `daemon: ` when `echo`, else dropped, now and
/// after.
pub fn listening_url(child: &mut Child, echo: bool) -> Option<String> {
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines().map_while(Result::ok);
    let print = move |line: &str| {
        if echo {
            eprintln!("daemon: {line}");
        }
    };
    let url = loop {
        let line = lines.next()?;
        match line.strip_prefix("sandbox-daemon listening on ") {
            Some(url) => break url.trim().to_string(),
            None => print(&line),
        }
    };
    std::thread::spawn(move || lines.for_each(|line| print(&line)));
    Some(url)
}

/// SIGTERM (the daemon then stops its agents), SIGKILL after 10 s; answers whether it
/// stopped by itself. `kill(1)` rather than a raw signal: the daemon's own code signals
/// processes only through `AgentProcess`.
pub fn stop(child: &mut Child) -> bool {
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// The daemon under measurement, as a child process (stopped when dropped).
pub struct Daemon {
    pub child: Child,
    pub client: Client,
}

impl Daemon {
    /// Starts `binary` on `data_dir` without a token, with `env` (agent paths, provider
    /// credentials and endpoints: the variables a user would set) added to this process's
    /// environment minus the daemon's own settings.
    pub fn spawn(binary: &Path, data_dir: &Path, env: &[(String, String)]) -> BenchResult<Self> {
        let mut command = Command::new(binary);
        // This process's environment, as the native agents get it (the allow-listed
        // variables, e.g. SSL_CERT_DIR, change what an agent does per turn), minus the
        // daemon's own settings.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("SANDBOX_DAEMON_") {
                command.env_remove(name);
            }
        }
        command
            .args(["--no-token", "--port", "0", "--data-dir"])
            .arg(data_dir)
            .env("SANDBOX_DAEMON_LOG", "error")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(data_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .map_err(|e| format!("{}: {e}", binary.display()))?;
        let url = listening_url(&mut child, true).ok_or("the daemon exited before listening")?;
        Ok(Self {
            client: Client::new(&url, None)?,
            child,
        })
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// One daemon turn: `POST …/messages` with `prompt` → `turnEnded` on `stream` (within
/// `limit`); checks that it completed with `expected` as the reply.
pub async fn daemon_turn(
    client: &Client,
    id: &str,
    prompt: &str,
    expected: &str,
    stream: &mut EventStream,
    limit: Duration,
) -> BenchResult<Duration> {
    let started = Instant::now();
    let turn = client.send_message(id, prompt).await?;
    let mut text = None;
    loop {
        let event = tokio::time::timeout(limit, stream.next())
            .await
            .map_err(|_| format!("daemon: no turnEnded within {limit:?}"))?
            .ok_or("daemon: the SSE stream ended")??;
        match event.payload {
            EventPayload::TurnEnded(end) if end.turn_id == turn.turn_id => {
                let elapsed = started.elapsed();
                if end.stop_reason != StopReason::Completed || text.as_deref() != Some(expected) {
                    return Err(
                        format!("daemon turn: {:?}, reply {text:?}", end.stop_reason).into(),
                    );
                }
                return Ok(elapsed);
            }
            EventPayload::ItemCompleted(done)
                if done.item.kind == ItemKind::Message
                    && done.item.role == Some(ItemRole::Assistant) =>
            {
                text = Some(done.item.text());
            }
            EventPayload::Error(error) => {
                return Err(format!("daemon: error event {error:?}").into());
            }
            _ => {}
        }
    }
}

/// p50, p99 and min.
pub fn summary(values: &[f64]) -> [f64; 3] {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
    [at(0.5), at(0.99), sorted[0]]
}

/// The `main` of a real-agent bench named `name`: without `--bench` it does nothing; it
/// re-executes itself in a loopback-only network namespace (unless `--no-netns`), where it
/// runs `run(argv)` on a tokio runtime and stops on SIGINT/SIGTERM.
pub fn isolated_main<F, Fut>(name: &str, run: F) -> ExitCode
where
    F: FnOnce(Vec<String>) -> Fut,
    Fut: Future<Output = BenchResult<()>>,
{
    let fail = |message: &str| {
        eprintln!("{name}: {message}");
        ExitCode::FAILURE
    };
    let argv: Vec<String> = std::env::args().collect();
    if !argv.iter().any(|a| a == "--bench") {
        println!("{name}: a benchmark; run it with `cargo bench -p sandbox-daemon --bench {name}`");
        return ExitCode::SUCCESS;
    }
    let no_netns = argv.iter().any(|a| a == "--no-netns");
    if !no_netns && !sandbox_testkit::netns::inside() {
        let exe = std::env::current_exe().expect("current executable");
        return match sandbox_testkit::netns::isolated_command(&exe, &argv[1..])
            .map(|mut c| c.status())
        {
            Ok(Ok(status)) if status.success() => ExitCode::SUCCESS,
            Ok(Ok(_)) => ExitCode::FAILURE,
            Ok(Err(e)) => fail(&format!("cannot start unshare: {e}")),
            Err(why) => fail(&format!(
                "refusing to run: no loopback-only network namespace here ({why}); the agents \
                 must reach only 127.0.0.1. Pass --no-netns to run unisolated."
            )),
        };
    }
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    // In the namespace this process is PID 1, which ignores SIGINT and SIGTERM it does not handle.
    let interrupted = async {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("a SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    };
    let outcome = runtime.block_on(async {
        tokio::select! {
            outcome = run(argv) => outcome,
            () = interrupted => Err("interrupted".into()),
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&format!("FAILED, no figures: {e}")),
    }
}
