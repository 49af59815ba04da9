//! OpenCode with the real pinned `opencode serve`, in the loopback-only namespace against
//! the test kit's fake provider.
//!
//! - `server`: one server started with the daemon's launch (config, key files, password),
//!   its event stream, its death and its stop;
//! - `pool`: servers shared by isolation key, separated by token, restarted after a kill with
//!   the conversation kept, stopped with their last session;
//! - `session`: one session below the daemon: a text turn and a tool turn with a permission.

mod pool;
mod server;
mod session;
