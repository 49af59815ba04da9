//! A universal [`History`] as plain chat messages, the shape every universal → native
//! converter writes out in its agent's format: user messages, assistant messages (text
//! and tool calls), and tool results answering the calls. Shell commands become calls of
//! the target agent's shell tool; other tool calls with a result stay calls (under a name
//! the providers accept); calls without a result, file changes reported on their own and
//! nothing-but-text steps become text. Reasoning is left out.
//!
//! The messages alternate as the providers want them: an assistant message gathers
//! everything the assistant did up to its next tool call (or the next user message), so
//! two assistant messages never follow each other, and every call is answered by the tool
//! result right after its message.

use sandbox_universal::history::{CommandStep, History, HistoryStep, ToolResultStep, ToolStep};
use serde_json::{Value, json};

/// One message of the replayed conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// The user's text.
    User(String),
    /// What the assistant said and called, in order; a call, when there is one, is last.
    Assistant(Vec<Block>),
    /// A tool's answer to the call just before it.
    ToolResult(ToolOutput),
}

/// A block of an assistant message.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Text.
    Text(String),
    /// A tool call.
    Call(Call),
}

/// A tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Its id (made by the converter: letters, digits, `_` and `-` only).
    pub id: String,
    /// The tool's name (letters, digits, `_` and `-` only).
    pub name: String,
    /// Its arguments (always an object).
    pub input: Value,
}

/// A tool's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The call it answers.
    pub call_id: String,
    /// The tool's name, as in the call.
    pub name: String,
    /// What it printed (never empty: providers refuse an empty failed result).
    pub text: String,
    /// Whether it failed.
    pub is_error: bool,
}

/// The text of the user message that opens a replay whose first turn has no user message
/// (the providers want the conversation to open with one).
pub const CONTINUED: &str = "(continuing an earlier conversation)";

/// How the target agent runs shell commands, and how the converter makes call ids.
pub struct Target<'a> {
    /// The shell tool's name (`Bash`, `bash`); it takes `{"command": ...}`.
    pub shell: &'a str,
    /// Makes a fresh call id.
    pub new_id: &'a mut dyn FnMut() -> String,
}

/// The messages of `history` for `target`.
pub fn messages(history: &History, target: Target<'_>) -> Vec<Message> {
    let mut replay = Replay {
        target,
        out: Vec::new(),
        pending: Vec::new(),
    };
    for turn in &history.turns {
        let user = turn.user_text();
        if !user.is_empty() {
            replay.flush();
            replay.out.push(Message::User(user));
        } else if replay.out.is_empty() && replay.pending.is_empty() {
            replay.out.push(Message::User(CONTINUED.into()));
        }
        for step in &turn.steps {
            replay.step(step);
        }
    }
    replay.flush();
    replay.out
}

struct Replay<'a> {
    target: Target<'a>,
    out: Vec<Message>,
    /// The assistant's blocks not written yet.
    pending: Vec<Block>,
}

impl Replay<'_> {
    fn step(&mut self, step: &HistoryStep) {
        match step {
            HistoryStep::Text(text) => self.text(text.clone()),
            HistoryStep::Reasoning(_) => {}
            HistoryStep::Command(command) => self.command(None, command),
            HistoryStep::FileChange(file) => self.text(file.summary()),
            HistoryStep::Tool(call) => self.tool(call),
        }
    }

    fn text(&mut self, text: String) {
        if !text.is_empty() {
            self.pending.push(Block::Text(text));
        }
    }

    fn tool(&mut self, call: &ToolStep) {
        match &call.result {
            None => self.text(call.summary()),
            Some(ToolResultStep::Command(command)) => self.command(Some(call), command),
            Some(result) => {
                let (text, is_error) = result.output();
                let input = match &call.arguments {
                    Value::Object(_) => call.arguments.clone(),
                    Value::Null => json!({}),
                    other => json!({ "input": other }),
                };
                self.call(tool_name(&call.name), input, text, is_error);
            }
        }
    }

    /// A command as the shell tool's call; `call` is the agent's own call of it, whose
    /// arguments are kept when it was the same shell tool.
    fn command(&mut self, call: Option<&ToolStep>, command: &CommandStep) {
        let input = match call {
            Some(call)
                if call.name == self.target.shell
                    && call.arguments.get("command").and_then(Value::as_str)
                        == Some(command.command.as_str()) =>
            {
                call.arguments.clone()
            }
            _ => json!({ "command": command.command }),
        };
        let mut text = command.output.clone();
        if let Some(code) = command.exit_code.filter(|code| *code != 0) {
            let note = format!("(exit code {code})");
            text = match text.trim_end_matches('\n') {
                "" => note,
                output => format!("{output}\n\n{note}"),
            };
        }
        self.call(self.target.shell.to_string(), input, text, command.failed());
    }

    fn call(&mut self, name: String, input: Value, text: String, is_error: bool) {
        let id = (self.target.new_id)();
        self.pending.push(Block::Call(Call {
            id: id.clone(),
            name: name.clone(),
            input,
        }));
        self.flush();
        let text = if text.trim().is_empty() {
            "(no output)".to_string()
        } else {
            text
        };
        self.out.push(Message::ToolResult(ToolOutput {
            call_id: id,
            name,
            text,
            is_error,
        }));
    }

    fn flush(&mut self) {
        if !self.pending.is_empty() {
            self.out
                .push(Message::Assistant(std::mem::take(&mut self.pending)));
        }
    }
}

/// `name` as the providers take a tool name: letters, digits, `_` and `-`, at most 64.
pub fn tool_name(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() { "tool".into() } else { name }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use sandbox_universal::ContentPart;
    use sandbox_universal::FileChangeKind;
    use sandbox_universal::history::{FileStep, HistoryTurn};

    /// A history of two turns: text, a command with its output, a failing call of a tool
    /// the target lacks, a file change, a reasoning step and a call without a result;
    /// then a turn with no user message.
    pub fn sample() -> History {
        let text = |t: &str| vec![ContentPart::Text { text: t.into() }];
        History {
            turns: vec![
                HistoryTurn {
                    user: text("remember the word platypus"),
                    steps: vec![
                        HistoryStep::Reasoning("hidden thought".into()),
                        HistoryStep::Text("noted".into()),
                        HistoryStep::Tool(ToolStep {
                            call_id: "c1".into(),
                            name: "exec_command".into(),
                            arguments: json!({"cmd": "echo marsupial"}),
                            result: Some(ToolResultStep::Command(CommandStep {
                                call_id: "c1".into(),
                                command: "echo marsupial".into(),
                                output: "marsupial-output".into(),
                                exit_code: Some(0),
                            })),
                        }),
                        HistoryStep::Tool(ToolStep {
                            call_id: "c2".into(),
                            name: "host.lookup".into(),
                            arguments: json!("q"),
                            result: Some(ToolResultStep::Output {
                                text: "lookup failed".into(),
                                is_error: true,
                            }),
                        }),
                        HistoryStep::FileChange(FileStep {
                            path: "b.txt".into(),
                            kind: FileChangeKind::Add,
                            diff: None,
                        }),
                        HistoryStep::Tool(ToolStep {
                            call_id: "c3".into(),
                            name: "Read".into(),
                            arguments: json!({"path": "x"}),
                            result: None,
                        }),
                        HistoryStep::Text("all done wombat".into()),
                    ],
                    stop_reason: None,
                },
                HistoryTurn {
                    user: Vec::new(),
                    steps: vec![HistoryStep::Command(CommandStep {
                        call_id: "k".into(),
                        command: "false".into(),
                        output: String::new(),
                        exit_code: Some(1),
                    })],
                    stop_reason: None,
                },
            ],
        }
    }

    fn replay(history: &History) -> Vec<Message> {
        let mut n = 0;
        let mut new_id = || {
            n += 1;
            format!("id{n}")
        };
        messages(
            history,
            Target {
                shell: "Bash",
                new_id: &mut new_id,
            },
        )
    }

    #[test]
    fn commands_become_shell_calls_and_other_tools_keep_their_calls() {
        let out = replay(&sample());
        let expected = vec![
            Message::User("remember the word platypus".into()),
            Message::Assistant(vec![
                Block::Text("noted".into()),
                Block::Call(Call {
                    id: "id1".into(),
                    name: "Bash".into(),
                    input: json!({"command": "echo marsupial"}),
                }),
            ]),
            Message::ToolResult(ToolOutput {
                call_id: "id1".into(),
                name: "Bash".into(),
                text: "marsupial-output".into(),
                is_error: false,
            }),
            Message::Assistant(vec![Block::Call(Call {
                id: "id2".into(),
                name: "host_lookup".into(),
                input: json!({"input": "q"}),
            })]),
            Message::ToolResult(ToolOutput {
                call_id: "id2".into(),
                name: "host_lookup".into(),
                text: "lookup failed".into(),
                is_error: true,
            }),
            Message::Assistant(vec![
                Block::Text("[added b.txt]".into()),
                Block::Text("[called tool `Read` with {\"path\":\"x\"}]".into()),
                Block::Text("all done wombat".into()),
                Block::Call(Call {
                    id: "id3".into(),
                    name: "Bash".into(),
                    input: json!({"command": "false"}),
                }),
            ]),
            Message::ToolResult(ToolOutput {
                call_id: "id3".into(),
                name: "Bash".into(),
                text: "(exit code 1)".into(),
                is_error: true,
            }),
        ];
        assert_eq!(out, expected);
    }

    #[test]
    fn the_agents_own_shell_call_keeps_its_arguments_and_a_replay_opens_with_a_user() {
        let call = ToolStep {
            call_id: "t".into(),
            name: "Bash".into(),
            arguments: json!({"command": "ls", "description": "List"}),
            result: Some(ToolResultStep::Command(CommandStep {
                call_id: "t".into(),
                command: "ls".into(),
                output: String::new(),
                exit_code: Some(0),
            })),
        };
        let history = History {
            turns: vec![HistoryTurn {
                user: Vec::new(),
                steps: vec![HistoryStep::Tool(call)],
                stop_reason: None,
            }],
        };
        let out = replay(&history);
        assert_eq!(out[0], Message::User(CONTINUED.into()));
        assert!(
            matches!(&out[1], Message::Assistant(b) if matches!(&b[0], Block::Call(c) if c.input["description"] == "List")),
            "{out:?}"
        );
        assert!(
            matches!(&out[2], Message::ToolResult(r) if r.text == "(no output)" && !r.is_error),
            "{out:?}"
        );
        assert_eq!(tool_name("a.b/c:d"), "a_b_c_d");
        assert_eq!(tool_name(""), "tool");
    }
}
