//! OpenCode: one `opencode serve` per isolation key, many sessions per server, driven over
//! HTTP with one event stream per server. The driver is not registered yet: `native/` and
//! `convert/` (held to the converters' conformance kit), `launch.rs` (what a server is
//! started with) and `server.rs` (one running server and its event stream) are here.

pub mod convert;
pub mod launch;
pub mod native;
pub mod pool;
pub mod server;
