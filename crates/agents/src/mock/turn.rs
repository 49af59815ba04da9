//! Emitting one mock turn's items with a complete lifecycle.

use std::collections::BTreeMap;

use sandbox_universal::{ContentPart, EventPayload, Item, ItemDelta, ItemEvent, ItemStatus};

use crate::{AgentEvent, EventSink};

/// Tracks the items a turn has open so a cancelled turn can still close them.
pub struct TurnEmitter {
    sink: EventSink,
    open: BTreeMap<String, Item>,
    /// Number of deltas emitted in this turn.
    pub deltas: u64,
}

impl TurnEmitter {
    /// A new emitter writing to `sink`.
    pub fn new(sink: EventSink) -> Self {
        Self {
            sink,
            open: BTreeMap::new(),
            deltas: 0,
        }
    }

    /// A new session-unique item id.
    pub fn next_item_id(&self) -> String {
        self.sink.next_id("itm")
    }

    /// A new session-unique id with any prefix.
    pub fn next_id(&self, prefix: &str) -> String {
        self.sink.next_id(prefix)
    }

    /// Emits any event.
    pub fn emit(&self, payload: EventPayload) {
        self.sink.emit(AgentEvent::native(payload, None));
    }

    /// Emits an event carrying raw native JSON.
    pub fn emit_raw(&self, payload: EventPayload, raw: serde_json::Value) {
        self.sink.emit(AgentEvent::native(payload, Some(raw)));
    }

    /// Emits `itemStarted` and keeps the item open.
    pub fn start(&mut self, item: Item) -> String {
        let id = item.item_id.clone();
        self.emit(EventPayload::ItemStarted(ItemEvent { item: item.clone() }));
        self.open.insert(id.clone(), item);
        id
    }

    /// Emits an `itemDelta` and appends the text to the open item's last text-like part
    /// (message text, reasoning, or command output).
    pub fn delta(&mut self, item_id: &str, text: &str) {
        if let Some(item) = self.open.get_mut(item_id) {
            append_text(item, text);
        }
        self.deltas += 1;
        self.emit(EventPayload::ItemDelta(ItemDelta {
            item_id: item_id.to_string(),
            delta: text.to_string(),
        }));
    }

    /// Emits `itemCompleted` for an open item after `finish` sets its final state.
    pub fn complete(&mut self, item_id: &str, status: ItemStatus, finish: impl FnOnce(&mut Item)) {
        let Some(mut item) = self.open.remove(item_id) else {
            return;
        };
        item.status = status;
        finish(&mut item);
        self.emit(EventPayload::ItemCompleted(ItemEvent { item }));
    }

    /// Emits a finished item (started and completed at once).
    pub fn completed_item(&mut self, item: Item) -> String {
        let id = item.item_id.clone();
        let status = item.status;
        let mut started = item.clone();
        started.status = ItemStatus::InProgress;
        self.emit(EventPayload::ItemStarted(ItemEvent { item: started }));
        self.emit(EventPayload::ItemCompleted(ItemEvent {
            item: Item { status, ..item },
        }));
        id
    }
}

fn append_text(item: &mut Item, text: &str) {
    for part in item.content.iter_mut().rev() {
        match part {
            ContentPart::Text { text: t } | ContentPart::Reasoning { text: t } => {
                t.push_str(text);
                return;
            }
            ContentPart::CommandExecution { output, .. } => {
                output.get_or_insert_with(String::new).push_str(text);
                return;
            }
            _ => {}
        }
    }
    item.content.push(ContentPart::Text {
        text: text.to_string(),
    });
}
