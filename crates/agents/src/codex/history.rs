//! The universal → Codex converter: a [`History`] as a rollout Codex resumes
//! (`thread/resume`) and replays to its model as the thread's own earlier turns.
//!
//! The rollout holds what Codex needs and nothing it would make up itself: the
//! `session_meta` line; per turn the `response_item`s the model sees (the user's message,
//! the assistant's messages, each shell command as the call of Codex's default model's
//! `exec` tool — code mode: JavaScript calling `tools.exec_command` — and its output) and
//! the `event_msg`s that make the turn a turn of the thread (`task_started`,
//! `user_message`, `agent_message`, `task_complete`). Codex adds its instructions and the
//! environment context itself on the next turn. Tool calls other than commands, and file
//! changes, become assistant messages of their summary; reasoning is left out.

use chrono::{DateTime, Utc};
use sandbox_universal::history::{CommandStep, History, HistoryStep, HistoryTurn, ToolResultStep};
use sandbox_universal::{AgentId, ContentPart};
use serde_json::{Value, json};

use super::launch::PROVIDER_ID;

/// The name of the tool Codex's default model calls (code mode's JavaScript runner).
pub const EXEC_TOOL: &str = "exec";

/// The rollout of `history` as thread `thread_id` in `cwd`, started at `now`.
pub fn rollout(history: &History, thread_id: &str, cwd: &str, now: DateTime<Utc>) -> String {
    let mut writer = Writer {
        time: now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        lines: Vec::new(),
        calls: 0,
    };
    writer.line(
        "session_meta",
        json!({
            "id": thread_id,
            "timestamp": writer.time,
            "cwd": cwd,
            "originator": "sandbox-daemon",
            "cli_version": crate::manifest::spec(AgentId::Codex).pinned_version().unwrap_or("0.0.0"),
            "source": "vscode",
            "model_provider": PROVIDER_ID,
        }),
    );
    for (n, turn) in history.turns.iter().enumerate() {
        writer.turn(&format!("{thread_id}-turn-{}", n + 1), turn);
    }
    writer.lines.concat()
}

struct Writer {
    time: String,
    lines: Vec<String>,
    calls: usize,
}

impl Writer {
    fn line(&mut self, kind: &str, payload: Value) {
        let line = json!({"timestamp": self.time, "type": kind, "payload": payload});
        self.lines.push(format!("{line}\n"));
    }

    fn item(&mut self, payload: Value) {
        self.line("response_item", payload);
    }

    fn event(&mut self, payload: Value) {
        self.line("event_msg", payload);
    }

    fn turn(&mut self, turn_id: &str, turn: &HistoryTurn) {
        self.event(json!({"type": "task_started", "turn_id": turn_id}));
        let content = user_content(&turn.user);
        if !content.is_empty() {
            self.item(json!({"type": "message", "role": "user", "content": content}));
            self.event(json!({"type": "user_message", "message": turn.user_text(), "images": []}));
        }
        let mut last = None;
        for step in &turn.steps {
            match step {
                HistoryStep::Reasoning(_) => {}
                HistoryStep::Command(command) => self.command(command),
                HistoryStep::Tool(call) => match &call.result {
                    Some(ToolResultStep::Command(command)) => self.command(command),
                    _ => last = Some(self.say(&call.summary())),
                },
                HistoryStep::Text(text) => last = Some(self.say(text)),
                HistoryStep::FileChange(file) => last = Some(self.say(&file.summary())),
            }
        }
        self.event(json!({
            "type": "task_complete",
            "turn_id": turn_id,
            "last_agent_message": last,
        }));
    }

    /// An assistant message; answers its text.
    fn say(&mut self, text: &str) -> String {
        self.item(json!({
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }));
        self.event(json!({"type": "agent_message", "message": text}));
        text.to_string()
    }

    /// A command as the default model runs one: an `exec` script calling `exec_command`,
    /// and the script's output.
    fn command(&mut self, command: &CommandStep) {
        self.calls += 1;
        let call_id = format!("call_history_{}", self.calls);
        self.item(json!({
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": call_id,
            "name": EXEC_TOOL,
            "namespace": "functions",
            "input": exec_script(&command.command),
        }));
        let mut result = json!({"output": command.output});
        if let Some(code) = command.exit_code {
            result["exit_code"] = json!(code);
        }
        self.item(json!({
            "type": "custom_tool_call_output",
            "call_id": call_id,
            "output": [
                {"type": "input_text", "text": "Script completed\nOutput:\n"},
                {"type": "input_text", "text": result.to_string()},
            ],
        }));
    }
}

/// The script code mode runs for one shell command.
pub fn exec_script(command: &str) -> String {
    format!(
        "const result = await tools.exec_command({});\ntext(result);\n",
        json!({"cmd": command})
    )
}

/// The user's parts as Codex's input: text, and inline images as `data:` URLs (an image
/// sent by path is named in text).
fn user_content(parts: &[ContentPart]) -> Vec<Value> {
    parts
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } => Some(json!({"type": "input_text", "text": text})),
            ContentPart::Image {
                media_type,
                data: Some(data),
                ..
            } => Some(json!({
                "type": "input_image",
                "image_url": format!("data:{media_type};base64,{data}"),
            })),
            ContentPart::Image {
                path: Some(path), ..
            } => Some(json!({"type": "input_text", "text": format!("[image {path}]")})),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandbox_universal::FileChangeKind;
    use sandbox_universal::history::{FileStep, ToolStep};

    pub(crate) fn history() -> History {
        History {
            turns: vec![HistoryTurn {
                user: vec![ContentPart::Text {
                    text: "remember PELICAN".into(),
                }],
                steps: vec![
                    HistoryStep::Reasoning("thinking".into()),
                    HistoryStep::Tool(ToolStep {
                        call_id: "t1".into(),
                        name: "Bash".into(),
                        arguments: json!({"command": "ls"}),
                        result: Some(ToolResultStep::Command(CommandStep {
                            call_id: "t1".into(),
                            command: "ls".into(),
                            output: "a.txt\n".into(),
                            exit_code: Some(0),
                        })),
                    }),
                    HistoryStep::Tool(ToolStep {
                        call_id: "t2".into(),
                        name: "WebFetch".into(),
                        arguments: json!({"url": "http://x"}),
                        result: Some(ToolResultStep::Output {
                            text: "offline".into(),
                            is_error: true,
                        }),
                    }),
                    HistoryStep::FileChange(FileStep {
                        path: "b.txt".into(),
                        kind: FileChangeKind::Add,
                        diff: None,
                    }),
                    HistoryStep::Text("noted".into()),
                ],
                stop_reason: None,
            }],
        }
    }

    #[test]
    fn a_history_becomes_a_rollout_of_items_and_turn_events() {
        let now = "2026-11-27T05:00:00Z".parse().unwrap();
        let text = rollout(&history(), "0a-1", "/w", now);
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let kinds: Vec<String> = lines
            .iter()
            .map(|l| {
                let t = l["type"].as_str().unwrap();
                match l["payload"]["type"].as_str() {
                    Some(p) if t != "session_meta" => format!("{t}:{p}"),
                    _ => t.to_string(),
                }
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "session_meta",
                "event_msg:task_started",
                "response_item:message",
                "event_msg:user_message",
                "response_item:custom_tool_call",
                "response_item:custom_tool_call_output",
                "response_item:message",
                "event_msg:agent_message",
                "response_item:message",
                "event_msg:agent_message",
                "response_item:message",
                "event_msg:agent_message",
                "event_msg:task_complete",
            ]
        );
        assert_eq!(lines[0]["payload"]["id"], "0a-1");
        assert_eq!(lines[0]["payload"]["cwd"], "/w");
        assert_eq!(lines[0]["payload"]["timestamp"], "2026-11-27T05:00:00.000Z");
        assert_eq!(lines[2]["payload"]["role"], "user");
        assert_eq!(
            lines[2]["payload"]["content"][0]["text"],
            "remember PELICAN"
        );
        let call = &lines[4]["payload"];
        assert_eq!(call["name"], "exec");
        assert_eq!(
            call["input"],
            "const result = await tools.exec_command({\"cmd\":\"ls\"});\ntext(result);\n"
        );
        let output = &lines[5]["payload"];
        assert_eq!(output["call_id"], call["call_id"]);
        let result: Value =
            serde_json::from_str(output["output"][1]["text"].as_str().unwrap()).unwrap();
        assert_eq!(result, json!({"output": "a.txt\n", "exit_code": 0}));
        let failed = lines[6]["payload"]["content"][0]["text"].as_str().unwrap();
        assert!(
            failed.contains("WebFetch") && failed.contains("[tool failed]\noffline"),
            "{failed}"
        );
        assert_eq!(lines[8]["payload"]["content"][0]["text"], "[added b.txt]");
        assert_eq!(lines[10]["payload"]["role"], "assistant");
        assert_eq!(lines[12]["payload"]["last_agent_message"], "noted");
        assert!(!text.contains("thinking"), "reasoning is left out");
    }

    #[test]
    fn images_go_inline_or_by_name() {
        let parts = vec![
            ContentPart::Image {
                media_type: "image/png".into(),
                data: Some("AAAA".into()),
                path: None,
            },
            ContentPart::Image {
                media_type: "image/png".into(),
                data: None,
                path: Some("p.png".into()),
            },
        ];
        assert_eq!(
            user_content(&parts),
            vec![
                json!({"type": "input_image", "image_url": "data:image/png;base64,AAAA"}),
                json!({"type": "input_text", "text": "[image p.png]"}),
            ]
        );
    }
}
