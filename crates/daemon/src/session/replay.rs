//! Rebuilding a stored session's state: its last snapshot, then the events after it
//! through the same reducer the live session uses.

use super::state::CoreState;
use crate::store::{SessionRow, Store, StoreError};

/// Events read per page while replaying.
const PAGE: usize = 1000;

/// The state of a stored session. A snapshot this build cannot read is ignored and the
/// whole log replayed (deltas, which change no state, are skipped by the store).
pub(super) async fn restore_state(
    store: &Store,
    row: &SessionRow,
) -> Result<CoreState, StoreError> {
    let mut state = row
        .state_version
        .zip(row.state.as_deref())
        .and_then(|(version, json)| CoreState::from_snapshot(version, json))
        .unwrap_or_default();
    let mut after = state.sequence;
    loop {
        let rows = store.state_events(row.sid, after, PAGE).await?;
        let Some(last) = rows.last() else {
            return Ok(state);
        };
        after = last.sequence;
        for event in rows {
            state.apply(&event.decode(&row.session_id).parse());
        }
    }
}
