//! Runs the table for one agent: the selected scenarios concurrently on one daemon (a few
//! at a time, `SANDBOX_E2E_CONCURRENCY`), each as its own task (a failure names it), then
//! the daemon restart alone; prints each scenario's time and the agent's total; after a
//! full run, holds the claimed capability flags to the proven ones, both ways, and to the
//! recorded proofs.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use sandbox_universal::{AgentCapabilities, AgentId, EventPayload, ItemKind};

use super::ctx::Ctx;
use super::proofs::{self, AgentProofs};
use super::subject::Subject;
use super::{Body, Proved, Scenario, table};

/// The scenario names `SANDBOX_E2E_SCENARIOS` selects (all when unset).
fn selection(table: &[Scenario]) -> Option<Vec<String>> {
    let wanted = std::env::var("SANDBOX_E2E_SCENARIOS")
        .ok()
        .filter(|v| !v.trim().is_empty())?;
    let names: Vec<&str> = table.iter().map(|s| s.name).collect();
    let wanted: Vec<String> = wanted.split(',').map(|s| s.trim().to_string()).collect();
    for name in &wanted {
        assert!(
            names.contains(&name.as_str()),
            "no scenario `{name}`; the table has {names:?}"
        );
    }
    Some(wanted)
}

/// How many rows of one table run at once: `SANDBOX_E2E_CONCURRENCY`, 6 by default.
fn concurrency() -> usize {
    std::env::var("SANDBOX_E2E_CONCURRENCY")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(6)
}

/// Runs the table for `agent`.
pub async fn run(agent: AgentId) {
    let Some(subject) = Subject::new(agent).await else {
        return;
    };
    let total = Instant::now();
    let label = format!("[scenarios {agent}]");
    let ctx = Arc::new(Ctx::start_for(subject).await);
    let caps = claimed(&ctx, agent).await;
    let table = table();
    let selected = selection(&table);
    let mut outcomes: BTreeMap<&'static str, Result<Proved, String>> = BTreeMap::new();
    let mut not_run: BTreeMap<&'static str, &'static str> = BTreeMap::new();
    let mut tasks = Vec::new();
    let mut alone = Vec::new();
    // Rows start a few at a time: every row starts agent processes, and four tables run
    // at once in CI on two cores; an unbounded burst starves the agents' start-up past
    // their timeouts.
    let slots = Arc::new(tokio::sync::Semaphore::new(concurrency()));
    for scenario in &table {
        if selected
            .as_ref()
            .is_some_and(|s| !s.iter().any(|n| n == scenario.name))
        {
            continue;
        }
        if let Some(reason) = (scenario.skip)(&ctx.subject, &caps) {
            println!("{label} {}: not run: {reason}", scenario.name);
            not_run.insert(scenario.name, reason);
            continue;
        }
        let run = match scenario.body {
            Body::Shared(run) => run,
            Body::Alone(run) => {
                alone.push((scenario.name, run));
                continue;
            }
        };
        let (name, ctx, slots) = (scenario.name, ctx.clone(), slots.clone());
        let task = tokio::spawn(async move {
            let _slot = slots
                .acquire_owned()
                .await
                .expect("the semaphore stays open");
            let started = Instant::now();
            let proved = run(ctx).await;
            (started.elapsed(), proved)
        });
        tasks.push((name, task));
    }
    for (name, task) in tasks {
        let outcome = task.await.map_err(|e| e.to_string());
        if let Ok((took, proved)) = &outcome {
            println!(
                "{label} {name}: passed in {:.2} s, proved {proved:?}",
                took.as_secs_f64()
            );
        }
        outcomes.insert(name, outcome.map(|(_, proved)| proved));
    }
    let failed: Vec<String> = outcomes
        .iter()
        .filter_map(|(name, o)| o.as_ref().err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(failed.is_empty(), "{label} failed scenarios: {failed:#?}");
    let mut ctx = Arc::into_inner(ctx).expect("every shared scenario finished");
    for (name, run) in alone {
        let started = Instant::now();
        let (back, proved) = run(ctx).await;
        ctx = back;
        println!(
            "{label} {name}: passed alone in {:.2} s, proved {proved:?}",
            started.elapsed().as_secs_f64()
        );
        outcomes.insert(name, Ok(proved));
    }
    assert_no_unparsed_anywhere(&ctx, &label).await;
    let summary = format!(
        "{agent}: {} rows passed, {} not run, in {:.1} s ({})",
        outcomes.len(),
        not_run.len(),
        total.elapsed().as_secs_f64(),
        ctx.subject.ran_with()
    );
    println!("{label} total: {summary}");
    note_in_summary(&summary);
    if selected.is_some() {
        println!("{label} a selection ran: the claimed flags are not checked");
        return;
    }
    let passed: BTreeMap<&'static str, Proved> = outcomes
        .into_iter()
        .map(|(name, o)| (name, o.expect("failures stopped the run")))
        .collect();
    for scenario in &table {
        for flag in passed.get(scenario.name).into_iter().flatten() {
            assert!(
                scenario.proves.contains(flag),
                "{label} {}: proved `{flag}`, which its row does not list",
                scenario.name
            );
        }
    }
    let proofs = proofs::from_run(&ctx.subject, &passed, &not_run);
    check_both_ways(agent, &caps, &proofs);
    proofs::check_or_record(agent, proofs);
}

/// Appends a line to the file `SANDBOX_E2E_SUMMARY` names (CI prints it: a passing
/// test's output is not shown).
fn note_in_summary(line: &str) {
    use std::io::Write;
    let Some(path) = std::env::var_os("SANDBOX_E2E_SUMMARY") else {
        return;
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("the summary file opens");
    // One write of one line: appends from concurrent test processes do not interleave.
    file.write_all(format!("{line}\n").as_bytes())
        .expect("the summary file takes a line");
}

/// No session's whole log (between turns too) holds an `unparsed` item.
async fn assert_no_unparsed_anywhere(ctx: &Ctx, label: &str) {
    let query = sandbox_client::SessionsQuery {
        limit: Some(1000),
        ..Default::default()
    };
    let sessions = ctx.daemon.client.list_sessions(&query).await.unwrap();
    assert!(sessions.next_cursor.is_none(), "{label}: more than a page");
    for session in sessions.sessions {
        let events = ctx.events(&session.session_id).await;
        let unparsed = events.iter().filter(|e| {
            matches!(&e.payload, EventPayload::ItemCompleted(i) if i.item.kind == ItemKind::Unparsed)
        });
        assert_eq!(
            unparsed.count(),
            0,
            "{label}: session {} logged unparsed items",
            session.session_id
        );
    }
}

/// The flags `GET /agents` claims for `agent`.
async fn claimed(ctx: &Ctx, agent: AgentId) -> AgentCapabilities {
    let agents = ctx.daemon.client.list_agents().await.unwrap();
    agents
        .agents
        .into_iter()
        .find(|a| a.id == agent)
        .expect("the agent is listed")
        .capabilities
}

/// A claimed flag has a scenario that proved it; a proved flag is claimed.
fn check_both_ways(agent: AgentId, caps: &AgentCapabilities, proofs: &AgentProofs) {
    let claimed = proofs::true_flags(caps);
    let proved: BTreeSet<String> = proofs.flags().into_keys().collect();
    let unproved: Vec<&String> = claimed.difference(&proved).collect();
    let unclaimed: Vec<&String> = proved.difference(&claimed).collect();
    assert!(
        unproved.is_empty() && unclaimed.is_empty(),
        "{agent}: claimed but no scenario proved it: {unproved:?}; proved but not claimed: {unclaimed:?}"
    );
}
