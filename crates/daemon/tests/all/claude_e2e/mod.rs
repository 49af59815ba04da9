//! Claude Code end to end: the daemon's HTTP API driving the real pinned CLI against the
//! fake provider, inside a loopback-only network namespace. One daemon runs every
//! scenario, each on its own session and working directory, concurrently; then the
//! daemon restarts and a session resumes; finally `GET /agents` must claim exactly the
//! capabilities the scenarios observed. `SANDBOX_E2E_SCENARIOS=text,cancel` runs a selection
//! of the table (without the restart and the capability check).

use crate::common;
mod hitl;
mod plan;
mod support;

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Options, TestDaemon};
use sandbox_agents::ProviderEnv;
use sandbox_agents::process::INHERITED_VARS;
use sandbox_testkit::agents::Agent;
use sandbox_testkit::provider::script::{REPLY_TEXT, THINKING_TEXT};
use sandbox_testkit::provider::{BAD_KEY_MARKER, FakeProvider};
use sandbox_universal::{
    AgentError, AgentId, CreateSessionRequest, EventPayload, ItemKind, StopReason,
};
use support::{
    API_KEY, Ctx, DAEMON_TOKEN, OPENAI_SECRET, Observed, TEXT_TURN, assert_history, claude_pid,
    environ, expect, items, stop_reason,
};
use tokio::task::JoinHandle;

/// A text turn with validateToken; the session, its process, its environment.
async fn text(ctx: Arc<Ctx>) -> Observed {
    let created = ctx
        .healthy(
            "text",
            CreateSessionRequest {
                validate_token: Some(true),
                ..ctx.request("text")
            },
        )
        .await;
    let native = created
        .native_session_id
        .expect("native session id in the create answer");
    let events = ctx.turn("text", "say hi").await;
    expect(&events, TEXT_TURN);
    let reply = &items(&events, ItemKind::Message)[1];
    assert_eq!(reply.text(), REPLY_TEXT);
    let deltas = events
        .iter()
        .filter(|e| matches!(e.payload, EventPayload::ItemDelta(_)))
        .count();
    assert!(deltas >= 2, "{deltas} deltas");
    let EventPayload::TurnEnded(ended) = &events.last().unwrap().payload else {
        unreachable!()
    };
    let usage = ended.usage.clone().expect("usage");
    assert!(usage.input_tokens > 0 && usage.output_tokens > 0 && usage.total_cost_usd.is_some());
    let all = ctx.daemon.events("text").await;
    let EventPayload::SessionStarted(started) = &all[0].payload else {
        panic!("sessionStarted first: {:?}", all[0].payload)
    };
    assert_eq!(started.agent, AgentId::Claude);
    assert_eq!(
        started.agent_version.as_deref(),
        Some(Agent::Claude.version())
    );
    assert!(started.model.is_some());
    assert_eq!(all[0].native_session_id.as_deref(), Some(native.as_str()));
    let starts = all
        .iter()
        .filter(|e| matches!(e.payload, EventPayload::SessionStarted(_)))
        .count();
    assert_eq!(starts, 1);
    // Only its own credential and endpoint reach Claude; no daemon secret does.
    let env = environ(claude_pid(&native));
    assert_eq!(
        env.get("ANTHROPIC_API_KEY").map(String::as_str),
        Some(API_KEY)
    );
    assert_eq!(
        env.get("ANTHROPIC_BASE_URL"),
        Some(&ctx.provider.base_url())
    );
    let own = [
        "HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "CLAUDE_CONFIG_DIR",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_BUG_COMMAND",
    ];
    for (name, value) in &env {
        assert!(
            INHERITED_VARS.contains(&name.as_str()) || own.contains(&name.as_str()),
            "{name} reached Claude"
        );
        assert!(
            !value.contains(DAEMON_TOKEN) && !value.contains(OPENAI_SECRET),
            "{name} leaks a secret"
        );
    }
    assert!(
        env["CLAUDE_CONFIG_DIR"].starts_with(&ctx.daemon.data_dir.path().display().to_string())
    );
    vec!["textMessages", "streamingDeltas", "usage", "validateToken"]
}

/// Credentials and versions: a bad key with validateToken is refused, a session's
/// `token` overrides the daemon's key, an uninstalled version is refused.
async fn credentials(ctx: Arc<Ctx>) -> Observed {
    let request = CreateSessionRequest {
        token: Some(format!("sk-ant-{BAD_KEY_MARKER}")),
        validate_token: Some(true),
        ..ctx.request("bad-key")
    };
    let refused = ctx.refused("bad-key", request).await;
    assert_eq!(refused.status, 422, "{refused:?}");
    assert!(
        matches!(refused.agent_error, Some(AgentError::TokenError { .. })),
        "{refused:?}"
    );
    let request = CreateSessionRequest {
        agent_version: Some("0.0.1".into()),
        ..ctx.request("old")
    };
    let refused = ctx.refused("old", request).await;
    assert_eq!(refused.status, 409, "{refused:?}");
    assert!(
        matches!(refused.agent_error, Some(AgentError::NotInstalled { .. })),
        "{refused:?}"
    );
    let token = "sk-ant-session-override";
    let request = CreateSessionRequest {
        token: Some(token.into()),
        validate_token: Some(true),
        agent_version: Some(Agent::Claude.version().into()),
        ..ctx.request("token")
    };
    let native = ctx
        .healthy("token", request)
        .await
        .native_session_id
        .unwrap();
    let env = environ(claude_pid(&native));
    assert_eq!(
        env.get("ANTHROPIC_API_KEY").map(String::as_str),
        Some(token)
    );
    vec!["validateToken"]
}

async fn think(ctx: Arc<Ctx>) -> Observed {
    ctx.session("think").await;
    let events = ctx.turn("think", "THINK about it").await;
    let mut wanted = TEXT_TURN.to_vec();
    wanted.splice(
        3..3,
        [
            "itemStarted:reasoning",
            "itemDelta*",
            "itemCompleted:reasoning",
        ],
    );
    expect(&events, &wanted);
    assert_eq!(items(&events, ItemKind::Reasoning)[0].text(), THINKING_TEXT);
    vec!["reasoning", "streamingDeltas"]
}

/// Settings from the session reach the CLI: model, effort (variant), agent (mode).
async fn model_variant_agent(ctx: Arc<Ctx>) -> Observed {
    let request = CreateSessionRequest {
        model: Some("sonnet".into()),
        variant: Some("low".into()),
        agent_mode: Some("Plan".into()),
        ..ctx.request("settings")
    };
    ctx.healthy("settings", request).await;
    let events = ctx.turn("settings", "say hi settings").await;
    expect(&events, TEXT_TURN);
    let sent = ctx
        .provider
        .model_requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("say hi settings"))
        .expect("the model call");
    assert!(
        sent.body["model"].as_str().unwrap().contains("sonnet"),
        "{}",
        sent.body["model"]
    );
    assert_eq!(sent.body["output_config"]["effort"], "low");
    let tools: Vec<&str> = sent.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        !tools.contains(&"Write") && tools.contains(&"Read"),
        "the Plan agent is read-only: {tools:?}"
    );
    vec!["models", "variants", "agentModes"]
}

async fn three_turns(ctx: Arc<Ctx>) -> Observed {
    let native = ctx.session("multi").await.native_session_id.unwrap();
    let pid = claude_pid(&native);
    for message in ["turn one", "turn two", "turn three"] {
        expect(&ctx.turn("multi", message).await, TEXT_TURN);
        assert_eq!(claude_pid(&native), pid, "one process across turns");
    }
    vec!["multiTurn", "textMessages"]
}

async fn cancel(ctx: Arc<Ctx>) -> Observed {
    ctx.session("cancel").await;
    let turn = ctx.send("cancel", "SLOW please").await;
    ctx.first("cancel", |p| {
        matches!(p, EventPayload::ItemDelta(_)).then_some(())
    })
    .await;
    let started = Instant::now();
    ctx.daemon.client.cancel("cancel").await.unwrap();
    let events = ctx.ended("cancel", &turn).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "cancel took {:?}",
        started.elapsed()
    );
    expect(&events, TEXT_TURN);
    assert_eq!(stop_reason(&events), StopReason::Cancelled);
    let after = ctx.turn("cancel", "say hi after cancel").await;
    expect(&after, TEXT_TURN);
    assert_eq!(stop_reason(&after), StopReason::Completed);
    vec!["cancel"]
}

/// kill -9 of the CLI between turns; the next message resumes the conversation.
async fn kill_and_resume(ctx: Arc<Ctx>) -> Observed {
    let native = ctx.session("kill").await.native_session_id.unwrap();
    expect(
        &ctx.turn("kill", "remember the word PAPAYA").await,
        TEXT_TURN,
    );
    let pid = claude_pid(&native);
    // SAFETY: SIGKILL to the test's own child process.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let exited = ctx
        .first("kill", |p| match p {
            EventPayload::Error(e @ AgentError::ProcessExited { .. }) => Some(e.clone()),
            _ => None,
        })
        .await;
    assert!(
        matches!(
            exited,
            AgentError::ProcessExited {
                signal: Some(9),
                ..
            }
        ),
        "{exited:?}"
    );
    let events = ctx.turn("kill", "which word after the kill?").await;
    expect(&events, TEXT_TURN);
    assert_ne!(claude_pid(&native), pid, "a new process");
    assert_history(
        &ctx,
        "which word after the kill?",
        "remember the word PAPAYA",
    );
    // Killed in the middle of a turn: the turn ends with an error, the next resumes.
    let last = ctx.daemon.events("kill").await.last().unwrap().sequence;
    let turn = ctx.send("kill", "SLOW then crash").await;
    ctx.daemon
        .wait_for("kill", |e| {
            e.sequence > last && matches!(e.payload, EventPayload::ItemDelta(_))
        })
        .await;
    let pid = claude_pid(&native);
    // SAFETY: SIGKILL to the test's own child process.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let events = ctx.ended("kill", &turn).await;
    let mut wanted = TEXT_TURN.to_vec();
    wanted.insert(6, "error");
    expect(&events, &wanted);
    assert_eq!(stop_reason(&events), StopReason::Error);
    let events = ctx.turn("kill", "which word after the crash?").await;
    expect(&events, TEXT_TURN);
    assert_history(
        &ctx,
        "which word after the crash?",
        "remember the word PAPAYA",
    );
    vec!["resume"]
}

async fn listing(ctx: Arc<Ctx>) -> Observed {
    let agents = ctx.daemon.client.list_agents().await.unwrap();
    let claude = agents
        .agents
        .iter()
        .find(|a| a.id == AgentId::Claude)
        .unwrap();
    assert!(claude.installed && claude.supported);
    assert_eq!(claude.version.as_deref(), Some(Agent::Claude.version()));
    let models = ctx.daemon.client.agent_models("claude").await.unwrap();
    assert_eq!(models.default_model.as_deref(), Some("default"));
    let sonnet = models
        .models
        .iter()
        .find(|m| m.id == "sonnet")
        .expect("sonnet");
    assert!(sonnet.variants.iter().any(|v| v == "low"), "{sonnet:?}");
    let modes = ctx.daemon.client.agent_modes("claude").await.unwrap();
    let init = sandbox_agents::claude::probe::initialize(&ctx.claude)
        .await
        .unwrap();
    let cli_agents: BTreeSet<&str> = init["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    let offered: BTreeSet<&str> = modes.modes.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(offered, cli_agents, "agent modes are the CLI's agents");
    assert_eq!(modes.permission_modes.len(), 4);
    vec!["models", "variants", "agentModes"]
}

/// A named scenario, not started yet.
type Scenario = (&'static str, Pin<Box<dyn Future<Output = Observed> + Send>>);

/// Names the scenario `scenario`.
fn scenario<F>(name: &'static str, scenario: F) -> Scenario
where
    F: Future<Output = Observed> + Send + 'static,
{
    (name, Box::pin(scenario))
}

/// The scenarios `SANDBOX_E2E_SCENARIOS` (comma-separated names) selects; all when unset.
fn selected(table: Vec<Scenario>) -> (Vec<Scenario>, bool) {
    let Some(wanted) = std::env::var("SANDBOX_E2E_SCENARIOS")
        .ok()
        .filter(|v| !v.is_empty())
    else {
        return (table, true);
    };
    let wanted: Vec<&str> = wanted.split(',').map(str::trim).collect();
    let names: Vec<&str> = table.iter().map(|(name, _)| *name).collect();
    for name in &wanted {
        assert!(
            names.contains(name),
            "no scenario `{name}`; there are {names:?}"
        );
    }
    let chosen = table
        .into_iter()
        .filter(|(name, _)| wanted.contains(name))
        .collect();
    (chosen, false)
}

/// Runs a scenario as its own task (so a failure names it) and prints its duration.
fn run((name, scenario): Scenario) -> (&'static str, JoinHandle<Observed>) {
    let task = tokio::spawn(async move {
        let started = Instant::now();
        let observed = scenario.await;
        println!(
            "[claude e2e] {name}: {:.2} s",
            started.elapsed().as_secs_f64()
        );
        observed
    });
    (name, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_end_to_end_over_http() {
    sandbox_testkit::isolate!();
    let Some(claude) = sandbox_testkit::agents::require(Agent::Claude) else {
        return;
    };
    let total = Instant::now();
    let provider = FakeProvider::start().await.unwrap();
    let daemon = TestDaemon::start_with(Options {
        token: Some(DAEMON_TOKEN.into()),
        provider_env: ProviderEnv::default()
            .with("ANTHROPIC_API_KEY", API_KEY)
            .with("ANTHROPIC_BASE_URL", provider.base_url())
            .with("OPENAI_API_KEY", OPENAI_SECRET)
            .with("OPENAI_BASE_URL", format!("{}/v1", provider.base_url())),
        agent_paths: HashMap::from([(AgentId::Claude, claude.clone())]),
        event_timeout: Duration::from_secs(90),
        ..Options::default()
    })
    .await;
    let work = daemon.data_dir.path().join("work");
    let ctx = Arc::new(Ctx {
        daemon,
        provider,
        claude,
        work,
    });
    let table = vec![
        scenario("text", text(ctx.clone())),
        scenario("credentials", credentials(ctx.clone())),
        scenario("think", think(ctx.clone())),
        scenario("settings", model_variant_agent(ctx.clone())),
        scenario("once", hitl::tool_once(ctx.clone())),
        scenario("reject", hitl::tool_reject(ctx.clone())),
        scenario("always", hitl::tool_always(ctx.clone())),
        scenario("write", hitl::write_file(ctx.clone())),
        scenario("modes", hitl::permission_modes(ctx.clone())),
        scenario("question", hitl::questions(ctx.clone())),
        scenario("plan-ok", plan::plan_accepted(ctx.clone())),
        scenario("plan-no", plan::plan_rejected(ctx.clone())),
        scenario("multi", three_turns(ctx.clone())),
        scenario("cancel", cancel(ctx.clone())),
        scenario("cancel-perm", hitl::cancel_during_permission(ctx.clone())),
        scenario("kill", kill_and_resume(ctx.clone())),
        scenario("listing", listing(ctx.clone())),
    ];
    // `SANDBOX_E2E_SCENARIOS=text,cancel` runs only those (then without the restart and the
    // capability check, which need every scenario).
    let (table, all) = selected(table);
    let scenarios: Vec<_> = table.into_iter().map(run).collect();
    let mut observed: BTreeSet<&str> = BTreeSet::new();
    let mut failed = Vec::new();
    for (name, task) in scenarios {
        match task.await {
            Ok(seen) => observed.extend(seen),
            Err(error) => failed.push(format!("{name}: {error}")),
        }
    }
    assert!(failed.is_empty(), "failed scenarios: {failed:#?}");
    if !all {
        println!("[claude e2e] a selection ran: no restart, no capability check");
        return;
    }
    let ctx = Arc::into_inner(ctx).expect("every scenario finished");
    let resumed = restart_and_resume(ctx).await;
    observed.extend(resumed.1);
    // `GET /agents` claims exactly what the scenarios showed.
    let agents = resumed.0.daemon.client.list_agents().await.unwrap();
    let claude = agents
        .agents
        .into_iter()
        .find(|a| a.id == AgentId::Claude)
        .unwrap();
    let flags = serde_json::to_value(claude.capabilities).unwrap();
    for (flag, value) in flags.as_object().unwrap() {
        assert_eq!(
            value.as_bool().unwrap(),
            observed.contains(flag.as_str()),
            "capability `{flag}`: claimed {value}, observed {}",
            observed.contains(flag.as_str())
        );
    }
    println!("[claude e2e] total: {:.2} s", total.elapsed().as_secs_f64());
}

/// The daemon restarts; the session's next message resumes the conversation.
async fn restart_and_resume(ctx: Ctx) -> (Ctx, Observed) {
    let started = Instant::now();
    ctx.session("restart").await;
    expect(
        &ctx.turn("restart", "remember the word KIWI").await,
        TEXT_TURN,
    );
    let Ctx {
        daemon,
        provider,
        claude,
        work,
    } = ctx;
    let daemon = daemon.restart().await;
    let ctx = Ctx {
        daemon,
        provider,
        claude,
        work,
    };
    let (events, planned) = tokio::join!(
        ctx.turn("restart", "which word after the restart?"),
        plan::after_restart(&ctx)
    );
    expect(&events, TEXT_TURN);
    assert_history(
        &ctx,
        "which word after the restart?",
        "remember the word KIWI",
    );
    println!(
        "[claude e2e] restart: {:.2} s",
        started.elapsed().as_secs_f64()
    );
    (ctx, [vec!["resume", "multiTurn"], planned].concat())
}
