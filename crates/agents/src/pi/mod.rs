//! Pi (`@mariozechner/pi-coding-agent`, pinned 0.73.1): `pi --mode rpc`, one process per
//! session speaking JSON lines on stdio (commands on stdin, responses and events on
//! stdout).
//!
//! - [`native`]: the stdout lines of the pinned version (command responses, agent session
//!   events, extension UI requests), typed where the daemon reads them.
//! - [`convert`]: Pi's protocol (`convert/protocol.rs`): pure native → universal
//!   conversion, each command as a line (held to the converters' conformance kit).
//! - [`launch`]: the agent dir (`models.json` routing Pi's providers to the daemon's
//!   endpoints, keys by variable name), the permission extension, the arguments, and the
//!   process's handshake; one process per session, run by the kernel's stdio runner.
//! - [`mcp`]: session MCP servers through the daemon's bridge extension (`mcp.js`), an
//!   MCP client over Streamable HTTP that registers the servers' tools in Pi.
//! - [`portable`]: the session file exported, imported and written from another agent's
//!   conversation.
//! - [`driver`]: the driver, models asked of Pi.

pub mod convert;
pub mod driver;
pub mod launch;
pub mod mcp;
pub mod native;
pub mod portable;

pub use driver::PiDriver;
