//! One host tool call, start to end: the turn it belongs to, the approval a
//! `needsApproval` tool asks first, the answer (the client's, through the log, or the
//! http endpoint's), and the turn's end after an `endsTurn` tool.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock};
use sandbox_universal::{
    ASK_USER_TOOL, HostTool, HostToolCall, HostToolHandler, MessagePart, PermissionKind,
    PermissionReply, PermissionRequest, ToolCallResultRequest, ToolOutput,
};
use serde_json::Value;

use super::ask_user;
use super::broker::{HostBroker, Scope};
use crate::session::SessionCore;
use crate::session::host_calls::DaemonAnswer;

/// An http tool's attempt takes at most this long unless the tool says otherwise.
pub const DEFAULT_HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// An `endsTurn` tool ends the turn when the agent reports its tool-call item complete,
/// or this long after the result went back, whichever is first.
const TOOL_STOP_GRACE: Duration = Duration::from_secs(1);

/// Why a call failed, in words for the model (an MCP error result).
#[derive(Debug)]
pub struct Failure(pub String);

/// Runs one call of `name` (a host tool of `scope`, or `ask_user`); failures are error
/// results the model reads.
pub async fn run(broker: &HostBroker, scope: &Scope, name: &str, input: Value) -> CallToolResult {
    match serve(broker, scope, name, input).await {
        Ok(result) => result,
        Err(Failure(message)) => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
}

async fn serve(
    broker: &HostBroker,
    scope: &Scope,
    name: &str,
    input: Value,
) -> Result<CallToolResult, Failure> {
    let core = scope
        .core
        .upgrade()
        .ok_or_else(|| Failure("the session is gone".into()))?;
    let turn = core
        .running_turn()
        .map_err(|e| Failure(format!("no turn is running: {e}")))?;
    if core.tool_stopping(&turn) {
        return Err(Failure(
            "this turn is ending: a host tool that ends the turn was called".into(),
        ));
    }
    let item_id = {
        let mut claimed = scope.claimed.lock().expect("claimed items lock");
        core.claim_tool_item(name, &mut claimed)
    };
    if name == ASK_USER_TOOL && scope.ask_user {
        return ask_user::run(&core, input, item_id).await;
    }
    let tool = scope
        .tools
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| Failure(format!("no host tool `{name}` in this session")))?;
    if tool.needs_approval {
        approve(&core, tool, &input, item_id.clone()).await?;
    }
    let answer = match &tool.handler {
        HostToolHandler::Client => client(&core, name, input, item_id.clone()).await?,
        HostToolHandler::Http {
            url,
            headers,
            timeout_ms,
        } => {
            let call = HostToolCall {
                session_id: scope.session_id.clone(),
                call_id: sandbox_agents::EventConsumer::next_id(core.as_ref(), "call"),
                tool: name.to_string(),
                input,
            };
            let timeout = timeout_ms.map_or(DEFAULT_HTTP_TIMEOUT, Duration::from_millis);
            broker
                .caller()
                .call(url, headers, timeout, &call)
                .await
                .map_err(Failure)?
        }
    };
    let result = to_result(answer, scope)?;
    if tool.ends_turn {
        stop_turn(&core, &turn, item_id);
    }
    Ok(result)
}

/// Asks the user before a `needsApproval` tool runs; an `always` covers the tool for the
/// rest of the session.
async fn approve(
    core: &SessionCore,
    tool: &HostTool,
    input: &Value,
    item_id: Option<String>,
) -> Result<(), Failure> {
    let asked = core
        .ask_permission(PermissionRequest {
            permission_id: String::new(),
            kind: PermissionKind::HostTool,
            title: format!("Use the host tool `{}`", tool.name),
            item_id,
            tool: Some(tool.name.clone()),
            command: None,
            paths: Vec::new(),
            plan: None,
            input: Some(input.clone()),
            always_scope: Some(format!("hostTool:{}", tool.name)),
            mcp: None,
        })
        .map_err(|e| Failure(e.to_string()))?;
    match asked.answer.await {
        Ok(DaemonAnswer::Permission(PermissionReply::Once | PermissionReply::Always)) => Ok(()),
        Ok(DaemonAnswer::Permission(PermissionReply::Reject)) => Err(Failure(format!(
            "The user rejected this call of `{}`; it did not run.",
            tool.name
        ))),
        _ => Err(Failure(format!(
            "The call of `{}` was cancelled before the user approved it.",
            tool.name
        ))),
    }
}

/// Logs `toolCallRequested` and waits for the client's result or rejection.
async fn client(
    core: &SessionCore,
    name: &str,
    input: Value,
    item_id: Option<String>,
) -> Result<ToolCallResultRequest, Failure> {
    let asked = core
        .request_tool_call(name, input, item_id)
        .map_err(|e| Failure(e.to_string()))?;
    match asked.answer.await {
        Ok(DaemonAnswer::ToolResult(result)) => Ok(result),
        Ok(DaemonAnswer::ToolRejected(reject)) => Err(Failure(match reject.reason {
            Some(reason) => format!("The user rejected this call of `{name}`: {reason}"),
            None => format!("The user rejected this call of `{name}`."),
        })),
        _ => Err(Failure(format!(
            "The call of `{name}` was cancelled: the turn ended before an answer."
        ))),
    }
}

/// The MCP result of a tool's answer (images named by path read from the workspace).
fn to_result(answer: ToolCallResultRequest, scope: &Scope) -> Result<CallToolResult, Failure> {
    let output = crate::session::message::tool_output(answer.output, &scope.cwd)
        .map_err(|e| Failure(format!("the tool's answer is unusable: {e}")))?;
    let content = match output {
        ToolOutput::Text(text) => vec![ContentBlock::text(text)],
        ToolOutput::Parts(parts) => parts
            .into_iter()
            .map(|part| match part {
                MessagePart::Text { text } => ContentBlock::text(text),
                MessagePart::Image {
                    media_type, data, ..
                } => ContentBlock::image(data.unwrap_or_default(), media_type),
            })
            .collect(),
    };
    Ok(if answer.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    })
}

/// Ends `turn` once the agent has the result: when its tool-call item completes, or after
/// a short grace.
fn stop_turn(core: &Arc<SessionCore>, turn: &str, item_id: Option<String>) {
    core.stop_turn_after(turn, item_id);
    let core = Arc::downgrade(core);
    let turn = turn.to_string();
    tokio::spawn(async move {
        tokio::time::sleep(TOOL_STOP_GRACE).await;
        if let Some(core) = core.upgrade() {
            core.end_turn_for_tool(&turn);
        }
    });
}
