//! Native transcripts, and the few native drivers still needed besides the daemon's own.
//!
//! - [`transcript`]: the fixture format; a [`Transcript`] is the [`TapSink`] the scenarios
//!   give the daemon's drivers (`SessionConfig::tap`), so it records every native message
//!   their runners exchange.
//! - [`claude`] and [`codex`] (on [`stdio`]): the same CLIs driven natively, for the
//!   daemon's `real_turn` bench, which compares a daemon turn with a native one. The
//!   scenarios never use them.
//! - [`amp`]: runs Amp once to completion (it cannot hold a session offline).
//!
//! [`TapSink`]: sandbox_agents::kernel::TapSink

pub mod amp;
pub mod claude;
pub mod codex;
pub mod error;
pub mod stdio;
pub mod transcript;

pub use error::{DriverError, Result};
pub use transcript::{Dir, Line, Transcript};
