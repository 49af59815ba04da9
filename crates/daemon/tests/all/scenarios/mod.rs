//! One table of scenarios for every agent.
//!
//! Each scenario says what it sends and what it expects in universal terms, and runs
//! through the daemon over HTTP for every agent whose capabilities (and setup) allow it:
//! the real pinned CLIs offline against the test kit's fake provider, the built-in mock,
//! and Amp's stand-in (Amp's agent loop runs on Amp's servers; the real binary's start-up
//! is checked in `amp_e2e`). Every turn of every scenario passes the universal checks of
//! [`ctx::check_turn`] (no `unparsed` item among them).
//!
//! A scenario returns the capability flags it saw proven. After a full run, the flags
//! `GET /agents` claims must be exactly the proven ones (both ways), and they must match
//! `crates/agents/src/proofs.json`, which the daemon serves as each flag's proof and from
//! which the README's agent table is generated. `SANDBOX_E2E_RECORD=1` rewrites both from
//! the run instead of checking them.
//!
//! Filters: `cargo test -p sandbox-daemon --test all -- scenarios::codex` runs one agent;
//! `SANDBOX_E2E_SCENARIOS=text,cancel` runs some scenarios (then without the checks that
//! need them all).
//!
//! What only one agent does is tested beside, in `claude_e2e`, `codex_e2e`, ...: those
//! tests set up through [`ctx::Ctx::start`] too.

mod credentials;
pub(crate) mod ctx;
mod faults;
mod hitl;
mod host_tools;
mod mcp;
mod policy;
mod portable;
mod proofs;
mod runner;
pub(crate) mod subject;
mod turns;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use sandbox_universal::{AgentCapabilities, AgentId};

use ctx::Ctx;
use subject::{Runs, Subject};

/// The flags one scenario saw proven.
pub type Proved = Vec<&'static str>;

/// A scenario's future.
pub type Running = Pin<Box<dyn Future<Output = Proved> + Send>>;

/// The future of a scenario that needs the daemon to itself; it hands the context back.
pub type Alone = Pin<Box<dyn Future<Output = (Ctx, Proved)> + Send>>;

/// How a scenario runs.
#[derive(Clone, Copy)]
pub enum Body {
    /// Beside the others, on the shared daemon.
    Shared(fn(Arc<Ctx>) -> Running),
    /// After the others, alone (it restarts the daemon).
    Alone(fn(Ctx) -> Alone),
}

/// One row of the table.
pub struct Scenario {
    /// Its name (the filter and the README's row).
    pub name: &'static str,
    /// The capability flags it can prove: those the agent shows while it runs. An agent
    /// without the feature passes it showing none (e.g. it answers instead of asking).
    pub proves: &'static [&'static str],
    /// What it sends and what it expects, in universal terms.
    pub about: &'static str,
    /// Why it cannot run for this subject, if it cannot.
    pub skip: fn(&Subject, &AgentCapabilities) -> Option<&'static str>,
    /// Runs it.
    pub body: Body,
}

/// Runs for every agent: what it proves is read from what the agent did.
fn always(_: &Subject, _: &AgentCapabilities) -> Option<&'static str> {
    None
}

fn needs_permissions(_: &Subject, caps: &AgentCapabilities) -> Option<&'static str> {
    (!caps.permissions).then_some("the agent asks no permissions")
}

fn needs_plan_approval(_: &Subject, caps: &AgentCapabilities) -> Option<&'static str> {
    (!caps.plan_approval).then_some("the agent submits no plans for approval")
}

fn needs_provider(subject: &Subject, _: &AgentCapabilities) -> Option<&'static str> {
    match subject.runs {
        Runs::RealCli => None,
        Runs::Mock => Some("the mock calls no provider"),
        Runs::StandIn => Some("the stand-in calls no provider"),
    }
}

fn needs_refusal(subject: &Subject, _: &AgentCapabilities) -> Option<&'static str> {
    (subject.runs == Runs::Mock).then_some("the mock calls no provider")
}

fn needs_process(subject: &Subject, _: &AgentCapabilities) -> Option<&'static str> {
    (subject.runs == Runs::Mock).then_some("the mock runs no process")
}

fn needs_live_process(subject: &Subject, _: &AgentCapabilities) -> Option<&'static str> {
    match subject.runs {
        Runs::Mock => Some("the mock runs no process"),
        Runs::StandIn => Some("a process per turn: none runs between turns"),
        Runs::RealCli => None,
    }
}

fn needs_outside_state(subject: &Subject, _: &AgentCapabilities) -> Option<&'static str> {
    (subject.runs == Runs::Mock).then_some("the mock keeps its conversation in memory only")
}

macro_rules! row {
    ($name:literal, $proves:expr, $about:literal, $skip:expr, $run:path) => {
        Scenario {
            name: $name,
            proves: $proves,
            about: $about,
            skip: $skip,
            body: Body::Shared(|ctx| Box::pin($run(ctx))),
        }
    };
    (alone $name:literal, $proves:expr, $about:literal, $skip:expr, $run:path) => {
        Scenario {
            name: $name,
            proves: $proves,
            about: $about,
            skip: $skip,
            body: Body::Alone(|ctx| Box::pin($run(ctx))),
        }
    };
}

/// The table. Scenarios that restart the daemon run last, alone (see [`runner`]).
pub fn table() -> Vec<Scenario> {
    vec![
        row!(
            "text",
            &["textMessages", "streamingDeltas", "usage"],
            "a message; a streamed reply, usage, no secret in the agent's environment",
            always,
            turns::text
        ),
        row!(
            "reasoning",
            &["reasoning"],
            "THINK; a reasoning item with the model's thinking, then the reply",
            always,
            turns::reasoning
        ),
        row!(
            "shell",
            &["commandExecution", "permissions", "toolCalls"],
            "USE_TOOL, permissions allowed once; a command item that exits 0, the file on disk",
            always,
            hitl::shell
        ),
        row!(
            "write",
            &["fileChanges", "permissions", "toolCalls"],
            "USE_WRITE, permissions allowed once; a file change item, the file on disk",
            always,
            hitl::write
        ),
        row!(
            "permission-once",
            &["permissions"],
            "USE_TOOL; a command permission, allowed once; the command runs",
            needs_permissions,
            hitl::once
        ),
        row!(
            "permission-reject",
            &["permissions"],
            "USE_TOOL; a command permission, rejected; nothing runs, the turn completes",
            needs_permissions,
            hitl::reject
        ),
        row!(
            "permission-always",
            &["permissions", "permissionAlways"],
            "USE_TOOL twice; allowed always, the second call is not asked",
            needs_permissions,
            hitl::always
        ),
        row!(
            "permission-modes",
            &["permissions"],
            "each listed mode: default asks for writes and commands, acceptEdits only for commands, bypass never, plan changes no file",
            needs_permissions,
            hitl::modes
        ),
        row!(
            "questions",
            &["questions", "toolCalls"],
            "ASK_QUESTION; two questions (one multi-select) answered, then rejected",
            always,
            hitl::questions
        ),
        row!(
            "plan-approval",
            &["planApproval"],
            "EXIT_PLAN in plan mode; the plan approved (then writes ask) and rejected (then nothing is written)",
            needs_plan_approval,
            hitl::plan_approval
        ),
        row!(
            "cancel",
            &["cancel"],
            "SLOW, cancelled mid-reply; the turn ends cancelled, the next works",
            always,
            turns::cancel
        ),
        row!(
            "cancel-permission",
            &["cancel", "permissions"],
            "USE_TOOL, cancelled while the permission waits; it resolves cancelled, nothing runs, the next turn works",
            needs_permissions,
            hitl::cancel_permission
        ),
        row!(
            "provider-refusal",
            &[],
            "REFUSE: the provider answers 400; the turn ends error with its message, the next works",
            needs_refusal,
            faults::refusal
        ),
        row!(
            "provider-transient",
            &[],
            "FLAKY: the provider fails once (529/503); the turn completes, each retry a status item",
            needs_provider,
            faults::transient
        ),
        row!(
            "kill-between-turns",
            &["resume"],
            "kill -9 of the agent between turns; the next turn resumes with the history",
            needs_live_process,
            faults::kill_between_turns
        ),
        row!(
            "kill-mid-turn",
            &["resume"],
            "kill -9 of the agent mid-reply; the turn ends error, the next resumes with the history",
            needs_process,
            faults::kill_mid_turn
        ),
        row!(
            "export-import",
            &[],
            "export, import into another daemon (own data dir and HOME) in another cwd; the log goes on, the next call carries the earlier turn",
            needs_provider,
            portable::export_import
        ),
        row!(
            "handover",
            &[],
            "a partner agent's session (a reply, a command) handed over; the first call carries its turns and the command's output",
            needs_provider,
            portable::handover
        ),
        row!(
            "stored-login",
            &[],
            "no credential: 422 tokenError naming the three ways; `credentials import` stores the user's login file, the session's home gets it alone (0600), the call carries its token, a refresh goes back to the store, the copy goes at the end, no secret anywhere else",
            always,
            credentials::stored_login
        ),
        row!(
            "memory",
            &["multiTurn"],
            "three turns; the third call carries the first",
            always,
            turns::memory
        ),
        row!(
            "listing",
            &["models", "variants", "agentModes"],
            "models, variants and modes listed live; a listed one is used, an unknown one refused",
            always,
            turns::listing
        ),
        row!(
            "validate-token",
            &["validateToken"],
            "validateToken with a bad key is refused (or refused as unsupported); a session token is used",
            always,
            turns::validate_token
        ),
        row!(
            "system-prompt",
            &["systemPrompt"],
            "systemPrompt appended, and replacing where the agent can; every model call carries it (a mode it lacks: 422)",
            always,
            policy::system_prompt
        ),
        row!(
            "tools",
            &["toolLists"],
            "tools deny shell, then allow read only; the model is offered fewer tools (or the daemon refuses the call), nothing runs (unsupported: 422)",
            always,
            policy::tools
        ),
        row!(
            "max-turns",
            &["maxTurns"],
            "maxTurns 2 and a model that keeps calling tools; the turn ends maxTurns, the next works (unsupported: 422)",
            always,
            policy::max_turns
        ),
        row!(
            "image",
            &["images"],
            "a PNG inline and by workspace path; both reach the model, the user item carries the parts (no images: 422)",
            always,
            policy::image
        ),
        row!(
            "session-env",
            &["sessionEnv"],
            "env POLICY_PROBE; in the agent's environment, HOME refused (unsupported: 422)",
            always,
            policy::session_env
        ),
        row!(
            "mcp-stdio",
            &["mcpServers", "toolCalls", "permissions"],
            "USE_MCP st/echo with a stdio MCP server and an env; the call (asked once where the agent asks) reaches the server with the variable, its output the model (no stdio MCP: 422)",
            always,
            mcp::stdio
        ),
        row!(
            "mcp-http",
            &["mcpServers", "toolCalls", "permissions", "permissionAlways"],
            "USE_MCP ht/echo twice with an HTTP MCP server behind a bearer token, answered always; not asked again, a denied tool of it not offered, the token in no event, argv or store file (no HTTP MCP: 422)",
            always,
            mcp::http
        ),
        row!(
            "host-tool-client",
            &["hostTools", "toolCalls"],
            "USE_MCP host/lookup with a client host tool: toolCallRequested, answered over HTTP, the answer reaches the model; an endsTurn tool ends the turn (toolStop), the next message goes on (no host tools: 422)",
            always,
            host_tools::client
        ),
        row!(
            "host-tool-http",
            &["hostTools", "toolCalls", "permissions"],
            "USE_MCP host/fetch_order with an http host tool: the daemon's signed call reaches a loopback endpoint that checks it, its answer the model; a needsApproval tool rejected never runs (no host tools: 422)",
            always,
            host_tools::http
        ),
        row!(alone "daemon-restart", &["resume"], "the daemon restarts mid-session; the next turn resumes with the history", needs_outside_state, faults::restart),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude() {
    sandbox_testkit::isolate!();
    runner::run(AgentId::Claude).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex() {
    sandbox_testkit::isolate!();
    runner::run(AgentId::Codex).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode() {
    sandbox_testkit::isolate!();
    runner::run(AgentId::Opencode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi() {
    sandbox_testkit::isolate!();
    runner::run(AgentId::Pi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amp_standin() {
    runner::run(AgentId::Amp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock() {
    runner::run(AgentId::Mock).await;
}

/// The capability flags each agent claims are exactly those its recorded run proved, and
/// the README's agent table is the one those proofs generate (no agent needed).
#[tokio::test]
async fn claims_match_the_recorded_proofs() {
    proofs::check_claims_and_readme().await;
}
