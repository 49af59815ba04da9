//! Loopback-only isolation: run a test (or any command) in a new network namespace
//! that has only `lo`, so nothing it starts can reach anything but 127.0.0.1.
//!
//! The namespace is made with `unshare --net --pid --fork --kill-child --mount-proc`
//! (plus `--user --map-root-user` when not root) and `ip link set lo up`. The PID
//! namespace guarantees that every process a test started dies with it, even after a
//! panic or a timeout. See [`crate::isolate!`] for the test-side pattern.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::loud;

/// Set (to `1`) in the environment of a process started inside the namespace.
pub const IN_NETNS_ENV: &str = "SANDBOX_TESTKIT_IN_NETNS";
/// When `1`, a test that cannot be isolated fails instead of skipping (CI sets it).
pub const REQUIRE_NETNS_ENV: &str = "SANDBOX_REQUIRE_NETNS";
/// Upper bound, in seconds, for one isolated test run (default 600).
pub const TIMEOUT_ENV: &str = "SANDBOX_NETNS_TIMEOUT_SECS";

/// What [`isolate_test`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// This process is inside a verified loopback-only namespace: run the test body.
    Inside,
    /// The test ran (and passed) in a child process inside the namespace.
    Delegated,
    /// Isolation is impossible here; the test was skipped with a loud message.
    Skipped,
}

impl Isolation {
    /// Whether the caller should run the test body now.
    pub fn run_body(self) -> bool {
        self == Isolation::Inside
    }
}

/// Names of the network interfaces visible to this process (from `/proc/self/net/dev`,
/// which follows the process's network namespace, unlike `/sys/class/net`, which
/// follows the namespace that mounted sysfs).
pub fn interfaces() -> std::io::Result<Vec<String>> {
    let text = std::fs::read_to_string("/proc/self/net/dev")?;
    Ok(text
        .lines()
        .skip(2)
        .filter_map(|line| line.split(':').next())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .collect())
}

/// Whether this process sees no network interface but `lo`.
pub fn loopback_only() -> bool {
    interfaces().is_ok_and(|names| names.iter().all(|n| n == "lo"))
}

/// Whether this process runs inside the kit's namespace: the marker is set and only
/// `lo` is visible. Panics when the marker is set but other interfaces are visible.
pub fn inside() -> bool {
    if std::env::var_os(IN_NETNS_ENV).is_none() {
        return false;
    }
    let names = interfaces().unwrap_or_default();
    assert!(
        !names.is_empty() && names.iter().all(|n| n == "lo"),
        "{IN_NETNS_ENV} is set but this process sees interfaces {names:?}: refusing to run \
         a test that could reach the network"
    );
    true
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            .is_some_and(|euid| euid == "0")
    })
}

/// The `unshare` flags that work on this machine, or why none do. Probed once.
fn unshare_flags() -> Result<&'static [&'static str], &'static str> {
    static PROBE: OnceLock<Result<&'static [&'static str], String>> = OnceLock::new();
    const ROOT: &[&str] = &["--net", "--pid", "--fork", "--kill-child", "--mount-proc"];
    const USER: &[&str] = &[
        "--user",
        "--map-root-user",
        "--net",
        "--pid",
        "--fork",
        "--kill-child",
        "--mount-proc",
    ];
    PROBE
        .get_or_init(|| {
            let candidates: &[&'static [&'static str]] =
                if is_root() { &[ROOT, USER] } else { &[USER] };
            let mut last = String::from("unshare was not tried");
            for flags in candidates {
                let out = Command::new("unshare")
                    .args(*flags)
                    .args(["--", "sh", "-c", "ip link set lo up"])
                    .stdin(Stdio::null())
                    .output();
                match out {
                    Ok(out) if out.status.success() => return Ok(*flags),
                    Ok(out) => {
                        last = format!(
                            "`unshare {}` failed: {}",
                            flags.join(" "),
                            String::from_utf8_lossy(&out.stderr).trim()
                        )
                    }
                    Err(e) => last = format!("cannot run unshare: {e}"),
                }
            }
            Err(last)
        })
        .as_ref()
        .map(|flags| *flags)
        .map_err(String::as_str)
}

/// A command that runs `program args…` inside a new loopback-only namespace, with
/// [`IN_NETNS_ENV`] set. Errors when `unshare` is impossible on this machine.
pub fn isolated_command(program: &Path, args: &[String]) -> Result<Command, String> {
    let flags = unshare_flags()?;
    let mut cmd = Command::new("unshare");
    cmd.args(flags)
        .args(["--", "sh", "-c", "ip link set lo up && exec \"$0\" \"$@\""])
        .arg(program)
        .args(args)
        .env(IN_NETNS_ENV, "1");
    Ok(cmd)
}

/// The libtest name of a test from the type name of a function nested in its body
/// (`crate::module::test_fn::{{closure}}::marker` becomes `module::test_fn`).
#[doc(hidden)]
pub fn test_name_of(marker_type_name: &str) -> String {
    let mut parts: Vec<&str> = marker_type_name.split("::").collect();
    parts.pop();
    parts.retain(|p| !p.starts_with("{{"));
    if parts.len() > 1 {
        parts.remove(0);
    }
    parts.join("::")
}

/// Runs the named test of the current test binary inside the namespace, unless this
/// process is already inside one. Used by [`crate::isolate!`].
///
/// # Panics
/// When the isolated run fails, or when isolation is impossible and
/// `SANDBOX_REQUIRE_NETNS=1`.
pub fn isolate_test(test_name: &str) -> Isolation {
    if inside() {
        return Isolation::Inside;
    }
    let exe = std::env::current_exe().expect("current test executable");
    let args: Vec<String> = [test_name, "--exact", "--nocapture", "--test-threads=1"]
        .map(str::to_owned)
        .to_vec();
    let mut cmd = match isolated_command(&exe, &args) {
        Ok(cmd) => cmd,
        Err(why) if loud::env_flag(REQUIRE_NETNS_ENV) => {
            panic!(
                "cannot isolate test `{test_name}` in a network namespace: {why} ({REQUIRE_NETNS_ENV}=1)"
            )
        }
        Err(why) => {
            loud::warn(
                &format!("SKIPPED `{test_name}`: no loopback-only network namespace"),
                &format!("{why}\nset {REQUIRE_NETNS_ENV}=1 to make this a failure"),
            );
            return Isolation::Skipped;
        }
    };
    let started = Instant::now();
    let output = run_forwarding(&mut cmd, timeout());
    let passed = output.status_ok && output.text.contains("test result: ok. 1 passed");
    assert!(
        passed,
        "isolated run of `{test_name}` failed ({}, after {:.1} s); its output is above",
        output.outcome,
        started.elapsed().as_secs_f64()
    );
    println!(
        "[isolate] `{test_name}` passed in its namespace in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Isolation::Delegated
}

fn timeout() -> Duration {
    let secs = std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    Duration::from_secs(secs)
}

struct Forwarded {
    status_ok: bool,
    outcome: String,
    text: String,
}

/// Runs `cmd`, printing its stdout and stderr line by line through `println!` (so the
/// test harness captures them like the test's own output; the child's loud warnings
/// also go straight to stderr), and kills it on timeout.
fn run_forwarding(cmd: &mut Command, limit: Duration) -> Forwarded {
    let mut child = match cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            return Forwarded {
                status_ok: false,
                outcome: format!("spawn failed: {e}"),
                text: String::new(),
            };
        }
    };
    let forward = |stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut seen = String::new();
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if line.starts_with(loud::MARK) {
                    // a loud warning of the child (e.g. a skip): keep it loud here too
                    let _ = writeln!(std::io::stderr(), "{line}");
                }
                println!("{line}");
                seen.push_str(&line);
                seen.push('\n');
            }
            seen
        })
    };
    let out = forward(Box::new(child.stdout.take().expect("piped stdout")));
    let err = forward(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => break None,
        }
    };
    let text = out.join().unwrap_or_default() + &err.join().unwrap_or_default();
    match status {
        Some(status) => Forwarded {
            status_ok: status.success(),
            outcome: status.to_string(),
            text,
        },
        None => Forwarded {
            status_ok: false,
            outcome: format!("killed after {} s", limit.as_secs()),
            text,
        },
    }
}

/// Isolates the calling test in a loopback-only network namespace. Put it first in a
/// test body (`#[test]` or `#[tokio::test]`):
///
/// ```no_run
/// #[tokio::test]
/// async fn talks_to_a_real_agent() {
///     sandbox_testkit::isolate!();
///     // from here on only 127.0.0.1 is reachable
/// }
/// ```
///
/// Outside the namespace it re-runs this one test (`<name> --exact --nocapture
/// --test-threads=1`) in a child of the test binary inside a new namespace, forwards its
/// output, fails if it fails, and returns. Inside, it verifies that only `lo` exists and
/// lets the body run. Where `unshare` is impossible it skips loudly and returns, unless
/// `SANDBOX_REQUIRE_NETNS=1`. For a test returning a value, pass the value to return
/// early: `isolate!(Ok(()))`.
#[macro_export]
macro_rules! isolate {
    () => {
        $crate::isolate!(())
    };
    ($early:expr) => {{
        fn __sandbox_testkit_isolate_marker() {}
        let name = $crate::netns::test_name_of(::std::any::type_name_of_val(
            &__sandbox_testkit_isolate_marker,
        ));
        if !$crate::netns::isolate_test(&name).run_body() {
            return $early;
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_drop_crate_closures_and_marker() {
        assert_eq!(
            test_name_of("smoke::claude_text::{{closure}}::__m"),
            "claude_text"
        );
        assert_eq!(test_name_of("smoke::claude::text::__m"), "claude::text");
        assert_eq!(
            test_name_of("sandbox_testkit::netns::tests::x::{{closure}}::{{closure}}::__m"),
            "netns::tests::x"
        );
    }

    #[test]
    fn this_process_sees_its_interfaces() {
        let names = interfaces().expect("/proc/self/net/dev");
        assert!(names.iter().any(|n| n == "lo"), "{names:?}");
    }
}
