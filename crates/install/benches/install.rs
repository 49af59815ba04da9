//! How long installing each agent takes from a loopback mirror of its official layout (the
//! real pinned binaries; Amp from its npm platform package, as by default): download with
//! hashing, checksum check, unpacking, the `--version` run and the commit; then the same agent already installed (no download), and eight
//! concurrent installs of one agent (one download).
//!
//! `cargo bench -p sandbox-install --bench install` (needs scripts/install-test-agents.sh).

use std::time::{Duration, Instant};

use sandbox_install::{InstallConfig, Installer};
use sandbox_testkit::agents::Agent;
use sandbox_testkit::mirror::{Layouts, Mirror};

/// Installs from `mirror`, also the npm registry (Amp's verified binary comes from there).
fn installer(dir: &std::path::Path, mirror: &Mirror) -> Installer {
    let mut config = InstallConfig::new(dir.to_path_buf());
    config.mirror = Some(mirror.url().to_string());
    config.npm_registry = Some(format!("{}/npm", mirror.url()));
    Installer::new(config)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

#[tokio::main]
async fn main() {
    let agents = [Agent::Claude, Agent::Codex, Agent::OpenCode, Agent::Amp];
    for agent in agents {
        if Layouts::shared().release(agent).is_none() {
            eprintln!("the pinned agents are not installed: scripts/install-test-agents.sh");
            return;
        }
    }
    Layouts::shared()
        .amp_npm()
        .expect("Amp's npm packages are published");
    let mirror = Mirror::serve(Layouts::shared().root()).await.unwrap();
    println!("agent      version                    MiB   fresh install   MiB/s   again");
    for agent in agents {
        let dir = tempfile::tempdir().unwrap();
        let installer = installer(dir.path(), &mirror);
        let started = Instant::now();
        let done = installer
            .install(agent.agent_id(), None, false, &|_| {})
            .await
            .unwrap();
        let fresh = started.elapsed();
        let started = Instant::now();
        installer
            .install(agent.agent_id(), None, false, &|_| {})
            .await
            .unwrap();
        let again = started.elapsed();
        println!(
            "{:<10} {:<24} {:>6.0} {:>12.2} s {:>7.0} {:>6.1} ms",
            agent.id(),
            done.version,
            mib(done.size),
            fresh.as_secs_f64(),
            mib(done.size) / fresh.as_secs_f64(),
            again.as_secs_f64() * 1000.0
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let installer = installer(dir.path(), &mirror);
    let before = mirror.requests().len();
    let started = Instant::now();
    let installs = (0..8).map(|_| installer.install(Agent::Amp.agent_id(), None, false, &|_| {}));
    let results = futures::future::join_all(installs).await;
    let elapsed: Duration = started.elapsed();
    let downloads = mirror.requests()[before..]
        .iter()
        .filter(|p| p.contains("/cli-linux-") && p.ends_with(".tgz"))
        .count();
    let fresh = results
        .iter()
        .filter(|r| !r.as_ref().unwrap().already_installed)
        .count();
    println!(
        "8 concurrent installs of amp: {downloads} download, {fresh} fresh install, {:.2} s",
        elapsed.as_secs_f64()
    );
}
