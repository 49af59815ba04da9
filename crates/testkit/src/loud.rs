//! Messages that must be seen even when the test harness captures output.

use std::io::Write;

/// Environment value that turns a skip into a failure (`1`, `true` or `yes`).
pub fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"))
}

/// Prefix of every line of a loud warning.
pub const MARK: &str = "!!";

/// Writes a boxed warning straight to the process's stderr, bypassing libtest's capture
/// (which only intercepts `print!`-family macros).
pub fn warn(title: &str, detail: &str) {
    let bar = MARK.repeat(39);
    let mut err = std::io::stderr().lock();
    let detail = detail.replace('\n', &format!("\n{MARK} "));
    let _ = writeln!(err, "\n{bar}\n{MARK} {title}\n{MARK} {detail}\n{bar}\n");
}
