//! What only Amp does. Amp's agent loop runs on Amp's servers, so a turn cannot complete
//! offline: `real` checks what the real pinned binary does without the service (its
//! version, a fast `tokenError` without a key, a clear `error` when the service is
//! unreachable); `standin` checks, against `crates/testkit/standins/amp` (a STAND-IN that
//! replays Amp's documented stream on Amp's documented flags; it is not Amp), how the
//! daemon runs Amp: a process per turn continuing a thread, the key never on disk.
//! Everything every agent does is in the scenario table (`scenarios::amp_standin`).

mod policy;
mod real;
mod standin;

use std::path::Path;

use crate::scenarios::subject::files_under;

/// No file under `dir` contains `secret`.
fn assert_not_on_disk(dir: &Path, secret: &str) {
    for file in files_under(dir) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the key",
            file.display()
        );
    }
}
