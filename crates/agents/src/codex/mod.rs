//! OpenAI's Codex, driven through `codex app-server` (JSON-RPC over stdio), one process
//! per session with a private `CODEX_HOME`, run by the kernel's stdio runner
//! ([`crate::kernel::ChildSession`]), which resumes the thread in a new app-server after
//! one died.
//!
//! - [`native`]: the app-server's wire types.
//! - [`convert`]: Codex's protocol: pure native → universal conversion, and each command
//!   as JSON-RPC.
//! - [`launch`]: `config.toml`, environment, permission-mode policies, turn settings, and
//!   the handshake of each process (initialize, log in, start or resume the thread).
//! - [`policy`]: a session policy in Codex's terms (instructions, thread config, MCP
//!   servers and their secrets).
//! - [`models`]: `model/list` for `GET /agents/codex/models`.
//! - [`portable`]: the thread's rollout, exported and imported (another `CODEX_HOME`,
//!   another cwd); [`history`]: another agent's conversation as a rollout.
//! - [`driver`]: the driver.

pub mod convert;
pub mod driver;
pub mod history;
pub mod launch;
pub mod models;
pub mod native;
pub mod policy;
pub mod portable;

pub use driver::CodexDriver;
