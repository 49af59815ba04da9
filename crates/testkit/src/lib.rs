//! Test kit of sandbox-daemon: a fake model provider and helpers that run the real
//! agent CLIs offline, inside a loopback-only network namespace.
//!
//! - [`provider`]: the fake model provider (Anthropic Messages, OpenAI Responses, Chat
//!   Completions), scripted by keywords, recording every request.
//! - [`netns`] and [`isolate!`]: run a test inside a new network namespace that has
//!   only `lo`.
//! - [`agents`]: where the pinned real agent CLIs are installed.
//! - [`offline`]: the daemon's drivers set up offline (pinned binary, provider environment
//!   at the fake, private HOME and cwd).
//! - [`drivers`]: native transcripts (the tap of the daemon's drivers), and native
//!   drivers for the daemon's bench and for Amp.
//! - [`scenarios`]: one scripted conversation per scenario, run through the daemon's own
//!   driver of each agent, with checks; shared by the smoke tests and `testkit record`.
//! - [`mirror`]: a loopback mirror of the agents' download hosts and of an npm registry,
//!   filled with the real pinned binaries and packages, with injectable faults.
//! - [`host_tools`]: a host application's http tool endpoint, verifying the daemon's
//!   signature ([`host_tools::verify_signature`]) and recording calls.
//! - [`mcp`]: two small MCP servers for tests (Streamable HTTP in-process, stdio by command).
//! - [`postgres`]: fresh databases in the store tests' throw-away PostgreSQL cluster.
//!
//! See `crates/testkit/README.md` for how to run and extend it.

#![warn(missing_docs)]

pub mod agents;
pub mod drivers;
pub mod host_tools;
pub mod logins;
mod loud;
pub mod mcp;
pub mod mirror;
pub mod netns;
pub mod offline;
pub mod postgres;
pub mod provider;
pub mod scenarios;
pub mod standins;
