//! Reading a session bundle (`POST /sessions/{id}/import`) from the file its body was
//! spooled to, in bounded memory: one pass checks it — format, the events' count,
//! numbering and checksum, the native files' checksums — replays the events through the
//! reducer, and writes the store's rows for them to a second file, which the store's import
//! then reads line by line.

use std::fmt;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use sandbox_agents::NativeState;
use sandbox_universal::{BUNDLE_FORMAT, ExportedSession, NativeBundle, UniversalEvent};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use super::state::CoreState;
use crate::store::{EVENT_VERSION, EventRow};

/// A checked bundle, its events' rows waiting in [`CheckedBundle::rows`].
pub struct CheckedBundle {
    /// How the session was created.
    pub session: ExportedSession,
    /// The agent's native state (files decoded and checked).
    pub native: Option<NativeState>,
    /// The session's state after its last event.
    pub state: CoreState,
    /// The file holding the events' rows, one JSON line each.
    pub rows: PathBuf,
}

/// Why a bundle was refused (a 422).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleError(pub String);

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks the bundle in `path`, for a session to be stored as `session_id`, and writes its
/// events' rows (with that session id) to `rows`. Blocking.
pub fn check(path: &Path, session_id: &str, rows: &Path) -> Result<CheckedBundle, BundleError> {
    let file =
        std::fs::File::open(path).map_err(|e| BundleError(format!("reading the bundle: {e}")))?;
    let out = std::fs::File::create(rows)
        .map_err(|e| BundleError(format!("spooling the bundle's events: {e}")))?;
    let mut reading = Reading {
        session_id,
        rows: BufWriter::new(out),
        hasher: Sha256::new(),
        count: 0,
        state: CoreState::default(),
        first_error: None,
    };
    let mut deserializer = serde_json::Deserializer::from_reader(BufReader::new(file));
    let fields = BundleSeed {
        reading: &mut reading,
    }
    .deserialize(&mut deserializer)
    .map_err(|e| BundleError(format!("the body is not a session bundle: {e}")))?;
    deserializer
        .end()
        .map_err(|e| BundleError(format!("the body is not a session bundle: {e}")))?;
    let format = fields
        .format
        .ok_or_else(|| BundleError("the bundle has no `format`".into()))?;
    if format > BUNDLE_FORMAT {
        return Err(BundleError(format!(
            "the bundle has format {format}, newer than this daemon reads (up to {BUNDLE_FORMAT}); import it with a newer sandbox-daemon"
        )));
    }
    if let Some(error) = reading.first_error.take() {
        return Err(BundleError(error));
    }
    if fields.exported_at.is_none() {
        return Err(BundleError("the bundle has no `exportedAt`".into()));
    }
    let session: ExportedSession = parse_field(fields.session.as_deref(), "session")?;
    let native = match fields.native {
        Some(raw) if raw.get() != "null" => {
            let bundle: NativeBundle = parse_field(Some(&raw), "native")?;
            // What the schema states beyond the types (a checksum that breaks its pattern
            // cannot match the file's, which `from_bundle` checks).
            if let Some(file) = bundle
                .files
                .iter()
                .find(|f| !(1..=128).contains(&f.name.chars().count()))
            {
                return Err(BundleError(format!(
                    "a native file's `name` must be 1 to 128 characters: {:?}",
                    file.name
                )));
            }
            if bundle.agent != session.agent {
                return Err(BundleError(format!(
                    "the bundle's native state is {}'s, but the session's agent is {}",
                    bundle.agent, session.agent
                )));
            }
            Some(NativeState::from_bundle(&bundle).map_err(BundleError)?)
        }
        _ => None,
    };
    let declared_count = fields
        .event_count
        .ok_or_else(|| BundleError("the bundle has no `eventCount`".into()))?;
    if declared_count != reading.count {
        return Err(BundleError(format!(
            "the bundle holds {} events but says `eventCount` {declared_count}",
            reading.count
        )));
    }
    let declared_sum = fields
        .events_sha256
        .ok_or_else(|| BundleError("the bundle has no `eventsSha256`".into()))?;
    let sum = hex(&reading.hasher.finalize_reset());
    if declared_sum != sum {
        return Err(BundleError(format!(
            "the bundle's events do not match their checksum (sha256 {sum}, `eventsSha256` says {declared_sum})"
        )));
    }
    reading
        .rows
        .flush()
        .map_err(|e| BundleError(format!("spooling the bundle's events: {e}")))?;
    Ok(CheckedBundle {
        session,
        native,
        state: reading.state,
        rows: rows.to_path_buf(),
    })
}

/// The rows `check` wrote, in order. Blocking (the store's writer reads it).
pub fn rows(path: &Path) -> std::io::Result<impl Iterator<Item = EventRow> + Send + use<>> {
    use std::io::BufRead;
    let file = std::fs::File::open(path)?;
    Ok(BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<Row>(&line).ok())
        .map(Row::into_row))
}

pub use sandbox_agents::portable::hex;

fn parse_field<T: for<'de> Deserialize<'de>>(
    raw: Option<&RawValue>,
    name: &str,
) -> Result<T, BundleError> {
    let raw = raw.ok_or_else(|| BundleError(format!("the bundle has no `{name}`")))?;
    serde_json::from_str(raw.get())
        .map_err(|e| BundleError(format!("the bundle's `{name}` is invalid: {e}")))
}

/// What the pass keeps while it reads the events.
struct Reading<'a> {
    session_id: &'a str,
    rows: BufWriter<std::fs::File>,
    hasher: Sha256,
    count: u64,
    state: CoreState,
    first_error: Option<String>,
}

impl Reading<'_> {
    /// One event, as written in the bundle.
    fn event(&mut self, json: &str) -> std::io::Result<()> {
        self.hasher.update(json.as_bytes());
        self.hasher.update(b"\n");
        self.count += 1;
        if self.first_error.is_some() {
            return Ok(());
        }
        let mut event: UniversalEvent = match serde_json::from_str(json) {
            Ok(event) => event,
            Err(e) => {
                self.first_error = Some(format!("event {} is invalid: {e}", self.count));
                return Ok(());
            }
        };
        if event.sequence != self.count {
            self.first_error = Some(format!(
                "the events are not numbered 1, 2, 3, …: event {} has sequence {}",
                self.count, event.sequence
            ));
            return Ok(());
        }
        event.session_id = self.session_id.to_string();
        self.state.apply(&event);
        let raw = event.raw.take().map(|raw| raw.to_string());
        let row = Row {
            sequence: event.sequence,
            event_type: event.payload.event_type().as_str().to_string(),
            time_us: event.time.timestamp_micros(),
            body: serde_json::to_string(&event).expect("events serialise"),
            raw,
        };
        serde_json::to_writer(&mut self.rows, &row)?;
        self.rows.write_all(b"\n")
    }
}

/// A row as spooled between the check and the store.
#[derive(Serialize, Deserialize)]
struct Row {
    sequence: u64,
    event_type: String,
    time_us: i64,
    body: String,
    raw: Option<String>,
}

impl Row {
    fn into_row(self) -> EventRow {
        EventRow {
            sequence: self.sequence,
            version: EVENT_VERSION,
            event_type: self.event_type,
            time_us: self.time_us,
            body: self.body,
            raw: self.raw,
        }
    }
}

/// The top-level fields, the events streamed through [`Reading`].
#[derive(Default)]
struct Fields {
    format: Option<u32>,
    exported_at: Option<chrono::DateTime<chrono::Utc>>,
    session: Option<Box<RawValue>>,
    native: Option<Box<RawValue>>,
    event_count: Option<u64>,
    events_sha256: Option<String>,
}

struct BundleSeed<'r, 'a> {
    reading: &'r mut Reading<'a>,
}

impl<'de> DeserializeSeed<'de> for BundleSeed<'_, '_> {
    type Value = Fields;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Fields, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for BundleSeed<'_, '_> {
    type Value = Fields;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a session bundle (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
        let mut fields = Fields::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => fields.format = Some(map.next_value()?),
                "exportedAt" => {
                    fields.exported_at = Some(map.next_value::<chrono::DateTime<chrono::Utc>>()?);
                }
                "session" => fields.session = Some(map.next_value()?),
                "native" => fields.native = Some(map.next_value()?),
                "eventCount" => fields.event_count = Some(map.next_value()?),
                "eventsSha256" => fields.events_sha256 = Some(map.next_value()?),
                "events" => map.next_value_seed(EventsSeed {
                    reading: &mut *self.reading,
                })?,
                // Fields a later format may add.
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(fields)
    }
}

struct EventsSeed<'r, 'a> {
    reading: &'r mut Reading<'a>,
}

impl<'de> DeserializeSeed<'de> for EventsSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(event) = seq.next_element::<Box<RawValue>>()? {
            self.reading
                .event(event.get())
                .map_err(serde::de::Error::custom)?;
        }
        Ok(())
    }
}
