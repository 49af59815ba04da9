//! The universal → OpenCode converter: a [`History`] as the document `opencode export`
//! prints and `opencode import` files (`{info, messages: [{info, parts}]}`), so that the
//! next prompt of the imported session replays the earlier turns as its own.
//!
//! Each turn is a user message (text parts) and assistant messages, one per model step as
//! OpenCode writes them: a step ends after each shell command, which is a `bash` tool part
//! with its completed state (the command, its output and exit code). Other tool calls and
//! file changes become text parts of their summary; reasoning is left out. The messages
//! carry the session's model and agent.

use std::sync::Mutex;

use sandbox_universal::ContentPart;
use sandbox_universal::history::{CommandStep, History, HistoryStep, HistoryTurn, ToolResultStep};
use serde_json::{Value, json};

/// A new OpenCode id with `prefix` (`ses`, `msg`, `prt`) as OpenCode makes them: 12 hex
/// digits of the time in ms × 4096 plus a counter (all bits inverted for `descending`
/// ids: sessions sort newest first), then 14 random base-62 characters.
pub fn new_id(prefix: &str, descending: bool) -> String {
    static LAST: Mutex<(u64, u64)> = Mutex::new((0, 0));
    let now = u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0);
    let mut stamp = {
        let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
        // Never backwards, and a new counter each millisecond.
        if now > last.0 {
            *last = (now, 0);
        }
        last.1 += 1;
        last.0.wrapping_mul(4096).wrapping_add(last.1)
    };
    if descending {
        stamp = !stamp;
    }
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let random: String = uuid::Uuid::new_v4().as_bytes()[..14]
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect();
    format!("{prefix}_{:012x}{random}", stamp & 0xffff_ffff_ffff)
}

/// Whose messages the history's assistant turns are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    /// OpenCode's provider id (`anthropic`).
    pub provider: String,
    /// The model id.
    pub model: String,
    /// The agent (`build`).
    pub agent: String,
}

/// The export document of `history` as the new session `session_id` in `cwd`, created at
/// `now_ms` (Unix ms), written by `author`, for OpenCode `version`.
pub fn document(
    history: &History,
    session_id: &str,
    cwd: &str,
    author: &Author,
    version: &str,
    now_ms: i64,
) -> Value {
    let mut writer = Writer {
        session_id,
        cwd,
        author,
        now_ms,
        messages: Vec::new(),
        calls: 0,
    };
    for turn in &history.turns {
        writer.turn(turn);
    }
    let title = history
        .turns
        .first()
        .map(|t| t.user_text())
        .filter(|t| !t.trim().is_empty())
        .map_or_else(|| "Imported conversation".to_string(), |t| title_of(&t));
    json!({
        "info": {
            "id": session_id,
            "slug": "imported",
            "projectID": "global",
            "directory": cwd,
            "title": title,
            "version": version,
            "time": {"created": now_ms, "updated": now_ms},
        },
        "messages": writer.messages,
    })
}

/// The first line of `text`, at most 60 characters.
fn title_of(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    title
}

struct Writer<'a> {
    session_id: &'a str,
    cwd: &'a str,
    author: &'a Author,
    now_ms: i64,
    messages: Vec<Value>,
    calls: usize,
}

impl Writer<'_> {
    fn turn(&mut self, turn: &HistoryTurn) {
        let user_id = new_id("msg", false);
        let parts: Vec<Value> = turn
            .user
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } => Some(json!({"type": "text", "text": text})),
                ContentPart::Image {
                    path: Some(path), ..
                } => Some(json!({"type": "text", "text": format!("[image {path}]")})),
                ContentPart::Image { media_type, .. } => {
                    Some(json!({"type": "text", "text": format!("[image {media_type}]")}))
                }
                _ => None,
            })
            .collect();
        let info = json!({
            "role": "user",
            "time": {"created": self.now_ms},
            "agent": self.author.agent,
            "model": {"providerID": self.author.provider, "modelID": self.author.model},
        });
        self.message(&user_id, info, parts);
        let mut step: Vec<Value> = Vec::new();
        for history_step in &turn.steps {
            match history_step {
                HistoryStep::Reasoning(_) => {}
                HistoryStep::Command(command) => {
                    step.push(self.bash(command));
                    self.assistant(&user_id, std::mem::take(&mut step), "tool-calls");
                }
                HistoryStep::Tool(call) => match &call.result {
                    Some(ToolResultStep::Command(command)) => {
                        step.push(self.bash(command));
                        self.assistant(&user_id, std::mem::take(&mut step), "tool-calls");
                    }
                    _ => step.push(text_part(&call.summary(), self.now_ms)),
                },
                HistoryStep::Text(text) => step.push(text_part(text, self.now_ms)),
                HistoryStep::FileChange(file) => {
                    step.push(text_part(&file.summary(), self.now_ms));
                }
            }
        }
        if !step.is_empty() {
            self.assistant(&user_id, step, "stop");
        }
    }

    /// A completed `bash` tool part.
    fn bash(&mut self, command: &CommandStep) -> Value {
        self.calls += 1;
        let output = command.output.clone();
        let time = json!({"start": self.now_ms, "end": self.now_ms});
        json!({
            "type": "tool",
            "tool": "bash",
            "callID": format!("call_history_{}", self.calls),
            "state": {
                "status": "completed",
                "input": {"command": command.command, "description": command.command},
                "output": output,
                "metadata": {"output": output, "exit": command.exit_code, "truncated": false},
                "title": command.command,
                "time": time,
            },
        })
    }

    /// One assistant step: its parts between `step-start` and `step-finish`.
    fn assistant(&mut self, parent: &str, parts: Vec<Value>, finish: &str) {
        let tokens =
            json!({"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}});
        let info = json!({
            "role": "assistant",
            "parentID": parent,
            "mode": self.author.agent,
            "agent": self.author.agent,
            "path": {"cwd": self.cwd, "root": self.cwd},
            "cost": 0,
            "tokens": tokens,
            "modelID": self.author.model,
            "providerID": self.author.provider,
            "time": {"created": self.now_ms, "completed": self.now_ms},
            "finish": finish,
        });
        let mut all = vec![json!({"type": "step-start"})];
        all.extend(parts);
        all.push(json!({"type": "step-finish", "reason": finish, "cost": 0, "tokens": tokens}));
        self.message(&new_id("msg", false), info, all);
    }

    fn message(&mut self, id: &str, mut info: Value, parts: Vec<Value>) {
        info["id"] = json!(id);
        info["sessionID"] = json!(self.session_id);
        let parts: Vec<Value> = parts
            .into_iter()
            .map(|mut part| {
                part["id"] = json!(new_id("prt", false));
                part["sessionID"] = json!(self.session_id);
                part["messageID"] = json!(id);
                part
            })
            .collect();
        self.messages.push(json!({"info": info, "parts": parts}));
    }
}

fn text_part(text: &str, now_ms: i64) -> Value {
    json!({"type": "text", "text": text, "time": {"start": now_ms, "end": now_ms}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandbox_universal::FileChangeKind;
    use sandbox_universal::history::{FileStep, ToolStep};

    fn history() -> History {
        History {
            turns: vec![HistoryTurn {
                user: vec![ContentPart::Text {
                    text: "remember PELICAN".into(),
                }],
                steps: vec![
                    HistoryStep::Reasoning("thinking".into()),
                    HistoryStep::Text("looking".into()),
                    HistoryStep::Command(CommandStep {
                        call_id: "c1".into(),
                        command: "ls".into(),
                        output: "a.txt\n".into(),
                        exit_code: Some(0),
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
    fn ids_look_like_opencodes_and_sort_as_they_do() {
        let (a, b) = (new_id("msg", false), new_id("msg", false));
        assert!(a.starts_with("msg_") && a.len() == 30, "{a}");
        assert!(a < b, "ascending ids sort by creation");
        let (s1, s2) = (new_id("ses", true), new_id("ses", true));
        assert!(s1 > s2, "descending ids sort newest first");
        assert!(s1[4..].chars().all(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn a_history_becomes_messages_with_a_bash_part_per_command() {
        let author = Author {
            provider: "anthropic".into(),
            model: "claude-x".into(),
            agent: "build".into(),
        };
        let doc = document(&history(), "ses_1", "/w", &author, "1.0", 7);
        assert_eq!(doc["info"]["id"], "ses_1");
        assert_eq!(doc["info"]["directory"], "/w");
        assert_eq!(doc["info"]["title"], "remember PELICAN");
        let messages = doc["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3, "{doc:#}");
        let user = &messages[0];
        assert_eq!(user["info"]["role"], "user");
        assert_eq!(user["info"]["model"]["modelID"], "claude-x");
        assert_eq!(user["parts"][0]["text"], "remember PELICAN");
        assert_eq!(user["parts"][0]["messageID"], user["info"]["id"]);

        let kinds = |m: &Value| -> Vec<String> {
            m["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["type"].as_str().unwrap().to_string())
                .collect()
        };
        let step1 = &messages[1];
        assert_eq!(kinds(step1), ["step-start", "text", "tool", "step-finish"]);
        assert_eq!(step1["info"]["finish"], "tool-calls");
        assert_eq!(step1["info"]["parentID"], user["info"]["id"]);
        assert_eq!(step1["info"]["path"]["cwd"], "/w");
        let bash = &step1["parts"][2];
        assert_eq!(bash["tool"], "bash");
        assert_eq!(bash["state"]["status"], "completed");
        assert_eq!(bash["state"]["input"]["command"], "ls");
        assert_eq!(bash["state"]["output"], "a.txt\n");
        assert_eq!(bash["state"]["metadata"]["exit"], 0);

        let step2 = &messages[2];
        assert_eq!(
            kinds(step2),
            ["step-start", "text", "text", "text", "step-finish"]
        );
        assert_eq!(step2["info"]["finish"], "stop");
        let failed = step2["parts"][1]["text"].as_str().unwrap();
        assert!(failed.contains("[tool failed]\noffline"), "{failed}");
        assert_eq!(step2["parts"][2]["text"], "[added b.txt]");
        assert_eq!(step2["parts"][3]["text"], "noted");
        assert!(!doc.to_string().contains("thinking"));
        assert!(messages.iter().all(|m| m["info"]["sessionID"] == "ses_1"));
    }
}
