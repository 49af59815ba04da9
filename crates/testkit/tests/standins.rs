//! Smoke test of the Amp stand-in (`standins/amp`): it answers `--version`, prints Amp's
//! stream JSON for a default prompt, and continues its thread on the next run.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use sandbox_testkit::standins::amp_standin;
use serde_json::Value;

/// Runs the stand-in with `args`, `prompt` on stdin, `home` as `$HOME`, in `cwd`.
fn run(home: &std::path::Path, cwd: &std::path::Path, args: &[&str], prompt: &str) -> Output {
    let mut child = Command::new(amp_standin())
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("AMP_API_KEY", "sgamp_standin_test_key")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the stand-in starts (python3 on PATH)");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(prompt.as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// The stdout lines, each parsed as JSON.
fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn amp_standin_answers_and_continues_its_thread() {
    let dir = tempfile::tempdir().unwrap();
    let (home, cwd) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();

    let version = run(&home, &cwd, &["--version"], "");
    assert!(version.status.success(), "{version:?}");
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("0.0.0-standin"));

    let first = run(&home, &cwd, &["--execute", "--stream-json"], "say hello");
    assert!(first.status.success(), "{first:?}");
    let first = lines(&first);
    let init = &first[0];
    assert_eq!(init["type"], "system");
    assert_eq!(init["subtype"], "init");
    assert_eq!(init["agent_mode"], "medium");
    let thread = init["session_id"].as_str().unwrap().to_string();
    assert!(thread.starts_with("T-"), "{thread}");
    let result = first.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(
        result["result"],
        "hello from stand-in amp (prompt 1 of this thread)"
    );

    let args = ["threads", "continue", &thread, "-x", "--stream-json"];
    let second = run(&home, &cwd, &args, "again");
    assert!(second.status.success(), "{second:?}");
    let second = lines(&second);
    assert_eq!(second[0]["session_id"], thread.as_str());
    assert_eq!(
        second.last().unwrap()["result"],
        "hello from stand-in amp (prompt 2 of this thread)"
    );

    let calls = std::fs::read_to_string(home.join("standin-calls.jsonl")).unwrap();
    assert_eq!(calls.lines().count(), 2);
    assert!(!calls.contains("sgamp_standin_test_key"), "never the key");
}
