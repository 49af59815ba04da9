//! Scenarios: one real agent run by the daemon's own driver, one fake provider, one
//! scripted conversation, the native transcript the driver's runner taps, and the checks
//! that the agent behaved. Shared by the smoke tests and by `testkit record`, which writes
//! the transcripts to `fixtures/<agent>/<scenario>.jsonl`.
//!
//! [`script`] is the one script every agent runs (prompt, cancel, answers, in universal
//! terms); each agent's module lists its scenarios (`Spec`: the prompt keyword the fake
//! provider understands, the permission mode, how permissions are answered) and checks
//! each run against the native transcript and the provider's recorded requests.

mod claude;
mod codex;
mod opencode;
mod pi;
pub mod script;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sandbox_agents::AgentEvent;
use sandbox_universal::{PermissionMode, PermissionReply};
use serde_json::Value;

pub use script::DriveError;

use crate::agents::{self, Agent, MissingAgent};
use crate::drivers::{Dir, Line, Transcript};
use crate::offline::Sandbox;
use crate::provider::{FakeProvider, RecordedRequest};

/// Time allowed for an agent to start (OpenCode's start is CPU-bound: ~2–4 s alone,
/// much more on a busy 2-core machine).
pub const START_LIMIT: Duration = Duration::from_secs(90);
/// Time allowed for one turn.
pub const TURN_LIMIT: Duration = Duration::from_secs(90);

/// When set, every request the fake provider receives during a scenario is appended to
/// this file as a JSON line (see [`crate::provider::FakeProviderBuilder::request_log`]).
pub const REQUEST_LOG_ENV: &str = "SANDBOX_TESTKIT_REQUEST_LOG";

/// The prompts of the scenarios: the fake provider's keywords (see `provider/script.rs`).
pub(crate) mod prompts {
    /// A plain text reply.
    pub const TEXT: &str = "say hi";
    /// A shell command.
    pub const TOOL: &str = "USE_TOOL now";
    /// A file write.
    pub const WRITE: &str = "USE_WRITE now";
    /// The agent's question tool.
    pub const QUESTION: &str = "ASK_QUESTION please";
    /// Reasoning before the text.
    pub const THINK: &str = "THINK about it";
    /// A slow reply (for cancel).
    pub const SLOW: &str = "SLOW please";
    /// HTTP 500.
    pub const FAIL: &str = "FAIL now";
    /// One transient failure, then the reply.
    pub const FLAKY: &str = "FLAKY now";
    /// HTTP 400.
    pub const REFUSE: &str = "REFUSE now";
}

/// How the one script ([`script`]) runs a scenario of an agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    /// The scenario's name (also the fixture's file name).
    pub name: &'static str,
    /// What it does.
    pub about: &'static str,
    /// The first turn's message.
    pub prompt: &'static str,
    /// The session's permission mode.
    pub mode: PermissionMode,
    /// The answer to every `permissionAsked`.
    pub permission: PermissionReply,
    /// Cancel the first turn at its first `itemDelta`, then run a second turn.
    pub cancel: bool,
}

impl Spec {
    /// A `default`-mode scenario sending `prompt`, allowing what is asked once.
    pub const fn new(name: &'static str, about: &'static str, prompt: &'static str) -> Self {
        Self {
            name,
            about,
            prompt,
            mode: PermissionMode::Default,
            permission: PermissionReply::Once,
            cancel: false,
        }
    }

    /// The session runs in `mode`.
    pub const fn mode(self, mode: PermissionMode) -> Self {
        Self { mode, ..self }
    }

    /// Permissions are answered with `reply`.
    pub const fn answer(self, permission: PermissionReply) -> Self {
        Self { permission, ..self }
    }

    /// The first turn is cancelled at its first delta; a second turn follows.
    pub const fn cancelling(self) -> Self {
        Self {
            cancel: true,
            ..self
        }
    }
}

/// A named scenario of one agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// The agent.
    pub agent: Agent,
    /// Its name (`text`, `tool-allow`, ...), also the fixture file name.
    pub name: &'static str,
    /// What it does.
    pub about: &'static str,
}

/// Every scenario, grouped by agent.
pub fn all() -> Vec<Scenario> {
    Agent::ALL
        .into_iter()
        .flat_map(|agent| {
            specs(agent).iter().map(move |spec| Scenario {
                agent,
                name: spec.name,
                about: spec.about,
            })
        })
        .collect()
}

/// The scenarios of `agent`.
fn specs(agent: Agent) -> &'static [Spec] {
    match agent {
        Agent::Claude => claude::SCENARIOS,
        Agent::Codex => codex::SCENARIOS,
        Agent::OpenCode => opencode::SCENARIOS,
        Agent::Pi => pi::SCENARIOS,
        Agent::Amp => &[],
    }
}

/// The scenario with this agent and name.
pub fn find(agent: Agent, name: &str) -> Option<Scenario> {
    all()
        .into_iter()
        .find(|s| s.agent == agent && s.name == name)
}

/// Why a scenario failed.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// No such scenario.
    #[error("no scenario `{name}` for {agent}")]
    Unknown {
        /// The agent.
        agent: Agent,
        /// The requested name.
        name: String,
    },
    /// The agent is not installed.
    #[error(transparent)]
    Missing(#[from] MissingAgent),
    /// Directories or the fake provider could not be set up.
    #[error("setup: {0}")]
    Setup(#[from] std::io::Error),
    /// Driving the agent through the daemon's driver failed.
    #[error("{scenario}: {source}\n--- transcript tail ---\n{tail}")]
    Driver {
        /// `agent/name`.
        scenario: String,
        /// What failed.
        source: DriveError,
        /// The last transcript lines.
        tail: String,
    },
    /// The agent ran but did not behave as the scenario expects.
    #[error("{scenario}: check failed: {reason}\n--- transcript tail ---\n{tail}")]
    Check {
        /// `agent/name`.
        scenario: String,
        /// What was wrong.
        reason: String,
        /// The last transcript lines.
        tail: String,
    },
}

/// What a scenario run produced.
#[derive(Debug)]
pub struct Run {
    /// The scenario.
    pub scenario: Scenario,
    /// Every native message, both directions, as the driver's runner tapped it.
    pub transcript: Vec<Line>,
    /// Every universal event the driver emitted.
    pub events: Vec<AgentEvent>,
    /// Every request the fake provider received.
    pub requests: Vec<RecordedRequest>,
    /// The directories the agent ran in.
    pub sandbox: Sandbox,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl Run {
    /// Native messages from the agent (stdout lines, SSE events), without HTTP responses.
    pub fn out(&self) -> impl Iterator<Item = &Value> {
        self.transcript
            .iter()
            .filter(|l| l.dir == Dir::Out && l.via.is_none())
            .map(|l| &l.msg)
    }

    /// Messages sent to the agent (stdin lines, HTTP requests).
    pub fn sent(&self) -> impl Iterator<Item = &Value> {
        self.transcript
            .iter()
            .filter(|l| l.dir == Dir::In)
            .map(|l| &l.msg)
    }

    /// The model calls the fake provider received.
    pub fn model_requests(&self) -> Vec<&RecordedRequest> {
        self.requests.iter().filter(|r| r.is_model_call()).collect()
    }

    /// Contents of a file in the agent's working directory.
    pub fn work_file(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.sandbox.work.join(name)).ok()
    }

    fn tail(&self) -> String {
        tail_of(&self.transcript)
    }
}

fn tail_of(lines: &[Line]) -> String {
    let start = lines.len().saturating_sub(8);
    lines[start..]
        .iter()
        .map(|l| {
            let text = serde_json::to_string(l).unwrap_or_default();
            let cut = (0..=text.len().min(600))
                .rev()
                .find(|i| text.is_char_boundary(*i))
                .unwrap_or(0);
            format!("{}\n", &text[..cut])
        })
        .collect()
}

/// What the script gets: the agent, its directories, the provider, the transcript.
pub(crate) struct Ctx {
    agent: Agent,
    exe: PathBuf,
    sandbox: Sandbox,
    provider_url: String,
    transcript: Transcript,
    /// The session's model.
    model: Option<String>,
}

/// How to run a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// The model of a Codex scenario's thread; `None` names none, so Codex uses its
    /// default model (code mode). Default: [`crate::offline::codex::model`].
    pub codex_model: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            codex_model: crate::offline::codex::model(),
        }
    }
}

/// Runs one scenario with its directories under `root` and checks the outcome.
/// Must run inside the loopback-only namespace (see [`crate::isolate!`]).
pub async fn run(agent: Agent, name: &str, root: &Path) -> Result<Run, ScenarioError> {
    run_with(agent, name, root, Options::default()).await
}

/// [`run`] with these options.
pub async fn run_with(
    agent: Agent,
    name: &str,
    root: &Path,
    options: Options,
) -> Result<Run, ScenarioError> {
    let spec = specs(agent)
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| ScenarioError::Unknown {
            agent,
            name: name.to_owned(),
        })?;
    let scenario = Scenario {
        agent,
        name: spec.name,
        about: spec.about,
    };
    let label = format!("{agent}/{name}");
    let exe = agents::executable(agent)?;
    let sandbox = Sandbox::create(root)?;
    let mut builder = FakeProvider::builder();
    if let Some(log) = std::env::var_os(REQUEST_LOG_ENV) {
        builder = builder.request_log(log.into());
    }
    let provider = builder.start().await?;
    let ctx = Ctx {
        agent,
        exe,
        sandbox,
        provider_url: provider.base_url(),
        transcript: Transcript::default(),
        model: match agent {
            Agent::Codex => options.codex_model,
            _ => None,
        },
    };
    let started = Instant::now();
    let (events, driven) = script::drive(spec, &ctx).await;
    let run = Run {
        scenario,
        transcript: ctx.transcript.lines(),
        events,
        requests: provider.requests(),
        sandbox: ctx.sandbox,
        elapsed: started.elapsed(),
    };
    if let Err(source) = driven {
        return Err(ScenarioError::Driver {
            scenario: label,
            source,
            tail: run.tail(),
        });
    }
    let checked = match agent {
        Agent::Claude => claude::check(name, &run),
        Agent::Codex => codex::check(name, &run),
        Agent::OpenCode => opencode::check(name, &run),
        Agent::Pi => pi::check(name, &run),
        Agent::Amp => Ok(()),
    };
    match checked {
        Ok(()) => Ok(run),
        Err(reason) => Err(ScenarioError::Check {
            scenario: label,
            reason,
            tail: run.tail(),
        }),
    }
}

/// Model calls the provider failed (`error:…` replies) and model calls in all.
fn failed_calls(run: &Run) -> (usize, usize) {
    let calls = run.model_requests();
    let failed = calls
        .iter()
        .filter(|r| r.reply.starts_with("error:"))
        .count();
    (failed, calls.len())
}

/// `Err(reason)` unless `ok`.
fn ensure(ok: bool, reason: impl Into<String>) -> Result<(), String> {
    if ok { Ok(()) } else { Err(reason.into()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_names_are_unique_per_agent_and_cover_the_required_set() {
        let all = all();
        for s in &all {
            assert_eq!(
                all.iter()
                    .filter(|o| o.agent == s.agent && o.name == s.name)
                    .count(),
                1,
                "{s:?}"
            );
        }
        let required = [
            (
                Agent::Claude,
                ["text", "tool-allow", "tool-deny", "question", "think"].as_slice(),
            ),
            (
                Agent::Codex,
                [
                    "text",
                    "command-approval",
                    "apply-patch",
                    "question",
                    "think",
                ]
                .as_slice(),
            ),
            (Agent::OpenCode, ["text", "tool", "permission"].as_slice()),
            (Agent::Pi, ["text", "tool"].as_slice()),
        ];
        for (agent, names) in required {
            for name in names {
                assert!(find(agent, name).is_some(), "{agent}/{name} missing");
            }
        }
    }
}
