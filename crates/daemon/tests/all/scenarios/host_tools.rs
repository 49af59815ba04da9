//! Host tools with the real agents: the fake model calls a host tool on the daemon's MCP
//! server; a client tool answered over HTTP and an http tool served by a loopback endpoint
//! (which checks the signature) reach the model; a rejected approval never runs the tool;
//! an `endsTurn` tool ends the turn right after.

use std::sync::Arc;

use sandbox_testkit::host_tools::{HttpToolServer, echo_output};
use sandbox_universal::{
    CreateSessionRequest, EventPayload, HostTool, HostToolHandler, PermissionKind, PermissionReply,
    StopReason, ToolCallOutcome, ToolCallResultRequest, ToolOutput, UniversalEvent,
};
use serde_json::json;

use super::Proved;
use super::ctx::{Ctx, stop_reason};
use super::policy::{refused, support};
use super::subject::Runs;
use crate::common::HOST_TOOL_SECRET;

/// The input the model gives a tool (the mock sends its whole message).
fn marker_input(ctx: &Ctx, prompt: &str) -> serde_json::Value {
    match ctx.subject.runs {
        Runs::Mock => json!({"text": prompt}),
        _ => json!({"text": sandbox_testkit::provider::script::MCP_TEXT}),
    }
}

/// The prompt that makes the model call host tool `tool` (the mock has its own keyword).
fn prompt(ctx: &Ctx, tool: &str, tag: &str) -> String {
    match ctx.subject.runs {
        Runs::Mock => format!("hosttool {tool} ({tag})"),
        _ => format!("USE_MCP host/{tool} ({tag})"),
    }
}

/// Whether the tool's `output` reached the model in the turn tagged `tag`: in a model
/// request, or for the mock (which has no model) in its tool call item's result.
fn seen(ctx: &Ctx, events: &[UniversalEvent], tag: &str, output: &str) -> bool {
    if ctx.subject.runs == Runs::Mock {
        return events.iter().any(|e| match &e.payload {
            EventPayload::ItemCompleted(done) => done.item.content.iter().any(|part| {
                matches!(part, sandbox_universal::ContentPart::ToolResult { output: o, .. } if o.contains(output))
            }),
            _ => false,
        });
    }
    reached_model(ctx, tag, output)
}

fn tool(name: &str, handler: HostToolHandler) -> HostTool {
    HostTool {
        name: name.into(),
        description: format!("Looks something up in the host application ({name})."),
        input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        handler,
        needs_approval: false,
        ends_turn: false,
    }
}

/// Whether a model request of the turn tagged `tag` carries `output` (the tool's result
/// reached the model).
fn reached_model(ctx: &Ctx, tag: &str, output: &str) -> bool {
    let needle = format!("({tag})");
    ctx.subject
        .provider
        .as_ref()
        .map(|p| p.model_requests())
        .unwrap_or_default()
        .iter()
        .map(|r| r.body.to_string())
        .any(|body| body.contains(&needle) && body.contains(output))
}

fn outcomes(events: &[UniversalEvent]) -> Vec<ToolCallOutcome> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ToolCallResolved(r) => Some(r.outcome),
            _ => None,
        })
        .collect()
}

/// Whether the agent takes host tools; when it does not, a session asking for them is
/// refused (422 naming `hostTools`).
async fn takes_host_tools(ctx: &Ctx, id: &str) -> bool {
    if support(ctx).await.host_tools {
        return ctx.subject.runs == Runs::RealCli || ctx.subject.runs == Runs::Mock;
    }
    refused(ctx, id, "hostTools", |r| CreateSessionRequest {
        host_tools: Some(vec![tool("lookup", HostToolHandler::Client)]),
        ..r
    })
    .await;
    false
}

/// A client tool answered over HTTP reaches the model; an `endsTurn` one ends the turn
/// (`toolStop`) and the next message goes on.
pub async fn client(ctx: Arc<Ctx>) -> Proved {
    let id = "host-tool-client";
    if !takes_host_tools(&ctx, id).await {
        return Vec::new();
    }
    let stop = HostTool {
        ends_turn: true,
        ..tool("present_plan", HostToolHandler::Client)
    };
    let s = ctx
        .session_with(id, |r| CreateSessionRequest {
            host_tools: Some(vec![tool("lookup", HostToolHandler::Client), stop]),
            ..r
        })
        .await;
    let after = ctx.last_sequence(&s.id).await;
    let message = prompt(&ctx, "lookup", "host-client");
    let turn = ctx.send(&s.id, &message).await;
    let call = ctx
        .next(&s.id, after, |p| match p {
            EventPayload::ToolCallRequested(c) => Some(c.clone()),
            _ => None,
        })
        .await;
    assert_eq!(call.tool, "lookup", "{id}");
    assert_eq!(call.input, marker_input(&ctx, &message), "{id}");
    let answer = format!("client-answer-{}", ctx.subject.agent);
    ctx.daemon
        .client
        .tool_call_result(
            &s.id,
            &call.call_id,
            &ToolCallResultRequest {
                output: ToolOutput::Text(answer.clone()),
                is_error: false,
            },
        )
        .await
        .unwrap();
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed, "{id}");
    assert_eq!(outcomes(&events), [ToolCallOutcome::Answered], "{id}");
    assert!(
        seen(&ctx, &events, "host-client", &answer),
        "{id}: the client's answer did not reach the model"
    );

    // endsTurn: the turn ends right after the result; the next message continues.
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx
        .send(&s.id, &prompt(&ctx, "present_plan", "host-stop"))
        .await;
    let call = ctx
        .next(&s.id, after, |p| match p {
            EventPayload::ToolCallRequested(c) => Some(c.clone()),
            _ => None,
        })
        .await;
    ctx.daemon
        .client
        .tool_call_result(
            &s.id,
            &call.call_id,
            &ToolCallResultRequest {
                output: ToolOutput::Text("plan presented".into()),
                is_error: false,
            },
        )
        .await
        .unwrap();
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::ToolStop, "{id}: endsTurn");
    let events = ctx.turn(&s.id, "Say hello (host-after-stop)").await;
    assert_eq!(stop_reason(&events), StopReason::Completed, "{id}: after");
    vec!["hostTools", "toolCalls"]
}

/// An http tool served by a loopback endpoint that checks the signature reaches the
/// model; a `needsApproval` one rejected never runs.
pub async fn http(ctx: Arc<Ctx>) -> Proved {
    let id = "host-tool-http";
    if !takes_host_tools(&ctx, id).await {
        return Vec::new();
    }
    let endpoint = HttpToolServer::start(HOST_TOOL_SECRET).await.unwrap();
    let handler = HostToolHandler::Http {
        url: endpoint.url(),
        headers: Default::default(),
        timeout_ms: Some(10_000),
    };
    let guarded = HostTool {
        needs_approval: true,
        ..tool("delete_order", handler.clone())
    };
    let s = ctx
        .session_with(id, |r| CreateSessionRequest {
            host_tools: Some(vec![tool("fetch_order", handler.clone()), guarded]),
            ..r
        })
        .await;
    let message = prompt(&ctx, "fetch_order", "host-http");
    let events = ctx.turn(&s.id, &message).await;
    assert_eq!(stop_reason(&events), StopReason::Completed, "{id}");
    let calls = endpoint.calls();
    assert_eq!(calls.len(), 1, "{id}: {calls:?}");
    assert_eq!(calls[0].session_id, s.id, "{id}");
    let input = marker_input(&ctx, &message);
    assert_eq!(calls[0].input, input, "{id}");
    // The echo holds the input as JSON, escaped inside a request body: its first word
    // is enough.
    let answer = echo_output(&input);
    let prefix = answer.split(' ').next().unwrap();
    assert!(
        seen(&ctx, &events, "host-http", prefix),
        "{id}: the endpoint's answer did not reach the model"
    );

    // needsApproval, rejected: asked as `hostTool`, never runs, the model reads why.
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx
        .send(&s.id, &prompt(&ctx, "delete_order", "host-approval"))
        .await;
    let asked = ctx
        .next(&s.id, after, |p| match p {
            EventPayload::PermissionAsked(r) if r.kind == PermissionKind::HostTool => {
                Some(r.clone())
            }
            _ => None,
        })
        .await;
    assert_eq!(asked.tool.as_deref(), Some("delete_order"), "{id}");
    ctx.reply(&s.id, &asked, PermissionReply::Reject).await;
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(
        stop_reason(&events),
        StopReason::Completed,
        "{id}: rejected"
    );
    assert_eq!(endpoint.calls().len(), 1, "{id}: a rejected tool ran");
    assert!(
        seen(&ctx, &events, "host-approval", "rejected"),
        "{id}: the rejection did not reach the model"
    );
    vec!["hostTools", "toolCalls", "permissions"]
}
