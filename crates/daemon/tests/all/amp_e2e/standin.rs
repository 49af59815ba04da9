//! How the daemon runs Amp, against the STAND-IN (`crates/testkit/standins/amp`), which
//! records each run's argv and never the key. It is not Amp: this proves the daemon's side.

use serde_json::Value;

use sandbox_universal::{AgentId, CreateSessionRequest, StopReason};

use super::assert_not_on_disk;
use crate::scenarios::ctx::{Ctx, stop_reason};
use crate::scenarios::subject::{Ask, KEY, files_under};

/// The stand-in's record of its runs (argv, cwd, thread; never the key).
fn runs(ctx: &Ctx) -> Vec<Value> {
    files_under(ctx.daemon.data_dir.path())
        .into_iter()
        .filter(|f| f.ends_with("standin-calls.jsonl"))
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<Value>>()
        })
        .collect()
}

fn argv(run: &Value) -> Vec<String> {
    run["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// Amp runs a process per turn: the first starts a thread in the session's agent mode
/// (`--mode`), the next continues it (`threads continue <id>`); each gets the key in its
/// environment, and the key is never written to disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_per_turn_continues_the_thread() {
    let Some(ctx) = Ctx::start(AgentId::Amp).await else {
        return;
    };
    let s = ctx
        .session_with("thread", |r| CreateSessionRequest {
            agent_mode: Some("high".into()),
            ..r
        })
        .await;
    for tag in ["first", "second"] {
        let events = ctx.turn(&s.id, &ctx.prompt(Ask::Text, tag)).await;
        assert_eq!(stop_reason(&events), StopReason::Completed);
    }
    let thread = ctx
        .daemon
        .client
        .get_session(&s.id)
        .await
        .unwrap()
        .native_session_id
        .expect("the thread id");
    assert!(thread.starts_with("T-"), "{thread}");
    let runs = runs(&ctx);
    assert_eq!(runs.len(), 2, "a process per turn");
    let first = argv(&runs[0]);
    assert!(!first.iter().any(|a| a == "threads"), "{first:?}");
    assert!(
        first.windows(2).any(|w| w[0] == "--mode" && w[1] == "high"),
        "{first:?}"
    );
    assert_eq!(
        &argv(&runs[1])[..3],
        ["threads", "continue", thread.as_str()]
    );
    assert!(runs.iter().all(|r| r["api_key_set"] == true), "{runs:?}");
    assert_not_on_disk(ctx.daemon.data_dir.path(), KEY);
}
