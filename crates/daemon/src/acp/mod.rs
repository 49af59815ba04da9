//! The ACP (Agent Client Protocol) bridge: `sandbox-daemon acp` speaks ACP v1 over stdio as
//! an agent to editors (Zed, JetBrains) and forwards to the daemon's HTTP API.
//!
//! [`convert`] holds the pure conversions between ACP types and the universal schema.

pub mod bridge;
pub mod convert;
pub mod daemon;
mod prompt;
mod sessions;
