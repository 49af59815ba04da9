//! How one event is stored and served: rendered once when it is appended, and read back
//! from the store without ever being dropped, truncated or rewritten.
//!
//! Contract (stable: what is on disk): an event row holds `sequence`, `version` (the schema
//! version it was written with, [`EVENT_VERSION`]), `type`, `time_us`, `body` (the event's
//! JSON without `raw`, exactly as served) and `raw` (the native JSON, or NULL). A row this
//! build cannot read — a newer `version`, or a body that does not parse as an event of its
//! version — is served as an `unknown` event carrying what was stored.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use sandbox_universal::{
    EventPayload, EventSource, EventType, UniversalEvent, UnknownEvent, UnknownReason,
};
use serde_json::Value;

/// Schema version of the event rows this build writes.
pub const EVENT_VERSION: u32 = 1;

/// One event of a session's log, rendered once when it is appended (or read): what readers
/// are served and what the store writes.
#[derive(Debug)]
pub struct StoredEvent {
    /// Its sequence in the session's log.
    pub sequence: u64,
    /// Its type (`unknown` for a stored record this build cannot read).
    pub event_type: EventType,
    /// When the daemon recorded it, in microseconds since the Unix epoch.
    pub time_us: i64,
    /// The event as JSON without `raw`.
    pub json: Box<str>,
    /// The native JSON it was converted from, when there is one.
    pub raw: Option<Box<str>>,
}

impl StoredEvent {
    /// Renders an event (its sequence already assigned).
    pub fn render(mut event: UniversalEvent) -> Self {
        let raw = event.raw.take().map(|raw| raw.to_string().into_boxed_str());
        let json = serde_json::to_string(&event)
            .expect("events serialize")
            .into_boxed_str();
        Self {
            sequence: event.sequence,
            event_type: event.payload.event_type(),
            time_us: event.time.timestamp_micros(),
            json,
            raw,
        }
    }

    /// The event as JSON, with its native `raw` payload on request.
    pub fn to_json(&self, include_raw: bool) -> Cow<'_, str> {
        match (&self.raw, include_raw) {
            (Some(raw), true) => {
                let mut json = String::with_capacity(self.json.len() + raw.len() + 8);
                json.push_str(&self.json[..self.json.len() - 1]);
                json.push_str(",\"raw\":");
                json.push_str(raw);
                json.push('}');
                Cow::Owned(json)
            }
            _ => Cow::Borrowed(&self.json),
        }
    }

    /// Bytes it occupies in memory (for the bounds on buffered events).
    pub fn size(&self) -> usize {
        std::mem::size_of::<Self>() + self.json.len() + self.raw.as_ref().map_or(0, |r| r.len())
    }

    /// The event, parsed back (tests and state replay).
    pub fn parse(&self) -> UniversalEvent {
        let mut event: UniversalEvent =
            serde_json::from_str(&self.json).expect("stored events are readable");
        event.raw = self
            .raw
            .as_deref()
            .map(|raw| serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.into())));
        event
    }
}

/// An event row as the store holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// Sequence in the session's log.
    pub sequence: u64,
    /// Schema version it was written with.
    pub version: u32,
    /// Event type name.
    pub event_type: String,
    /// Recording time, µs since the Unix epoch.
    pub time_us: i64,
    /// The event JSON without `raw`.
    pub body: String,
    /// Native JSON (only read when asked for).
    pub raw: Option<String>,
}

impl EventRow {
    /// The row for an event this build appends.
    pub fn of(event: &StoredEvent) -> Self {
        Self {
            sequence: event.sequence,
            version: EVENT_VERSION,
            event_type: event.event_type.as_str().to_string(),
            time_us: event.time_us,
            body: event.json.to_string(),
            raw: event.raw.as_deref().map(str::to_string),
        }
    }

    /// Reads the row back into what readers are served. A row this build cannot read
    /// becomes an `unknown` event holding exactly what was stored.
    pub fn decode(self, session_id: &str) -> StoredEvent {
        let failure = if self.version > EVENT_VERSION {
            Some((UnknownReason::NewerVersion, None))
        } else {
            match serde_json::from_str::<UniversalEvent>(&self.body) {
                Ok(event)
                    if event.sequence == self.sequence
                        && event.payload.event_type().as_str() == self.event_type =>
                {
                    None
                }
                Ok(event) => Some((
                    UnknownReason::Unreadable,
                    Some(format!(
                        "the stored body says sequence {} type `{}`, its row says sequence {} type `{}`",
                        event.sequence,
                        event.payload.event_type().as_str(),
                        self.sequence,
                        self.event_type
                    )),
                )),
                Err(error) => Some((UnknownReason::Unreadable, Some(error.to_string()))),
            }
        };
        let raw = self.raw.map(|raw| {
            if serde_json::from_str::<serde::de::IgnoredAny>(&raw).is_ok() {
                raw.into_boxed_str()
            } else {
                Value::String(raw).to_string().into_boxed_str()
            }
        });
        let Some((reason, error)) = failure else {
            return StoredEvent {
                sequence: self.sequence,
                event_type: EventType::from_name(&self.event_type).unwrap_or(EventType::Unknown),
                time_us: self.time_us,
                json: self.body.into_boxed_str(),
                raw,
            };
        };
        let stored =
            serde_json::from_str::<Value>(&self.body).unwrap_or(Value::String(self.body.clone()));
        let event = UniversalEvent {
            sequence: self.sequence,
            time: DateTime::<Utc>::from_timestamp_micros(self.time_us).unwrap_or_default(),
            session_id: session_id.to_string(),
            native_session_id: None,
            source: EventSource::Daemon,
            synthetic: true,
            payload: EventPayload::Unknown(UnknownEvent {
                reason,
                schema_version: self.version,
                stored_type: self.event_type,
                stored,
                error,
            }),
            raw: None,
        };
        StoredEvent {
            raw,
            ..StoredEvent::render(event)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sample_event;

    fn row(event: UniversalEvent) -> EventRow {
        EventRow::of(&StoredEvent::render(event))
    }

    #[test]
    fn a_readable_row_is_served_exactly_as_stored() {
        let stored = StoredEvent::render(sample_event(7, "hi"));
        let row = EventRow::of(&stored);
        let served = row.clone().decode("s");
        assert_eq!(served.json, stored.json);
        assert_eq!(served.raw, stored.raw);
        assert_eq!(served.event_type, EventType::ItemDelta);
        assert_eq!(served.sequence, 7);
        assert!(
            served
                .to_json(true)
                .ends_with(",\"raw\":{\"native\":\"hi\"}}")
        );
        assert!(!served.to_json(false).contains("native"));
    }

    #[test]
    fn corrupt_and_newer_rows_become_unknown_events_that_keep_the_stored_text() {
        let mut corrupt = row(sample_event(3, "x"));
        corrupt.body = "{\"sequence\":3,\"ti\u{0}garbage".into();
        let served = corrupt.clone().decode("s").parse();
        assert_eq!(served.sequence, 3);
        let EventPayload::Unknown(unknown) = served.payload else {
            panic!("expected unknown, got {served:?}")
        };
        assert_eq!(unknown.reason, UnknownReason::Unreadable);
        assert_eq!(unknown.stored, Value::String(corrupt.body));
        assert!(unknown.error.is_some());

        let mut newer = row(sample_event(4, "y"));
        newer.version = EVENT_VERSION + 1;
        newer.event_type = "telepathy".into();
        newer.body = r#"{"sequence":4,"type":"telepathy","data":{"thought":1}}"#.into();
        let served = newer.decode("s").parse();
        let EventPayload::Unknown(unknown) = served.payload else {
            panic!("expected unknown")
        };
        assert_eq!(unknown.reason, UnknownReason::NewerVersion);
        assert_eq!(unknown.stored_type, "telepathy");
        assert_eq!(unknown.stored["data"]["thought"], 1);
        assert_eq!(served.raw, Some(serde_json::json!({"native": "y"})));
    }

    #[test]
    fn an_unknown_item_kind_of_the_current_version_is_unreadable_not_dropped() {
        let mut odd = row(sample_event(9, "z"));
        odd.body = odd.body.replace("itemDelta", "itemTeleported");
        odd.event_type = "itemTeleported".into();
        let served = odd.decode("s");
        assert_eq!(served.event_type, EventType::Unknown);
        assert!(served.json.contains("itemTeleported"));
    }

    #[test]
    fn a_raw_column_that_is_not_json_is_served_as_a_string() {
        let mut odd = row(sample_event(2, "z"));
        odd.raw = Some("not json".into());
        let served = odd.decode("s");
        assert!(served.to_json(true).ends_with(",\"raw\":\"not json\"}"));
    }
}
