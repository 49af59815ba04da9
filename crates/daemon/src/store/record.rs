//! How one event is stored and served: rendered once when it is appended, and read back
//! from the store without ever being dropped, truncated or rewritten.
//!
//! Contract (stable: what is on disk): an event row holds `sequence`, `version` (the schema
//! version it was written with, [`EVENT_VERSION`]), `type`, `time_us`, `body` (the event's
//! JSON without `raw`, exactly as served) and `raw` (the native JSON, or NULL). A row this
//! build cannot read — a newer `version`, or a body that does not parse as an event of its
//! version — is served as an `unknown` event carrying what was stored.
//!
//! Invariant: every row of [`EVENT_VERSION`] was rendered from a typed event of exactly this
//! build's schema (the `each_schema_version_is_pinned` test fails when the event types change
//! and the version does not), so reading one checks only that its body is JSON naming the
//! row's sequence and type — one pass, no allocation. Rows of older versions (and stored
//! text that never was an event, [`UNCHECKED_VERSION`]) are parsed in full against this
//! build's types.

use std::borrow::Cow;
use std::cmp::Ordering;

use chrono::{DateTime, Utc};
use sandbox_universal::{
    EventPayload, EventSource, EventType, UniversalEvent, UnknownEvent, UnknownReason,
};
use serde_json::Value;

/// Schema version of the event rows this build writes: bumped whenever the event types
/// change (version 1 rows predate the pinned schema and are checked in full).
pub const EVENT_VERSION: u32 = 3;

/// The version of a row holding stored text that is not a readable event (kept, never
/// dropped): always checked in full, so always served as `unknown`.
pub const UNCHECKED_VERSION: u32 = 0;

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

    /// The event, parsed back (state replay, handovers, tests). A body of the current
    /// version that does not parse after all (the store was edited behind the daemon's
    /// back) comes back as an `unknown` event holding it.
    pub fn parse(&self) -> UniversalEvent {
        let mut event = match serde_json::from_str::<UniversalEvent>(&self.json) {
            Ok(event) => event,
            Err(error) => {
                let head = serde_json::from_str::<Head>(&self.json).ok();
                let row = EventRow {
                    sequence: self.sequence,
                    version: EVENT_VERSION,
                    event_type: head
                        .as_ref()
                        .map_or_else(|| "unknown".into(), |h| h.event_type.to_string()),
                    time_us: self.time_us,
                    body: self.json.to_string(),
                    raw: None,
                };
                let session_id = head.as_ref().map_or("", |h| &h.session_id);
                row.unknown_event(
                    session_id,
                    UnknownReason::Unreadable,
                    Some(error.to_string()),
                )
            }
        };
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
        let checked = match self.version.cmp(&EVENT_VERSION) {
            Ordering::Greater => Err((UnknownReason::NewerVersion, None)),
            Ordering::Equal => self.check_head(),
            Ordering::Less => self.check_fully(),
        };
        let raw = self.raw.map(|raw| {
            if serde_json::from_str::<serde::de::IgnoredAny>(&raw).is_ok() {
                raw.into_boxed_str()
            } else {
                Value::String(raw).to_string().into_boxed_str()
            }
        });
        let (reason, error) = match checked {
            Ok(event_type) => {
                return StoredEvent {
                    sequence: self.sequence,
                    event_type,
                    time_us: self.time_us,
                    json: self.body.into_boxed_str(),
                    raw,
                };
            }
            Err(failure) => failure,
        };
        let this = EventRow { raw: None, ..self };
        let event = this.unknown_event(session_id, reason, error);
        StoredEvent {
            raw,
            ..StoredEvent::render(event)
        }
    }

    /// The `unknown` event standing for this row, holding exactly what was stored.
    fn unknown_event(
        self,
        session_id: &str,
        reason: UnknownReason,
        error: Option<String>,
    ) -> UniversalEvent {
        let stored = serde_json::from_str::<Value>(&self.body).unwrap_or(Value::String(self.body));
        UniversalEvent {
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
        }
    }

    /// A row of this build's version: its body is JSON whose sequence and type are the row's,
    /// and the type is one this build knows. Answers that type.
    fn check_head(&self) -> Result<EventType, Failure> {
        let head = serde_json::from_str::<Head>(&self.body)
            .map_err(|error| (UnknownReason::Unreadable, Some(error.to_string())))?;
        let Some(event_type) = EventType::from_name(&head.event_type) else {
            return Err((
                UnknownReason::Unreadable,
                Some(format!("no event type `{}`", head.event_type)),
            ));
        };
        self.matches(head.sequence, event_type)
    }

    /// A row of an older version: its body parses as an event of this build. Answers its type.
    fn check_fully(&self) -> Result<EventType, Failure> {
        let event = serde_json::from_str::<UniversalEvent>(&self.body)
            .map_err(|error| (UnknownReason::Unreadable, Some(error.to_string())))?;
        self.matches(event.sequence, event.payload.event_type())
    }

    fn matches(&self, sequence: u64, event_type: EventType) -> Result<EventType, Failure> {
        if sequence == self.sequence && event_type.as_str() == self.event_type {
            return Ok(event_type);
        }
        let event_type = event_type.as_str();
        Err((
            UnknownReason::Unreadable,
            Some(format!(
                "the stored body says sequence {sequence} type `{event_type}`, its row says sequence {} type `{}`",
                self.sequence, self.event_type
            )),
        ))
    }
}

/// Why a row is served as `unknown`, and the parse error when there is one.
type Failure = (UnknownReason, Option<String>);

/// The fields of a stored body a row of this build's version is checked against.
#[derive(serde::Deserialize)]
struct Head<'a> {
    sequence: u64,
    #[serde(rename = "type", borrow)]
    event_type: Cow<'a, str>,
    #[serde(rename = "sessionId", default, borrow)]
    session_id: Cow<'a, str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sample_event;
    use sha2::Digest;

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

    /// The JSON Schema of the event types rows of each version were written with, as the
    /// SHA-256 of `UniversalEvent`'s schema without its prose. Change the event types, and
    /// this fails until [`EVENT_VERSION`] is bumped and the new fingerprint pinned here:
    /// rows of the current version are served without a full parse, on the strength of it.
    const SCHEMA_FINGERPRINTS: &[(u32, &str)] = &[
        (
            2,
            "463114d25f7bc3061ec49af03e480d207cac783167359aca473bc0a6f9c1b0cb",
        ),
        // `turnEnded` carries `changes`.
        (
            3,
            "096b047a28da5ed6a55b97207cfbb9d4c23375c632a5bb698303ea4e19f1c4d4",
        ),
    ];

    fn schema_fingerprint() -> String {
        fn strip_prose(value: &mut Value) {
            match value {
                Value::Object(map) => {
                    map.remove("description");
                    map.remove("title");
                    map.values_mut().for_each(strip_prose);
                }
                Value::Array(items) => items.iter_mut().for_each(strip_prose),
                _ => {}
            }
        }
        let mut schema = serde_json::to_value(schemars::schema_for!(UniversalEvent)).unwrap();
        strip_prose(&mut schema);
        // The digest must not depend on map order.
        sandbox_universal::canonical::sort_keys(&mut schema);
        let digest = sha2::Sha256::digest(schema.to_string().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn each_schema_version_is_pinned() {
        let pinned = SCHEMA_FINGERPRINTS
            .iter()
            .find(|(version, _)| *version == EVENT_VERSION)
            .map(|(_, fingerprint)| *fingerprint);
        assert_eq!(
            pinned,
            Some(schema_fingerprint().as_str()),
            "the event types changed: bump EVENT_VERSION and pin this fingerprint for it"
        );
    }

    #[test]
    fn a_current_row_is_checked_against_its_own_sequence_and_type() {
        let mut moved = row(sample_event(5, "m"));
        moved.sequence = 6;
        let served = moved.decode("s").parse();
        let EventPayload::Unknown(unknown) = served.payload else {
            panic!("expected unknown")
        };
        assert_eq!(unknown.reason, UnknownReason::Unreadable);
        assert!(unknown.error.unwrap().contains("sequence 5"));
        assert_eq!(served.sequence, 6);
    }

    #[test]
    fn an_older_row_is_parsed_in_full_and_a_current_one_is_trusted_past_its_head() {
        let mut odd = row(sample_event(8, "q"));
        odd.body = odd.body.replace("\"delta\"", "\"teleported\"");
        let trusted = odd.clone().decode("s");
        assert_eq!(trusted.event_type, EventType::ItemDelta);
        assert_eq!(*trusted.json, *odd.body);

        odd.version = 1;
        let checked = odd.clone().decode("s");
        assert_eq!(checked.event_type, EventType::Unknown);
        let EventPayload::Unknown(unknown) = checked.parse().payload else {
            panic!("expected unknown")
        };
        assert_eq!(unknown.schema_version, 1);

        // A current row that does not parse after all is an `unknown` event, not a panic.
        let served = trusted.parse();
        let EventPayload::Unknown(unknown) = served.payload else {
            panic!("expected unknown")
        };
        assert_eq!(unknown.stored_type, "itemDelta");
        assert_eq!(served.session_id, "s");
        assert_eq!(served.raw, Some(serde_json::json!({"native": "q"})));
    }
}
