//! The agent a run of the table is about, and everything the table must know about it
//! that differs between agents: how the daemon is configured for it, what runs when it is
//! asked to act (the real pinned CLI, the in-process mock, Amp's stand-in), how a prompt
//! asks for a behaviour, and where its processes are.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sandbox_agents::ProviderEnv;
use sandbox_agents::context::display_name;
use sandbox_agents::mock;
use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::logins;
use sandbox_testkit::provider::script::{
    REFUSAL_MESSAGE, REPLY_TEXT, THINKING_TEXT, TOOL_OUTPUT_FILE, WRITTEN_CONTENT, WRITTEN_FILE,
};
use sandbox_testkit::provider::{Effect, FakeProvider, RecordedRequest, Script, ToolTemplate};
use sandbox_universal::AgentId;
use serde_json::json;

use crate::common::Options;

/// The Anthropic key the daemon is given; the provider refuses any other but
/// [`OPENAI_KEY`] and [`SESSION_TOKEN`].
pub const KEY: &str = "sk-ant-scenarios-4f1c";
/// The OpenAI key the daemon is given: it must reach only the agents that speak OpenAI.
pub const OPENAI_KEY: &str = "sk-openai-scenarios-77d0";
/// Sessions' own `token`s (keys the provider accepts too): a session with a token of its
/// own gets OpenCode servers of its own, so killing them touches no other scenario.
pub const SESSION_TOKEN: &str = "sk-ant-scenarios-token-9a2e";
/// A second session token (see [`SESSION_TOKEN`]).
pub const SESSION_TOKEN_2: &str = "sk-ant-scenarios-token-b3f8";
/// A third session token (see [`SESSION_TOKEN`]).
pub const SESSION_TOKEN_3: &str = "sk-ant-scenarios-token-c51d";
/// A prompt keyword that makes the fake model run [`PYTHON_COMMAND`].
pub const USE_PYTHON: &str = "USE_PYTHON";
/// A command that is not a file edit.
pub const PYTHON_COMMAND: &str = "python3 -c \"print('fake-python-ran')\"";
/// A key the provider refuses (for `validateToken`).
pub const BAD_TOKEN: &str = "sk-ant-bad-key-for-scenarios";
/// The daemon's own token: it must reach no agent.
pub const DAEMON_TOKEN: &str = "daemon-token-must-not-leak";

/// Every key the provider accepts, in order ([`RecordedRequest::key`] is an index into
/// it): the daemon's, the sessions' tokens, and the stored logins' tokens (an expired one
/// is not among them: the agent must refresh it first).
pub fn accepted_keys() -> Vec<String> {
    [
        KEY,
        OPENAI_KEY,
        SESSION_TOKEN,
        SESSION_TOKEN_2,
        SESSION_TOKEN_3,
    ]
    .map(str::to_string)
    .into_iter()
    .chain([
        logins::CLAUDE_ACCESS.to_string(),
        logins::PROVIDER_LOGIN_KEY.to_string(),
        logins::refreshed_access(),
    ])
    .collect()
}

/// What stands behind the agent in this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// The real pinned CLI, offline against the test kit's fake provider.
    RealCli,
    /// The daemon's built-in mock agent (no process, no provider).
    Mock,
    /// Amp's stand-in (`crates/testkit/standins/amp`): Amp's agent loop runs on Amp's
    /// servers, so the real binary cannot finish a turn offline.
    StandIn,
}

/// A behaviour a prompt asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// A plain reply.
    Text,
    /// Reasoning, then the reply.
    Think,
    /// A shell command that writes and prints a marker file.
    Shell,
    /// A new file written with the agent's file tool.
    Write,
    /// A command that edits no file (`python3`).
    Python,
    /// Two questions, the second multi-select.
    Question,
    /// A slow streamed reply (to be cancelled).
    Slow,
    /// The provider refuses the request (HTTP 400 in its own error shape).
    Refuse,
    /// The provider fails once (529 / 503), then answers.
    Flaky,
    /// A plan submitted for approval.
    Plan,
}

/// The agent under test and what the table needs to drive it.
pub struct Subject {
    /// The agent.
    pub agent: AgentId,
    /// What runs behind it.
    pub runs: Runs,
    /// The agent's executable, when a process runs.
    pub binary: Option<PathBuf>,
    /// The fake model provider, when the agent calls one.
    pub provider: Option<FakeProvider>,
    /// The model every session asks for, when the default is not what the table drives.
    pub model: Option<&'static str>,
    /// Whether a provider retry shows in the agent's own stream (as a `status` item).
    pub retry_visible: bool,
    /// The daemon's settings for this agent.
    pub options: Options,
}

impl Subject {
    /// The subject for `agent`; `None` (after a loud skip) when its binary is missing.
    pub async fn new(agent: AgentId) -> Option<Self> {
        Self::with_rules(agent, |script| script).await
    }

    /// The subject for `agent` whose fake provider also follows the rules `rules` adds to
    /// the table's script (for a test of one agent).
    pub async fn with_rules(agent: AgentId, rules: impl FnOnce(Script) -> Script) -> Option<Self> {
        let (runs, binary) = match agent {
            AgentId::Mock => (Runs::Mock, None),
            AgentId::Amp => (
                Runs::StandIn,
                Some(sandbox_testkit::standins::amp_standin()),
            ),
            real => (Runs::RealCli, Some(agents::require(testkit_agent(real))?)),
        };
        let provider = match runs {
            Runs::RealCli => Some(
                FakeProvider::builder()
                    .script(rules(Script::default()).with_rule(
                        USE_PYTHON,
                        Effect::CallTool(
                            ["Bash", "bash"]
                                .map(|name| {
                                    ToolTemplate::json(
                                        name,
                                        json!({"command": PYTHON_COMMAND, "description": "Print a line"}),
                                    )
                                })
                                .into_iter()
                                .chain([ToolTemplate::json(
                                    "exec_command",
                                    json!({"cmd": PYTHON_COMMAND}),
                                )])
                                .collect(),
                        ),
                    ))
                    .require_api_keys(&accepted_keys())
                    .start()
                    .await
                    .expect("the fake provider starts"),
            ),
            _ => None,
        };
        let mut env = ProviderEnv::default();
        if let Some(provider) = &provider {
            let base = provider.base_url();
            env = env
                .with("ANTHROPIC_API_KEY", KEY)
                .with("ANTHROPIC_BASE_URL", &base)
                .with("OPENAI_API_KEY", OPENAI_KEY)
                .with("OPENAI_BASE_URL", format!("{base}/v1"));
        }
        if agent == AgentId::Amp {
            // The stand-in never connects; the URL proves the daemon passes it on.
            env = env
                .with("AMP_API_KEY", KEY)
                .with("AMP_URL", "http://127.0.0.1:9");
        }
        let options = Options {
            token: Some(DAEMON_TOKEN.into()),
            provider_env: env,
            agent_paths: binary
                .iter()
                .map(|b| (agent, b.clone()))
                .collect::<HashMap<_, _>>(),
            event_timeout: Duration::from_secs(90),
            ..Options::default()
        };
        Some(Self {
            agent,
            runs,
            binary,
            provider,
            // Every agent runs on the model its users get by default (Codex's default model
            // gets its tools through code mode, which the fake provider answers).
            model: None,
            // Codex and Pi retry an HTTP failure inside their provider client, silently.
            retry_visible: matches!(agent, AgentId::Claude | AgentId::Opencode),
            options,
        })
    }

    /// How the table names what ran: `the real Claude Code 2.1.330`, `the mock`, ...
    pub fn ran_with(&self) -> String {
        match self.runs {
            Runs::RealCli => {
                let agent = testkit_agent(self.agent);
                format!(
                    "the real {} {}, offline against the test kit's provider",
                    display_name(self.agent),
                    agent.version()
                )
            }
            Runs::Mock => "the built-in mock agent".into(),
            Runs::StandIn => format!(
                "a stand-in replaying {}'s documented stream (its agent loop needs its servers)",
                display_name(self.agent)
            ),
        }
    }

    /// The prompt that asks this agent for `ask`; `tag` keeps prompts of scenarios apart.
    pub fn prompt(&self, ask: Ask, tag: &str) -> String {
        let keyword = match (self.runs, ask) {
            (_, Ask::Text) => "say hi",
            (Runs::Mock, Ask::Think) => "think",
            (Runs::Mock, Ask::Shell) => "run a command with permission",
            (Runs::Mock, Ask::Write) => "write a file",
            (Runs::Mock, Ask::Python) => "run a command with permission",
            (Runs::StandIn, Ask::Python) => "USE_TOOL",
            (Runs::Mock, Ask::Question) => "ask a question",
            (Runs::Mock, Ask::Slow) => "slow",
            (Runs::StandIn, Ask::Refuse) => "FAIL",
            (_, Ask::Think) => "THINK",
            (_, Ask::Shell) => "USE_TOOL",
            (_, Ask::Write) => "USE_WRITE",
            (_, Ask::Python) => USE_PYTHON,
            (_, Ask::Question) => "ASK_QUESTION",
            (_, Ask::Slow) => "SLOW",
            (_, Ask::Refuse) => "REFUSE",
            (_, Ask::Flaky) => "FLAKY",
            (_, Ask::Plan) => "EXIT_PLAN",
        };
        format!("{keyword} ({tag})")
    }

    /// Whether `text` is the agent's plain reply to `message`.
    pub fn is_reply(&self, text: &str, message: &str) -> bool {
        match self.runs {
            Runs::RealCli => text == REPLY_TEXT,
            Runs::Mock => text == format!("echo: {message}"),
            Runs::StandIn => text.starts_with("hello from stand-in amp"),
        }
    }

    /// The reasoning text a `THINK` prompt streams.
    pub fn thinking(&self) -> &'static str {
        THINKING_TEXT
    }

    /// The file a shell prompt's command writes, where commands really run.
    pub fn marker(&self) -> Option<&'static str> {
        (self.runs != Runs::Mock).then_some(TOOL_OUTPUT_FILE)
    }

    /// The file a write prompt writes, and its content.
    pub fn written(&self) -> (&'static str, &'static str) {
        match self.runs {
            Runs::Mock => (mock::WRITTEN_FILE, mock::WRITTEN_CONTENT),
            _ => (WRITTEN_FILE, WRITTEN_CONTENT),
        }
    }

    /// The provider's message when it refuses a request.
    pub fn refusal(&self) -> &'static str {
        match self.runs {
            Runs::StandIn => "Out of credits (stand-in)",
            _ => REFUSAL_MESSAGE,
        }
    }

    /// The model calls whose body contains `text` (none without a provider).
    pub fn calls_with(&self, text: &str) -> Vec<RecordedRequest> {
        self.provider
            .as_ref()
            .map(|p| {
                p.model_requests()
                    .into_iter()
                    .filter(|r| r.body.to_string().contains(text))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the agent remembered `earlier` when asked `later`: the model call for
    /// `later` carries it (the stand-in keeps its thread's prompts in its HOME).
    pub fn remembers(&self, data_dir: &Path, later: &str, earlier: &str) -> bool {
        match self.runs {
            Runs::RealCli => self
                .calls_with(later)
                .iter()
                .any(|call| call.body.to_string().contains(earlier)),
            Runs::StandIn => files_under(data_dir)
                .iter()
                .filter(|f| f.to_string_lossy().contains("amp-standin/threads"))
                .filter_map(|f| std::fs::read_to_string(f).ok())
                .any(|thread| thread.contains(later) && thread.contains(earlier)),
            Runs::Mock => false,
        }
    }

    /// The agent's live processes serving the session that works in `cwd`: the binary (or
    /// the interpreter running it) whose working directory is `cwd`; for OpenCode, the
    /// servers of the session's `token` (every server without one).
    pub fn processes(&self, cwd: &Path, data_dir: &Path, token: Option<&str>) -> Vec<i32> {
        let Some(binary) = &self.binary else {
            return Vec::new();
        };
        let binary = binary.canonicalize().unwrap_or_else(|_| binary.clone());
        let opencode_root = match token {
            // A server's HOME holds its keys: the directory whose files hold the token.
            Some(token) => std::fs::read_dir(data_dir.join("opencode"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .find(|dir| {
                    files_under(dir)
                        .iter()
                        .any(|f| std::fs::read_to_string(f).is_ok_and(|text| text.contains(token)))
                })
                .unwrap_or_else(|| data_dir.join("opencode/no-server-for-the-token")),
            None => data_dir.join("opencode"),
        };
        proc_entries()
            .filter(|(_, exe, dir)| match self.agent {
                // A session's own server (MCP servers, env, a replaced prompt) lives in
                // the session's directory (a table session's cwd is `work/<its id>`).
                AgentId::Opencode => {
                    *exe == binary
                        && (dir.starts_with(&opencode_root)
                            || (token.is_none()
                                && cwd.file_name().is_some_and(|id| {
                                    dir.starts_with(
                                        data_dir.join("sessions").join(id).join("agent"),
                                    )
                                })))
                }
                _ => {
                    dir == cwd
                        && (*exe == binary
                            || exe
                                .file_name()
                                .is_some_and(|n| n.to_string_lossy().starts_with("node"))
                            || exe
                                .file_name()
                                .is_some_and(|n| n.to_string_lossy().starts_with("python")))
                }
            })
            .map(|(pid, ..)| pid)
            .collect()
    }
}

/// The environment a process was started with (`NAME=value` entries).
pub fn environ(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .map(|entry| String::from_utf8_lossy(entry).into_owned())
        .collect()
}

/// `(pid, exe, cwd)` of this user's processes.
fn proc_entries() -> impl Iterator<Item = (i32, PathBuf, PathBuf)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
            let dir = std::fs::read_link(entry.path().join("cwd")).ok()?;
            Some((pid, exe, dir))
        })
}

/// Every file under `dir`.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => files.push(path),
                _ => {}
            }
        }
    }
    files
}

/// The test kit's name for a real agent.
pub fn testkit_agent(agent: AgentId) -> Agent {
    match agent {
        AgentId::Claude => Agent::Claude,
        AgentId::Codex => Agent::Codex,
        AgentId::Opencode => Agent::OpenCode,
        AgentId::Pi => Agent::Pi,
        AgentId::Amp => Agent::Amp,
        AgentId::Mock => unreachable!("the mock is not a test kit agent"),
    }
}
