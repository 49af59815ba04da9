//! The Vercel AI SDK's UI message stream protocol (v1) over a session's log:
//! `GET /sessions/{id}/ui-stream` (`routes/ui_stream.rs`) answers one turn as the
//! assistant message `useChat` builds.
//!
//! - [`chunks`]: the chunk shapes, as the `ai` package's `uiMessageChunkSchema` reads them.
//! - [`TurnConverter`]: one turn's universal events → its chunks (pure, deterministic: a
//!   replay is byte for byte the live stream).
//! - [`stream`]: the turn found in the log, followed and converted into the response body.
//!
//! | universal | UI message chunks |
//! |---|---|
//! | `turnStarted` | `start` (`messageId` `msg_<turnId>`, metadata `{turnId}`), `start-step` |
//! | assistant `message` item | `text-start`, `text-delta` (its deltas; its full text when it has none), `text-end` |
//! | `reasoning` item | `reasoning-start`, `reasoning-delta`, `reasoning-end` |
//! | `toolCall` item (+ its `toolResult`) | `tool-input-start`, `tool-input-available`, `tool-output-available` / `tool-output-error` (dynamic, `providerExecuted`) |
//! | `commandExecution` item | tool `commandExecution`: input `{command, cwd}`, output `{exitCode, output}` |
//! | `fileChange` item | tool `fileChange`: input and output `{changes: [{path, changeKind, diff}]}` |
//! | `permissionAsked` | `tool-approval-request` (`approvalId` = permission id, on the gated item's part or a part of its own) |
//! | `permissionResolved` | `tool-approval-response`; `tool-output-denied` when rejected |
//! | `questionAsked` / `questionResolved` | `data-question` (id = question id, replaced on resolution) |
//! | `toolCallRequested` / `toolCallResolved` | a tool part (id = call id) the client answers, then its output or error |
//! | `error` | `error` |
//! | `turnEnded` | `finish-step`, `finish` (reason, metadata `{turnId, stopReason, usage, changes}`); cancelled: `finish-step`, `message-metadata`, `abort` |

pub mod chunks;
mod convert;
pub mod stream;
mod tools;

pub use chunks::{DONE_FRAME, FinishReason, UiChunk};
pub use convert::{TurnConverter, error_text, finish_reason, message_id};
pub use tools::{COMMAND_TOOL, FILE_CHANGE_TOOL, RESULT_TOOL};

/// The header naming the protocol, and its version.
pub const PROTOCOL_HEADER: (&str, &str) = ("x-vercel-ai-ui-message-stream", "v1");

#[cfg(test)]
mod tests;
