//! Installing agent binaries, the way the product spec asks: the raw binary the vendor
//! publishes for this machine (no package manager), pinned or latest, from the official
//! release hosts, one mirror standing in for them, or an npm registry; verified,
//! committed atomically into `<data dir>/agents/<agent>/<version>/`, one install per agent
//! at a time across threads and processes. The agent facts (hosts, paths, platform names,
//! pins) come from the agents' manifest (`sandbox_agents::manifest`); the layout written
//! here is the one `sandbox_agents::locate` reads.

pub mod clients;
pub mod config;
pub mod error;
pub mod fetch;
pub mod installer;
pub mod layout;
pub mod npm;
pub mod plan;
pub mod unpack;

pub use config::{DefaultVersion, InstallConfig, SourceKind};
pub use error::InstallError;
pub use installer::{Installed, Installer, Progress};
