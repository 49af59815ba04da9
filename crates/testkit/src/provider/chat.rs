//! OpenAI Chat Completions dialect: `POST /v1/chat/completions` (OpenCode, Pi) and
//! `GET /v1/models`.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::ids::Ids;
use super::script::Plan;
use super::stream::{
    Frame, argument_deltas, frame_delay, json_response, sse_response, text_deltas,
};

/// Model ids listed by `GET /v1/models`.
pub const MODELS: &[&str] = &["fake-model", "gpt-5.5", "claude-opus-5-5"];

const USAGE: (u64, u64) = (12, 7);

/// Answers a Chat Completions request according to `plan`.
pub fn reply(plan: &Plan, ids: &Ids, body: &Value, default_delay: Duration) -> Response {
    if let Some(failure) = &plan.failure {
        return super::openai_failure_response(failure);
    }
    let model = body["model"].as_str().unwrap_or("fake-model");
    let id = ids.next("chatcmpl");
    let call_id = plan.tool.as_ref().map(|_| ids.next("call"));
    let finish = if plan.tool.is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    let usage = json!({"prompt_tokens": USAGE.0, "completion_tokens": USAGE.1,
                       "total_tokens": USAGE.0 + USAGE.1});

    if body["stream"].as_bool() != Some(true) {
        let mut message = json!({"role": "assistant", "content": plan.text});
        if let Some(thinking) = &plan.thinking {
            message["reasoning_content"] = json!(thinking);
        }
        if let (Some(tool), Some(call_id)) = (&plan.tool, &call_id) {
            message["tool_calls"] = json!([{"id": call_id, "type": "function",
                "function": {"name": tool.name, "arguments": tool.input_text()}}]);
        }
        let completion = json!({
            "id": id, "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        });
        return json_response(StatusCode::OK, &completion);
    }

    let chunk = |delta: Value, finish: Option<&str>| {
        Frame::data(&json!({
            "id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }))
    };
    let mut frames = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    if let Some(thinking) = &plan.thinking {
        frames.extend(
            text_deltas(thinking)
                .into_iter()
                .map(|d| chunk(json!({"reasoning_content": d}), None)),
        );
    }
    if let Some(text) = &plan.text {
        frames.extend(
            text_deltas(text)
                .into_iter()
                .map(|d| chunk(json!({"content": d}), None)),
        );
    }
    if let (Some(tool), Some(call_id)) = (&plan.tool, &call_id) {
        frames.push(chunk(
            json!({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                    "function": {"name": tool.name, "arguments": ""}}]}),
            None,
        ));
        for piece in argument_deltas(&tool.input_text()) {
            frames.push(chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    frames.push(chunk(json!({}), Some(finish)));
    if body["stream_options"]["include_usage"].as_bool() == Some(true) {
        frames.push(Frame::data(&json!({
            "id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [], "usage": usage,
        })));
    }
    frames.push(Frame::raw("[DONE]"));
    let delay = frame_delay(plan.pace, default_delay, frames.len());
    sse_response(frames, delay)
}

/// Answers `GET /v1/models` in a shape both OpenAI and Anthropic clients accept.
pub fn models() -> Response {
    let data: Vec<Value> = MODELS
        .iter()
        .map(|m| {
            json!({"id": m, "object": "model", "type": "model", "display_name": m,
                        "created": 0, "created_at": "2026-01-01T00:00:00Z", "owned_by": "fake"})
        })
        .collect();
    json_response(
        StatusCode::OK,
        &json!({"object": "list", "data": data, "has_more": false,
                "first_id": MODELS.first(), "last_id": MODELS.last()}),
    )
}
