//! Anthropic Messages dialect: `POST /v1/messages` (streaming and not) and
//! `POST /v1/messages/count_tokens`.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::ids::Ids;
use super::script::{Plan, ToolInput};
use super::stream::{
    Frame, argument_deltas, frame_delay, json_response, sse_response, text_deltas,
};

/// Fixed usage reported for every reply (input, output tokens).
const USAGE: (u64, u64) = (12, 7);

/// Answers a Messages request according to `plan`.
pub fn reply(plan: &Plan, ids: &Ids, body: &Value, default_delay: Duration) -> Response {
    if let Some(failure) = &plan.failure {
        let body = json!({
            "type": "error",
            "error": {"type": failure.error_type, "message": failure.message},
        });
        return super::failure_response(failure.status, failure, &body);
    }
    let model = body["model"].as_str().unwrap_or("fake-model");
    let message_id = ids.next("msg");
    let tool_id = plan.tool.as_ref().map(|_| ids.next("toolu"));
    if body["stream"].as_bool() != Some(true) {
        return json_response(
            StatusCode::OK,
            &message(plan, &message_id, tool_id.as_deref(), model),
        );
    }
    let frames = frames(plan, &message_id, tool_id.as_deref(), model);
    let delay = frame_delay(plan.pace, default_delay, frames.len());
    sse_response(frames, delay)
}

/// Answers `count_tokens` with a rough estimate (a token per four bytes of body).
pub fn count_tokens(body: &Value) -> Response {
    let tokens = body.to_string().len() / 4;
    json_response(StatusCode::OK, &json!({"input_tokens": tokens}))
}

fn stop_reason(plan: &Plan) -> &'static str {
    if plan.tool.is_some() {
        "tool_use"
    } else {
        "end_turn"
    }
}

fn tool_input_json(input: &ToolInput) -> Value {
    match input {
        ToolInput::Json(v) | ToolInput::Search(v) => v.clone(),
        ToolInput::Freeform(s) => json!({"input": s}),
    }
}

fn message(plan: &Plan, id: &str, tool_id: Option<&str>, model: &str) -> Value {
    let mut content = Vec::new();
    if let Some(thinking) = &plan.thinking {
        content
            .push(json!({"type": "thinking", "thinking": thinking, "signature": "fake-signature"}));
    }
    if let Some(text) = &plan.text {
        content.push(json!({"type": "text", "text": text}));
    }
    if let (Some(tool), Some(tool_id)) = (&plan.tool, tool_id) {
        content.push(json!({
            "type": "tool_use", "id": tool_id, "name": tool.name, "input": tool_input_json(&tool.input),
        }));
    }
    json!({
        "id": id, "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": stop_reason(plan), "stop_sequence": null,
        "usage": {"input_tokens": USAGE.0, "output_tokens": USAGE.1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    })
}

fn frames(plan: &Plan, id: &str, tool_id: Option<&str>, model: &str) -> Vec<Frame> {
    let mut frames = vec![Frame::named(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": USAGE.0, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }}),
    )];
    let mut index = 0;
    let mut block = |frames: &mut Vec<Frame>, start: Value, deltas: Vec<Value>| {
        frames.push(Frame::named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            frames.push(Frame::named(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        frames.push(Frame::named(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    if let Some(thinking) = &plan.thinking {
        let mut deltas: Vec<Value> = text_deltas(thinking)
            .into_iter()
            .map(|d| json!({"type": "thinking_delta", "thinking": d}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": "fake-signature"}));
        block(
            &mut frames,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        );
    }
    if let Some(text) = &plan.text {
        let deltas = text_deltas(text)
            .into_iter()
            .map(|d| json!({"type": "text_delta", "text": d}))
            .collect();
        block(&mut frames, json!({"type": "text", "text": ""}), deltas);
    }
    if let (Some(tool), Some(tool_id)) = (&plan.tool, tool_id) {
        let args = tool_input_json(&tool.input).to_string();
        let deltas = argument_deltas(&args)
            .into_iter()
            .map(|d| json!({"type": "input_json_delta", "partial_json": d}))
            .collect();
        block(
            &mut frames,
            json!({"type": "tool_use", "id": tool_id, "name": tool.name, "input": {}}),
            deltas,
        );
    }
    frames.push(Frame::named(
        "message_delta",
        &json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason(plan), "stop_sequence": null},
                "usage": {"output_tokens": USAGE.1}}),
    ));
    frames.push(Frame::named(
        "message_stop",
        &json!({"type": "message_stop"}),
    ));
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::script::PlannedTool;

    fn plan(thinking: bool, tool: bool) -> Plan {
        Plan {
            label: String::new(),
            thinking: thinking.then(|| "hmm ok".to_owned()),
            text: (!tool).then(|| "hi there".to_owned()),
            tool: tool.then(|| PlannedTool::new("Bash", ToolInput::Json(json!({"command": "ls"})))),
            pace: None,
            failure: None,
        }
    }

    #[test]
    fn streamed_tool_call_ends_with_tool_use() {
        let frames = frames(&plan(true, true), "msg_1", Some("toolu_1"), "m");
        let events: Vec<String> = frames
            .iter()
            .map(|f| f.event.clone().unwrap_or_default())
            .collect();
        assert_eq!(events.first().map(String::as_str), Some("message_start"));
        assert_eq!(events.last().map(String::as_str), Some("message_stop"));
        let joined: String = frames.iter().map(|f| f.data.clone()).collect();
        assert!(joined.contains("thinking_delta") && joined.contains("signature_delta"));
        assert!(
            joined.contains("input_json_delta") && joined.contains(r#""stop_reason":"tool_use""#)
        );
    }

    #[test]
    fn non_streaming_message_has_blocks() {
        let m = message(&plan(false, false), "msg_1", None, "m");
        assert_eq!(m["content"][0]["text"], "hi there");
        assert_eq!(m["stop_reason"], "end_turn");
    }
}
