//! Messages that must be seen even when the test harness captures output.

use std::io::Write;

/// Environment value that turns a skip into a failure (`1`, `true` or `yes`).
pub fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"))
}

/// Writes a boxed warning straight to the process's stderr, bypassing libtest's capture
/// (which only intercepts `print!`-family macros).
pub fn warn(title: &str, detail: &str) {
    let bar = "!".repeat(78);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "\n{bar}\n!! {title}\n!! {}\n{bar}\n",
        detail.replace('\n', "\n!! ")
    );
}
