//! Host tools: the host application's own tools, served by the daemon to each session's
//! agent over MCP (`mcp.rs`: `/sessions/{id}/mcp`, Streamable HTTP on rmcp, behind a
//! per-session bearer token minted and revoked by the broker, `broker.rs`). A call
//! (`call.rs`) is answered by the client through the log (`toolCallRequested` →
//! `POST .../tool-calls/{callId}/result`), or by an HTTP endpoint the daemon calls, signed
//! (`http.rs`); `needsApproval` asks first, `endsTurn` ends the turn after. `ask_user.rs`
//! is the question tool offered to agents that have none.

pub mod ask_user;
pub mod broker;
pub mod call;
pub mod http;
pub mod mcp;

pub use broker::{Grant, HostBroker, Scope};
