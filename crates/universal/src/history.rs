//! A conversation as the universal → native converters read it: the turns of a session's
//! event log, each the user's message and what the assistant did, in order. Built from the
//! completed items of the log ([`History::from_events`]); every agent's converter writes its
//! native history from this one shape.

use serde_json::Value;

use crate::{
    ContentPart, EventPayload, FileChangeKind, Item, ItemKind, ItemRole, StopReason, UniversalEvent,
};

/// The turns of a conversation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    /// The turns, oldest first.
    pub turns: Vec<HistoryTurn>,
}

/// One turn: the user's message and the assistant's steps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryTurn {
    /// The user's message: text and image parts.
    pub user: Vec<ContentPart>,
    /// What the assistant did, in order.
    pub steps: Vec<HistoryStep>,
    /// How the turn ended, when it did.
    pub stop_reason: Option<StopReason>,
}

/// One thing the assistant did.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryStep {
    /// A message.
    Text(String),
    /// Reasoning it showed.
    Reasoning(String),
    /// A tool call, with its result once it had one.
    Tool(ToolStep),
    /// A shell command the agent reported without a tool call.
    Command(CommandStep),
    /// A file change the agent reported without a tool call.
    FileChange(FileStep),
}

/// A tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolStep {
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
    /// What it answered, when it answered.
    pub result: Option<ToolResultStep>,
}

/// A tool call's result.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResultStep {
    /// Plain output.
    Output {
        /// The output.
        text: String,
        /// Whether the tool failed.
        is_error: bool,
    },
    /// The call ran a command.
    Command(CommandStep),
    /// The call changed files.
    FileChanges(Vec<FileStep>),
}

/// A shell command and what it printed.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandStep {
    /// An id for it (the agent's item id).
    pub call_id: String,
    /// The command line.
    pub command: String,
    /// What it printed.
    pub output: String,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
}

/// A file change.
#[derive(Debug, Clone, PartialEq)]
pub struct FileStep {
    /// The file's path.
    pub path: String,
    /// Added, updated or deleted.
    pub kind: FileChangeKind,
    /// A unified diff, when known.
    pub diff: Option<String>,
}

impl History {
    /// The conversation of a session's events (any order of sequences is taken as given).
    /// The user's message of a turn is its first user `message` item; items of other
    /// kinds (plans, statuses, unparsed) carry nothing a model needs and are left out.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a UniversalEvent>) -> Self {
        let mut history = Self::default();
        for event in events {
            history.push(event);
        }
        history.finish();
        history
    }

    /// Adds the next event of the log (see [`Self::from_events`]; call
    /// [`Self::finish`] after the last).
    pub fn push(&mut self, event: &UniversalEvent) {
        match &event.payload {
            EventPayload::TurnStarted(_) => self.turns.push(HistoryTurn::default()),
            EventPayload::TurnEnded(ended) => {
                if let Some(turn) = self.turns.last_mut() {
                    turn.stop_reason = Some(ended.stop_reason);
                }
            }
            EventPayload::ItemCompleted(completed) => {
                if self.turns.is_empty() {
                    self.turns.push(HistoryTurn::default());
                }
                let turn = self.turns.last_mut().expect("a turn");
                turn.add(&completed.item);
            }
            _ => {}
        }
    }

    /// Drops the turns that hold nothing (no message, no step).
    pub fn finish(&mut self) {
        self.turns
            .retain(|turn| !turn.user.is_empty() || !turn.steps.is_empty());
    }

    /// Every turn's user text and steps as one plain text (for a target that takes text
    /// only).
    pub fn transcript(&self) -> String {
        let mut out = String::new();
        for turn in &self.turns {
            out.push_str("User: ");
            out.push_str(&turn.user_text());
            out.push('\n');
            for step in &turn.steps {
                if let Some(text) = step.summary() {
                    out.push_str("Assistant: ");
                    out.push_str(&text);
                    out.push('\n');
                }
            }
        }
        out
    }
}

impl HistoryTurn {
    /// The text of the user's message (image parts are named, not inlined).
    pub fn user_text(&self) -> String {
        let mut parts = Vec::new();
        for part in &self.user {
            match part {
                ContentPart::Text { text } => parts.push(text.clone()),
                ContentPart::Image {
                    media_type, path, ..
                } => parts.push(match path {
                    Some(path) => format!("[image {path}]"),
                    None => format!("[image {media_type}]"),
                }),
                _ => {}
            }
        }
        parts.join("\n")
    }

    /// The assistant's final message of the turn, if it wrote one.
    pub fn reply(&self) -> Option<&str> {
        self.steps.iter().rev().find_map(|step| match step {
            HistoryStep::Text(text) => Some(text.as_str()),
            _ => None,
        })
    }

    fn add(&mut self, item: &Item) {
        let result_of = item.native_item_id.as_deref();
        match item.kind {
            ItemKind::Message => match item.role {
                Some(ItemRole::User) if self.user.is_empty() => {
                    self.user = item
                        .content
                        .iter()
                        .filter(|p| {
                            matches!(p, ContentPart::Text { .. } | ContentPart::Image { .. })
                        })
                        .cloned()
                        .collect();
                }
                Some(ItemRole::User) | Some(ItemRole::System) => {}
                _ => {
                    let text = item.text();
                    if !text.is_empty() {
                        self.steps.push(HistoryStep::Text(text));
                    }
                }
            },
            ItemKind::Reasoning => {
                let text = item.text();
                if !text.is_empty() {
                    self.steps.push(HistoryStep::Reasoning(text));
                }
            }
            ItemKind::ToolCall => {
                for part in &item.content {
                    if let ContentPart::ToolCall {
                        call_id,
                        name,
                        arguments,
                        ..
                    } = part
                    {
                        self.steps.push(HistoryStep::Tool(ToolStep {
                            call_id: call_id.clone(),
                            name: name.clone(),
                            arguments: arguments.clone(),
                            result: None,
                        }));
                    }
                }
            }
            ItemKind::ToolResult => {
                for part in &item.content {
                    if let ContentPart::ToolResult {
                        call_id,
                        output,
                        is_error,
                    } = part
                    {
                        let result = ToolResultStep::Output {
                            text: output.clone(),
                            is_error: *is_error,
                        };
                        if let Some(call) = self.call(call_id) {
                            call.result = Some(result);
                        }
                    }
                }
            }
            ItemKind::CommandExecution => {
                for part in &item.content {
                    if let ContentPart::CommandExecution {
                        command,
                        output,
                        exit_code,
                        ..
                    } = part
                    {
                        let step = CommandStep {
                            call_id: result_of.unwrap_or(&item.item_id).to_string(),
                            command: command.clone(),
                            output: output.clone().unwrap_or_default(),
                            exit_code: *exit_code,
                        };
                        match result_of.and_then(|id| self.call(id)) {
                            Some(call) => call.result = Some(ToolResultStep::Command(step)),
                            None => self.steps.push(HistoryStep::Command(step)),
                        }
                    }
                }
            }
            ItemKind::FileChange => {
                let files: Vec<FileStep> = item
                    .content
                    .iter()
                    .filter_map(|part| match part {
                        ContentPart::FileChange {
                            path,
                            change_kind,
                            diff,
                        } => Some(FileStep {
                            path: path.clone(),
                            kind: *change_kind,
                            diff: diff.clone(),
                        }),
                        _ => None,
                    })
                    .collect();
                match result_of.and_then(|id| self.call(id)) {
                    Some(call) => call.result = Some(ToolResultStep::FileChanges(files)),
                    None => self
                        .steps
                        .extend(files.into_iter().map(HistoryStep::FileChange)),
                }
            }
            ItemKind::Plan | ItemKind::Status | ItemKind::Unparsed => {}
        }
    }

    /// The latest call with id `call_id` still without a result.
    fn call(&mut self, call_id: &str) -> Option<&mut ToolStep> {
        self.steps.iter_mut().rev().find_map(|step| match step {
            HistoryStep::Tool(call) if call.call_id == call_id && call.result.is_none() => {
                Some(call)
            }
            _ => None,
        })
    }
}

impl HistoryStep {
    /// The step as text, for a target that cannot represent it natively (`None` for
    /// reasoning, which a target keeps out of the visible history).
    pub fn summary(&self) -> Option<String> {
        match self {
            Self::Text(text) => Some(text.clone()),
            Self::Reasoning(_) => None,
            Self::Tool(call) => Some(call.summary()),
            Self::Command(command) => Some(command.summary()),
            Self::FileChange(file) => Some(file.summary()),
        }
    }
}

impl ToolStep {
    /// The call and its result as text.
    pub fn summary(&self) -> String {
        let mut text = format!("[called tool `{}` with {}]", self.name, self.arguments);
        if let Some(result) = &self.result {
            text.push('\n');
            text.push_str(&result.summary());
        }
        text
    }
}

impl ToolResultStep {
    /// The result as text.
    pub fn summary(&self) -> String {
        match self {
            Self::Output { text, is_error } => {
                let head = if *is_error {
                    "[tool failed]"
                } else {
                    "[tool result]"
                };
                format!("{head}\n{text}")
            }
            Self::Command(command) => command.summary(),
            Self::FileChanges(files) => files
                .iter()
                .map(FileStep::summary)
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// The result as the output a tool would have answered.
    pub fn output(&self) -> (String, bool) {
        match self {
            Self::Output { text, is_error } => (text.clone(), *is_error),
            Self::Command(command) => (command.output.clone(), command.failed()),
            Self::FileChanges(_) => (self.summary(), false),
        }
    }
}

impl CommandStep {
    /// The command and what it printed, as text.
    pub fn summary(&self) -> String {
        let exit = match self.exit_code {
            Some(code) => format!("exit code {code}"),
            None => "no exit code".to_string(),
        };
        format!("[ran `{}`: {exit}]\n{}", self.command, self.output)
    }

    /// Whether it failed (a non-zero exit code).
    pub fn failed(&self) -> bool {
        self.exit_code.is_some_and(|code| code != 0)
    }
}

impl FileStep {
    /// The change as text.
    pub fn summary(&self) -> String {
        let verb = match self.kind {
            FileChangeKind::Add => "added",
            FileChangeKind::Update => "updated",
            FileChangeKind::Delete => "deleted",
        };
        match &self.diff {
            Some(diff) => format!("[{verb} {}]\n{diff}", self.path),
            None => format!("[{verb} {}]", self.path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EventSource, ItemEvent, ItemStatus, TurnEnded, TurnStarted};

    fn event(sequence: u64, payload: EventPayload) -> UniversalEvent {
        UniversalEvent {
            sequence,
            time: chrono::Utc::now(),
            session_id: "s".into(),
            native_session_id: None,
            source: EventSource::Agent,
            synthetic: false,
            payload,
            raw: None,
        }
    }

    fn completed(item: Item) -> EventPayload {
        EventPayload::ItemCompleted(ItemEvent { item })
    }

    fn text(id: &str, role: ItemRole, text: &str) -> Item {
        Item::new(id, ItemKind::Message, ItemStatus::Completed)
            .with_role(role)
            .with_content(ContentPart::Text { text: text.into() })
    }

    #[test]
    fn turns_pair_calls_with_their_results_and_keep_the_rest_in_order() {
        let call = |id: &str, name: &str| {
            Item::new(format!("i-{id}"), ItemKind::ToolCall, ItemStatus::Completed)
                .with_native_id(id)
                .with_content(ContentPart::ToolCall {
                    call_id: id.into(),
                    name: name.into(),
                    arguments: serde_json::json!({"command": "ls"}),
                    mcp: None,
                })
        };
        let events = [
            event(
                1,
                EventPayload::TurnStarted(TurnStarted {
                    turn_id: "t1".into(),
                }),
            ),
            event(2, completed(text("u1", ItemRole::User, "list the files"))),
            event(
                3,
                completed(
                    Item::new("r", ItemKind::Reasoning, ItemStatus::Completed).with_content(
                        ContentPart::Reasoning {
                            text: "think".into(),
                        },
                    ),
                ),
            ),
            event(4, completed(call("c1", "Bash"))),
            event(
                5,
                completed(
                    Item::new("o1", ItemKind::CommandExecution, ItemStatus::Completed)
                        .with_native_id("c1")
                        .with_content(ContentPart::CommandExecution {
                            command: "ls".into(),
                            cwd: None,
                            output: Some("a.txt".into()),
                            exit_code: Some(0),
                        }),
                ),
            ),
            event(6, completed(call("c2", "Lookup"))),
            event(
                7,
                completed(
                    Item::new("o2", ItemKind::ToolResult, ItemStatus::Failed).with_content(
                        ContentPart::ToolResult {
                            call_id: "c2".into(),
                            output: "nope".into(),
                            is_error: true,
                        },
                    ),
                ),
            ),
            event(
                8,
                completed(
                    Item::new("f", ItemKind::FileChange, ItemStatus::Completed).with_content(
                        ContentPart::FileChange {
                            path: "b.txt".into(),
                            change_kind: FileChangeKind::Add,
                            diff: None,
                        },
                    ),
                ),
            ),
            event(9, completed(text("a1", ItemRole::Assistant, "a.txt"))),
            event(
                10,
                EventPayload::TurnEnded(TurnEnded {
                    turn_id: "t1".into(),
                    stop_reason: StopReason::Completed,
                    usage: None,
                    changes: None,
                }),
            ),
            event(
                11,
                EventPayload::TurnStarted(TurnStarted {
                    turn_id: "t2".into(),
                }),
            ),
            event(12, completed(text("u2", ItemRole::User, "thanks"))),
        ];
        let history = History::from_events(&events);
        assert_eq!(history.turns.len(), 2);
        let first = &history.turns[0];
        assert_eq!(first.user_text(), "list the files");
        assert_eq!(first.stop_reason, Some(StopReason::Completed));
        assert_eq!(first.reply(), Some("a.txt"));
        assert!(matches!(&first.steps[0], HistoryStep::Reasoning(t) if t == "think"));
        let HistoryStep::Tool(bash) = &first.steps[1] else {
            panic!("{:?}", first.steps)
        };
        assert!(matches!(&bash.result, Some(ToolResultStep::Command(c)) if c.output == "a.txt"));
        let HistoryStep::Tool(lookup) = &first.steps[2] else {
            panic!()
        };
        assert_eq!(
            lookup.result.as_ref().unwrap().output(),
            ("nope".into(), true)
        );
        assert!(matches!(&first.steps[3], HistoryStep::FileChange(f) if f.path == "b.txt"));
        assert_eq!(first.steps.len(), 5);
        assert_eq!(history.turns[1].stop_reason, None);
        let transcript = history.transcript();
        assert!(transcript.contains("User: list the files"), "{transcript}");
        assert!(
            transcript.contains("[ran `ls`: exit code 0]"),
            "{transcript}"
        );
        assert!(!transcript.contains("think"), "{transcript}");
    }
}
