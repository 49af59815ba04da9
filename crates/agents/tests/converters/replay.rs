//! Replaying a fixture through an agent's protocol, in the words of the one contract
//! (`sandbox_agents::kernel::Protocol`), the way the session runners drive it: a line
//! sent to the agent is read back as the command that produced it (`begin_turn`,
//! `cancel`, a reply) and the protocol must produce that same line; a line received is an
//! answer to one of the daemon's own requests or goes through `convert`; a process exit
//! ends the turn it ran, as the per-turn runner does. Only what a native line means is the
//! agent's ([`Fixture`]); the replay is the same for every agent.

use std::collections::HashMap;
use std::path::Path;

use sandbox_agents::kernel::{Gone, Protocol};
use sandbox_agents::process::ExitInfo;
use sandbox_agents::{AgentEvent, CollectingSink, QuestionAnswer};
use sandbox_universal::{EventPayload, PermissionReply};
use serde_json::Value;

use crate::kit::{Core, Replay};

/// What a line sent to the agent stands for.
#[derive(Debug)]
pub enum Sent {
    /// A turn with this text; `key` is the native key of the request that carried it, when
    /// the agent answers it (its answer goes to `turn_delivered`).
    Turn {
        /// The user's message.
        text: String,
        /// The request's key, when the turn was a request.
        key: Option<String>,
    },
    /// The client cancelled.
    Cancel,
    /// The client answered the agent's request with this native key.
    Reply {
        /// The request's native key.
        key: String,
        /// The universal answer the line stands for.
        reply: Reply,
    },
    /// One of the daemon's own requests (a handshake step), by key and method.
    Request {
        /// Its key.
        key: String,
        /// Its method.
        method: String,
    },
    /// Nothing the protocol produces (a notification of the handshake, a stray line).
    Nothing,
}

/// A client's universal answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// To a permission.
    Permission(PermissionReply),
    /// To a question.
    Question(QuestionAnswer),
}

/// One agent's fixtures read in the words of the one contract.
pub trait Fixture: Protocol + Sized {
    /// The protocol of a session whose agent worked in `cwd`.
    fn new(cwd: &str) -> Self;

    /// The agent's working directory as the transcript shows it.
    fn cwd(transcript: &[Value]) -> Option<String>;

    /// What a line sent to the agent stands for (`asked`: the agent's requests so far, by
    /// native key).
    fn sent(&mut self, msg: &Value, asked: &HashMap<String, Value>) -> Sent;

    /// The native message a received line holds for this session, if any (an HTTP answer
    /// or another session's event holds none).
    fn received<'a>(&self, msg: &'a Value) -> Option<&'a Value> {
        Some(msg)
    }

    /// The native key of the request the agent asks in `native`.
    fn asked_key(native: &Value) -> String;

    /// When `native` answers one of the daemon's own requests: its key and result.
    fn answer(&mut self, native: &Value) -> Option<(String, Value)>;

    /// The answer to the daemon's own request `method` arrived.
    fn answered(&mut self, method: &str, answer: &Value) {
        let _ = (method, answer);
    }

    /// Checks that what the protocol sends is the recorded line.
    fn assert_same(ours: &Self::Out, recorded: &Value);
}

/// Replays the fixture at `path` through `F`.
pub fn replay<F: Fixture>(path: &Path) -> Replay {
    let lines = read(path);
    let mut session = Session::<F>::new(&lines);
    for line in &lines {
        session.line(line);
    }
    Replay {
        name: path.file_stem().unwrap().to_string_lossy().into(),
        events: session.collected.events(),
        turns: session.turns,
        replies: session.resolved.len(),
        resolved: session.resolved,
    }
}

/// The fixture's lines.
pub fn read(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path:?}: {e}: {l}")))
        .collect()
}

/// The protocol of a fixture of `agent` up to its first question, and that question's id.
pub fn first_question<F: Fixture>(agent: &str, name: &str) -> (F, String) {
    let lines = read(&crate::kit::fixture(agent, name));
    let mut session = Session::<F>::new(&lines);
    for line in lines {
        let before = session.collected.events().len();
        session.line(&line);
        let question = session.collected.events()[before..]
            .iter()
            .find_map(|e| match &e.payload {
                EventPayload::QuestionAsked(q) => Some(q.question_id.clone()),
                _ => None,
            });
        if let Some(id) = question {
            return (session.protocol, id);
        }
    }
    panic!("{agent}/{name} asks no question")
}

/// A replay in progress.
struct Session<F> {
    protocol: F,
    collected: std::sync::Arc<CollectingSink>,
    sink: sandbox_agents::EventSink,
    core: Core,
    turns: usize,
    resolved: Vec<String>,
    /// The agent's requests by native key.
    asked: HashMap<String, Value>,
    /// Their universal ids, by native key.
    universal: HashMap<String, String>,
    /// The daemon's own requests awaiting their answer: key → method.
    requests: HashMap<String, String>,
    /// The key of the request that carries the running turn, until it is answered.
    turn_request: Option<String>,
}

impl<F: Fixture> Session<F> {
    /// A replay of `lines`, in the agent's working directory as they show it.
    fn new(lines: &[Value]) -> Self {
        let msgs: Vec<Value> = lines.iter().map(|l| l["msg"].clone()).collect();
        let cwd = F::cwd(&msgs).unwrap_or_else(|| "/work".into());
        let (collected, sink) = CollectingSink::new();
        Self {
            protocol: F::new(&cwd),
            collected,
            sink,
            core: Core::default(),
            turns: 0,
            resolved: Vec::new(),
            asked: HashMap::new(),
            universal: HashMap::new(),
            requests: HashMap::new(),
            turn_request: None,
        }
    }

    fn line(&mut self, line: &Value) {
        let msg = &line["msg"];
        match line["dir"].as_str() {
            Some("in") => self.sent(msg),
            Some("exit") => self.exited(msg),
            _ => self.received(msg),
        }
    }

    fn emit(&mut self, events: Vec<AgentEvent>) {
        for event in events {
            self.sink.emit_all(self.core.before(&event));
            self.sink.emit(event);
        }
    }

    fn sent(&mut self, msg: &Value) {
        let ours = match self.protocol.sent(msg, &self.asked) {
            Sent::Turn { text, key } => {
                self.turns += 1;
                let ours = self
                    .protocol
                    .begin_turn(&format!("turn_{}", self.turns), &text.clone().into());
                match key {
                    Some(key) => self.turn_request = Some(key),
                    None => self.protocol.turn_delivered(None),
                }
                ours
            }
            Sent::Cancel => self.protocol.cancel(),
            Sent::Reply { key, reply } => {
                self.asked.remove(&key);
                let universal = self
                    .universal
                    .remove(&key)
                    .unwrap_or_else(|| panic!("a reply to `{key}`, which was not asked: {msg}"));
                let ours = match reply {
                    Reply::Permission(reply) => self.protocol.reply_permission(&universal, reply),
                    Reply::Question(answer) => self.protocol.reply_question(&universal, answer),
                }
                .unwrap_or_else(|e| panic!("replying to {universal}: {e:?}"));
                self.core.answered(Some(&universal));
                self.resolved.push(universal);
                ours
            }
            Sent::Request { key, method } => {
                self.requests.insert(key, method);
                return;
            }
            Sent::Nothing => return,
        };
        let first = ours
            .first()
            .unwrap_or_else(|| panic!("the protocol sends nothing for {msg}"));
        F::assert_same(first, msg);
    }

    fn received(&mut self, msg: &Value) {
        let Some(native) = self.protocol.received(msg).cloned() else {
            return;
        };
        if let Some((key, answer)) = self.protocol.answer(&native) {
            if self.turn_request.as_deref() == Some(key.as_str()) {
                self.turn_request = None;
                self.protocol.turn_delivered(Some(&answer));
            } else if let Some(method) = self.requests.remove(&key) {
                self.protocol.answered(&method, &answer);
            }
            return;
        }
        let converted = self.protocol.convert(&native, &self.sink);
        assert!(
            converted.replies.is_empty(),
            "the protocol answered {native} by itself"
        );
        for event in &converted.events {
            let universal = match &event.payload {
                EventPayload::PermissionAsked(p) => &p.permission_id,
                EventPayload::QuestionAsked(q) => &q.question_id,
                _ => continue,
            };
            let key = F::asked_key(&native);
            self.universal.insert(key.clone(), universal.clone());
            self.asked.insert(key, native.clone());
        }
        self.emit(converted.events);
    }

    /// A process ended: it ends the turn it ran, if that turn is still running (the
    /// per-turn runner's rule); after its turn ended it is no news.
    fn exited(&mut self, exit: &Value) {
        if self.protocol.current_turn().is_none() {
            return;
        }
        let code = |key: &str| exit[key].as_i64().map(|n| i32::try_from(n).unwrap());
        let exit = ExitInfo {
            code: code("code"),
            signal: code("signal"),
            stderr_tail: exit["stderr_tail"].as_str().unwrap_or_default().into(),
        };
        let events = self.protocol.gone(&Gone {
            why: exit.describe(),
            exit,
        });
        self.emit(events);
    }
}
