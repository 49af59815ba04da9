//! Sourcegraph's Amp: a process per turn (`amp --execute --stream-json`), threads continued
//! with `amp threads continue <id>`, run by the kernel's per-turn runner
//! ([`crate::kernel::per_turn`]). Amp's agent loop runs on Amp's servers; the local CLI
//! runs the tools and prints Claude Code's stream JSON.
//!
//! - [`convert`]: Amp's dialect of Claude Code's stream JSON, and Amp's protocol
//!   (`convert/protocol.rs`: the prompt on stdin, cancel by stopping the process, the
//!   relay's asks as permissions).
//! - [`launch`]: arguments, private files, permission rules; [`relay`]: permission
//!   questions from Amp's delegate program to the daemon.
//! - [`policy`]: a session's policy in Amp's settings file.
//! - [`driver`]: the driver.

pub mod convert;
pub mod driver;
pub mod launch;
pub mod policy;
pub mod relay;

pub use driver::AmpDriver;
