//! Signalling what a process left behind, found in `/proc`: every process group of a
//! terminal's session (a shell's job control gives each job a group of its own), and a
//! group whose leader has already been reaped.
//!
//! Invariant: only groups seen with a live (or zombie) member at that moment are
//! signalled. A group id is not handed out again while a member lives, so none of them is
//! someone else's; a group with no member left is never signalled by number.

use std::collections::BTreeSet;

/// Sends `signal` to every process group with a member in the session led by `leader`.
pub fn signal_session(leader: u32, signal: i32) {
    for group in groups(|_, session| session == leader) {
        sandbox_agents::process::signal_group(group, signal);
    }
}

/// Sends `signal` to process group `group` if it still has a member.
pub fn signal_group_if_alive(group: u32, signal: i32) {
    if !groups(|pgid, _| pgid == group).is_empty() {
        sandbox_agents::process::signal_group(group, signal);
    }
}

/// The process groups (other than 0) of the processes for which `pick(group, session)`.
fn groups(pick: impl Fn(u32, u32) -> bool) -> BTreeSet<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|stat| {
            // After the command (in parentheses, which may hold anything): state, ppid,
            // process group, session.
            let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
            let group = fields.get(2)?.parse::<u32>().ok()?;
            let session = fields.get(3)?.parse::<u32>().ok()?;
            (group != 0 && pick(group, session)).then_some(group)
        })
        .collect()
}
