//! Installing agents from the command line: where downloads come from (shared by the server
//! and `agents install --local`), and `sandbox-daemon agents install`, which asks the daemon
//! (its progress streamed) or, with `--local`, installs into a data dir itself — safe next
//! to a running daemon, which takes the same per-agent file lock.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use sandbox_agents::release::ReleaseHost;
use sandbox_client::InstallFrame;
use sandbox_install::{DefaultVersion, InstallConfig, Installer, SourceKind};
use sandbox_universal::{AgentId, InstallProgress, InstallRequest, InstallResponse};

use super::client::{ClientArgs, connect, fail, print_json};

/// Where agent downloads come from.
#[derive(Debug, Clone, Args)]
pub struct InstallArgs {
    /// A base URL standing in for every official download host: each official URL is
    /// fetched as this base plus the URL's path (e.g. `<base>/repos/openai/codex/releases/latest`).
    #[arg(long, env = "SANDBOX_DAEMON_INSTALL_MIRROR")]
    pub install_mirror: Option<String>,
    /// Replaces Claude Code's release bucket URL.
    #[arg(long, env = "SANDBOX_DAEMON_CLAUDE_RELEASES_URL")]
    pub claude_releases_url: Option<String>,
    /// Replaces Amp's release bucket URL.
    #[arg(long, env = "SANDBOX_DAEMON_AMP_RELEASES_URL")]
    pub amp_releases_url: Option<String>,
    /// Replaces the GitHub release download host (Codex, OpenCode).
    #[arg(long, env = "SANDBOX_DAEMON_GITHUB_URL")]
    pub github_url: Option<String>,
    /// Replaces the GitHub API host (release metadata and checksums).
    #[arg(long, env = "SANDBOX_DAEMON_GITHUB_API_URL")]
    pub github_api_url: Option<String>,
    /// The npm registry for `--install-source npm` and for Pi (default: npm's own setting).
    #[arg(long, env = "SANDBOX_DAEMON_NPM_REGISTRY")]
    pub npm_registry: Option<String>,
    /// Where native agents come from: `release` (the vendors' files) or `npm` (their
    /// platform packages on the npm registry).
    #[arg(long, env = "SANDBOX_DAEMON_INSTALL_SOURCE", default_value = "release")]
    pub install_source: SourceKind,
    /// The version installed when none is asked for: `pinned` (the one this daemon is
    /// tested with) or `latest`.
    #[arg(long, env = "SANDBOX_DAEMON_INSTALL_VERSION", default_value = "pinned")]
    pub install_version: DefaultVersion,
    /// Install a download even when its vendor publishes no checksum for it (a loud
    /// warning is logged for each); by default such an install is refused. The variable
    /// takes `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
    #[arg(
        long,
        env = "SANDBOX_DAEMON_ALLOW_UNVERIFIED_INSTALLS",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub allow_unverified_installs: bool,
}

impl InstallArgs {
    /// The installer's configuration for installs into `install_dir`.
    pub fn config(&self, install_dir: PathBuf) -> InstallConfig {
        let mut config = InstallConfig::new(install_dir);
        config.mirror = self.install_mirror.clone();
        for (host, url) in [
            (ReleaseHost::ClaudeReleases, &self.claude_releases_url),
            (ReleaseHost::AmpReleases, &self.amp_releases_url),
            (ReleaseHost::Github, &self.github_url),
            (ReleaseHost::GithubApi, &self.github_api_url),
        ] {
            if let Some(url) = url {
                config.hosts.insert(host, url.clone());
            }
        }
        config.npm_registry = self.npm_registry.clone();
        // GitHub's API allows anonymous callers 60 requests an hour; a token lifts that.
        config.github_token = ["SANDBOX_DAEMON_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN"]
            .iter()
            .find_map(|var| std::env::var(var).ok().filter(|v| !v.trim().is_empty()));
        config.source = self.install_source;
        config.default_version = self.install_version;
        config.allow_unverified = self.allow_unverified_installs;
        config
    }
}

/// `sandbox-daemon agents install`.
#[derive(Debug, Args)]
pub struct AgentInstallArgs {
    /// Agent id.
    pub agent: String,
    /// `pinned`, `latest` or a version (default: the daemon's default).
    #[arg(long)]
    pub version: Option<String>,
    /// Download again even if that version is installed.
    #[arg(long)]
    pub reinstall: bool,
    /// Install into the data dir here, without a daemon (e.g. while building an image).
    #[arg(long)]
    pub local: bool,
    /// With `--local`: the data dir (default: the daemon's default).
    #[arg(long, env = "SANDBOX_DAEMON_DATA_DIR", requires = "local")]
    pub data_dir: Option<PathBuf>,
    #[command(flatten)]
    pub sources: InstallArgs,
    #[command(flatten)]
    pub client: ClientArgs,
}

/// Runs `agents install`: prints the final summary as JSON, progress on stderr.
pub async fn run(args: AgentInstallArgs) -> ExitCode {
    let request = InstallRequest {
        version: args.version.clone(),
        reinstall: args.reinstall,
    };
    if args.local {
        return local(&args, &request).await;
    }
    let client = match connect(&args.client) {
        Ok(client) => client,
        Err(e) => return fail(e),
    };
    let mut frames = match client.install_agent_stream(&args.agent, &request).await {
        Ok(frames) => frames,
        Err(e) => return fail(e),
    };
    let bar = Bar::new();
    while let Some(frame) = frames.next().await {
        match frame {
            Ok(InstallFrame::Progress(step)) => bar.show(&step),
            Ok(InstallFrame::Installed(done)) => {
                bar.finish(&done);
                print_json(&done);
                return ExitCode::SUCCESS;
            }
            Ok(InstallFrame::Failed(problem)) => {
                bar.clear();
                eprintln!(
                    "{}",
                    serde_json::to_string_pretty(&problem).expect("problems serialize")
                );
                return ExitCode::FAILURE;
            }
            Err(e) => {
                bar.clear();
                return fail(e);
            }
        }
    }
    bar.clear();
    eprintln!("error: the daemon closed the install stream before it finished");
    ExitCode::FAILURE
}

async fn local(args: &AgentInstallArgs, request: &InstallRequest) -> ExitCode {
    let agent: AgentId = match args.agent.parse() {
        Ok(agent) => agent,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(crate::server::default_data_dir);
    let installer = Installer::new(args.sources.config(data_dir.join("agents")));
    let bar = Bar::new();
    let show = |step: InstallProgress| bar.show(&step);
    match installer
        .install(agent, request.version.as_deref(), request.reinstall, &show)
        .await
    {
        Ok(done) => {
            let summary = done.response();
            bar.finish(&summary);
            for unverified in &done.unverified {
                eprintln!(
                    "WARNING: {} {} is installed UNVERIFIED (--allow-unverified-installs): {unverified}",
                    args.agent, done.version
                );
            }
            print_json(&summary);
            ExitCode::SUCCESS
        }
        Err(error) => {
            bar.clear();
            eprintln!("error: installing {}: {error}", args.agent);
            ExitCode::FAILURE
        }
    }
}

/// A progress bar on stderr: bytes, rate and time left while downloading.
struct Bar(ProgressBar);

impl Bar {
    fn new() -> Self {
        let bar = ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(120));
        Self(bar)
    }

    fn show(&self, step: &InstallProgress) {
        match step {
            InstallProgress::Waiting {} => self
                .0
                .set_message("waiting for another install of this agent"),
            InstallProgress::Resolving { requested } => {
                self.0.set_message(format!("resolving {requested}"))
            }
            InstallProgress::Downloading {
                version,
                url,
                bytes,
                total,
            } => {
                if self.0.length() != *total {
                    match total {
                        Some(total) => {
                            self.0.set_length(*total);
                            self.0.set_style(
                                ProgressStyle::with_template(
                                    "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
                                )
                                .expect("a valid template")
                                .progress_chars("=> "),
                            );
                        }
                        None => self.0.unset_length(),
                    }
                }
                let file = url.rsplit('/').next().unwrap_or(url);
                self.0.set_message(format!("{version} {file}"));
                self.0.set_position(*bytes);
            }
            InstallProgress::Verifying { version } => {
                self.0.set_style(ProgressStyle::default_spinner());
                self.0.set_message(format!("verifying {version}"));
            }
        }
    }

    fn finish(&self, done: &InstallResponse) {
        let line = if done.already_installed {
            format!(
                "{} {} already installed",
                done.agent.as_str(),
                done.version.as_deref().unwrap_or_default()
            )
        } else {
            format!(
                "{} {} installed ({} in {})",
                done.agent.as_str(),
                done.version.as_deref().unwrap_or_default(),
                indicatif::HumanBytes(done.size),
                indicatif::HumanDuration(Duration::from_millis(done.duration_ms)),
            )
        };
        if self.0.is_hidden() {
            // Not a terminal (a log, CI): one plain line instead of a bar.
            eprintln!("{line}");
        }
        self.0.finish_with_message(line);
    }

    fn clear(&self) {
        self.0.finish_and_clear();
    }
}
