//! Stand-ins for agent CLIs that cannot complete a turn offline: scripts that accept the
//! real CLI's flags and replay its documented output, so the daemon's driver for that
//! agent can be tested end to end. They are not the agents; a test that uses one proves
//! the driver against the documented protocol, not against the real binary.

use std::path::PathBuf;

/// The stand-in for Sourcegraph's Amp CLI (`crates/testkit/standins/amp`, Python 3).
///
/// Amp runs its agent loop on Amp's servers, so the real `amp` cannot finish a turn
/// offline. The stand-in takes the driver's flags (`[threads continue <T-id>] --execute
/// --stream-json [--stream-json-thinking] --settings-file F --log-file F [--mode M]`, the
/// prompt on stdin), prints Amp's documented stream JSON, and runs tool calls through the
/// settings file's `amp.permissions` rules, spawning a `delegate` program the way the real
/// binary does. The reply is chosen by a keyword in the prompt (`USE_TOOL`, `USE_WRITE`,
/// `THINK`, `SLOW`, `CRASH`, `FAIL`; see the script's header). It keeps its threads under
/// `$HOME/.local/share/amp-standin/` and logs each run to `$HOME/standin-calls.jsonl`.
pub fn amp_standin() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("standins/amp")
}
