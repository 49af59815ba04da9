//! The `properties` of the session-level events the converter reads.

use serde::Deserialize;
use serde_json::Value;

/// A session, as `session.created` describes it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SessionInfo {
    /// `ses_…`.
    pub id: String,
    /// The parent session of a subagent's (child) session.
    #[serde(rename = "parentID")]
    pub parent_id: Option<String>,
    /// The session's directory.
    pub directory: Option<String>,
    /// Its title (`"<description> (@<agent> subagent)"` for a child).
    pub title: Option<String>,
}

/// `session.created` (also the shape of `session.updated` / `session.deleted`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SessionCreated {
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// Its description.
    pub info: SessionInfo,
}

/// Properties that only name a session: `session.idle`, `session.compacted`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SessionRef {
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
}

/// `session.status`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SessionStatus {
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// What it is doing.
    pub status: Status,
}

/// What a session is doing (tag `type`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Status {
    /// Nothing runs.
    #[default]
    Idle,
    /// A prompt loop runs (sent many times per turn).
    Busy,
    /// The provider failed; the server retries at `next` (epoch ms).
    Retry {
        /// 1-based attempt number.
        #[serde(default)]
        attempt: u64,
        /// The provider's error message.
        #[serde(default)]
        message: String,
        /// When the next attempt starts (epoch ms).
        #[serde(default)]
        next: Option<u64>,
    },
    /// A status newer than the pin.
    #[serde(other)]
    Unknown,
}

/// An error as OpenCode reports it (`session.error`, `message.updated` `info.error`):
/// `{name, data: {message, statusCode?, ...}}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MessageError {
    /// `APIError`, `MessageAbortedError`, `ProviderAuthError`, `UnknownError`,
    /// `MessageOutputLengthError`, `ContextOverflowError`, `ContentFilterError`,
    /// `StructuredOutputError`.
    pub name: String,
    /// `{message, statusCode?, isRetryable?, responseHeaders?, responseBody?, ...}`.
    pub data: Value,
}

impl MessageError {
    /// The name of the error OpenCode reports when a prompt loop is aborted.
    pub const ABORTED: &'static str = "MessageAbortedError";

    /// Whether this is the error of an aborted prompt loop.
    pub fn is_abort(&self) -> bool {
        self.name == Self::ABORTED
    }

    /// `data.message`, else the name.
    pub fn message(&self) -> String {
        match self.data["message"].as_str() {
            Some(message) if !message.is_empty() => message.to_string(),
            _ => self.name.clone(),
        }
    }

    /// `data.statusCode`, for provider errors.
    pub fn status_code(&self) -> Option<u16> {
        self.data["statusCode"]
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
    }
}

/// `session.error` (`sessionID` is optional in the schema).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SessionError {
    /// The session, when known.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The error.
    pub error: Option<MessageError>,
}

/// Token counts of an assistant message or a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Tokens {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Reasoning tokens.
    pub reasoning: f64,
    /// Prompt cache reads and writes.
    pub cache: TokenCache,
}

/// Prompt cache token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TokenCache {
    /// Read from the cache.
    pub read: f64,
    /// Written to the cache.
    pub write: f64,
}

/// `time` of a message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MessageTime {
    /// Created (epoch ms).
    pub created: Option<u64>,
    /// Completed (epoch ms): set on the assistant message's final update.
    pub completed: Option<u64>,
}

/// `path` of an assistant message.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MessagePath {
    /// Where its tools run.
    pub cwd: String,
    /// The worktree root.
    pub root: String,
}

/// A user or assistant message (`message.updated` `info`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MessageInfo {
    /// `msg_…`.
    pub id: String,
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// `user` or `assistant`.
    pub role: String,
    /// Created / completed times.
    pub time: MessageTime,
    /// Why the message failed (assistant).
    pub error: Option<MessageError>,
    /// The model's finish reason of the last step (`stop`, `tool-calls`, `length`, ...).
    pub finish: Option<String>,
    /// Token counts (assistant; cumulative over the message's steps).
    pub tokens: Option<Tokens>,
    /// Cost in US dollars (assistant).
    pub cost: Option<f64>,
    /// Where the message's tools run (assistant).
    pub path: Option<MessagePath>,
}

impl MessageInfo {
    /// Whether this is an assistant message.
    pub fn is_assistant(&self) -> bool {
        self.role == "assistant"
    }

    /// Whether the message is final: completed or failed.
    pub fn is_finished(&self) -> bool {
        self.time.completed.is_some() || self.error.is_some()
    }
}

/// `message.updated`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MessageUpdated {
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The message.
    pub info: MessageInfo,
}

/// `message.part.updated` (`part` is parsed by its `type`, see [`super::Part`]; the pin
/// sends no `delta` here: streaming comes as `message.part.delta`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PartUpdated {
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The part, whole.
    pub part: Value,
}

/// `message.part.delta`: text appended to a part (`field` is `text` for text and
/// reasoning parts alike).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PartDelta {
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The message.
    #[serde(rename = "messageID")]
    pub message_id: String,
    /// The part.
    #[serde(rename = "partID")]
    pub part_id: String,
    /// The field extended.
    pub field: String,
    /// The appended text.
    pub delta: String,
}

/// The tool call a permission or question is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ToolRef {
    /// The assistant message of the call.
    #[serde(rename = "messageID")]
    pub message_id: String,
    /// The call id of the tool part.
    #[serde(rename = "callID")]
    pub call_id: String,
}

/// `permission.asked`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PermissionAsked {
    /// `per_…`: the id to reply to.
    pub id: String,
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The permission: `bash`, `edit`, `read`, `external_directory`, `webfetch`, ...
    pub permission: String,
    /// What is asked (commands, paths relative to the worktree, URLs, ...).
    pub patterns: Vec<String>,
    /// `bash`: `{command}`; `edit`: `{filepath, diff}`; ...
    pub metadata: Value,
    /// The patterns an `always` reply would allow from now on.
    pub always: Vec<String>,
    /// The tool call it gates.
    pub tool: Option<ToolRef>,
}

/// `permission.replied`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PermissionReplied {
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The request (`per_…`).
    #[serde(rename = "requestID")]
    pub request_id: String,
    /// `once`, `always` or `reject`.
    pub reply: String,
}

/// One option of a question.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct QuestionOption {
    /// The label; answers quote it.
    pub label: String,
    /// Its explanation.
    pub description: String,
}

/// One question of `question.asked`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct QuestionInfo {
    /// The question.
    pub question: String,
    /// A short label.
    pub header: String,
    /// The choices.
    pub options: Vec<QuestionOption>,
    /// Whether several choices may be selected.
    pub multiple: bool,
    /// Whether a typed answer is allowed (absent in the pin's events).
    pub custom: Option<bool>,
}

/// `question.asked`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct QuestionAsked {
    /// `que_…`: the id to reply to.
    pub id: String,
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The questions, in order.
    pub questions: Vec<QuestionInfo>,
    /// The `question` tool call that asks.
    pub tool: Option<ToolRef>,
}

/// `question.replied`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct QuestionReplied {
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The request (`que_…`).
    #[serde(rename = "requestID")]
    pub request_id: String,
    /// One array of selected labels per question.
    pub answers: Vec<Vec<String>>,
}

/// `question.rejected`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct QuestionRejected {
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    /// The request (`que_…`).
    #[serde(rename = "requestID")]
    pub request_id: String,
}
