//! OpenAI Responses dialect: `POST /v1/responses`, streamed (what Codex uses).
//!
//! Codex takes its items from `response.output_item.done` and needs
//! `response.completed` with a `response.id`. Shell calls are `function_call` items;
//! `apply_patch` is a freeform `custom_tool_call` whose `input` is the raw patch. A call
//! of a tool declared in a `namespace` tool carries that `namespace` (Codex's
//! `functions`). In code mode (Codex's default model) the call is a `custom_tool_call`
//! of `exec` whose `input` is JavaScript (see [`super::calls::exec_source`]). A call of
//! Codex's client-executed `tool_search` is a `tool_search_call` item (`execution:
//! "client"`, JSON `arguments`, no deltas).

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::ids::Ids;
use super::script::{Plan, ToolInput};
use super::stream::{
    Frame, argument_deltas, frame_delay, json_response, sse_response, text_deltas,
};

/// Collects frames, numbering them with `sequence_number` as the real API does.
struct Events {
    frames: Vec<Frame>,
    output: Vec<Value>,
}

impl Events {
    fn push(&mut self, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.frames.len());
        self.frames.push(Frame::named(kind, &data));
    }

    /// Emits `output_item.added`, the deltas via `body`, and `output_item.done`.
    fn item(&mut self, added: Value, done: Value, body: impl FnOnce(&mut Self, usize)) {
        let index = self.output.len();
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": added}),
        );
        body(self, index);
        self.push(
            "response.output_item.done",
            json!({"output_index": index, "item": done}),
        );
        self.output.push(done);
    }
}

/// Answers a Responses request according to `plan`.
pub fn reply(plan: &Plan, ids: &Ids, body: &Value, default_delay: Duration) -> Response {
    if let Some(failure) = &plan.failure {
        return super::openai_failure_response(failure);
    }
    let model = body["model"].as_str().unwrap_or("fake-model");
    let response_id = ids.next("resp");
    let base = json!({"id": response_id, "object": "response", "created_at": 0, "model": model});
    let mut ev = Events {
        frames: Vec::new(),
        output: Vec::new(),
    };
    let mut in_progress = base.clone();
    in_progress["status"] = json!("in_progress");
    in_progress["output"] = json!([]);
    ev.push("response.created", json!({"response": in_progress}));
    ev.push("response.in_progress", json!({"response": in_progress}));

    if let Some(thinking) = &plan.thinking {
        let id = ids.next("rs");
        let done = json!({"id": id, "type": "reasoning",
                          "summary": [{"type": "summary_text", "text": thinking}]});
        ev.item(
            json!({"id": id, "type": "reasoning", "summary": []}),
            done,
            |ev, index| {
                let at = json!({"item_id": id, "output_index": index, "summary_index": 0});
                let part = |text: &str| json!({"type": "summary_text", "text": text});
                ev.push(
                    "response.reasoning_summary_part.added",
                    merge(&at, json!({"part": part("")})),
                );
                for delta in text_deltas(thinking) {
                    ev.push(
                        "response.reasoning_summary_text.delta",
                        merge(&at, json!({"delta": delta})),
                    );
                }
                ev.push(
                    "response.reasoning_summary_text.done",
                    merge(&at, json!({"text": thinking})),
                );
                ev.push(
                    "response.reasoning_summary_part.done",
                    merge(&at, json!({"part": part(thinking)})),
                );
            },
        );
    }
    if let Some(text) = &plan.text {
        let id = ids.next("msg");
        let item = |status: &str, content: Value| json!({"id": id, "type": "message", "role": "assistant", "status": status, "content": content});
        let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
        let done = item("completed", json!([part(text)]));
        ev.item(item("in_progress", json!([])), done, |ev, index| {
            let at = json!({"item_id": id, "output_index": index, "content_index": 0});
            ev.push(
                "response.content_part.added",
                merge(&at, json!({"part": part("")})),
            );
            for delta in text_deltas(text) {
                ev.push(
                    "response.output_text.delta",
                    merge(&at, json!({"delta": delta})),
                );
            }
            ev.push(
                "response.output_text.done",
                merge(&at, json!({"text": text})),
            );
            ev.push(
                "response.content_part.done",
                merge(&at, json!({"part": part(text)})),
            );
        });
    }
    if let Some(tool) = &plan.tool
        && let ToolInput::Search(arguments) = &tool.input
    {
        // A client-executed tool search: no argument deltas, the arguments as JSON.
        let (id, call_id) = (ids.next("tsc"), ids.next("call"));
        let item = |status: &str, arguments: &Value| {
            json!({"id": id, "type": "tool_search_call", "status": status, "call_id": call_id,
                   "execution": "client", "arguments": arguments})
        };
        ev.item(
            item("in_progress", &json!({})),
            item("completed", arguments),
            |_, _| {},
        );
    } else if let Some(tool) = &plan.tool {
        let call_id = ids.next("call");
        let input = tool.input_text();
        let (id, kind, field, delta_event, done_event) = match tool.input {
            ToolInput::Json(_) | ToolInput::Search(_) => (
                ids.next("fc"),
                "function_call",
                "arguments",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
            ),
            ToolInput::Freeform(_) => (
                ids.next("ctc"),
                "custom_tool_call",
                "input",
                "response.custom_tool_call_input.delta",
                "response.custom_tool_call_input.done",
            ),
        };
        let item = |status: &str, value: &str| {
            let mut item = json!({"id": id, "type": kind, "status": status, "call_id": call_id,
                                  "name": tool.name, field: value});
            if let Some(namespace) = &tool.namespace {
                item["namespace"] = json!(namespace);
            }
            item
        };
        ev.item(
            item("in_progress", ""),
            item("completed", &input),
            |ev, index| {
                let at = json!({"item_id": id, "output_index": index});
                for delta in argument_deltas(&input) {
                    ev.push(delta_event, merge(&at, json!({"delta": delta})));
                }
                ev.push(done_event, merge(&at, json!({field: input})));
            },
        );
    }
    let mut completed = base;
    completed["status"] = json!("completed");
    completed["output"] = json!(ev.output);
    completed["usage"] = json!({
        "input_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 19,
    });
    if body["stream"].as_bool() == Some(false) {
        return json_response(StatusCode::OK, &completed);
    }
    ev.push("response.completed", json!({"response": completed}));
    let delay = frame_delay(plan.pace, default_delay, ev.frames.len());
    sse_response(ev.frames, delay)
}

fn merge(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Value::Object(out), Value::Object(extra)) = (&mut out, extra) {
        out.extend(extra);
    }
    out
}
