//! Claude Code: one `claude -p` process per session speaking stream-json both ways, run by
//! the kernel's stdio runner ([`crate::kernel::ChildSession`]), kept alive across turns and
//! resumed with `--resume` after it exits.
//!
//! - [`native`]: the CLI's wire types.
//! - [`convert`]: Claude's protocol (`convert/protocol.rs`): native lines → universal
//!   events, each command as stream-json lines and control requests.
//! - [`launch`]: arguments, the allow-listed environment, and each process's handshake.
//! - [`policy`]: a session's policy as flags, environment and private files.
//! - [`probe`]: what the installed CLI knows (models), asked offline.
//! - [`portable`]: the transcript exported, imported and written from another agent's
//!   conversation.
//! - [`driver`]: the driver.

pub mod convert;
pub mod driver;
pub mod launch;
pub mod native;
pub mod policy;
pub mod portable;
pub mod probe;

pub use driver::ClaudeDriver;
