//! What only Codex does, with the real pinned `codex app-server` offline against the test
//! kit's provider on Codex's default model (code mode), set up as the scenario table sets
//! it up ([`Ctx::start`]); everything every agent does is in the table
//! (`scenarios::codex`).

use sandbox_testkit::provider::{Effect, RecordedRequest, Script, ToolTemplate};
use sandbox_universal::{AgentId, CreateSessionRequest, ItemKind, PermissionReply, StopReason};
use serde_json::{Value, json};

use crate::common::agent_events::command_part;
use crate::scenarios::ctx::{Ctx, items, stop_reason};
use crate::scenarios::subject::{Ask, OPENAI_KEY, Subject, environ, files_under};

mod policy;

/// A prompt keyword that makes the fake model run `env`.
const SHOW_ENV: &str = "SHOW_ENV";

/// Codex gets its key over its own protocol: not in the app-server's environment, not in
/// the environment of the commands it runs, and nowhere on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn its_key_is_never_in_its_environment_or_on_disk() {
    sandbox_testkit::isolate!();
    let show_env = |script: Script| {
        script.with_rule(
            SHOW_ENV,
            Effect::CallTool(vec![ToolTemplate::json(
                "exec_command",
                json!({"cmd": "env"}),
            )]),
        )
    };
    let Some(subject) = Subject::with_rules(AgentId::Codex, show_env).await else {
        return;
    };
    let ctx = Ctx::start_for(subject).await;
    let s = ctx.session("env").await;
    let (events, _) = ctx
        .turn_answering(&s.id, &format!("{SHOW_ENV} (env)"), PermissionReply::Once)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let command = items(&events, ItemKind::CommandExecution)
        .pop()
        .expect("the env command");
    let (_, output, exit_code) = command_part(&command);
    let output = output.expect("env output");
    assert_eq!(exit_code, Some(0));
    assert!(output.contains("PATH="), "{output}");
    assert!(!output.contains(OPENAI_KEY), "the key reached a command");
    assert!(!output.contains("OPENAI_API_KEY"), "{output}");
    let data = ctx.daemon.data_dir.path();
    let pids = ctx.subject.processes(&s.cwd, data, None);
    assert!(!pids.is_empty(), "no app-server");
    for pid in pids {
        assert!(
            environ(pid).iter().all(|e| !e.contains(OPENAI_KEY)),
            "the key is in the app-server's environment"
        );
    }
    for file in files_under(data) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(OPENAI_KEY),
            "the key is stored in {}",
            file.display()
        );
    }
}

/// The answers object of the last tool output the model got: Codex hands answers over as
/// `{"answers": {<question id>: {"answers": [...]}}}` (in code mode, inside the output of
/// the script that asked).
fn answers_heard(call: &RecordedRequest) -> Value {
    let input = call.body["input"].as_array().expect("Responses input");
    let output = input
        .iter()
        .rev()
        .find_map(|item| {
            let kind = item["type"].as_str()?;
            kind.ends_with("_output")
                .then(|| item["output"].to_string())
        })
        .expect("a tool output");
    // The output is a JSON string (or content parts) holding the answers object.
    let text: String = serde_json::from_str::<Value>(&output)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or(output);
    let start = text.find("{\"answers\"").expect("an answers object");
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    stream.next().unwrap().expect("the answers object")
}

/// Codex's `request_user_input`: the answers reach the model in Codex's shape, each
/// under its question's id; a rejected question declines every answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_reach_the_model_in_codexs_shape() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Codex).await else {
        return;
    };
    let s = ctx.session("questions").await;
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx
        .send(&s.id, &ctx.prompt(Ask::Question, "questions"))
        .await;
    let asked = ctx.next_question(&s.id, after).await;
    ctx.daemon
        .client
        .reply_question(
            &s.id,
            &asked.question_id,
            vec![vec!["Blue".into()], vec!["Docs".into()]],
        )
        .await
        .unwrap();
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let calls = ctx.model_calls(&s).await;
    assert_eq!(
        answers_heard(calls.last().unwrap()),
        json!({"answers": {"color": {"answers": ["Blue"]}, "extras": {"answers": ["Docs"]}}})
    );

    ctx.reject_next_question(&s.id, &ctx.prompt(Ask::Question, "questions again"))
        .await;
    let calls = ctx.model_calls(&s).await;
    let declined = json!({"answers": [sandbox_agents::codex::convert::hitl::DECLINED]});
    assert_eq!(
        answers_heard(calls.last().unwrap()),
        json!({"answers": {"color": declined, "extras": declined}})
    );
}

/// The variant is Codex's reasoning effort, sent with every request of the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_variant_is_the_reasoning_effort_of_every_request() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Codex).await else {
        return;
    };
    let models = ctx.daemon.client.agent_models("codex").await.unwrap();
    let default = models.default_model.expect("a default model");
    let model = models.models.iter().find(|m| m.id == default).unwrap();
    assert!(
        model.variants.iter().any(|v| v == "high"),
        "{model:?} has no `high` effort"
    );
    let s = ctx
        .session_with("effort", |r| CreateSessionRequest {
            variant: Some("high".into()),
            ..r
        })
        .await;
    for tag in ["effort", "effort again"] {
        let events = ctx.turn(&s.id, &ctx.prompt(Ask::Text, tag)).await;
        assert_eq!(stop_reason(&events), StopReason::Completed);
    }
    let calls = ctx.model_calls(&s).await;
    assert!(calls.len() >= 2, "{calls:#?}");
    for call in &calls {
        assert_eq!(call.body["reasoning"]["effort"], "high", "{}", call.body);
    }
}
