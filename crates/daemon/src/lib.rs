//! sandbox-daemon: the HTTP + SSE server that drives coding agents inside a sandbox, and
//! its CLI.
//!
//! Entry points: [`server::serve`] runs the daemon; [`app::build_app`] builds the axum
//! application (used by tests); [`cli`] holds the clap command line.

pub mod acp;
pub mod ai_sdk;
pub mod app;
pub mod auth;
pub mod changes;
pub mod cli;
pub mod credentials;
pub mod error;
pub mod extract;
pub mod guard;
pub mod host_tools;
pub mod idempotency;
pub mod installs;
pub mod log;
pub mod memory;
pub mod private;
pub mod problem_instance;
pub mod processes;
pub mod routes;
pub mod secrets;
pub mod serve;
pub mod server;
pub mod session;
pub mod signing;
pub mod spec;
pub mod store;
pub mod telemetry;
pub mod ui;
pub mod webhooks;
pub mod workspace;
