//! Terminal tickets: what lets a browser open a terminal's WebSocket (which cannot carry an
//! `Authorization` header) without the daemon's token in a URL.
//!
//! Invariants: a ticket is minted only over the authenticated API, names one process of
//! one session, is accepted once, and only within `TICKET_LIFETIME`; at most
//! `MAX_OUTSTANDING` are kept (the oldest go first), so memory stays bounded.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a ticket is accepted after it was minted.
pub const TICKET_LIFETIME: Duration = Duration::from_secs(30);

/// The most tickets kept at once.
const MAX_OUTSTANDING: usize = 1024;

/// The tickets minted and not yet used or expired.
#[derive(Debug, Default)]
pub struct Tickets {
    outstanding: Mutex<HashMap<String, Grant>>,
}

#[derive(Debug)]
struct Grant {
    session: String,
    process: String,
    minted: Instant,
}

impl Tickets {
    /// A new ticket for `process` of `session`: 244 random bits, URL-safe.
    pub fn mint(&self, session: &str, process: &str) -> String {
        let ticket = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let now = Instant::now();
        let mut outstanding = self.lock();
        outstanding.retain(|_, grant| now.duration_since(grant.minted) < TICKET_LIFETIME);
        if outstanding.len() >= MAX_OUTSTANDING
            && let Some(oldest) = outstanding
                .iter()
                .min_by_key(|(_, grant)| grant.minted)
                .map(|(ticket, _)| ticket.clone())
        {
            outstanding.remove(&oldest);
        }
        outstanding.insert(
            ticket.clone(),
            Grant {
                session: session.to_string(),
                process: process.to_string(),
                minted: now,
            },
        );
        ticket
    }

    /// Uses up `ticket`: whether it was minted for `process` of `session` and is still
    /// good. A ticket presented for another process is used up all the same.
    pub fn redeem(&self, ticket: &str, session: &str, process: &str) -> bool {
        let Some(grant) = self.lock().remove(ticket) else {
            return false;
        };
        grant.minted.elapsed() < TICKET_LIFETIME
            && grant.session == session
            && grant.process == process
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Grant>> {
        self.outstanding.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_opens_its_own_terminal_once() {
        let tickets = Tickets::default();
        let ticket = tickets.mint("s1", "p1");
        assert!(!tickets.redeem(&ticket, "s1", "p2"), "another process");
        assert!(!tickets.redeem(&ticket, "s1", "p1"), "used up by the miss");
        let ticket = tickets.mint("s1", "p1");
        assert_ne!(ticket.len(), 0);
        assert!(tickets.redeem(&ticket, "s1", "p1"));
        assert!(!tickets.redeem(&ticket, "s1", "p1"), "once only");
        assert!(!tickets.redeem("made-up", "s1", "p1"));
    }

    #[test]
    fn outstanding_tickets_stay_bounded() {
        let tickets = Tickets::default();
        let first = tickets.mint("s", "p1");
        for _ in 0..MAX_OUTSTANDING {
            tickets.mint("s", "p1");
        }
        assert_eq!(tickets.lock().len(), MAX_OUTSTANDING);
        assert!(!tickets.redeem(&first, "s", "p1"), "the oldest went first");
    }
}
