//! What request bodies must satisfy beyond their types, in one place: the schemas state it
//! ([`describe`] completes both generated documents from it) and the daemon checks it when
//! it parses a body ([`Constrained::violation`]), so a body the schemas accept passes the
//! checks and one they refuse is refused (422 `invalid-body`). What only the daemon can
//! judge — whether an agent offers a mode or model, whether a `cwd` exists — is not here.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value, json};

mod host_tools;
mod policy;
mod webhooks;

pub use host_tools::{
    HOST_TOOL_DESCRIPTION, HOST_TOOL_NAME, MAX_HOST_TOOL_TIMEOUT_MS, MAX_HOST_TOOLS,
    MAX_INPUT_SCHEMA_BYTES, REJECT_REASON,
};
use host_tools::{describe_host_tools, host_tools_violation};
use policy::{describe_policy, policy_violation};
pub use webhooks::{MAX_WEBHOOK_EVENTS, WEBHOOK_SECRET, webhook_event_names};
use webhooks::{describe_webhooks, session_webhook_violation};

use crate::{
    AgentId, CreateSessionRequest, IMAGE_TYPES, InstallRequest, MessagePart, PermissionMode,
    PermissionReplyRequest, QuestionRejectRequest, QuestionReplyRequest, SendMessageRequest,
};

/// The constraints of one text field: a length in characters and a pattern (an ECMA-262
/// regular expression, as JSON Schema reads it, anchored at both ends, which the Rust
/// `regex` crate reads the same way).
#[derive(Debug)]
pub struct Text {
    /// Fewest characters.
    pub min_length: usize,
    /// Most characters.
    pub max_length: usize,
    /// The pattern the whole value matches.
    pub pattern: &'static str,
    /// What the constraints say, for error messages (after "must be").
    pub meaning: &'static str,
    regex: OnceLock<Regex>,
}

impl Text {
    /// A constraint.
    pub const fn new(
        min_length: usize,
        max_length: usize,
        pattern: &'static str,
        meaning: &'static str,
    ) -> Self {
        Self {
            min_length,
            max_length,
            pattern,
            meaning,
            regex: OnceLock::new(),
        }
    }

    /// Whether `value` satisfies the constraints.
    pub fn matches(&self, value: &str) -> bool {
        let regex = self
            .regex
            .get_or_init(|| Regex::new(self.pattern).expect("a valid pattern"));
        (self.min_length..=self.max_length).contains(&value.chars().count())
            && regex.is_match(value)
    }

    /// `field` with `value`, checked: the message says what `field` must be (never
    /// repeating the value, which may be a credential).
    pub fn check(&self, field: &str, value: &str) -> Result<(), String> {
        if self.matches(value) {
            Ok(())
        } else {
            Err(format!("`{field}` must be {}", self.meaning))
        }
    }

    /// The schema of a string with these constraints.
    pub fn schema(&self) -> Value {
        let mut schema = json!({"type": "string"});
        self.describe(&mut schema);
        schema
    }

    /// Adds the constraints to a property's schema.
    fn describe(&self, property: &mut Value) {
        property["minLength"] = json!(self.min_length);
        property["maxLength"] = json!(self.max_length);
        property["pattern"] = json!(self.pattern);
    }
}

/// A program to run beside the agent (`ProcessRequest.command`).
pub static COMMAND: Text = Text::new(1, 4096, r"^[^\x00]+$", "1 to 4096 characters, no NUL");

/// A path inside a session's workspace: relative, no `..` component, no NUL (the files
/// API's `path`, a process's `cwd`).
pub static WORKSPACE_PATH: Text = Text::new(
    0,
    4096,
    r"^(?:(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)(?:/(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)?)*)?$",
    "a path relative to the session's working directory (no leading `/`, no `..`, no NUL; at most 4096 characters)",
);

/// A name an agent lists: an agent mode or a model variant.
pub static NAME: Text = Text::new(
    1,
    128,
    r"^[^\x00-\x1f\x7f]+$",
    "1 to 128 characters, none of them a control character",
);

/// A model id.
pub static MODEL: Text = Text::new(
    1,
    256,
    r"^[^\x00-\x1f\x7f]+$",
    "1 to 256 characters, none of them a control character",
);

/// A provider credential; empty is the same as none.
pub static TOKEN: Text = Text::new(
    0,
    8192,
    r"^[^\x00-\x1f\x7f]*$",
    "at most 8192 characters, none of them a control character",
);

/// An agent version: `pinned`, `latest` or a version such as `2.1.330` (it names a
/// directory, so it is never a path).
pub static AGENT_VERSION: Text = Text::new(
    1,
    128,
    r"^[A-Za-z0-9][A-Za-z0-9._+-]*$",
    "`pinned`, `latest` or a version (1 to 128 of A-Z a-z 0-9 . _ + -, starting with a letter or digit)",
);

/// A working directory: an absolute path.
pub static CWD: Text = Text::new(
    1,
    4096,
    r"^/[^\x00]*$",
    "an absolute path (starting with `/`, at most 4096 characters, no NUL)",
);

/// A client-chosen session id (a path segment, and a directory name).
pub static SESSION_ID: Text = Text::new(
    1,
    128,
    r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$",
    "1 to 128 of A-Z a-z 0-9 . _ - (not starting with a dot)",
);

/// A session's `systemPrompt`.
pub static SYSTEM_PROMPT: Text =
    Text::new(1, 65_536, r"^[^\x00]+$", "1 to 65536 characters, no NUL");

/// An environment variable's name (the session's `env`, an MCP server's `env`).
pub static ENV_NAME: Text = Text::new(
    1,
    128,
    r"^[A-Za-z_][A-Za-z0-9_]*$",
    "1 to 128 of A-Z a-z 0-9 _, not starting with a digit",
);

/// An environment variable's value.
pub static ENV_VALUE: Text =
    Text::new(0, 32_768, r"^[^\x00]*$", "at most 32768 characters, no NUL");

/// An MCP server's name (it becomes part of the agents' tool names).
pub static MCP_NAME: Text = Text::new(1, 64, r"^[A-Za-z0-9_-]+$", "1 to 64 of A-Z a-z 0-9 _ -");

/// An MCP stdio server's command.
pub static MCP_COMMAND: Text = Text::new(
    1,
    4096,
    r"^[^\x00-\x1f\x7f]+$",
    "1 to 4096 characters, none of them a control character",
);

/// An argument of an MCP stdio server.
pub static MCP_ARG: Text = Text::new(0, 8192, r"^[^\x00]*$", "at most 8192 characters, no NUL");

/// An MCP HTTP server's URL.
pub static MCP_URL: Text = Text::new(
    8,
    2048,
    r"^https?://[^\s/?#@]+(/[^\s]*)?$",
    "an `http://` or `https://` URL (at most 2048 characters, no spaces or credentials)",
);

/// An HTTP header's name.
pub static HEADER_NAME: Text = Text::new(
    1,
    256,
    r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
    "an HTTP header name (1 to 256 token characters)",
);

/// An HTTP header's value.
pub static HEADER_VALUE: Text = Text::new(
    0,
    8192,
    r"^[^\x00-\x1f\x7f]*$",
    "at most 8192 characters, none of them a control character",
);

/// The most `maxTurns` may be.
pub const MAX_TURNS_LIMIT: u32 = 1000;
/// The most names `tools.allow` or `tools.deny` may hold.
pub const MAX_TOOL_NAMES: usize = 64;
/// The most MCP servers a session may have.
pub const MAX_MCP_SERVERS: usize = 32;
/// The most entries an `env`, an MCP server's `env` or `headers`, or its `args` may hold.
pub const MAX_ENTRIES: usize = 128;
/// The most parts a message's `content` may hold.
pub const MAX_MESSAGE_PARTS: usize = 64;
/// The most characters a message (or one text part) may hold.
pub const MAX_MESSAGE_CHARS: usize = 1_000_000;

/// An event sequence or a list cursor, as text (`Last-Event-ID`, `cursor`): the store's
/// numbers, which fit a signed 64-bit integer.
pub static SEQUENCE: Text = Text::new(1, 18, r"^[0-9]+$", "1 to 18 digits");

/// A request body with constraints beyond its type.
pub trait Constrained {
    /// Its constrained text fields: JSON name, constraints, value (`None` when absent).
    fn texts(&self) -> Vec<(&'static str, &'static Text, Option<&str>)> {
        Vec::new()
    }

    /// What must hold between its fields, as JSON Schema keywords to add to its own
    /// (`if`, `then`, `else`).
    fn relations() -> Option<Value>
    where
        Self: Sized,
    {
        None
    }

    /// Whether the fields break what [`Constrained::relations`] states.
    fn broken_relation(&self) -> Option<String> {
        None
    }

    /// The first constraint the body breaks, if any.
    fn violation(&self) -> Option<String> {
        self.texts()
            .into_iter()
            .find_map(|(field, text, value)| text.check(field, value?).err())
            .or_else(|| self.broken_relation())
    }
}

impl Constrained for CreateSessionRequest {
    fn texts(&self) -> Vec<(&'static str, &'static Text, Option<&str>)> {
        vec![
            ("agentMode", &NAME, self.agent_mode.as_deref()),
            ("model", &MODEL, self.model.as_deref()),
            ("variant", &NAME, self.variant.as_deref()),
            ("token", &TOKEN, self.token.as_deref()),
            (
                "agentVersion",
                &AGENT_VERSION,
                self.agent_version.as_deref(),
            ),
            ("cwd", &CWD, self.cwd.as_deref()),
            (
                "systemPrompt",
                &SYSTEM_PROMPT,
                self.system_prompt.as_deref(),
            ),
        ]
    }

    fn violation(&self) -> Option<String> {
        self.texts()
            .into_iter()
            .find_map(|(field, text, value)| text.check(field, value?).err())
            .or_else(|| self.broken_relation())
            .or_else(|| policy_violation(self))
            .or_else(|| host_tools_violation(self))
            .or_else(|| session_webhook_violation(self.webhook.as_ref()))
    }

    fn relations() -> Option<Value> {
        // `bypass` needs `dangerouslySkipPermissions: true`, which means `bypass`: with any
        // other mode it is a contradiction.
        let others: Vec<PermissionMode> = PermissionMode::ALL
            .into_iter()
            .filter(|&mode| mode != PermissionMode::Bypass)
            .collect();
        Some(json!({
            "if": {"properties": {"permissionMode": {"const": "bypass"}}, "required": ["permissionMode"]},
            "then": {"properties": {"dangerouslySkipPermissions": {"const": true}}, "required": ["dangerouslySkipPermissions"]},
            "else": {"not": {
                "properties": {"dangerouslySkipPermissions": {"const": true}, "permissionMode": {"enum": others}},
                "required": ["dangerouslySkipPermissions", "permissionMode"],
            }},
        }))
    }

    fn broken_relation(&self) -> Option<String> {
        let skip = self.dangerously_skip_permissions == Some(true);
        match self.permission_mode {
            Some(PermissionMode::Bypass) if !skip => {
                Some("`permissionMode: bypass` needs `dangerouslySkipPermissions: true`".into())
            }
            Some(mode) if skip && mode != PermissionMode::Bypass => Some(format!(
                "`dangerouslySkipPermissions: true` conflicts with `permissionMode: {}`",
                serde_json::to_value(mode).expect("serializes")
            )),
            _ => None,
        }
    }
}

impl Constrained for SendMessageRequest {
    fn broken_relation(&self) -> Option<String> {
        let parts = match (&self.message, &self.content) {
            (Some(_), Some(_)) => return Some("give `message` or `content`, not both".into()),
            (None, None) => return Some("`message` or `content` is required".into()),
            (Some(text), None) => {
                return (text.chars().count() > MAX_MESSAGE_CHARS)
                    .then(|| format!("`message` may hold at most {MAX_MESSAGE_CHARS} characters"));
            }
            (None, Some(parts)) => parts,
        };
        parts_violation("content", parts, 1)
    }
}

/// The first thing wrong with message parts (a message's `content`, a tool's `output`):
/// `min` to [`MAX_MESSAGE_PARTS`] parts, text within [`MAX_MESSAGE_CHARS`], images of a
/// known type given by `data` or `path`.
fn parts_violation(field: &str, parts: &[MessagePart], min: usize) -> Option<String> {
    if parts.len() < min || parts.len() > MAX_MESSAGE_PARTS {
        return Some(format!(
            "`{field}` must hold {min} to {MAX_MESSAGE_PARTS} parts"
        ));
    }
    parts.iter().enumerate().find_map(|(i, part)| match part {
        MessagePart::Text { text } => (text.chars().count() > MAX_MESSAGE_CHARS).then(|| {
            format!("`{field}[{i}].text` may hold at most {MAX_MESSAGE_CHARS} characters")
        }),
        MessagePart::Image {
            media_type,
            data,
            path,
        } => {
            if !IMAGE_TYPES.contains(&media_type.as_str()) {
                Some(format!(
                    "`{field}[{i}].mediaType` must be one of {}",
                    IMAGE_TYPES.join(", ")
                ))
            } else if data.is_some() == path.is_some() {
                Some(format!("`{field}[{i}]` needs `data` or `path`, not both"))
            } else if path
                .as_deref()
                .is_some_and(|p| p.is_empty() || p.contains('\0'))
            {
                Some(format!(
                    "`{field}[{i}].path` must be a non-empty path without NUL"
                ))
            } else {
                None
            }
        }
    })
}
impl Constrained for PermissionReplyRequest {}
impl Constrained for QuestionReplyRequest {}
impl Constrained for QuestionRejectRequest {}
impl Constrained for crate::HandoverRequest {}

impl Constrained for crate::ProcessRequest {
    fn texts(&self) -> Vec<(&'static str, &'static Text, Option<&str>)> {
        vec![
            ("command", &COMMAND, Some(self.command.as_str())),
            ("cwd", &WORKSPACE_PATH, self.cwd.as_deref()),
        ]
    }

    fn broken_relation(&self) -> Option<String> {
        if let Some(arg) = self.args.iter().find(|a| a.contains('\0')) {
            return Some(format!("`args`: `{}` holds a NUL byte", arg.escape_debug()));
        }
        policy::check_env("env", &self.env)
    }
}

impl Constrained for crate::PutCredentialRequest {
    fn texts(&self) -> Vec<(&'static str, &'static Text, Option<&str>)> {
        vec![
            ("token", &TOKEN, self.token.as_deref()),
            ("source", &CREDENTIAL_SOURCE, self.source.as_deref()),
        ]
    }

    fn relations() -> Option<Value> {
        // A `null` field is an absent one.
        let given = |field: &str, kind: &str| json!({"properties": {field: {"type": kind}}, "required": [field]});
        let one = |field: &str, kind: &str, other: &str, other_kind: &str| {
            let mut schema = given(field, kind);
            schema["not"] = given(other, other_kind);
            schema
        };
        Some(json!({"oneOf": [
            one("login", "object", "token", "string"),
            one("token", "string", "login", "object"),
        ]}))
    }

    fn broken_relation(&self) -> Option<String> {
        match (&self.login, &self.token) {
            (Some(_), None) | (None, Some(_)) => None,
            _ => Some("give exactly one of `login` (the agent's login file) and `token`".into()),
        }
    }
}

/// Where a stored login came from (a path, a variable's name).
pub static CREDENTIAL_SOURCE: Text = Text::new(
    1,
    4096,
    r"^[^\x00-\x1f\x7f]+$",
    "1 to 4096 characters, none of them a control character",
);

impl Constrained for InstallRequest {
    fn texts(&self) -> Vec<(&'static str, &'static Text, Option<&str>)> {
        vec![("version", &AGENT_VERSION, self.version.as_deref())]
    }
}

/// Completes the schemas of the request bodies in `schemas` (OpenAPI's
/// `components/schemas` or JSON Schema's `$defs`) with their constraints, and names the
/// agents `agent` may be.
///
/// # Panics
///
/// When a constrained body or field is missing from `schemas`: the document would then
/// not state a constraint the daemon checks.
pub fn describe(schemas: &mut Map<String, Value>) {
    describe_one::<CreateSessionRequest>(schemas, "CreateSessionRequest");
    describe_one::<InstallRequest>(schemas, "InstallRequest");
    describe_one::<crate::PutCredentialRequest>(schemas, "PutCredentialRequest");
    describe_one::<crate::ProcessRequest>(schemas, "ProcessRequest");
    let process = &mut schemas["ProcessRequest"]["properties"];
    process["env"]["maxProperties"] = json!(MAX_ENTRIES);
    process["env"]["propertyNames"] = ENV_NAME.schema();
    process["env"]["additionalProperties"] = ENV_VALUE.schema();
    process["args"]["items"]["pattern"] = json!(r"^[^\x00]*$");
    describe_policy(schemas);
    describe_host_tools(schemas);
    describe_webhooks(schemas);
    let agents: Vec<&str> = AgentId::ALL.iter().map(|a| a.as_str()).collect();
    schemas["CreateSessionRequest"]["properties"]["agent"]["enum"] = json!(agents);
}

fn describe_one<T: Constrained + Default>(schemas: &mut Map<String, Value>, name: &str) {
    let schema = schemas
        .get_mut(name)
        .unwrap_or_else(|| panic!("no schema {name}"));
    for (field, text, _) in T::default().texts() {
        let property = schema
            .pointer_mut(&format!("/properties/{field}"))
            .unwrap_or_else(|| panic!("no property {name}.{field}"));
        text.describe(property);
    }
    if let Some(Value::Object(relations)) = T::relations() {
        for (keyword, value) in relations {
            schema[keyword] = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_match_what_their_constraints_say() {
        assert!(NAME.matches("build") && NAME.matches("ünïcode mode"));
        assert!(!NAME.matches("") && !NAME.matches("a\nb") && !NAME.matches("tab\t"));
        assert!(!NAME.matches(&"x".repeat(129)) && NAME.matches(&"é".repeat(128)));
        assert!(TOKEN.matches("") && TOKEN.matches("sk-ant-api03-x"));
        assert!(!TOKEN.matches("key\r\nX-Injected: 1"));
        for version in ["pinned", "latest", "2.1.330", "0.0.1-g7+b.1"] {
            assert!(AGENT_VERSION.matches(version), "{version}");
        }
        for version in ["", "../x", ".1", "1 2", "1\n"] {
            assert!(!AGENT_VERSION.matches(version), "{version:?}");
        }
        assert!(SESSION_ID.matches("s-1.a_b") && SESSION_ID.matches(&"x".repeat(128)));
        for id in ["", ".hidden", "a/b", "é", &"x".repeat(129)] {
            assert!(!SESSION_ID.matches(id), "{id}");
        }
        assert!(SEQUENCE.matches("0") && SEQUENCE.matches(&"9".repeat(18)));
        assert!(
            !SEQUENCE.matches("-1")
                && !SEQUENCE.matches("+1")
                && !SEQUENCE.matches(&"9".repeat(19))
        );
        assert!(CWD.matches("/work") && CWD.matches("/a\nb"));
        assert!(!CWD.matches("work") && !CWD.matches("/a\0b"));
    }

    #[test]
    fn a_body_breaks_its_first_constraint() {
        let request =
            |json: Value| -> CreateSessionRequest { serde_json::from_value(json).unwrap() };
        assert_eq!(request(json!({"agent": "mock"})).violation(), None);
        let empty_mode = request(json!({"agent": "mock", "agentMode": ""}));
        assert!(empty_mode.violation().unwrap().contains("`agentMode`"));
        let secret = request(json!({"agent": "mock", "token": "s3cret\n"}));
        let message = secret.violation().unwrap();
        assert!(message.contains("`token`") && !message.contains("s3cret"));
        let relative = request(json!({"agent": "mock", "cwd": "work"}));
        assert!(relative.violation().unwrap().contains("`cwd`"));
        let bypass = request(json!({"agent": "mock", "permissionMode": "bypass"}));
        assert!(
            bypass
                .violation()
                .unwrap()
                .contains("dangerouslySkipPermissions")
        );
        let conflict = request(
            json!({"agent": "mock", "permissionMode": "plan", "dangerouslySkipPermissions": true}),
        );
        assert!(conflict.violation().unwrap().contains("conflicts"));
        for fine in [
            json!({"agent": "mock", "permissionMode": "bypass", "dangerouslySkipPermissions": true}),
            json!({"agent": "mock", "dangerouslySkipPermissions": true}),
            json!({"agent": "mock", "permissionMode": "plan", "dangerouslySkipPermissions": false}),
            json!({"agent": "mock", "token": "", "agentVersion": "latest", "cwd": "/tmp"}),
        ] {
            assert_eq!(request(fine.clone()).violation(), None, "{fine}");
        }
        let install = InstallRequest {
            version: Some("../x".into()),
            reinstall: false,
        };
        assert!(install.violation().unwrap().contains("`version`"));
    }
}
