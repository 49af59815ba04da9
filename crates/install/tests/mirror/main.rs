//! Installs against a loopback mirror of the official download hosts and of an npm
//! registry, filled with the real pinned binaries the test kit installs: every agent
//! latest and pinned (Amp from its npm platform package: its release host publishes no
//! checksum), musl and glibc names, one download for concurrent installs in one process
//! and across installers, corrupt and cut-off downloads refused with nothing left behind,
//! 404 and 500 answers, downloads without a published checksum refused (unless allowed,
//! then reported), and the npm-registry source (a native agent's platform package, and Pi
//! with its dependencies through npm).

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use sandbox_agents::platform::{Arch, Platform};
use sandbox_install::{InstallConfig, InstallError, Installed, Installer, SourceKind};
use sandbox_testkit::agents::Agent;
use sandbox_testkit::mirror::releases::AMP as AMP_RELEASES;
use sandbox_testkit::mirror::{Fault, Layouts, Mirror, Published};
use sandbox_universal::{AgentId, BinarySource, InstallProgress};

fn published(agent: Agent) -> Option<Published> {
    Layouts::shared().release(agent)
}

fn publish_npm() -> Option<()> {
    Layouts::shared().npm()
}

/// Amp's release layout and its npm packages (where its verified binary comes from).
fn publish_amp() -> Option<Published> {
    Layouts::shared().amp_npm()?;
    published(Agent::Amp)
}

/// The path of Amp's platform package tarball on the mirror.
fn amp_tarball() -> String {
    format!(
        "/npm/@ampcode/cli-linux-{}/-/cli-linux-{}-{}.tgz",
        glibc().arch_name(),
        glibc().arch_name(),
        Agent::Amp.version()
    )
}

fn layouts() -> &'static Layouts {
    Layouts::shared()
}

/// Installs from `mirror`, which is also the npm registry (under `/npm`).
fn config(dir: &Path, mirror: &Mirror) -> InstallConfig {
    let mut config = InstallConfig::new(dir.to_path_buf());
    config.mirror = Some(mirror.url().to_string());
    config.npm_registry = Some(format!("{}/npm", mirror.url()));
    config.backoff = Duration::from_millis(10);
    config.retries = 2;
    config
}

fn glibc() -> Platform {
    Platform::linux(
        if cfg!(target_arch = "aarch64") {
            Arch::Arm64
        } else {
            Arch::X64
        },
        false,
    )
}

fn musl() -> Platform {
    Platform {
        musl: true,
        ..glibc()
    }
}

async fn install(
    installer: &Installer,
    agent: AgentId,
    version: Option<&str>,
    reinstall: bool,
) -> Result<Installed, InstallError> {
    installer.install(agent, version, reinstall, &|_| {}).await
}

/// Every entry of `<dir>/<agent>` but the lock file.
fn leftovers(dir: &Path, agent: AgentId) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join(agent.as_str()))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != ".lock")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn assert_installed(done: &Installed, dir: &Path, agent: AgentId, version: &str) {
    assert_eq!(done.version, version);
    assert!(
        done.path
            .starts_with(dir.join(agent.as_str()).join(version)),
        "{}",
        done.path.display()
    );
    assert_eq!(
        sandbox_agents::locate::current_version(dir, agent).as_deref(),
        Some(version)
    );
    assert_eq!(
        sandbox_agents::locate::installed_executable(dir, agent, version).as_deref(),
        Some(done.path.as_path())
    );
}

/// Latest (the announcement is read), then pinned (already there: nothing downloaded),
/// then a reinstall of the pinned version (downloaded again, no announcement read).
/// Returns the mirror's requests and the final install.
async fn latest_then_pinned(
    agent: Agent,
    latest: &str,
    binary: &str,
    source: BinarySource,
) -> Option<(Vec<String>, Installed, tempfile::TempDir)> {
    let published = published(agent)?;
    let id = agent.agent_id();
    let mirror = Mirror::serve(layouts().root()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let installer = Installer::new(config(dir.path(), &mirror));
    let frames = Mutex::new(Vec::new());
    let done = installer
        .install(id, Some("latest"), false, &|p| {
            frames.lock().unwrap().push(p)
        })
        .await
        .unwrap();
    assert_installed(&done, dir.path(), id, &published.version);
    assert!(!done.already_installed);
    assert_eq!(done.source, source);
    assert!(done.unverified.is_empty(), "{:?}", done.unverified);
    assert!(done.size > 1_000_000, "{}", done.size);
    assert_eq!(mirror.count(latest), 1, "{:?}", mirror.requests());
    assert_eq!(mirror.count(binary), 1, "{:?}", mirror.requests());
    let frames = frames.into_inner().unwrap();
    assert!(
        matches!(&frames[0], InstallProgress::Resolving { requested } if requested == "latest")
    );
    assert!(frames.iter().any(
        |f| matches!(f, InstallProgress::Downloading { bytes, total: Some(t), .. } if bytes == t)
    ));
    assert!(matches!(
        frames.last(),
        Some(InstallProgress::Verifying { .. })
    ));

    let again = install(&installer, id, Some("pinned"), false)
        .await
        .unwrap();
    assert!(again.already_installed);
    assert_eq!(again.path, done.path);
    assert_eq!(mirror.count(binary), 1);

    let fresh = install(&installer, id, None, true).await.unwrap();
    assert!(!fresh.already_installed);
    assert_installed(&fresh, dir.path(), id, &published.version);
    assert_eq!(mirror.count(binary), 2);
    assert_eq!(
        mirror.count(latest),
        1,
        "a pinned install reads no announcement"
    );
    assert_eq!(
        leftovers(dir.path(), id),
        [published.version.clone(), "current".into()]
    );
    Some((mirror.requests(), fresh, dir))
}

#[tokio::test]
async fn claude_latest_and_pinned() {
    let cpu = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "x64"
    };
    latest_then_pinned(
        Agent::Claude,
        "/claude-code-releases/latest",
        &format!("/linux-{cpu}/claude"),
        BinarySource::Mirror,
    )
    .await;
    let manifest = format!("/{}/manifest.json", Agent::Claude.version());
    assert!(published(Agent::Claude).is_none_or(|p| p.paths["manifest"].ends_with(&manifest)));
}

#[tokio::test]
async fn codex_latest_and_pinned_with_its_code_mode_host() {
    let triple = Platform::current().unwrap().triple();
    let binary = format!("/codex-{triple}.tar.gz");
    let Some((requests, done, _dir)) = latest_then_pinned(
        Agent::Codex,
        "/repos/openai/codex/releases/latest",
        &binary,
        BinarySource::Mirror,
    )
    .await
    else {
        return;
    };
    // The companion is installed next to the executable; checksums come from the
    // release's assets.
    assert!(done.path.with_file_name("codex-code-mode-host").is_file());
    let host = format!("/codex-code-mode-host-{triple}.tar.gz");
    assert_eq!(requests.iter().filter(|p| p.ends_with(&host)).count(), 2);
    let tags = format!(
        "/repos/openai/codex/releases/tags/rust-v{}",
        Agent::Codex.version()
    );
    assert_eq!(
        requests.iter().filter(|p| p.ends_with(&tags)).count(),
        2,
        "{requests:?}"
    );
}

#[tokio::test]
async fn opencode_latest_and_pinned() {
    let cpu = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "x64"
    };
    latest_then_pinned(
        Agent::OpenCode,
        "/repos/anomalyco/opencode/releases/latest",
        &format!("opencode-linux-{cpu}.tar.gz"),
        BinarySource::Mirror,
    )
    .await;
}

/// Amp's release host publishes no checksum: Amp comes from its npm platform package (the
/// same binary, held to the registry's SHA-512 integrity), its latest version from the
/// registry too, and nothing from the release host.
#[tokio::test]
async fn amp_latest_and_pinned_from_its_verified_npm_package() {
    let Some(amp) = publish_amp() else {
        return;
    };
    let Some((requests, _, _dir)) = latest_then_pinned(
        Agent::Amp,
        "/npm/@ampcode/cli",
        &amp_tarball(),
        BinarySource::Npm,
    )
    .await
    else {
        return;
    };
    assert!(
        !requests.iter().any(|p| p.starts_with(AMP_RELEASES)),
        "{requests:?}"
    );
    assert!(!requests.contains(&amp.paths["binary"]), "{requests:?}");
}

#[tokio::test]
async fn musl_systems_get_musl_builds_and_amp_says_it_has_none() {
    let (Some(_), Some(_)) = (published(Agent::Claude), published(Agent::OpenCode)) else {
        return;
    };
    let mirror = Mirror::serve(layouts().root()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut musl_config = config(dir.path(), &mirror);
    musl_config.platform = Some(musl());
    let installer = Installer::new(musl_config);
    install(&installer, AgentId::Claude, None, false)
        .await
        .unwrap();
    install(&installer, AgentId::Opencode, None, false)
        .await
        .unwrap();
    let requests = mirror.requests().join("\n");
    assert!(
        requests.contains(&format!("/{musl}/claude", musl = musl())),
        "{requests}"
    );
    assert!(
        requests.contains(&format!("opencode-{}.tar.gz", musl())),
        "{requests}"
    );
    assert!(
        !requests.contains(&format!("/{}/claude", glibc())),
        "{requests}"
    );

    let before = mirror.requests().len();
    let error = install(&installer, AgentId::Amp, None, false)
        .await
        .unwrap_err();
    assert!(
        matches!(error, InstallError::UnsupportedPlatform { .. }),
        "{error}"
    );
    assert!(error.to_string().contains(&musl().to_string()), "{error}");
    assert_eq!(
        mirror.requests().len(),
        before,
        "nothing is fetched for an unsupported platform"
    );
}

#[tokio::test]
async fn concurrent_installs_share_one_download() {
    let Some(published) = publish_amp() else {
        return;
    };
    let mirror = Mirror::serve(layouts().root()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let binary = amp_tarball();

    // In one installer (the daemon's sessions and its install route).
    let installer = Installer::new(config(dir.path(), &mirror));
    let waited = Mutex::new(0);
    let note = |p: InstallProgress| {
        if p == (InstallProgress::Waiting {}) {
            *waited.lock().unwrap() += 1;
        }
    };
    let (a, b) = tokio::join!(
        installer.install(AgentId::Amp, None, false, &note),
        installer.install(AgentId::Amp, None, false, &note),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(mirror.count(&binary), 1, "{:?}", mirror.requests());
    assert!(a.already_installed != b.already_installed);
    assert_eq!(a.path, b.path);
    assert_eq!(*waited.lock().unwrap(), 1);

    // Across installers, as two processes on one data dir: the file lock serializes them.
    let dir = tempfile::tempdir().unwrap();
    let one = Installer::new(config(dir.path(), &mirror));
    let two = Installer::new(config(dir.path(), &mirror));
    let (a, b) = tokio::join!(
        install(&one, AgentId::Amp, Some(&published.version), false),
        install(&two, AgentId::Amp, Some(&published.version), false),
    );
    assert!(a.unwrap().already_installed != b.unwrap().already_installed);
    assert_eq!(
        mirror.count(&binary),
        2,
        "one more download for the second data dir"
    );
    assert_eq!(
        leftovers(dir.path(), AgentId::Amp),
        [published.version.clone(), "current".into()]
    );
}

#[tokio::test]
async fn corrupt_and_cut_off_downloads_leave_nothing_behind() {
    let (Some(opencode), Some(_)) = (published(Agent::OpenCode), publish_amp()) else {
        return;
    };
    let mirror = Mirror::serve(layouts().root()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let installer = Installer::new(config(dir.path(), &mirror));

    let tarball = opencode.paths[&glibc().to_string()].clone();
    mirror.fail(&tarball, Fault::Corrupt);
    let error = install(&installer, AgentId::Opencode, None, false)
        .await
        .unwrap_err();
    assert!(matches!(error, InstallError::Corrupt { .. }), "{error}");
    assert!(error.to_string().contains("SHA-256"), "{error}");
    assert_eq!(
        leftovers(dir.path(), AgentId::Opencode),
        Vec::<String>::new()
    );
    assert_eq!(
        mirror.count(&tarball),
        1,
        "a checksum mismatch is not retried"
    );

    // A transfer cut short is caught by its announced length, and tried again.
    let binary = amp_tarball();
    mirror.fail(&binary, Fault::Truncate);
    let error = install(&installer, AgentId::Amp, None, false)
        .await
        .unwrap_err();
    assert!(matches!(error, InstallError::Network { .. }), "{error}");
    assert_eq!(mirror.count(&binary), 3, "tried three times (two retries)");
    assert_eq!(leftovers(dir.path(), AgentId::Amp), Vec::<String>::new());

    // Once the mirror heals, the same installer succeeds.
    mirror.heal();
    install(&installer, AgentId::Amp, None, false)
        .await
        .unwrap();
}

#[tokio::test]
async fn missing_versions_and_server_errors() {
    if publish_amp().is_none() {
        return;
    }
    let mirror = Mirror::serve(layouts().root()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let installer = Installer::new(config(dir.path(), &mirror));

    let error = install(&installer, AgentId::Amp, Some("9.9.9"), false)
        .await
        .unwrap_err();
    assert!(
        matches!(error, InstallError::Http { status: 404, .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("/npm/@ampcode/cli-linux-")
            && error.to_string().contains("9.9.9"),
        "{error}"
    );
    let error = install(&installer, AgentId::Amp, Some("../../etc"), false)
        .await
        .unwrap_err();
    assert!(matches!(error, InstallError::BadVersion(_)), "{error}");

    // A 500 is retried: two failures, then the file.
    let binary = amp_tarball();
    mirror.fail(
        &binary,
        Fault::Status {
            status: 500,
            times: 2,
        },
    );
    install(&installer, AgentId::Amp, None, false)
        .await
        .unwrap();
    assert_eq!(mirror.count(&binary), 3);

    // Failing for good: the status is named, nothing is left.
    let dir = tempfile::tempdir().unwrap();
    let installer = Installer::new(config(dir.path(), &mirror));
    // (Amp's latest version is the registry's `latest` of its launcher package.)
    mirror.fail(
        "/npm/@ampcode/cli",
        Fault::Status {
            status: 503,
            times: 10,
        },
    );
    let error = install(&installer, AgentId::Amp, Some("latest"), false)
        .await
        .unwrap_err();
    assert!(
        matches!(error, InstallError::Http { status: 503, .. }),
        "{error}"
    );
    assert_eq!(leftovers(dir.path(), AgentId::Amp), Vec::<String>::new());
    // A 4xx is not retried.
    mirror.heal();
    mirror.fail(
        "/npm/@ampcode/cli",
        Fault::Status {
            status: 403,
            times: 10,
        },
    );
    let before = mirror.count("/npm/@ampcode/cli");
    install(&installer, AgentId::Amp, Some("latest"), false)
        .await
        .unwrap_err();
    assert_eq!(mirror.count("/npm/@ampcode/cli"), before + 1);
}

#[tokio::test]
async fn the_npm_registry_source_installs_platform_packages_and_node_agents() {
    if publish_npm().is_none() {
        return;
    }
    let mirror = Mirror::serve(layouts().root()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut npm_config = config(dir.path(), &mirror);
    npm_config.mirror = None;
    npm_config.npm_registry = Some(format!("{}/npm", mirror.url()));
    npm_config.source = SourceKind::Npm;
    let installer = Installer::new(npm_config);

    // A native agent: its platform package's tarball, held to the registry's integrity.
    let done = install(&installer, AgentId::Amp, Some("latest"), false)
        .await
        .unwrap();
    assert_eq!(done.source, BinarySource::Npm);
    assert_eq!(done.version, Agent::Amp.version());
    assert!(
        mirror.count("/npm/@ampcode/cli") >= 1,
        "{:?}",
        mirror.requests()
    );
    let tarball = amp_tarball();
    assert_eq!(mirror.count(&tarball), 1, "{:?}", mirror.requests());
    mirror.fail(&tarball, Fault::Corrupt);
    let error = install(&installer, AgentId::Amp, None, true)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("SHA-512"), "{error}");
    mirror.heal();

    // Pi: a Node package with dependencies, through npm, run with the machine's Node.
    let done = install(&installer, AgentId::Pi, Some("latest"), false)
        .await
        .unwrap();
    assert_eq!(done.version, Agent::Pi.version());
    assert!(
        done.path
            .ends_with("node_modules/@mariozechner/pi-coding-agent/dist/cli.js")
    );
    assert!(mirror.count("/npm/@mariozechner/pi-coding-agent") >= 1);
    assert_eq!(
        sandbox_agents::locate::current_version(dir.path(), AgentId::Pi).as_deref(),
        Some(Agent::Pi.version())
    );
}

#[tokio::test]
async fn the_mock_is_built_in() {
    let dir = tempfile::tempdir().unwrap();
    let installer = Installer::new(InstallConfig::new(dir.path().into()));
    let error = install(&installer, AgentId::Mock, None, false)
        .await
        .unwrap_err();
    assert!(
        matches!(error, InstallError::NotInstallable { .. }),
        "{error}"
    );
}

mod verification;
