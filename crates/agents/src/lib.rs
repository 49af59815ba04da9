//! Agent drivers: one folder per agent behind the [`AgentDriver`] trait.
//!
//! A driver starts an agent for a session ([`AgentDriver::start`]) and returns an
//! [`AgentSession`] the daemon's session actor drives (messages, cancel, HITL replies).
//! Everything the agent emits reaches the daemon as universal events through the
//! session's [`EventSink`]. Converters (native → universal) are pure and live next to
//! each driver.

pub mod amp;
pub mod cache;
pub mod claude;
pub mod codex;
pub mod context;
pub mod driver;
pub mod items;
pub mod kernel;
pub mod locate;
pub mod login;
pub mod manifest;
pub mod mcp;
pub mod message;
pub mod mock;
pub mod opencode;
pub mod pi;
pub mod platform;
pub mod portable;
pub mod process;
pub mod proofs;
pub mod registry;
pub mod release;
pub mod relocate;
pub mod replay;
pub mod sink;
pub mod transport;
pub mod user;
pub mod validate;

pub use context::DriverContext;
pub use driver::{
    AgentDriver, AgentSession, BinaryStatus, ConfigError, Credentials, ProviderEnv, QuestionAnswer,
    SessionConfig,
};
pub use message::{Image, UserMessage, UserPart};
pub use portable::{NativeState, StateFile};
pub use registry::AgentRegistry;
pub use sink::{AgentEvent, CollectingSink, EventConsumer, EventSink, SessionIds};
