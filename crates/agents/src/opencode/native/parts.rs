//! Message parts (`message.part.updated` `part`, tag `type`) and tool states (tag
//! `status`).

use serde::Deserialize;
use serde_json::Value;

/// `time` of a text or reasoning part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PartTime {
    /// Started (epoch ms).
    pub start: Option<u64>,
    /// Ended (epoch ms): the part's text is final.
    pub end: Option<u64>,
}

/// A `text` or `reasoning` part: its text so far (the first update has `""`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TextPart {
    /// `prt_…`.
    pub id: String,
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The message.
    #[serde(rename = "messageID")]
    pub message_id: String,
    /// The text so far.
    pub text: String,
    /// Text OpenCode added itself (not the model's).
    pub synthetic: bool,
    /// Text left out of the model's context.
    pub ignored: bool,
    /// Start and end; absent on the user's own text parts.
    pub time: Option<PartTime>,
}

impl TextPart {
    /// Whether the text is final.
    pub fn ended(&self) -> bool {
        self.time.is_some_and(|t| t.end.is_some())
    }
}

/// A `tool` part: one tool call and its state.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ToolPart {
    /// `prt_…`.
    pub id: String,
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The message.
    #[serde(rename = "messageID")]
    pub message_id: String,
    /// The model's call id (permissions and questions name it).
    #[serde(rename = "callID")]
    pub call_id: String,
    /// The tool: `bash`, `write`, `edit`, `apply_patch`, `todowrite`, `question`, `task`,
    /// `read`, ... or an MCP tool.
    pub tool: String,
    /// Where the call stands.
    pub state: ToolState,
}

/// A tool call's state (tag `status`): `pending` → `running` (possibly several times) →
/// `completed` | `error`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum ToolState {
    /// The model is writing the call (`input` is `{}`).
    #[default]
    Pending,
    /// Running; `metadata.output` is the bash output so far (cumulative).
    Running {
        /// The call's input.
        #[serde(default)]
        input: Value,
        /// A title (bash: the command; task: the description).
        #[serde(default)]
        title: Option<String>,
        /// Tool-specific progress (bash `output`; task `sessionId`).
        #[serde(default)]
        metadata: Value,
    },
    /// Done.
    Completed {
        /// The call's input.
        #[serde(default)]
        input: Value,
        /// What the model reads.
        #[serde(default)]
        output: String,
        /// A title.
        #[serde(default)]
        title: Option<String>,
        /// Tool-specific results (bash `exit`; edit `filediff`; write `exists`; ...).
        #[serde(default)]
        metadata: Value,
    },
    /// Failed, was refused or aborted.
    Error {
        /// The call's input.
        #[serde(default)]
        input: Value,
        /// Why (what the model reads).
        #[serde(default)]
        error: String,
        /// Tool-specific details (`interrupted`).
        #[serde(default)]
        metadata: Value,
    },
    /// A state newer than the pin.
    #[serde(other)]
    Unknown,
}

impl ToolState {
    /// The call's input as known (`Null` while pending).
    pub fn input(&self) -> &Value {
        match self {
            Self::Running { input, .. }
            | Self::Completed { input, .. }
            | Self::Error { input, .. } => input,
            Self::Pending | Self::Unknown => &Value::Null,
        }
    }

    /// The state's metadata (`Null` when none).
    pub fn metadata(&self) -> &Value {
        match self {
            Self::Running { metadata, .. }
            | Self::Completed { metadata, .. }
            | Self::Error { metadata, .. } => metadata,
            Self::Pending | Self::Unknown => &Value::Null,
        }
    }

    /// Whether the call is over.
    pub fn is_final(&self) -> bool {
        matches!(self, Self::Completed { .. } | Self::Error { .. })
    }
}

/// A `file` part (an attachment of a user message, or a file a provider returned).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FilePart {
    /// `prt_…`.
    pub id: String,
    /// The message.
    #[serde(rename = "messageID")]
    pub message_id: String,
    /// MIME type.
    pub mime: String,
    /// File name, when known.
    pub filename: Option<String>,
    /// `data:` or `file:` URL.
    pub url: String,
}

/// A message part, by `type`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Part {
    /// Model (or user) text.
    Text(TextPart),
    /// Model reasoning.
    Reasoning(TextPart),
    /// A tool call.
    Tool(ToolPart),
    /// An attachment or generated file.
    File(FilePart),
    /// A step began (carries a snapshot id at most).
    StepStart,
    /// A step ended: finish reason, tokens and cost of the step (the assistant message
    /// carries the same, summed).
    StepFinish,
    /// A subagent prompt in a user message.
    Subtask,
    /// An `@agent` mention in a user message.
    Agent,
    /// A worktree snapshot id.
    Snapshot,
    /// The files a step changed (snapshot diff summary).
    Patch,
    /// A failed attempt the server retried (also reported as `session.status` retry).
    Retry,
    /// A compaction marker (also reported as `session.compacted`).
    Compaction,
    /// A part type newer than the pin.
    #[serde(other)]
    Unknown,
}
