//! The conformance kit every converter is held to.
//!
//! A fixture is a native transcript (`{"dir":"in"|"out","msg":...}` per line) recorded
//! from the real pinned CLI, launched with the daemon's own configuration (`testkit
//! record`); Amp's, which cannot run offline, are written by hand from its documented
//! shapes. An agent that runs one process per turn also has `{"dir":"exit","msg":{"code",
//! "signal","stderr_tail"}}` lines where a process ended. [`replay`] feeds it to the
//! agent's protocol the way the session runners drive it (`replay.rs`; the agent only
//! says what a native line means, its [`Fixture`]), closing what is open when a turn ends
//! as the daemon's core does; [`conform`] then checks the one set of invariants below and compares the full
//! universal payloads with `tests/golden/<agent>/<fixture>.jsonl` (`UPDATE_GOLDEN=1`
//! rewrites them; review the diff).
//!
//! Invariants:
//! - zero `unparsed` items, and every native event keeps its raw JSON;
//! - an item starts once, its deltas arrive while it is open and add up to the
//!   beginning of its final text (text items), and it completes exactly once;
//! - every turn the replay started ends exactly once, with no item left open;
//! - every permission or question the converter asked is answered by a recorded reply,
//!   or is still open when its turn ends other than `completed` (the daemon then
//!   resolves it as cancelled);
//! - the converter never emits `sessionStarted` or `turnStarted` (the daemon does).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use sandbox_agents::AgentEvent;
use sandbox_universal::{EventPayload, ItemKind, StopReason};
use serde_json::json;

pub use crate::replay::{Fixture, Reply, Sent, replay};

/// What the daemon's core keeps open in a replay, to close it the way the core does when
/// a turn ends (`sandbox_universal::lifecycle`): converters report facts and never close
/// what their agent left open.
#[derive(Default)]
pub struct Core {
    items: Vec<sandbox_universal::Item>,
    permissions: Vec<sandbox_universal::PermissionRequest>,
    questions: Vec<sandbox_universal::QuestionRequest>,
}

impl Core {
    /// A recorded reply answered the request `id`.
    pub fn answered(&mut self, id: Option<&str>) {
        let Some(id) = id else { return };
        self.permissions.retain(|p| p.permission_id != id);
        self.questions.retain(|q| q.question_id != id);
    }

    /// Notes `event` and returns what the core logs before it.
    pub fn before(&mut self, event: &AgentEvent) -> Vec<AgentEvent> {
        match &event.payload {
            EventPayload::ItemStarted(e) => self.items.push(e.item.clone()),
            EventPayload::ItemCompleted(e) => self.items.retain(|i| i.item_id != e.item.item_id),
            EventPayload::PermissionAsked(p) => self.permissions.push(p.clone()),
            EventPayload::PermissionResolved(p) => self.answered(Some(&p.permission_id)),
            EventPayload::QuestionAsked(q) => self.questions.push(q.clone()),
            EventPayload::TurnEnded(_) => {
                let closing = sandbox_universal::lifecycle::close_open_work(
                    &std::mem::take(&mut self.items),
                    &std::mem::take(&mut self.permissions),
                    &std::mem::take(&mut self.questions),
                    // Converters never ask host tool calls: the daemon does.
                    &[],
                );
                return closing.into_iter().map(AgentEvent::synthetic).collect();
            }
            _ => {}
        }
        Vec::new()
    }
}

/// A replayed fixture.
pub struct Replay {
    /// The fixture's name.
    pub name: String,
    /// Every universal event, in order.
    pub events: Vec<AgentEvent>,
    /// Turns started.
    pub turns: usize,
    /// Requests answered by a recorded reply.
    pub replies: usize,
    /// Ids of the requests answered by recorded replies.
    pub resolved: Vec<String>,
}

impl Replay {
    /// The `error` events' errors.
    pub fn errors(&self) -> Vec<sandbox_universal::AgentError> {
        self.payloads()
            .filter_map(|p| match p {
                EventPayload::Error(error) => Some(error.clone()),
                _ => None,
            })
            .collect()
    }

    /// The payloads.
    pub fn payloads(&self) -> impl Iterator<Item = &EventPayload> {
        self.events.iter().map(|e| &e.payload)
    }

    /// The completed items of a kind.
    pub fn completed(&self, kind: ItemKind) -> Vec<sandbox_universal::Item> {
        self.payloads()
            .filter_map(|p| match p {
                EventPayload::ItemCompleted(e) if e.item.kind == kind => Some(e.item.clone()),
                _ => None,
            })
            .collect()
    }

    /// Every permission request, in order.
    pub fn permissions(&self) -> Vec<sandbox_universal::PermissionRequest> {
        self.payloads()
            .filter_map(|p| match p {
                EventPayload::PermissionAsked(p) => Some(p.clone()),
                _ => None,
            })
            .collect()
    }

    /// Every question request, in order.
    pub fn questions(&self) -> Vec<sandbox_universal::QuestionRequest> {
        self.payloads()
            .filter_map(|p| match p {
                EventPayload::QuestionAsked(q) => Some(q.clone()),
                _ => None,
            })
            .collect()
    }

    /// Each turn's stop reason.
    pub fn stop_reasons(&self) -> Vec<StopReason> {
        self.payloads()
            .filter_map(|p| match p {
                EventPayload::TurnEnded(t) => Some(t.stop_reason),
                _ => None,
            })
            .collect()
    }

    /// The usage of the first turn that reports one.
    pub fn usage(&self) -> Option<sandbox_universal::Usage> {
        self.payloads().find_map(|p| match p {
            EventPayload::TurnEnded(t) => t.usage.clone(),
            _ => None,
        })
    }
}

/// The test kit's recordings of one agent (`fixtures/<agent>/` at the repository root).
pub fn testkit_fixtures(agent: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../fixtures/{agent}"))
}

/// The adapter's own recordings of one agent (`tests/fixtures/<agent>/`).
pub fn adapter_fixtures(agent: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/{agent}"))
}

/// Every `*.jsonl` fixture of `agent`, test kit's and adapter's, sorted by name.
pub fn fixtures(agent: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = [testkit_fixtures(agent), adapter_fixtures(agent)]
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    paths
}

/// The fixture `name` of `agent` (test kit's first, then the adapter's).
pub fn fixture(agent: &str, name: &str) -> PathBuf {
    let file = format!("{name}.jsonl");
    let path = testkit_fixtures(agent).join(&file);
    if path.exists() {
        path
    } else {
        adapter_fixtures(agent).join(file)
    }
}

/// Replays a fixture, checks the invariants and compares it with its golden file.
pub fn conform<F: Fixture>(agent: &str, path: &Path) -> Replay {
    let replay = replay::<F>(path);
    check_invariants(&replay);
    check_golden(agent, &replay);
    replay
}

/// Every fixture of `agent` conforms; returns them by name.
pub fn conform_all<F: Fixture>(agent: &str) -> HashMap<String, Replay> {
    let replays: HashMap<String, Replay> = fixtures(agent)
        .iter()
        .map(|path| {
            let replay = conform::<F>(agent, path);
            (replay.name.clone(), replay)
        })
        .collect();
    assert!(!replays.is_empty(), "no fixtures for {agent}");
    replays
}

/// The full payloads, one JSON object per line with its keys in name order (`"synthetic":
/// true` when it has no native counterpart).
pub fn render(events: &[AgentEvent]) -> String {
    events
        .iter()
        .map(|e| {
            let mut value = serde_json::to_value(&e.payload).unwrap();
            if e.synthetic {
                value["synthetic"] = json!(true);
            }
            sandbox_universal::canonical::sort_keys(&mut value);
            format!("{value}\n")
        })
        .collect()
}

fn check_golden(agent: &str, replay: &Replay) {
    let rendered = render(&replay.events);
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/golden/{agent}/{}.jsonl", replay.name));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &rendered).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path:?}: {e} (run with UPDATE_GOLDEN=1 and review)"));
    if rendered != expected {
        let first = rendered
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(rendered.lines().count().min(expected.lines().count()));
        panic!(
            "{agent}/{}: events differ from {path:?} at line {}:\n got: {}\nwant: {}",
            replay.name,
            first + 1,
            rendered.lines().nth(first).unwrap_or("<end>"),
            expected.lines().nth(first).unwrap_or("<end>"),
        );
    }
}

/// The one set of lifecycle invariants (see the module docs).
pub fn check_invariants(replay: &Replay) {
    let name = &replay.name;
    let mut open: HashMap<String, String> = HashMap::new();
    let mut done = HashSet::new();
    let mut asked: Vec<String> = Vec::new();
    let resolved: HashSet<&String> = replay.resolved.iter().collect();
    let mut ended = 0;
    for event in &replay.events {
        if !event.synthetic {
            assert!(
                event.raw.is_some(),
                "{name}: a native event without raw JSON"
            );
        }
        match &event.payload {
            EventPayload::ItemStarted(e) => {
                assert_ne!(e.item.kind, ItemKind::Unparsed, "{name}: unparsed {e:?}");
                let id = e.item.item_id.clone();
                assert!(
                    !done.contains(&id),
                    "{name}: {id} started after it completed"
                );
                assert!(
                    open.insert(id.clone(), String::new()).is_none(),
                    "{name}: {id} started twice"
                );
            }
            EventPayload::ItemDelta(d) => match open.get_mut(&d.item_id) {
                Some(text) => text.push_str(&d.delta),
                None => panic!("{name}: a delta of {} which is not open", d.item_id),
            },
            EventPayload::ItemCompleted(e) => {
                let item = &e.item;
                assert_ne!(item.kind, ItemKind::Unparsed, "{name}: unparsed {item:?}");
                let streamed = open
                    .remove(&item.item_id)
                    .unwrap_or_else(|| panic!("{name}: {} completed, not open", item.item_id));
                if matches!(item.kind, ItemKind::Message | ItemKind::Reasoning) {
                    assert!(
                        item.text().starts_with(&streamed),
                        "{name}: the deltas of {} ({streamed:?}) are not the start of its text {:?}",
                        item.item_id,
                        item.text()
                    );
                }
                assert!(done.insert(item.item_id.clone()), "{name}: completed twice");
            }
            EventPayload::PermissionAsked(p) => asked.push(p.permission_id.clone()),
            EventPayload::QuestionAsked(q) => asked.push(q.question_id.clone()),
            EventPayload::TurnEnded(t) => {
                assert!(open.is_empty(), "{name}: items open at turn end: {open:?}");
                if t.stop_reason == StopReason::Completed {
                    let unanswered: Vec<_> =
                        asked.iter().filter(|id| !resolved.contains(id)).collect();
                    assert!(
                        unanswered.is_empty(),
                        "{name}: a completed turn left {unanswered:?} unanswered"
                    );
                }
                asked.clear();
                ended += 1;
            }
            EventPayload::SessionStarted(_) | EventPayload::TurnStarted(_) => panic!(
                "{name}: the converter emitted {:?}",
                event.payload.event_type()
            ),
            _ => {}
        }
    }
    assert!(open.is_empty(), "{name}: items left open: {open:?}");
    assert_eq!(ended, replay.turns, "{name}: every turn ends exactly once");
}
