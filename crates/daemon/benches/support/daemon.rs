//! What the benchmarks share about the daemon child they run: where it listens and how it
//! is stopped. Included with `#[path]` (a bench is its own crate).

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::time::{Duration, Instant};

/// Reads the daemon's stderr until it says where it listens (`None` if it exits first);
/// its other lines are printed prefixed with `daemon: ` when `echo`, else dropped, now and
/// after.
pub fn listening_url(child: &mut Child, echo: bool) -> Option<String> {
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines().map_while(Result::ok);
    let print = move |line: &str| {
        if echo {
            eprintln!("daemon: {line}");
        }
    };
    let url = loop {
        let line = lines.next()?;
        match line.strip_prefix("sandbox-daemon listening on ") {
            Some(url) => break url.trim().to_string(),
            None => print(&line),
        }
    };
    std::thread::spawn(move || lines.for_each(|line| print(&line)));
    Some(url)
}

/// SIGTERM (the daemon then stops its agents), SIGKILL after 10 s; answers whether it
/// stopped by itself. `kill(1)` rather than a raw signal: the daemon's own code signals
/// processes only through `AgentProcess`.
pub fn stop(child: &mut Child) -> bool {
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}
