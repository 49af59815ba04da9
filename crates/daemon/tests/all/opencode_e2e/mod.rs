//! What only OpenCode does, with the real pinned `opencode serve` in the loopback-only
//! namespace against the test kit's fake provider; everything every agent does is in the
//! scenario table (`scenarios::opencode`).
//!
//! Below the daemon:
//! - `server`: one server started with the daemon's launch (config, key files, password),
//!   its event stream, its death and its stop;
//! - `pool`: servers shared by isolation key, separated by token, restarted after a kill with
//!   the conversation kept, stopped with their last session;
//! - `session`: one session: a text turn and a tool turn with a permission.
//!
//! Through the daemon, set up as the table sets it up: `servers` (sessions sharing a
//! server, tokens separating them); `policy` (system prompts, taken tools, maxTurns, an
//! image, env and both MCP servers, on servers of the sessions' own where needed).

mod policy;
mod pool;
mod server;
mod servers;
mod session;
