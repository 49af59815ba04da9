"""The SDK's version; it follows the daemon's workspace version (`Cargo.toml`)."""

__version__ = "0.1.0"
