//! OpenCode: one `opencode serve` per isolation key, many sessions per server, driven over
//! HTTP with one event stream per server. The driver is not registered yet: `native/` and
//! `convert/` (held to the converters' conformance kit), `launch.rs` (what a server is
//! started with, the rules of each permission mode), `server.rs` (one running server and
//! its event stream), `pool.rs` (servers by isolation key) and `session.rs` (one universal
//! session on a server) are here.

pub mod convert;
pub mod launch;
pub mod native;
pub mod pool;
pub mod server;
pub mod session;
