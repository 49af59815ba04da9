//! OpenCode: one `opencode serve` per isolation key, many sessions per server, driven over
//! HTTP with one event stream per server.
//!
//! - [`native`]: the server's event and part types, and which session an event belongs to.
//! - [`convert`]: OpenCode's protocol (`convert/protocol.rs`): pure native → universal
//!   conversion, each command as an HTTP call (held to the converters' conformance kit).
//! - [`launch`]: what a server is started with; the rules of each permission mode.
//! - [`server`]: one running server and its event stream; [`pool`]: servers by isolation
//!   key, events routed per session to the kernel's shared-server runner
//!   ([`crate::kernel::server`]), whose lease the pool's `Lease` is.
//! - [`policy`]: a session's policy (system prompt, tools, turn limit, MCP servers, env)
//!   as prompt fields, session rules and the config of a server of the session's own.
//! - [`portable`]: a session's export document, read from its server and imported with
//!   `opencode import`; [`history`]: another agent's conversation as such a document.
//! - [`catalog`]: models, agents and version asked of a server; [`driver`]: the driver.

pub mod catalog;
pub mod convert;
pub mod driver;
pub mod history;
pub mod launch;
pub mod native;
pub mod policy;
pub mod pool;
pub mod portable;
pub mod server;

pub use driver::OpenCodeDriver;
