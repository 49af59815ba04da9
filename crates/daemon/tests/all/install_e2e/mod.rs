//! Installing agents through the daemon, against a loopback mirror of the official hosts
//! (and of an npm registry) filled with the real pinned binaries: the install route (JSON
//! and streamed progress), `GET /agents` after it, failures as problems, the CLI (through
//! the daemon, and `--local` from two processes at once on one data dir), and a session
//! created for an agent that is not installed: installed on the spot (once, while an install
//! request runs too), then a real turn with it against the fake provider. Amp comes from its
//! npm platform package (its release host publishes no checksum); without a registry it is
//! refused unless unverified installs are allowed. npm runs without the daemon's secrets. A
//! session whose agent's hosts do not answer fails within seconds, saying what to do.

use crate::common;

use std::collections::HashMap;
use std::process::Stdio;

use std::time::Duration;
use tokio::process::Command;

use common::{Options, TestDaemon, raw};
use futures::StreamExt;
use sandbox_agents::ProviderEnv;
use sandbox_client::InstallFrame;
use sandbox_testkit::agents::Agent;
use sandbox_testkit::mirror::{Fault, Layouts, Mirror};
use sandbox_testkit::provider::FakeProvider;
use sandbox_universal::{
    AgentId, BinarySource, CreateSessionRequest, EventPayload, InstallProgress, InstallRequest,
    StopReason,
};

async fn mirror() -> Mirror {
    Mirror::serve(Layouts::shared().root()).await.unwrap()
}

/// Amp's release layout and its npm packages; `None` after a loud skip without Amp.
fn amp_layout() -> Option<sandbox_testkit::mirror::Published> {
    Layouts::shared().amp_npm()?;
    Layouts::shared().release(Agent::Amp)
}

/// The path of Amp's platform package tarball on the mirror: Amp's verified binary.
fn amp_tarball() -> String {
    let cpu = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "x64"
    };
    format!(
        "/npm/@ampcode/cli-linux-{cpu}/-/cli-linux-{cpu}-{}.tgz",
        Agent::Amp.version()
    )
}

async fn daemon(mirror: &Mirror, auto_install: bool) -> TestDaemon {
    TestDaemon::start_with(Options {
        install_mirror: Some(mirror.url().to_string()),
        auto_install,
        ..Options::default()
    })
    .await
}

#[tokio::test]
async fn the_install_route_installs_reports_and_streams() {
    if amp_layout().is_none() {
        return;
    }
    let mirror = mirror().await;
    let daemon = daemon(&mirror, false).await;
    let binary = amp_tarball();

    let before = daemon.client.list_agents().await.unwrap().agents;
    let info = before.iter().find(|a| a.id == AgentId::Amp).unwrap();
    assert!(!info.installed && info.installed_versions.is_empty());

    let done = daemon
        .client
        .install_agent("amp", &InstallRequest::default())
        .await
        .unwrap();
    assert!(!done.already_installed);
    assert_eq!(done.version.as_deref(), Some(Agent::Amp.version()));
    assert_eq!(done.source, Some(BinarySource::Npm));
    assert!(done.size > 1_000_000);
    let path = done.path.clone().unwrap();
    assert!(
        path.starts_with(
            &daemon
                .data_dir
                .path()
                .join("agents/amp")
                .display()
                .to_string()
        )
    );

    let agents = daemon.client.list_agents().await.unwrap().agents;
    let info = agents.iter().find(|a| a.id == AgentId::Amp).unwrap();
    assert!(info.installed);
    assert_eq!(info.version.as_deref(), Some(Agent::Amp.version()));
    assert_eq!(info.path.as_deref(), Some(path.as_str()));
    assert_eq!(info.source, Some(BinarySource::Npm));
    assert_eq!(info.installed_versions.len(), 1);
    assert!(info.installed_versions[0].current);

    let again = daemon
        .client
        .install_agent(
            "amp",
            &InstallRequest {
                version: Some("pinned".into()),
                reinstall: false,
            },
        )
        .await
        .unwrap();
    assert!(again.already_installed);
    assert_eq!(mirror.count(&binary), 1);

    // Streamed: progress frames with bytes, then the summary.
    let mut frames = daemon
        .client
        .install_agent_stream(
            "amp",
            &InstallRequest {
                version: None,
                reinstall: true,
            },
        )
        .await
        .unwrap();
    let mut seen = Vec::new();
    while let Some(frame) = frames.next().await {
        seen.push(frame.unwrap());
    }
    assert!(
        matches!(
            seen.first(),
            Some(InstallFrame::Progress(InstallProgress::Resolving { .. }))
        ),
        "{seen:?}"
    );
    assert!(seen.iter().any(|f| matches!(f, InstallFrame::Progress(InstallProgress::Downloading { bytes, total: Some(total), .. }) if bytes == total)));
    let Some(InstallFrame::Installed(done)) = seen.last() else {
        panic!("{seen:?}")
    };
    assert!(!done.already_installed);
    assert_eq!(mirror.count(&binary), 2);

    // Failures: a version the mirror lacks (502, installFailed naming the 404), as JSON and
    // as a stream; a version that is not one (400).
    let url = daemon.url();
    let missing = raw(
        reqwest::Method::POST,
        &format!("{url}/agents/amp/install"),
        None,
        Some("application/json"),
        Some(br#"{"version":"9.9.9"}"#.to_vec()),
    )
    .await;
    assert_eq!(missing.0, 502, "{missing:?}");
    assert_eq!(missing.2["agentError"]["type"], "installFailed");
    assert!(
        missing.2["detail"].as_str().unwrap().contains("404"),
        "{missing:?}"
    );
    let mut frames = daemon
        .client
        .install_agent_stream(
            "amp",
            &InstallRequest {
                version: Some("9.9.9".into()),
                reinstall: false,
            },
        )
        .await
        .unwrap();
    let mut last = None;
    while let Some(frame) = frames.next().await {
        last = Some(frame.unwrap());
    }
    let Some(InstallFrame::Failed(problem)) = last else {
        panic!("{last:?}")
    };
    assert_eq!(problem.status, 502);
    let bad = raw(
        reqwest::Method::POST,
        &format!("{url}/agents/amp/install"),
        None,
        Some("application/json"),
        Some(br#"{"version":"../../bin"}"#.to_vec()),
    )
    .await;
    assert_eq!(bad.0, 422, "{bad:?}");
    let unknown_field = raw(
        reqwest::Method::POST,
        &format!("{url}/agents/amp/install"),
        None,
        Some("application/json"),
        Some(br#"{"versoin":"1"}"#.to_vec()),
    )
    .await;
    assert_eq!(unknown_field.0, 422, "{unknown_field:?}");
}

#[tokio::test]
async fn an_override_is_authoritative() {
    let Some(amp) = sandbox_testkit::agents::require(Agent::Amp) else {
        return;
    };
    let mirror = mirror().await;
    let daemon = TestDaemon::start_with(Options {
        install_mirror: Some(mirror.url().to_string()),
        agent_paths: HashMap::from([(AgentId::Amp, amp.clone())]),
        ..Options::default()
    })
    .await;
    let done = daemon
        .client
        .install_agent("amp", &InstallRequest::default())
        .await
        .unwrap();
    assert!(done.already_installed);
    assert_eq!(done.source, Some(BinarySource::Override));
    assert_eq!(
        done.path.as_deref(),
        Some(amp.display().to_string().as_str())
    );
    let other = daemon
        .client
        .install_agent(
            "amp",
            &InstallRequest {
                version: Some("1.0.0".into()),
                reinstall: false,
            },
        )
        .await
        .unwrap_err();
    let problem = other.problem().unwrap();
    assert_eq!(problem.status, 409);
    assert!(
        problem.detail.contains("SANDBOX_DAEMON_AMP_PATH"),
        "{problem:?}"
    );
    assert!(mirror.requests().is_empty(), "{:?}", mirror.requests());
}

/// `sandbox-daemon agents install <agent> --local` from `mirror` (also the npm registry)
/// (run on tokio: the mirror serving it lives on this test's runtime).
fn cli(mirror: &Mirror, data_dir: &std::path::Path, agent: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sandbox-daemon"));
    command
        .args(["agents", "install", agent, "--local", "--data-dir"])
        .arg(data_dir)
        .args(["--install-mirror", mirror.url()])
        .args(["--npm-registry", &format!("{}/npm", mirror.url())]);
    command
}

#[tokio::test]
async fn the_cli_installs_through_the_daemon_and_locally_from_two_processes() {
    if amp_layout().is_none() {
        return;
    }
    let mirror = mirror().await;
    let binary = amp_tarball();

    // Two processes at once on one data dir: one downloads, the other waits and finds it.
    let data = tempfile::tempdir().unwrap();
    let spawn = || {
        cli(&mirror, data.path(), "amp")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (first, second) = tokio::join!(spawn().wait_with_output(), spawn().wait_with_output());
    let mut fresh = 0;
    for output in [first.unwrap(), second.unwrap()] {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(summary["version"], Agent::Amp.version());
        fresh += usize::from(summary["alreadyInstalled"] == false);
    }
    assert_eq!(fresh, 1);
    assert_eq!(mirror.count(&binary), 1, "{:?}", mirror.requests());

    // Through a daemon: the summary on stdout, the progress bar on stderr.
    let daemon = daemon(&mirror, false).await;
    let output = Command::new(env!("CARGO_BIN_EXE_sandbox-daemon"))
        .args(["agents", "install", "amp", "--endpoint", &daemon.url()])
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["alreadyInstalled"], false);
    assert_eq!(summary["source"], "npm");
    assert!(String::from_utf8_lossy(&output.stderr).contains("installed"));
    assert_eq!(mirror.count(&binary), 2);
    let failed = Command::new(env!("CARGO_BIN_EXE_sandbox-daemon"))
        .args([
            "agents",
            "install",
            "amp",
            "--version",
            "9.9.9",
            "--endpoint",
            &daemon.url(),
        ])
        .output()
        .await
        .unwrap();
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("installFailed"));
}

/// A Claude session on a daemon without Claude: created while an install request for it
/// runs, it waits for that install (one download), then a real turn runs on the installed
/// binary against the fake provider.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_installs_its_agent_then_runs_a_real_turn() {
    sandbox_testkit::isolate!();
    let Some(claude) = Layouts::shared().release(Agent::Claude) else {
        return;
    };
    let mirror = mirror().await;
    let provider = FakeProvider::start().await.unwrap();
    let daemon = TestDaemon::start_with(Options {
        install_mirror: Some(mirror.url().to_string()),
        auto_install: true,
        provider_env: ProviderEnv::default()
            .with("ANTHROPIC_API_KEY", "sk-ant-install-test")
            .with("ANTHROPIC_BASE_URL", provider.base_url()),
        event_timeout: Duration::from_secs(90),
        ..Options::default()
    })
    .await;
    let binary = claude.paths[&format!(
        "linux-{}",
        if cfg!(target_arch = "aarch64") {
            "arm64"
        } else {
            "x64"
        }
    )]
        .clone();
    let request = InstallRequest::default();
    let installing = daemon.client.install_agent_stream("claude", &request);
    let creating = async {
        // The install request is under way (its download has started) before the session
        // is created.
        while mirror.count(&binary) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        daemon
            .agent_session(
                "claude",
                "installed",
                CreateSessionRequest {
                    agent_version: Some("pinned".into()),
                    ..CreateSessionRequest::default()
                },
            )
            .await
    };
    let (frames, _cwd) = tokio::join!(
        async {
            let mut frames = installing.await.unwrap();
            let mut all = Vec::new();
            while let Some(frame) = frames.next().await {
                all.push(frame.unwrap());
            }
            all
        },
        creating
    );
    assert!(
        matches!(frames.last(), Some(InstallFrame::Installed(_))),
        "{frames:?}"
    );
    assert_eq!(mirror.count(&binary), 1, "{:?}", mirror.requests());

    let events = daemon.turn("installed", "say hi").await;
    assert!(
        events.iter().any(|e| matches!(&e.payload, EventPayload::TurnEnded(ended) if ended.stop_reason == StopReason::Completed)),
        "{events:?}"
    );
    let all = daemon.events("installed").await;
    let EventPayload::SessionStarted(started) = &all[0].payload else {
        panic!()
    };
    assert_eq!(
        started.agent_version.as_deref(),
        Some(Agent::Claude.version())
    );
    assert!(!provider.requests().is_empty());
}

/// A disk too small for the binary: `installFailed` saying so, and nothing left behind.
#[tokio::test]
async fn a_full_disk_fails_the_install_and_leaves_nothing() {
    if amp_layout().is_none() {
        return;
    }
    let mirror = mirror().await;
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = common::process::TmpfsNamespace::new(dir.path(), "16m") else {
        assert!(
            !common::process::namespaces_required(),
            "cannot mount a tmpfs in a mount namespace here"
        );
        eprintln!("SKIPPED a_full_disk_fails_the_install_and_leaves_nothing: no mount namespaces");
        return;
    };
    let data = dir.path().join("data");
    let args: Vec<String> = ["agents", "install", "amp", "--local", "--data-dir"]
        .into_iter()
        .map(String::from)
        .chain([
            data.display().to_string(),
            "--install-mirror".into(),
            mirror.url().into(),
            "--npm-registry".into(),
            format!("{}/npm", mirror.url()),
        ])
        .collect();
    let output = Command::from(disk.command(&args)).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("no space left"), "{stderr}");
    let agent_dir = disk.outside(std::path::Path::new("data/agents/amp"));
    let left: Vec<String> = std::fs::read_dir(&agent_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != ".lock")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A stream with nothing to say for a while keeps its connection alive with comments.
#[tokio::test]
async fn a_quiet_install_stream_sends_keep_alives() {
    if amp_layout().is_none() {
        return;
    }
    let mirror = mirror().await;
    let daemon = TestDaemon::start_with(Options {
        install_mirror: Some(mirror.url().to_string()),
        sse_keep_alive: Duration::from_millis(100),
        ..Options::default()
    })
    .await;
    // Amp's latest version is its launcher package's `latest` on the registry.
    mirror.fail("/npm/@ampcode/cli", Fault::Delay(700));
    let response = reqwest::Client::new()
        .post(format!("{}/agents/amp/install", daemon.url()))
        .header("accept", "text/event-stream")
        .header("content-type", "application/json")
        .body(r#"{"version":"latest"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let resolving = text.find("event: progress").unwrap();
    let comment = text
        .find(": installing\n\n")
        .expect("a keep-alive while the mirror is silent");
    let downloading = text.find("\"phase\":\"downloading\"").unwrap();
    assert!(resolving < comment && comment < downloading, "{text}");
    assert!(
        text.trim_end().ends_with('}') && text.contains("event: installed"),
        "{text}"
    );
}

/// A daemon that installs Amp from `mirror` on demand, whose own service is a loopback
/// port nothing listens on: its turns end with an error, which is enough to see that the
/// agent ran.
async fn amp_daemon(mirror: &Mirror) -> TestDaemon {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let service = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    TestDaemon::start_with(Options {
        install_mirror: Some(mirror.url().to_string()),
        auto_install: true,
        provider_env: ProviderEnv::default()
            .with("AMP_API_KEY", "sgamp-install-test")
            .with("AMP_URL", &service),
        event_timeout: Duration::from_secs(60),
        ..Options::default()
    })
    .await
}

/// A session restored where its agent is missing (the install dir wiped, or the session
/// created by another daemon sharing the store) gets its agent installed before it goes on.
#[tokio::test]
async fn a_restored_session_installs_its_missing_agent() {
    sandbox_testkit::isolate!();
    if amp_layout().is_none() {
        return;
    }
    let mirror = mirror().await;
    let daemon = amp_daemon(&mirror).await;
    daemon
        .agent_session("amp", "moved", CreateSessionRequest::default())
        .await;
    let binary = amp_tarball();
    assert_eq!(mirror.count(&binary), 1);

    let agents = daemon.data_dir.path().join("agents/amp");
    let stopped = daemon.stop().await;
    std::fs::remove_dir_all(&agents).unwrap();
    let daemon = stopped.start().await;
    let events = daemon.turn("moved", "hello").await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e.payload, EventPayload::TurnEnded(_))),
        "{events:?}"
    );
    assert_eq!(mirror.count(&binary), 2, "{:?}", mirror.requests());
    let info = daemon.client.get_session("moved").await.unwrap();
    assert_ne!(
        info.status,
        sandbox_universal::SessionStatus::Ended,
        "{info:?}"
    );
}

/// A bundle imported into a daemon without its agent installs the agent first, as a
/// session create does.
#[tokio::test]
async fn an_imported_session_installs_its_missing_agent() {
    sandbox_testkit::isolate!();
    if amp_layout().is_none() {
        return;
    }
    let mirror = mirror().await;
    let a = amp_daemon(&mirror).await;
    a.agent_session("amp", "s", CreateSessionRequest::default())
        .await;
    let bundle = a.client.export_session_text("s", false).await.unwrap();
    let binary = amp_tarball();
    assert_eq!(mirror.count(&binary), 1);
    let b = amp_daemon(&mirror).await;
    assert!(!b.data_dir.path().join("agents/amp").exists());
    let info = b
        .client
        .import_session("s", bundle.to_vec(), None)
        .await
        .unwrap();
    assert_eq!(info.agent, AgentId::Amp);
    assert_eq!(mirror.count(&binary), 2, "{:?}", mirror.requests());
    assert!(b.data_dir.path().join("agents/amp").exists());
}

mod hardening;
