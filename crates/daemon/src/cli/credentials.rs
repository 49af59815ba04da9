//! `sandbox-daemon credentials import|list|get|put|remove`: the logins the daemon keeps
//! for agents. `import` finds the logins of this machine's user (where each agent keeps
//! its own) and stores them in the daemon; it shows what it found, never a secret.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use sandbox_agents::login::{self, Discovery, Login};
use sandbox_client::Client;
use sandbox_universal::{AgentId, LoginEntry, PutCredentialRequest};

use super::client::{ClientArgs, connect, fail, finish};

/// `sandbox-daemon credentials ...`.
#[derive(Debug, Subcommand)]
pub enum CredentialsCommand {
    /// Finds the logins on this machine (Claude's `.credentials.json` or
    /// CLAUDE_CODE_OAUTH_TOKEN, Codex's and OpenCode's `auth.json`, Amp's `secrets.json`,
    /// Pi's `auth.json`; CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_DATA_HOME and
    /// PI_CODING_AGENT_DIR are honoured) and stores each in the daemon (PUT
    /// /credentials/{agent}). Prints what it found, never a secret.
    Import {
        /// Only this agent (repeatable; default: every agent).
        #[arg(long = "agent", value_name = "AGENT")]
        agents: Vec<String>,
        /// Show what would be stored, store nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /credentials: the stored logins (never their secrets).
    List(ClientArgs),
    /// GET /credentials/{agent}.
    Get {
        /// Agent id.
        agent: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// PUT /credentials/{agent}: stores a login file (`-`: standard input), or a token
    /// read from standard input (never from the command line, where others can see it).
    Put {
        /// Agent id.
        agent: String,
        /// The agent's login file.
        #[arg(
            long,
            conflicts_with = "token_stdin",
            required_unless_present = "token_stdin"
        )]
        file: Option<PathBuf>,
        /// Read a token (Claude's `setup-token`) from standard input.
        #[arg(long)]
        token_stdin: bool,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// DELETE /credentials/{agent}.
    Remove {
        /// Agent id.
        agent: String,
        #[command(flatten)]
        client: ClientArgs,
    },
}

/// Runs a `credentials` subcommand.
pub async fn run(command: CredentialsCommand) -> ExitCode {
    let args = match &command {
        CredentialsCommand::Import { client, .. }
        | CredentialsCommand::List(client)
        | CredentialsCommand::Get { client, .. }
        | CredentialsCommand::Put { client, .. }
        | CredentialsCommand::Remove { client, .. } => client.clone(),
    };
    let client = match connect(&args) {
        Ok(client) => client,
        Err(e) => return fail(e),
    };
    match command {
        CredentialsCommand::Import {
            agents, dry_run, ..
        } => import(&client, &agents, dry_run).await,
        CredentialsCommand::List(_) => finish(client.list_credentials().await),
        CredentialsCommand::Get { agent, .. } => finish(client.get_credential(&agent).await),
        CredentialsCommand::Put {
            agent,
            file,
            token_stdin,
            ..
        } => put(&client, &agent, file, token_stdin).await,
        CredentialsCommand::Remove { agent, .. } => match client.delete_credential(&agent).await {
            Ok(()) => {
                println!("removed the login stored for {agent}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
    }
}

async fn put(client: &Client, agent: &str, file: Option<PathBuf>, token_stdin: bool) -> ExitCode {
    let read = |path: Option<&PathBuf>| -> std::io::Result<Vec<u8>> {
        match path {
            Some(path) if path.as_os_str() != "-" => std::fs::read(path),
            _ => {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)?;
                Ok(bytes)
            }
        }
    };
    let bytes = match read(file.as_ref()) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("error: reading the login: {e}");
            return ExitCode::FAILURE;
        }
    };
    let request = if token_stdin {
        PutCredentialRequest {
            token: Some(String::from_utf8_lossy(&bytes).trim().to_string()),
            ..Default::default()
        }
    } else {
        match serde_json::from_slice(&bytes) {
            Ok(login) => PutCredentialRequest {
                login: Some(login),
                source: file
                    .filter(|f| f.as_os_str() != "-")
                    .and_then(|f| std::path::absolute(f).ok())
                    .map(|f| f.display().to_string()),
                ..Default::default()
            },
            Err(e) => {
                eprintln!("error: the login file is not JSON: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    finish(client.put_credential(agent, &request).await)
}

/// One line per entry: its name, kind and expiry.
fn entries(entries: &[LoginEntry]) -> String {
    entries
        .iter()
        .map(|e| {
            let kind = serde_json::to_value(e.kind).expect("kinds serialise");
            let kind = kind.as_str().unwrap_or_default().to_string();
            match &e.expires_at {
                Some(at) => format!("{} ({kind}, expires {at})", e.name),
                None => format!("{} ({kind})", e.name),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

async fn import(client: &Client, names: &[String], dry_run: bool) -> ExitCode {
    let agents: Vec<AgentId> = if names.is_empty() {
        login::SPECS.iter().map(|s| s.agent).collect()
    } else {
        let mut agents = Vec::new();
        for name in names {
            match name.parse::<AgentId>() {
                Ok(agent) if login::spec(agent).is_some() => agents.push(agent),
                Ok(agent) => {
                    eprintln!("error: {} keeps no login", agent.as_str());
                    return ExitCode::from(2);
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        agents
    };
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let var = |name: &str| std::env::var_os(name);
    let (mut stored, mut failed) = (0, 0);
    for agent in agents {
        let id = agent.as_str();
        match login::discover(agent, &var, &home) {
            Discovery::Missing(path) => println!("{id}: no login at {path}"),
            Discovery::Unusable(path, why) => {
                println!("{id}: {path} is not a usable login: {why}");
                failed += 1;
            }
            Discovery::Found(found) => {
                println!("{id}: found {} — {}", found.source, entries(&found.entries));
                if dry_run {
                    continue;
                }
                let request = match found.login {
                    Login::File(file) => PutCredentialRequest {
                        login: Some(file),
                        source: Some(found.source),
                        ..Default::default()
                    },
                    Login::Token(token) => PutCredentialRequest {
                        token: Some(token),
                        source: Some(found.source),
                        ..Default::default()
                    },
                };
                match client.put_credential(id, &request).await {
                    Ok(_) => {
                        println!("{id}: stored in the daemon");
                        stored += 1;
                    }
                    Err(e) => {
                        eprint!("{id}: not stored: ");
                        let _ = fail(e);
                        failed += 1;
                    }
                }
            }
        }
    }
    if failed > 0 || (stored == 0 && !dry_run && !names.is_empty()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
