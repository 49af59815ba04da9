//! OpenCode: one `opencode serve` per isolation key, many sessions per server, driven over
//! HTTP with one event stream per server. The driver is not registered yet: `native/` and
//! `convert/` are here, held to the converters' conformance kit.

pub mod convert;
pub mod native;
