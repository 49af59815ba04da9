//! One meaning across agents: the same situation reads the same in the universal schema
//! whichever agent produced it.

use sandbox_agents::QuestionAnswer;
use sandbox_agents::amp::convert::AmpProtocol as Amp;
use sandbox_agents::claude::convert::Converter as Claude;
use sandbox_agents::codex::convert::Converter as Codex;
use sandbox_agents::kernel::Protocol;
use sandbox_agents::opencode::convert::Converter as OpenCode;
use sandbox_agents::pi::convert::Converter as Pi;
use sandbox_universal::{EventPayload, ItemKind, ItemStatus, StopReason};

use crate::kit::{self, Replay};
use crate::replay::first_question;

/// Every agent's replays of every fixture (Amp's hold no permission or question: its
/// delegate helper asks the daemon outside the stream; nor do Pi's: Pi asks only through
/// the daemon's permission extension, which no recorded scenario's prompt triggers — Pi's
/// permissions are proven by the scenario table).
fn everything() -> Vec<Replay> {
    let mut all: Vec<Replay> = kit::conform_all::<Claude>("claude").into_values().collect();
    all.extend(kit::conform_all::<Codex>("codex").into_values());
    all.extend(kit::conform_all::<OpenCode>("opencode").into_values());
    all.extend(kit::conform_all::<Amp>("amp").into_values());
    all.extend(kit::conform_all::<Pi>("pi").into_values());
    all
}

/// Amp is not in it: it prints each message whole (no token deltas), so a cancelled Amp
/// turn has no partial message; its cancel fixture ends with the messages it completed
/// (see `amp::a_killed_process_ends_its_turn_cancelled_and_the_thread_goes_on`).
#[test]
fn a_turn_cancelled_mid_reply_ends_its_partial_message_failed_with_the_text_so_far() {
    for (agent, replay) in [
        (
            "claude",
            kit::replay::<Claude>(&kit::fixture("claude", "cancel")),
        ),
        (
            "codex",
            kit::replay::<Codex>(&kit::fixture("codex", "cancel")),
        ),
        (
            "opencode",
            kit::replay::<OpenCode>(&kit::fixture("opencode", "cancel")),
        ),
        ("pi", kit::replay::<Pi>(&kit::fixture("pi", "cancel"))),
    ] {
        assert_eq!(replay.stop_reasons()[0], StopReason::Cancelled, "{agent}");
        let first_turn_end = replay
            .payloads()
            .position(|p| matches!(p, EventPayload::TurnEnded(_)))
            .unwrap();
        let partial = replay.events[..first_turn_end]
            .iter()
            .rev()
            .find_map(|e| match &e.payload {
                EventPayload::ItemCompleted(i) if i.item.kind == ItemKind::Message => {
                    Some(i.item.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("{agent}: no partial message"));
        assert_eq!(partial.status, ItemStatus::Failed, "{agent}: {partial:?}");
        assert!(
            !partial.text().is_empty(),
            "{agent}: the text so far is kept"
        );
    }
}

#[test]
fn every_permission_and_question_points_at_the_tool_item_it_is_about() {
    let mut checked = 0;
    for replay in everything() {
        let mut items = std::collections::HashSet::new();
        for payload in replay.payloads() {
            let (what, item_id) = match payload {
                EventPayload::ItemStarted(e) => {
                    items.insert(e.item.item_id.clone());
                    continue;
                }
                EventPayload::PermissionAsked(p) => ("permission", &p.item_id),
                EventPayload::QuestionAsked(q) => ("question", &q.item_id),
                _ => continue,
            };
            let item_id = item_id
                .as_ref()
                .unwrap_or_else(|| panic!("{}: a {what} without its item", replay.name));
            assert!(
                items.contains(item_id),
                "{}: a {what} points at {item_id}, which was never started",
                replay.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} requests seen");
}

#[test]
fn a_rejected_question_reaches_the_agent_as_a_refusal() {
    let (mut claude, id) = first_question::<Claude>("claude", "question");
    let reply = claude
        .reply_question(&id, QuestionAnswer::Rejected)
        .unwrap();
    let reply = reply[0].line().unwrap();
    let body = &reply["response"]["response"];
    assert_eq!(
        body["behavior"], "deny",
        "the tool call is refused: {reply}"
    );
    assert!(body["message"].as_str().unwrap().contains("declined"));

    let (mut codex, id) = first_question::<Codex>("codex", "question");
    let reply = codex.reply_question(&id, QuestionAnswer::Rejected).unwrap();
    let reply = reply[0].line().unwrap();
    let answers = reply["result"]["answers"].as_object().unwrap();
    assert_eq!(answers.len(), 2, "every question is answered: {reply}");
    for answer in answers.values() {
        let text = answer["answers"][0].as_str().unwrap();
        assert!(
            text.contains("declined"),
            "a refusal the model reads: {reply}"
        );
    }

    // OpenCode has a route for it: the tool call fails with "The user dismissed this
    // question" and the turn ends.
    let (mut opencode, id) = first_question::<OpenCode>("opencode", "question");
    let reply = &opencode
        .reply_question(&id, QuestionAnswer::Rejected)
        .unwrap()[0];
    assert!(
        reply.path.starts_with("/question/que_") && reply.path.ends_with("/reject"),
        "{reply:?}"
    );
    assert_eq!(reply.body, None, "the reject route takes no body");
}
