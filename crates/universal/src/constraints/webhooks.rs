//! The constraints of webhooks (`POST /webhooks` and a session's `webhook`): checked when a
//! body is parsed, and stated in both schemas.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::*;
use crate::webhooks::{ALL_EVENTS, subscribable};
use crate::{CreateWebhookRequest, EventType, SessionWebhook};

/// A webhook's signing secret.
pub static WEBHOOK_SECRET: Text = Text::new(
    16,
    512,
    r"^[\x21-\x7e]+$",
    "16 to 512 printable ASCII characters, no spaces",
);

/// The most event types one webhook names.
pub const MAX_WEBHOOK_EVENTS: usize = EventType::ALL.len();

/// The event type names a webhook may list, `*` first.
pub fn webhook_event_names() -> Vec<&'static str> {
    std::iter::once(ALL_EVENTS)
        .chain(
            EventType::ALL
                .into_iter()
                .filter(|t| subscribable(*t))
                .map(EventType::as_str),
        )
        .collect()
}

/// The first thing wrong with a webhook's `url`, `events` and `secret`, naming the field
/// under `at` (`""` for a top-level body).
pub(super) fn webhook_violation(
    at: &str,
    url: &str,
    events: &[String],
    secret: Option<&str>,
) -> Option<String> {
    if let Err(error) = MCP_URL.check(&format!("{at}url"), url) {
        return Some(error);
    }
    if events.is_empty() || events.len() > MAX_WEBHOOK_EVENTS {
        return Some(format!(
            "`{at}events` must list 1 to {MAX_WEBHOOK_EVENTS} event types"
        ));
    }
    let names = webhook_event_names();
    let mut seen = HashSet::new();
    for (i, name) in events.iter().enumerate() {
        if !names.contains(&name.as_str()) {
            return Some(format!(
                "`{at}events[{i}]` must be one of {} (`itemDelta` cannot be delivered)",
                names.join(", ")
            ));
        }
        if !seen.insert(name.as_str()) {
            return Some(format!("`{at}events[{i}]`: `{name}` is given twice"));
        }
    }
    secret.and_then(|secret| WEBHOOK_SECRET.check(&format!("{at}secret"), secret).err())
}

impl Constrained for CreateWebhookRequest {
    fn violation(&self) -> Option<String> {
        webhook_violation("", &self.url, &self.events, self.secret.as_deref())
    }
}

/// The first thing wrong with a session's `webhook`.
pub(super) fn session_webhook_violation(webhook: Option<&SessionWebhook>) -> Option<String> {
    let webhook = webhook?;
    webhook_violation(
        "webhook.",
        &webhook.url,
        &webhook.events,
        Some(&webhook.secret),
    )
}

/// States the constraints in the schemas.
pub(super) fn describe_webhooks(schemas: &mut Map<String, Value>) {
    let events = json!({
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_WEBHOOK_EVENTS,
        "uniqueItems": true,
        "items": {"type": "string", "enum": webhook_event_names()},
    });
    for name in ["CreateWebhookRequest", "SessionWebhook"] {
        let properties = &mut schemas
            .get_mut(name)
            .unwrap_or_else(|| panic!("no schema {name}"))["properties"];
        MCP_URL.describe(&mut properties["url"]);
        let description = properties["events"]["description"].clone();
        properties["events"] = events.clone();
        properties["events"]["description"] = description;
        WEBHOOK_SECRET.describe(&mut properties["secret"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str, events: &[&str], secret: Option<&str>) -> CreateWebhookRequest {
        CreateWebhookRequest {
            url: url.into(),
            events: events.iter().map(|e| e.to_string()).collect(),
            secret: secret.map(str::to_string),
        }
    }

    #[test]
    fn a_good_webhook_passes() {
        let star = request("http://x/", &["*", "turnEnded"], None);
        assert_eq!(star.violation(), None, "`*` among others still means all");
        let ok = request(
            "http://127.0.0.1:9/hook",
            &["turnEnded", "permissionAsked"],
            None,
        );
        assert_eq!(ok.violation(), None);
        let all = request("https://example.test/h", &["*"], Some("0123456789abcdef"));
        assert_eq!(all.violation(), None);
    }

    #[test]
    fn each_rule_is_checked() {
        let cases = [
            (request("ftp://x/y", &["turnEnded"], None), "`url`"),
            (request("http://x/", &[], None), "`events` must list"),
            (request("http://x/", &["itemDelta"], None), "`events[0]`"),
            (request("http://x/", &["nope"], None), "`events[0]`"),
            (
                request("http://x/", &["turnEnded", "turnEnded"], None),
                "given twice",
            ),
            (
                request("http://x/", &["turnEnded"], Some("short")),
                "`secret`",
            ),
        ];
        for (body, expected) in cases {
            let violation = body.violation().expect("refused");
            assert!(violation.contains(expected), "{violation} lacks {expected}");
        }
    }

    #[test]
    fn a_session_webhook_names_its_field() {
        let webhook = SessionWebhook {
            url: "http://x/".into(),
            events: vec!["turnEnded".into()],
            secret: "tiny".into(),
        };
        let violation = session_webhook_violation(Some(&webhook)).expect("refused");
        assert!(violation.contains("`webhook.secret`"), "{violation}");
    }
}
