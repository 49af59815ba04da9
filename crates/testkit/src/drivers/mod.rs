//! Drivers that speak each agent's native protocol and record a [`transcript`].

pub mod amp;
pub mod claude;
pub mod codex;
pub mod error;
pub mod opencode;
pub mod pi;
pub mod stdio;
pub mod transcript;

pub use error::{DriverError, Result};
pub use transcript::{Dir, Line, Transcript};
