//! `sandbox-daemon acp`: the Agent Client Protocol on stdio, for editors (Zed, JetBrains,
//! Neovim), over a daemon's HTTP API: the one `--endpoint` names, or a private one started
//! in this process. stdout carries ACP frames only; logs go to stderr.

use std::process::ExitCode;

use clap::Args;
use sandbox_universal::PermissionMode;

use crate::acp::bridge::{Bridge, Defaults, serve};
use crate::acp::daemon::Daemon;

/// Options of `sandbox-daemon acp`.
#[derive(Debug, Clone, Args)]
pub struct AcpArgs {
    /// The agent every session drives: claude, codex, opencode, amp, pi or mock.
    #[arg(long)]
    pub agent: String,
    /// The daemon to use (default: a private daemon started in this process, with the
    /// data dir and settings `sandbox-daemon` itself would use).
    #[arg(long, env = "SANDBOX_DAEMON_ENDPOINT")]
    pub endpoint: Option<String>,
    /// The `--endpoint` daemon's bearer token.
    #[arg(long, env = "SANDBOX_DAEMON_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// The model of new sessions (the editor may pick another before the first prompt).
    #[arg(long)]
    pub model: Option<String>,
    /// The model's variant.
    #[arg(long)]
    pub variant: Option<String>,
    /// The agent mode of new sessions.
    #[arg(long)]
    pub agent_mode: Option<String>,
    /// The permission mode of new sessions: default, plan or acceptEdits (the editor is
    /// asked before what the mode does not allow).
    #[arg(long, value_parser = parse_permission_mode)]
    pub permission_mode: Option<PermissionMode>,
}

fn parse_permission_mode(value: &str) -> Result<PermissionMode, String> {
    match value {
        "default" => Ok(PermissionMode::Default),
        "plan" => Ok(PermissionMode::Plan),
        "acceptEdits" => Ok(PermissionMode::AcceptEdits),
        "bypass" => Err("bypass is not offered over ACP: the editor is there to be asked".into()),
        other => Err(format!(
            "unknown permission mode {other} (default, plan, acceptEdits)"
        )),
    }
}

/// Runs the bridge until the editor closes stdin.
pub async fn run(args: AcpArgs) -> ExitCode {
    let daemon = match Daemon::connect(args.endpoint.as_deref(), args.token.clone()).await {
        Ok(daemon) => daemon,
        Err(message) => {
            eprintln!("sandbox-daemon acp: {message}");
            return ExitCode::FAILURE;
        }
    };
    match daemon.client.list_agents().await {
        Ok(agents) if agents.agents.iter().any(|a| a.id.as_str() == args.agent) => {}
        Ok(_) => {
            eprintln!(
                "sandbox-daemon acp: unknown agent {} (claude, codex, opencode, amp, pi, mock)",
                args.agent
            );
            return ExitCode::from(2);
        }
        Err(error) => {
            eprintln!("sandbox-daemon acp: listing the daemon's agents: {error}");
            return ExitCode::FAILURE;
        }
    }
    let bridge = Bridge::new(
        daemon.client.clone(),
        Defaults {
            agent: args.agent,
            model: args.model,
            variant: args.variant,
            agent_mode: args.agent_mode,
            permission_mode: args.permission_mode,
        },
    );
    let served = serve(bridge).await;
    drop(daemon);
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("sandbox-daemon acp: {error}");
            ExitCode::FAILURE
        }
    }
}
