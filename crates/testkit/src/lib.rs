//! Test kit of sandbox-daemon: a fake model provider and helpers that run the real
//! agent CLIs offline, inside a loopback-only network namespace.
//!
//! - [`provider`]: the fake model provider (Anthropic Messages, OpenAI Responses, Chat
//!   Completions), scripted by keywords, recording every request.

pub mod provider;
