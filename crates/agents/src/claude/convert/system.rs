//! `system` lines: the session id and permission mode the CLI reports, and notices.
//!
//! - `init` (every turn): records the session id and the permission mode; no event.
//! - `status` with a `permissionMode` different from the last one known (e.g. `default`
//!   once a plan is approved in plan mode): a `status` item `permissionMode` naming the
//!   new mode; other `status` lines (`requesting`, ...) carry nothing for clients.
//! - `compact_boundary`: a `status` item `compacted`.
//! - `informational` (e.g. the warning that plan mode's command classifier cannot run
//!   behind a custom base URL): a `status` item labelled with its level.
//! - `permission_denied` (a tool the CLI refused by itself, without asking): a `status`
//!   item `permissionDenied`; the failed tool result follows.
//! - `api_retry` (a model request failed and the CLI retries it after a delay): a
//!   `status` item `retrying`, like Codex's, OpenCode's and Pi's retries, whose detail
//!   names the attempt, the delay and the error (`attempt 1/10 in 609ms: overloaded
//!   (HTTP 529)`). The turn goes on; a final failure comes as the turn's error.
//! - `thinking_tokens`, `hook_*`, `task_*`: nothing for clients.

use sandbox_universal::{ContentPart, Item, ItemKind, ItemRole, ItemStatus};
use serde_json::Value;

use super::{Converted, Converter};
use crate::SessionIds;
use crate::claude::native::SystemLine;
use crate::items::{finished_item, unparsed_item};

/// `system` subtypes that carry nothing for clients.
const IGNORED_SYSTEM: &[&str] = &["init", "status", "thinking_tokens"];
/// `system` subtype prefixes that carry nothing for clients (hooks and background tasks
/// only appear when the host asks for them).
const IGNORED_SYSTEM_PREFIXES: &[&str] = &["hook_", "task_"];

fn status(
    label: &str,
    detail: String,
    raw: &Value,
    ids: &dyn SessionIds,
) -> Vec<crate::AgentEvent> {
    let item = Item::new(ids.next_id("itm"), ItemKind::Status, ItemStatus::Completed)
        .with_role(ItemRole::System)
        .with_content(ContentPart::Status {
            label: label.into(),
            detail: Some(detail),
        });
    finished_item(item, raw)
}

impl Converter {
    pub(super) fn system(
        &mut self,
        mut system: SystemLine,
        raw: &Value,
        ids: &dyn SessionIds,
        out: &mut Converted,
    ) {
        if let Some(mode) = system.permission_mode.take() {
            // A resumed CLI that restores plan mode from its transcript reports it before
            // `init`: with no mode known yet, that is no change to report.
            let changed = self
                .permission_mode
                .as_deref()
                .is_some_and(|known| known != mode);
            if changed && system.subtype == "status" {
                out.events
                    .extend(status("permissionMode", mode.clone(), raw, ids));
            }
            self.permission_mode = Some(mode);
        }
        match system.subtype.as_str() {
            "init" => {
                if let Some(id) = system.session_id
                    && self.native_session_id.as_deref() != Some(&id)
                {
                    ids.set_native_session_id(&id);
                    self.native_session_id = Some(id);
                }
            }
            "compact_boundary" => out.events.extend(status(
                "compacted",
                "the conversation was compacted".into(),
                raw,
                ids,
            )),
            "informational" => out.events.extend(status(
                system.level.as_deref().unwrap_or("info"),
                system.content.unwrap_or_default(),
                raw,
                ids,
            )),
            "api_retry" => out
                .events
                .extend(status("retrying", retry_detail(&system), raw, ids)),
            "permission_denied" => {
                let tool = system.tool_name.unwrap_or_default();
                let why = system.message.unwrap_or_default();
                out.events.extend(status(
                    "permissionDenied",
                    format!("{tool}: {why}"),
                    raw,
                    ids,
                ));
            }
            subtype => {
                let ignored = IGNORED_SYSTEM.contains(&subtype)
                    || IGNORED_SYSTEM_PREFIXES
                        .iter()
                        .any(|p| subtype.starts_with(p));
                if !ignored {
                    out.events.extend(unparsed_item(
                        ids,
                        raw,
                        format!("unknown system subtype `{subtype}`"),
                    ));
                }
            }
        }
    }
}

/// `attempt 1/10 in 609ms: overloaded (HTTP 529)`; parts the line lacks are left out.
fn retry_detail(line: &SystemLine) -> String {
    let mut detail = match (line.attempt, line.max_retries) {
        (Some(attempt), Some(max)) => format!("attempt {attempt}/{max}"),
        (Some(attempt), None) => format!("attempt {attempt}"),
        (None, _) => "retrying".to_owned(),
    };
    if let Some(ms) = line.retry_delay_ms {
        detail.push_str(&format!(" in {ms}ms"));
    }
    let error = match &line.error {
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    match (error, line.error_status) {
        (Some(error), Some(status)) => detail.push_str(&format!(": {error} (HTTP {status})")),
        (Some(error), None) => detail.push_str(&format!(": {error}")),
        (None, Some(status)) => detail.push_str(&format!(": HTTP {status}")),
        (None, None) => {}
    }
    detail
}
