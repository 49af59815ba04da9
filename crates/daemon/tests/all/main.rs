//! The daemon's integration tests, in one test binary (one link, one place to filter):
//! `cargo test -p sandbox-daemon --test all -- <module>::` runs one area, e.g. `store::`,
//! `codex_e2e::` or `security::`.
//!
//! - API tests over a real socket against the mock agent: `api_errors`, `mock_sessions`,
//!   `mock_hitl`, `sse`, `concurrency`, `restart`, `store`, `connections`, `refusals`,
//!   `spec`, `cli`, `ui` (the inspector's pages).
//! - The real binary under faults and attacks: `faults`, `full_disk`, `security`.
//! - One table of scenarios for every agent (`scenarios`): the real pinned CLIs offline,
//!   the mock and Amp's stand-in, through the daemon over HTTP (`scenarios::codex` runs one
//!   agent). What only one agent does: `claude_e2e`, `codex_e2e`, `opencode_e2e`,
//!   `amp_e2e`, `pi_e2e`; installing them from a loopback mirror: `install_e2e`.

mod common;

mod acp;
mod amp_e2e;
mod api_errors;
mod changes;
mod claude_e2e;
mod cli;
mod codex_e2e;
mod concurrency;
mod connections;
mod credentials_api;
mod faults;
mod files;
mod full_disk;
mod host_tools;
mod idempotency;
mod install_e2e;
mod mock_hitl;
mod mock_sessions;
mod opencode_e2e;
mod pi_e2e;
mod policy;
mod portable_api;
mod processes;
mod refusals;
mod restart;
mod scenarios;
mod security;
mod spec;
mod sse;
mod store;
mod telemetry;
mod terminal;
mod ui;
mod ui_stream;
mod webhooks;
