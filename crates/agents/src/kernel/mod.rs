//! The agent kernel: the one protocol contract every agent implements ([`Protocol`]) and
//! the session runners that drive it — one per transport kind — so no agent has a read
//! loop, pending requests or respawn logic of its own:
//! - [`child`]: a child process speaking JSON lines or JSON-RPC on stdio (Claude Code,
//!   Codex, Pi);
//! - [`per_turn`]: a process per turn (Amp);
//! - the OpenCode server pool (`opencode/pool.rs`): one shared HTTP + SSE server whose
//!   event stream is routed per session, driving the same [`Protocol`].
//!
//! [`tap`] sees every native message a runner exchanges, both ways.

pub mod child;
pub mod limit;
pub mod per_turn;
pub mod protocol;
pub mod server;
pub mod tap;

pub use child::{ChildLaunch, ChildSession, LineProtocol, Link, Outgoing, Spawn};
pub use limit::StepLimit;
pub use protocol::{Converted, Gone, Protocol, gone_facts};
pub use tap::{Direction, Tap, TapSink};
