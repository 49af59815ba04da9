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
//! - [`models`]: `model/list` for `GET /agents/codex/models`.
//! - [`driver`]: the driver.

pub mod convert;
pub mod driver;
pub mod launch;
pub mod models;
pub mod native;

pub use driver::CodexDriver;
