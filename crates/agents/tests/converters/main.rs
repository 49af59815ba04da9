//! Every converter on native transcripts recorded from the real pinned CLIs (Amp's written
//! from its documented shapes: it cannot run offline), held to one conformance kit
//! ([`kit`]): full-payload goldens, one set of lifecycle invariants, and one meaning
//! across agents ([`meaning`]). One module per agent.

mod amp;
mod claude;
mod codex;
mod kit;
mod meaning;
mod opencode;
mod pi;
mod replay;
