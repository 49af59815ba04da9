//! OpenCode with the real pinned `opencode serve`, in the loopback-only namespace against
//! the test kit's fake provider.
//!
//! - `server`: one server started with the daemon's launch (config, key files, password),
//!   its event stream, its death and its stop.

mod server;
