//! The universal schema of sandbox-daemon.
//!
//! Every agent's native stream converts into [`UniversalEvent`]s; every client request and
//! response body of the HTTP API is defined here. This crate holds plain types only
//! (serde + schemars + utoipa): no I/O, no async runtime.

pub mod agent;
pub mod api;
pub mod canonical;
pub mod changes;
pub mod constraints;
pub mod credentials;
pub mod error;
pub mod event;
pub mod files;
pub mod history;
pub mod hitl;
pub mod host_tools;
pub mod item;
pub mod lifecycle;
pub mod policy;
pub mod portable;
pub mod processes;
pub mod webhooks;

pub use agent::*;
pub use api::*;
pub use changes::*;
pub use constraints::Constrained;
pub use credentials::*;
pub use error::*;
pub use event::*;
pub use files::*;
pub use hitl::*;
pub use host_tools::*;
pub use item::*;
pub use policy::*;
pub use portable::*;
pub use processes::*;
pub use webhooks::*;
