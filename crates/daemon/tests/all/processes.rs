//! The processes API over real HTTP with real processes: runs to their end (exit codes,
//! output limits, timeouts that kill the whole group), long-running processes whose logs
//! are paged and followed, and resume after a reconnect without gap or duplicate; stop,
//! kill, the per-session limit, and a session's end taking its processes with it.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::{TestDaemon, alive, problem_slug as slug, session_in};
use futures::StreamExt;
use sandbox_client::{Client, LogFrame};
use sandbox_universal::{ProcessRequest, ProcessStatus};

fn sh(script: &str) -> ProcessRequest {
    ProcessRequest {
        command: "sh".into(),
        args: vec!["-c".into(), script.into()],
        ..ProcessRequest::default()
    }
}

#[tokio::test]
async fn a_run_answers_its_exit_and_output_within_limits() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("sub")).unwrap();
    session_in(&daemon.client, "r", work.path()).await;
    let api = &daemon.client;

    let mut request = sh("echo out; echo err >&2; pwd; echo \"$GREETING\"; echo \"$HOME\"; exit 3");
    request.cwd = Some("sub".into());
    request.env = BTreeMap::from([("GREETING".into(), "hello".into())]);
    let output = api.run_process("r", &request).await.unwrap();
    assert_eq!(output.exit_code, Some(3));
    assert!(!output.timed_out);
    let lines: Vec<_> = output.stdout.lines().collect();
    assert_eq!(lines[0], "out");
    assert_eq!(
        Path::new(lines[1]).canonicalize().unwrap(),
        work.path().join("sub").canonicalize().unwrap()
    );
    assert_eq!(lines[2], "hello");
    assert!(
        lines[3].ends_with("agent/process-home"),
        "a private HOME: {}",
        lines[3]
    );
    assert_eq!(output.stderr, "err\n");

    // Only the allow-listed environment: nothing else of the daemon's own.
    let env = api.run_process("r", &sh("env")).await.unwrap();
    for line in env.stdout.lines() {
        let name = line.split('=').next().unwrap();
        let shell = ["PWD", "SHLVL", "_", "OLDPWD"];
        assert!(
            sandbox_agents::process::INHERITED_VARS.contains(&name)
                || shell.contains(&name)
                || name == "HOME"
                || name.starts_with("XDG_"),
            "`{name}` reached the process"
        );
    }

    // Output past the limit is read and dropped, the process never blocks on it.
    let mut big = sh("head -c 3000000 /dev/zero | tr '\\0' x; echo done >&2");
    big.max_output_bytes = Some(1000);
    let output = api.run_process("r", &big).await.unwrap();
    assert_eq!(output.exit_code, Some(0));
    assert_eq!(output.stdout.len(), 1000);
    assert!(output.stdout_truncated && !output.stderr_truncated);
    assert_eq!(output.stderr, "done\n");

    // Past its timeout the whole group is killed, a child it left included.
    let mut slow = sh("sleep 30 & echo $! > child.pid; wait");
    slow.timeout_ms = Some(300);
    let output = api.run_process("r", &slow).await.unwrap();
    assert!(output.timed_out);
    assert_eq!(output.signal, Some(9));
    let child: u32 = std::fs::read_to_string(work.path().join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!alive(child), "the timed-out run's child lives on");

    // A child left holding its pipes is killed after a moment; what was read is kept.
    let output = api
        .run_process("r", &sh("echo hello; sleep 30 &"))
        .await
        .unwrap();
    assert_eq!(output.exit_code, Some(0));
    assert_eq!(output.stdout, "hello\n");
    assert!(!output.stdout_truncated);

    // The allow-listed variables may be set for the program; the daemon's own may not.
    let mut path = sh("echo $PATH");
    path.env = BTreeMap::from([("PATH".into(), "/usr/bin:/bin:/opt/tools".into())]);
    let output = api.run_process("r", &path).await.unwrap();
    assert_eq!(output.stdout, "/usr/bin:/bin:/opt/tools\n");

    // Refusals.
    let mut protected = sh("true");
    protected.env = BTreeMap::from([("HOME".into(), "/root".into())]);
    let error = api.run_process("r", &protected).await.unwrap_err();
    assert_eq!(slug(error), (422, "invalid-body".into()));
    let missing = ProcessRequest {
        command: "no-such-program-sandbox".into(),
        ..ProcessRequest::default()
    };
    let error = api.run_process("r", &missing).await.unwrap_err();
    assert_eq!(slug(error), (422, "process-not-started".into()));
    let mut escape = sh("true");
    escape.cwd = Some("../..".into());
    let error = api.run_process("r", &escape).await.unwrap_err();
    assert_eq!(slug(error), (422, "invalid-body".into()));
    let mut absent = sh("true");
    absent.cwd = Some("nowhere".into());
    let error = api.run_process("r", &absent).await.unwrap_err();
    assert_eq!(slug(error), (404, "file-not-found".into()));
    // A whole number written as a float is a whole number.
    let response = common::raw(
        reqwest::Method::POST,
        &format!("{}/sessions/r/processes/run", daemon.url()),
        None,
        Some("application/json"),
        Some(br#"{"command":"true","timeoutMs":5000.0,"maxOutputBytes":10.0}"#.to_vec()),
    )
    .await;
    assert_eq!(response.0, 200, "{}", response.2);
    let response = common::raw(
        reqwest::Method::POST,
        &format!("{}/sessions/r/processes/run", daemon.url()),
        None,
        Some("application/json"),
        Some(br#"{"command":"true","timeoutMs":5000.5}"#.to_vec()),
    )
    .await;
    common::assert_problem(&response, 422, "invalid-body");
}

/// Collects a followed log until `stop` chunks were seen or it ends.
async fn follow(
    api: &Client,
    id: &str,
    process: &str,
    offset: u64,
    stop: Option<usize>,
) -> (Vec<(u64, String)>, bool) {
    let mut frames = api.follow_process_logs(id, process, offset).await.unwrap();
    let mut seen = Vec::new();
    while let Some(frame) = tokio::time::timeout(Duration::from_secs(20), frames.next())
        .await
        .expect("the log goes on")
    {
        match frame.unwrap() {
            LogFrame::Log(chunk) => {
                seen.push((chunk.sequence, chunk.data));
                if stop.is_some_and(|n| seen.len() >= n) {
                    return (seen, false);
                }
            }
            LogFrame::Gap { from, to } => panic!("a gap {from}..{to} in a small log"),
            LogFrame::Exit(info) => {
                assert_eq!(info.status, ProcessStatus::Exited);
                return (seen, true);
            }
        }
    }
    (seen, false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_log_resumes_after_a_reconnect_without_gap_or_duplicate() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "l", work.path()).await;
    let api = &daemon.client;

    let started = api
        .start_process(
            "l",
            &sh("for i in $(seq 1 20); do echo line $i; sleep 0.05; done; echo bye >&2"),
        )
        .await
        .unwrap();
    assert_eq!(started.status, ProcessStatus::Running);
    assert_eq!(started.process_id, "p1");

    // A reader drops after a few chunks and comes back from the last it saw.
    let (first, ended) = follow(api, "l", "p1", 0, Some(5)).await;
    assert!(!ended);
    let last = first.last().unwrap().0;
    let (rest, ended) = follow(api, "l", "p1", last, None).await;
    assert!(ended);
    let all: Vec<_> = first.iter().chain(&rest).cloned().collect();
    let sequences: Vec<u64> = all.iter().map(|(s, _)| *s).collect();
    assert_eq!(sequences, (1..=sequences.len() as u64).collect::<Vec<_>>());
    let text: String = all.iter().map(|(_, d)| d.as_str()).collect();
    let expected: String = (1..=20).map(|i| format!("line {i}\n")).collect::<String>() + "bye\n";
    assert_eq!(text.replace("bye\n", ""), expected.replace("bye\n", ""));
    assert!(text.contains("bye\n"));

    // The same log, paged, and the process as it ended.
    let page = api.process_logs("l", "p1", 0).await.unwrap();
    assert_eq!(page.chunks.len(), all.len());
    assert_eq!(page.first_kept, 1);
    assert_eq!(page.process.exit_code, Some(0));
    let later = api.process_logs("l", "p1", last).await.unwrap();
    assert_eq!(later.chunks.first().unwrap().sequence, last + 1);

    // An exited process is listed until deleted.
    let listed = api.list_processes("l").await.unwrap();
    assert_eq!(listed.processes.len(), 1);
    api.delete_process("l", "p1").await.unwrap();
    let error = api.get_process("l", "p1").await.unwrap_err();
    assert_eq!(slug(error), (404, "process-not-found".into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_kill_limits_and_the_sessions_end() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "k", work.path()).await;
    let api = &daemon.client;

    // SIGTERM reaches a process that traps it; SIGKILL one that ignores it.
    let polite = api
        .start_process(
            "k",
            &sh("trap 'echo terminated; exit 7' TERM; while true; do sleep 0.05; done"),
        )
        .await
        .unwrap();
    let stubborn = api
        .start_process("k", &sh("trap '' TERM; while true; do sleep 0.05; done"))
        .await
        .unwrap();
    let error = api
        .delete_process("k", &polite.process_id)
        .await
        .unwrap_err();
    assert_eq!(slug(error), (409, "process-running".into()));
    tokio::time::sleep(Duration::from_millis(200)).await;
    api.stop_process("k", &polite.process_id).await.unwrap();
    let (log, ended) = follow(api, "k", &polite.process_id, 0, None).await;
    assert!(ended);
    assert!(
        log.iter().any(|(_, data)| data.contains("terminated\n")),
        "its trap ran: {log:?}"
    );
    assert_eq!(
        api.get_process("k", &polite.process_id)
            .await
            .unwrap()
            .exit_code,
        Some(7)
    );
    api.stop_process("k", &stubborn.process_id).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        api.get_process("k", &stubborn.process_id)
            .await
            .unwrap()
            .status,
        ProcessStatus::Running,
        "it ignores SIGTERM"
    );
    api.kill_process("k", &stubborn.process_id).await.unwrap();
    let (_, ended) = follow(api, "k", &stubborn.process_id, 0, None).await;
    assert!(ended);
    assert_eq!(
        api.get_process("k", &stubborn.process_id)
            .await
            .unwrap()
            .signal,
        Some(9)
    );

    // At most --max-processes running at once.
    let limit = sandbox_daemon::processes::ProcessLimits::default().max_running;
    let mut pids = Vec::new();
    for _ in 0..limit {
        pids.push(api.start_process("k", &sh("sleep 30")).await.unwrap().pid);
    }
    let error = api.start_process("k", &sh("true")).await.unwrap_err();
    assert_eq!(slug(error), (409, "too-many-processes".into()));
    let error = api.run_process("k", &sh("true")).await.unwrap_err();
    assert_eq!(slug(error), (409, "too-many-processes".into()));

    // A follow cannot start past the log's end.
    let error = api
        .follow_process_logs("k", &polite.process_id, 999)
        .await
        .map(drop)
        .unwrap_err();
    assert_eq!(slug(error), (400, "invalid-parameter".into()));

    // The session's end takes them with it (they stay listed, exited); an ended session
    // starts none; deleting it forgets them.
    api.end_session("k").await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    for pid in pids {
        assert!(!alive(pid), "process {pid} outlived its session");
    }
    let listed = api.list_processes("k").await.unwrap().processes;
    assert_eq!(listed.len(), limit + 2);
    assert!(listed.iter().all(|p| p.status == ProcessStatus::Exited));
    let error = api.start_process("k", &sh("true")).await.unwrap_err();
    assert_eq!(slug(error), (409, "session-ended".into()));
    api.delete_session("k").await.unwrap();
    assert!(
        daemon
            .server
            .sessions()
            .settings()
            .processes
            .list("k")
            .is_empty()
    );
    let error = api.list_processes("nobody").await.unwrap_err();
    assert_eq!(slug(error), (404, "session-not-found".into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_agent_user_processes_run_as_that_user() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        crate::security::skip::<()>("a root daemon needs root");
        return;
    }
    let Some(user) = crate::security::test_user("sbxtest-agent") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(work.path(), Some(user.uid), Some(user.gid)).unwrap();
    let mut args = common::process::daemon_args(&data.path().join("state"), None);
    args.extend(["--agent-user".into(), "sbxtest-agent".into()]);
    let mut command = std::process::Command::new(common::process::BINARY);
    command.args(&args);
    let daemon = common::process::DaemonProcess::spawn_command(command);
    let api = Client::new(&daemon.url, None).unwrap();
    session_in(&api, "u", work.path()).await;
    let output = api
        .run_process("u", &sh("id -u; touch made; ls -n made | cut -d' ' -f3"))
        .await
        .unwrap();
    assert_eq!(output.stdout, format!("{0}\n{0}\n", user.uid), "{output:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_runs_starts_and_follows_processes() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "c", work.path()).await;
    let output = crate::cli::json(
        &crate::cli::run(
            &daemon,
            &[
                "sessions",
                "processes",
                "run",
                "c",
                "--env",
                "WHO=cli",
                "--",
                "sh",
                "-c",
                "echo $WHO",
            ],
        )
        .await,
    );
    assert_eq!(output["stdout"], "cli\n");
    let started = crate::cli::json(
        &crate::cli::run(
            &daemon,
            &[
                "sessions",
                "processes",
                "start",
                "c",
                "--",
                "sh",
                "-c",
                "echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three",
            ],
        )
        .await,
    );
    let id = started["processId"].as_str().unwrap().to_string();
    let followed = crate::cli::run(
        &daemon,
        &["sessions", "processes", "logs", "c", &id, "--follow"],
    )
    .await;
    assert!(followed.status.success());
    assert_eq!(String::from_utf8_lossy(&followed.stdout), "one\nthree\n");
    assert_eq!(String::from_utf8_lossy(&followed.stderr), "two\n");
    let listed =
        crate::cli::json(&crate::cli::run(&daemon, &["sessions", "processes", "list", "c"]).await);
    assert_eq!(listed["processes"][0]["exitCode"], 0);
    for step in ["stop", "kill", "get"] {
        let out = crate::cli::run(&daemon, &["sessions", "processes", step, "c", &id]).await;
        assert!(out.status.success(), "{step}");
    }
    let deleted = crate::cli::run(&daemon, &["sessions", "processes", "delete", "c", &id]).await;
    assert!(deleted.status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_an_exited_process_left_behind_ends_with_the_session() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "left", work.path()).await;
    let api = &daemon.client;
    let started = api
        .start_process(
            "left",
            &sh("nohup sleep 1000 >/dev/null 2>&1 & echo $! > job.pid"),
        )
        .await
        .unwrap();
    let pid_file = work.path().join("job.pid");
    let job: u32 = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let info = api.get_process("left", &started.process_id).await.unwrap();
            if info.status == ProcessStatus::Exited
                && let Some(pid) = std::fs::read_to_string(&pid_file)
                    .ok()
                    .and_then(|t| t.trim().parse().ok())
            {
                break pid;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    assert!(alive(job), "the job outlives its process");
    api.end_session("left").await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while alive(job) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the session's end took the job its process left behind");
}
