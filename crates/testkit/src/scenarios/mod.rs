//! Scenarios: one real agent, one fake provider, one scripted conversation, a native
//! transcript, and the checks that the agent behaved. Shared by the smoke tests and by
//! `testkit record`, which writes the transcripts to `fixtures/<agent>/<scenario>.jsonl`.

mod claude;
mod codex;
mod opencode;
mod pi;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::agents::{self, Agent, MissingAgent};
use crate::drivers::{Dir, DriverError, Line, Transcript};
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
    let group = |agent: Agent, list: &[(&'static str, &'static str)]| -> Vec<Scenario> {
        list.iter()
            .map(|(name, about)| Scenario { agent, name, about })
            .collect()
    };
    [
        group(Agent::Claude, claude::SCENARIOS),
        group(Agent::Codex, codex::SCENARIOS),
        group(Agent::OpenCode, opencode::SCENARIOS),
        group(Agent::Pi, pi::SCENARIOS),
    ]
    .concat()
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
    /// Driving the agent failed.
    #[error("{scenario}: {source}\n--- transcript tail ---\n{tail}")]
    Driver {
        /// `agent/name`.
        scenario: String,
        /// The driver error.
        source: DriverError,
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
    /// Every native line, both directions.
    pub transcript: Vec<Line>,
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

/// What a scenario driver gets: the agent, its directories, the provider, the transcript.
pub(crate) struct Ctx {
    exe: PathBuf,
    sandbox: Sandbox,
    provider_url: String,
    transcript: Transcript,
    options: Options,
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
    let scenario = find(agent, name).ok_or_else(|| ScenarioError::Unknown {
        agent,
        name: name.to_owned(),
    })?;
    let label = format!("{agent}/{name}");
    let ctx = Ctx {
        exe: agents::executable(agent)?,
        sandbox: Sandbox::create(root)?,
        provider_url: String::new(),
        transcript: Transcript::default(),
        options,
    };
    let mut builder = FakeProvider::builder();
    if let Some(log) = std::env::var_os(REQUEST_LOG_ENV) {
        builder = builder.request_log(log.into());
    }
    let provider = builder.start().await?;
    let ctx = Ctx {
        provider_url: provider.base_url(),
        ..ctx
    };
    let started = Instant::now();
    let driven = match agent {
        Agent::Claude => claude::drive(name, &ctx).await,
        Agent::Codex => codex::drive(name, &ctx).await,
        Agent::OpenCode => opencode::drive(name, &ctx).await,
        Agent::Pi => pi::drive(name, &ctx).await,
        Agent::Amp => Ok(()),
    };
    let run = Run {
        scenario,
        transcript: ctx.transcript.lines(),
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

/// Labels to pick for a question: the second option, or the first two when several
/// may be chosen (`multiSelect` / `multiple`).
fn choose(question: &Value) -> Vec<String> {
    let labels: Vec<String> = question["options"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|o| o["label"].as_str().map(str::to_owned))
        .collect();
    let multi = question["multiSelect"] == true || question["multiple"] == true;
    if multi {
        labels.into_iter().take(2).collect()
    } else {
        labels.into_iter().skip(1).take(1).collect()
    }
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

    #[test]
    fn choices() {
        let q = serde_json::json!({"options": [{"label": "A"}, {"label": "B"}, {"label": "C"}]});
        assert_eq!(choose(&q), ["B"]);
        let mut multi = q.clone();
        multi["multiSelect"] = true.into();
        assert_eq!(choose(&multi), ["A", "B"]);
    }
}
