//! Daemon.
