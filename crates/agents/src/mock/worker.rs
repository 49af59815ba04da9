//! The mock's worker: one task per session that plays each turn's script.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandbox_universal::{
    ContentPart, EventPayload, FileChangeKind, Item, ItemKind, ItemRole, ItemStatus,
    PermissionKind, PermissionMode, PermissionReply, PermissionRequest, Question, QuestionOption,
    QuestionRequest, StopReason, TurnEnded, Usage,
};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::script::{SLOW_INTERVAL_MS, TurnScript, chunks};
use super::turn::TurnEmitter;
use crate::{EventSink, QuestionAnswer};

/// The always-scope of the mock's command permission requests.
pub const PERMISSION_SCOPE: &str = "mock:shell";
/// The always-scope of the mock's file write permission requests.
pub const WRITE_SCOPE: &str = "mock:write";

/// One turn handed to the worker.
pub struct TurnJob {
    /// Daemon turn id.
    pub turn_id: String,
    /// The user's message.
    pub message: String,
    /// Cancelled when the client cancels the turn.
    pub cancel: CancellationToken,
}

/// Replies waiting for the worker, keyed by universal id.
#[derive(Default)]
pub struct PendingReplies {
    /// Permission requests.
    pub permissions: Mutex<HashMap<String, oneshot::Sender<PermissionReply>>>,
    /// Question requests.
    pub questions: Mutex<HashMap<String, oneshot::Sender<QuestionAnswer>>>,
}

/// Why the worker stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum WorkerExit {
    /// Its job queue closed (the session is shutting down).
    Closed,
    /// The script asked it to crash.
    Crashed,
}

/// The static facts a worker needs.
pub struct WorkerConfig {
    /// Where the mock pretends to work.
    pub cwd: String,
    /// The session's permission mode.
    pub permission_mode: PermissionMode,
    /// The daemon's host tool server, when the session has host tools.
    pub host_server: Option<sandbox_universal::McpServer>,
    /// The session's memory file (see [`super::memory`]).
    pub memory: std::path::PathBuf,
}

/// Plays turns until the queue closes or a script crashes it.
pub async fn run_worker(
    sink: EventSink,
    config: WorkerConfig,
    pending: Arc<PendingReplies>,
    mut jobs: mpsc::UnboundedReceiver<TurnJob>,
) -> WorkerExit {
    while let Some(job) = jobs.recv().await {
        let script = TurnScript::parse(&job.message);
        if script.crash {
            return WorkerExit::Crashed;
        }
        let recalled = script.recall.then(|| super::memory::recall(&config.memory));
        if let Err(e) = super::memory::remember(&config.memory, &job.message) {
            tracing::warn!("the mock could not remember a message: {e}");
        }
        let mut turn = TurnEmitter::new(sink.clone());
        if let Some(recalled) = recalled {
            let id = turn.start(assistant_message(turn.next_item_id()));
            turn.delta(&id, &recalled);
            turn.complete(&id, ItemStatus::Completed, |_| {});
        }
        let cancel = job.cancel.clone();
        let outcome = tokio::select! {
            () = play(&mut turn, &config, &pending, &script, &job.message) => StopReason::Completed,
            () = cancel.cancelled() => StopReason::Cancelled,
        };
        // A cancelled turn leaves its items open: the daemon's core fails them.
        pending.permissions.lock().expect("lock").clear();
        pending.questions.lock().expect("lock").clear();
        turn.emit(EventPayload::TurnEnded(TurnEnded {
            turn_id: job.turn_id,
            stop_reason: outcome,
            usage: Some(Usage {
                input_tokens: job.message.split_whitespace().count() as u64,
                output_tokens: turn.deltas,
                ..Usage::default()
            }),
            changes: None,
        }));
    }
    WorkerExit::Closed
}

async fn play(
    turn: &mut TurnEmitter,
    config: &WorkerConfig,
    pending: &PendingReplies,
    script: &TurnScript,
    message: &str,
) {
    if script.unparsed {
        unparsed_item(turn, message);
    }
    if script.tool {
        tool_items(turn, config, message);
    }
    if script.write {
        write_file(turn, config, pending).await;
    }
    if script.permission {
        permission_command(turn, config, pending).await;
    }
    if script.question {
        question(turn, pending).await;
    }
    if let Some(tool) = super::host_tool::target(message) {
        host_tool(turn, config, &tool, message).await;
    }
    if let Some(deltas) = script.slow {
        let id = turn.start(assistant_message(turn.next_item_id()));
        for i in 0..deltas {
            tokio::time::sleep(Duration::from_millis(SLOW_INTERVAL_MS)).await;
            turn.delta(&id, &format!("slow {i} "));
        }
        turn.complete(&id, ItemStatus::Completed, |_| {});
    }
    if let Some(n) = script.flood {
        let id = turn.start(assistant_message(turn.next_item_id()));
        for i in 0..n {
            turn.delta(&id, &format!("{i} "));
            if i % 256 == 255 {
                tokio::task::yield_now().await;
            }
        }
        turn.complete(&id, ItemStatus::Completed, |_| {});
    }
    let id = turn.start(assistant_message(turn.next_item_id()));
    for chunk in chunks(&format!("echo: {message}"), 3) {
        turn.delta(&id, &chunk);
    }
    turn.complete(&id, ItemStatus::Completed, |_| {});
}

fn assistant_message(id: String) -> Item {
    Item::new(id, ItemKind::Message, ItemStatus::InProgress)
        .with_role(ItemRole::Assistant)
        .with_content(ContentPart::Text {
            text: String::new(),
        })
}

fn unparsed_item(turn: &mut TurnEmitter, message: &str) {
    let raw = json!({"type": "mock.mystery", "payload": {"message": message}});
    let item = Item::new(
        turn.next_item_id(),
        ItemKind::Unparsed,
        ItemStatus::Completed,
    )
    .with_content(ContentPart::Unparsed {
        raw: raw.clone(),
        error: "unknown native event type `mock.mystery`".into(),
    });
    let started = Item {
        status: ItemStatus::InProgress,
        ..item.clone()
    };
    turn.emit_raw(
        EventPayload::ItemStarted(sandbox_universal::ItemEvent { item: started }),
        raw.clone(),
    );
    turn.emit_raw(
        EventPayload::ItemCompleted(sandbox_universal::ItemEvent { item }),
        raw,
    );
}

/// Emits a completed tool call item; returns its item id and its call id.
fn tool_call(turn: &mut TurnEmitter, name: &str, arguments: serde_json::Value) -> (String, String) {
    let call_id = turn.next_id("mock_call");
    let call = turn.completed_item(
        Item::new(
            turn.next_item_id(),
            ItemKind::ToolCall,
            ItemStatus::Completed,
        )
        .with_role(ItemRole::Assistant)
        .with_native_id(call_id.clone())
        .with_content(ContentPart::ToolCall {
            call_id: call_id.clone(),
            name: name.into(),
            arguments,
            mcp: None,
        }),
    );
    (call, call_id)
}

/// Calls a host tool as a real agent's MCP client would: the tool call item (naming the
/// host server), the call, the result.
async fn host_tool(turn: &mut TurnEmitter, config: &WorkerConfig, tool: &str, message: &str) {
    let call_id = turn.next_id("mock_call");
    let input = json!({"text": message});
    let id = turn.start(
        Item::new(
            turn.next_item_id(),
            ItemKind::ToolCall,
            ItemStatus::InProgress,
        )
        .with_role(ItemRole::Assistant)
        .with_native_id(call_id.clone())
        .with_content(ContentPart::ToolCall {
            call_id: call_id.clone(),
            name: format!("mcp__host__{tool}"),
            arguments: input.clone(),
            mcp: Some(sandbox_universal::McpToolRef {
                server: sandbox_universal::HOST_MCP_SERVER.into(),
                tool: tool.into(),
            }),
        }),
    );
    let answer = match &config.host_server {
        Some(server) => super::host_tool::call(server, tool, input).await,
        None => Err("this session has no host tools".into()),
    };
    let (output, is_error) = match answer {
        Ok(answer) => (answer.text, answer.is_error),
        Err(error) => (error, true),
    };
    let status = if is_error {
        ItemStatus::Failed
    } else {
        ItemStatus::Completed
    };
    turn.complete(&id, status, |item| {
        item.content.push(ContentPart::ToolResult {
            call_id,
            output,
            is_error,
        });
    });
}

fn tool_items(turn: &mut TurnEmitter, config: &WorkerConfig, message: &str) {
    let (call, call_id) = tool_call(turn, "mock_search", json!({"query": message}));
    turn.completed_item(
        Item::new(
            turn.next_item_id(),
            ItemKind::ToolResult,
            ItemStatus::Completed,
        )
        .with_role(ItemRole::Tool)
        .with_parent(call)
        .with_content(ContentPart::ToolResult {
            call_id,
            output: "mock search found 1 result".into(),
            is_error: false,
        }),
    );
    let command = turn.start(command_item(turn.next_item_id(), "echo mock", &config.cwd));
    turn.delta(&command, "mock\n");
    turn.complete(&command, ItemStatus::Completed, |item| {
        set_exit_code(item, Some(0));
    });
    turn.completed_item(
        Item::new(
            turn.next_item_id(),
            ItemKind::FileChange,
            ItemStatus::Completed,
        )
        .with_role(ItemRole::Assistant)
        .with_content(ContentPart::FileChange {
            path: format!("{}/mock.txt", config.cwd.trim_end_matches('/')),
            change_kind: FileChangeKind::Add,
            diff: Some("--- /dev/null\n+++ b/mock.txt\n@@ -0,0 +1 @@\n+mock\n".into()),
        }),
    );
}

fn command_item(id: String, command: &str, cwd: &str) -> Item {
    Item::new(id, ItemKind::CommandExecution, ItemStatus::InProgress)
        .with_role(ItemRole::Assistant)
        .with_content(ContentPart::CommandExecution {
            command: command.into(),
            cwd: Some(cwd.into()),
            output: None,
            exit_code: None,
        })
}

fn set_exit_code(item: &mut Item, code: Option<i32>) {
    for part in &mut item.content {
        if let ContentPart::CommandExecution { exit_code, .. } = part {
            *exit_code = code;
        }
    }
}

/// Asks the client for a permission and waits for the answer: whether it was allowed.
async fn ask(turn: &mut TurnEmitter, pending: &PendingReplies, request: PermissionRequest) -> bool {
    let (tx, rx) = oneshot::channel();
    pending
        .permissions
        .lock()
        .expect("lock")
        .insert(request.permission_id.clone(), tx);
    turn.emit(EventPayload::PermissionAsked(request));
    // A dropped sender means the session is going away: treat it as a rejection.
    !matches!(rx.await, Ok(PermissionReply::Reject) | Err(_))
}

async fn permission_command(
    turn: &mut TurnEmitter,
    config: &WorkerConfig,
    pending: &PendingReplies,
) {
    const COMMAND: &str = "echo permitted";
    let item_id = turn.start(command_item(turn.next_item_id(), COMMAND, &config.cwd));
    let allowed = config.permission_mode == PermissionMode::Bypass
        || ask(
            turn,
            pending,
            PermissionRequest {
                permission_id: turn.next_id("perm"),
                kind: PermissionKind::Command,
                title: format!("Run `{COMMAND}`"),
                item_id: Some(item_id.clone()),
                tool: Some("shell".into()),
                command: Some(COMMAND.into()),
                paths: Vec::new(),
                plan: None,
                input: Some(json!({"command": COMMAND})),
                always_scope: Some(PERMISSION_SCOPE.into()),
                mcp: None,
            },
        )
        .await;
    if allowed {
        turn.delta(&item_id, "permitted\n");
        turn.complete(&item_id, ItemStatus::Completed, |item| {
            set_exit_code(item, Some(0));
        });
    } else {
        turn.complete(&item_id, ItemStatus::Failed, |item| {
            for part in &mut item.content {
                if let ContentPart::CommandExecution { output, .. } = part {
                    *output = Some("permission denied by the user".into());
                }
            }
        });
    }
}

/// Writes [`super::WRITTEN_FILE`]: asked first in `default`, refused without asking in
/// `plan`, written at once in `acceptEdits` and `bypass`.
async fn write_file(turn: &mut TurnEmitter, config: &WorkerConfig, pending: &PendingReplies) {
    let path = std::path::Path::new(&config.cwd).join(super::WRITTEN_FILE);
    let shown = path.display().to_string();
    let content = super::WRITTEN_CONTENT;
    let diff = format!(
        "--- /dev/null\n+++ b/{}\n@@ -0,0 +1 @@\n+{}\n",
        super::WRITTEN_FILE,
        content.trim_end()
    );
    let item = Item::new(
        turn.next_item_id(),
        ItemKind::FileChange,
        ItemStatus::InProgress,
    )
    .with_role(ItemRole::Assistant)
    .with_content(ContentPart::FileChange {
        path: shown.clone(),
        change_kind: FileChangeKind::Add,
        diff: Some(diff),
    });
    let item_id = turn.start(item);
    let allowed = match config.permission_mode {
        PermissionMode::Plan => false,
        PermissionMode::AcceptEdits | PermissionMode::Bypass => true,
        PermissionMode::Default => {
            ask(
                turn,
                pending,
                PermissionRequest {
                    permission_id: turn.next_id("perm"),
                    kind: PermissionKind::FileChange,
                    title: format!("Write `{}`", super::WRITTEN_FILE),
                    item_id: Some(item_id.clone()),
                    tool: Some("write".into()),
                    command: None,
                    paths: vec![shown],
                    plan: None,
                    input: Some(json!({"path": super::WRITTEN_FILE, "content": content})),
                    always_scope: Some(WRITE_SCOPE.into()),
                    mcp: None,
                },
            )
            .await
        }
    };
    let done = allowed && tokio::fs::write(&path, content).await.is_ok();
    let status = if done {
        ItemStatus::Completed
    } else {
        ItemStatus::Failed
    };
    turn.complete(&item_id, status, |_| {});
}

/// The two questions the mock asks.
pub fn mock_questions() -> Vec<Question> {
    let options = |labels: &[&str]| {
        labels
            .iter()
            .map(|l| QuestionOption {
                label: (*l).into(),
                description: None,
            })
            .collect()
    };
    vec![
        Question {
            question: "Which color do you prefer?".into(),
            header: Some("Color".into()),
            options: options(&["Red", "Green", "Blue"]),
            multi_select: false,
            allow_custom: false,
        },
        Question {
            question: "Which toppings do you want?".into(),
            header: Some("Toppings".into()),
            options: options(&["Cheese", "Mushrooms", "Olives"]),
            multi_select: true,
            allow_custom: false,
        },
    ]
}

/// Asks [`mock_questions`] through an `ask_user` tool call, as real agents ask theirs: the
/// call, the question pointing at it, then the result (the answers, or a failure when
/// rejected) and a message quoting the answers.
async fn question(turn: &mut TurnEmitter, pending: &PendingReplies) {
    let (call, call_id) = tool_call(turn, "ask_user", json!({"questions": mock_questions()}));
    let question_id = turn.next_id("q");
    let (tx, rx) = oneshot::channel();
    pending
        .questions
        .lock()
        .expect("lock")
        .insert(question_id.clone(), tx);
    turn.emit(EventPayload::QuestionAsked(QuestionRequest {
        question_id,
        questions: mock_questions(),
        item_id: Some(call.clone()),
    }));
    let answered = match rx.await {
        Ok(QuestionAnswer::Answered(answers)) => Some(answers),
        _ => None,
    };
    let quoted = answered.as_ref().map(|answers| {
        mock_questions()
            .iter()
            .zip(answers)
            .map(|(q, a)| format!("{} = {}", q.header.as_deref().unwrap_or(""), a.join(", ")))
            .collect::<Vec<String>>()
            .join("; ")
    });
    turn.completed_item(
        Item::new(
            turn.next_item_id(),
            ItemKind::ToolResult,
            if quoted.is_some() {
                ItemStatus::Completed
            } else {
                ItemStatus::Failed
            },
        )
        .with_role(ItemRole::Tool)
        .with_parent(call)
        .with_content(ContentPart::ToolResult {
            call_id,
            output: quoted
                .clone()
                .unwrap_or_else(|| "the user declined to answer".into()),
            is_error: quoted.is_none(),
        }),
    );
    if let Some(quoted) = quoted {
        let id = turn.start(assistant_message(turn.next_item_id()));
        for chunk in chunks(&format!("You answered: {quoted}"), 3) {
            turn.delta(&id, &chunk);
        }
        turn.complete(&id, ItemStatus::Completed, |_| {});
    }
}
