//! Building blocks every converter uses: whole items in one go, and `unparsed` items.

use sandbox_universal::{ContentPart, EventPayload, Item, ItemEvent, ItemKind, ItemStatus};
use serde_json::Value;

use crate::{AgentEvent, SessionIds};

/// `itemStarted` (status `inProgress`) and `itemCompleted` for an item that arrives
/// finished, both carrying the native JSON it came from.
pub fn finished_item(item: Item, raw: &Value) -> Vec<AgentEvent> {
    let started = Item {
        status: ItemStatus::InProgress,
        ..item.clone()
    };
    vec![
        AgentEvent::native(
            EventPayload::ItemStarted(ItemEvent { item: started }),
            Some(raw.clone()),
        ),
        AgentEvent::native(
            EventPayload::ItemCompleted(ItemEvent { item }),
            Some(raw.clone()),
        ),
    ]
}

/// An `unparsed` item carrying the raw native JSON and why it was not understood (also
/// logged as a warning: on the real-agent corpus there must be none).
pub fn unparsed_item(
    ids: &dyn SessionIds,
    raw: &Value,
    error: impl Into<String>,
) -> Vec<AgentEvent> {
    let error = error.into();
    tracing::warn!(%error, "unparsed agent output");
    let item = Item::new(
        ids.next_id("itm"),
        ItemKind::Unparsed,
        ItemStatus::Completed,
    )
    .with_content(ContentPart::Unparsed {
        raw: raw.clone(),
        error,
    });
    finished_item(item, raw)
}

/// An event converted from the native message `raw` (which it keeps).
pub fn native_event(payload: EventPayload, raw: &Value) -> AgentEvent {
    AgentEvent::native(payload, Some(raw.clone()))
}

/// `T` read from native JSON, or why not, in words.
pub fn parse<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).map_err(|e| e.to_string())
}

/// A finished system `status` item (retries, compaction, notices): `label` and `detail`.
pub fn status(ids: &dyn SessionIds, label: &str, detail: Option<String>) -> Item {
    Item::new(ids.next_id("itm"), ItemKind::Status, ItemStatus::Completed)
        .with_role(sandbox_universal::ItemRole::System)
        .with_content(ContentPart::Status {
            label: label.to_string(),
            detail,
        })
}
