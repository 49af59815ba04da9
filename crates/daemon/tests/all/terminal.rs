//! Terminals over real WebSockets on a real PTY (bash): tickets minted over the
//! authenticated API open one connection each; typed input, output, resize (the process
//! sees its new size), the exit frame; a reconnect replays the screen; what is refused
//! (used, foreign or missing tickets, plain requests, processes without a terminal).

use crate::common;

use std::time::Duration;

use common::{TestDaemon, alive, problem_slug as slug, session_in};
use futures::{SinkExt, StreamExt};
use sandbox_client::{Terminal, TerminalEvent};
use sandbox_universal::{ProcessRequest, TerminalSize};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// Bash on a terminal of `size`, with a prompt the tests can wait for.
fn bash(size: Option<TerminalSize>) -> ProcessRequest {
    ProcessRequest {
        command: "bash".into(),
        args: vec!["--norc".into(), "--noprofile".into(), "-i".into()],
        env: [("PS1".to_string(), "READY$ ".to_string())].into(),
        tty: true,
        size,
        ..ProcessRequest::default()
    }
}

/// Reads the terminal's output until it holds `needle` (or fails after 20 s).
async fn read_until(terminal: &mut Terminal, seen: &mut String, needle: &str) {
    let wait = async {
        while !seen.contains(needle) {
            match terminal.next_event().await {
                Some(Ok(TerminalEvent::Output(bytes))) => {
                    seen.push_str(&String::from_utf8_lossy(&bytes))
                }
                other => panic!("waiting for {needle:?} in {seen:?}: {other:?}"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .unwrap_or_else(|_| panic!("no {needle:?} in {seen:?}"));
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens `path` (a ticket's) as a raw WebSocket, or answers the refusal's status and body.
async fn connect(
    daemon: &TestDaemon,
    path: &str,
    token: Option<&str>,
) -> Result<Socket, (u16, String)> {
    let url = format!("{}{path}", daemon.url().replacen("http", "ws", 1));
    let mut request = url.into_client_request().unwrap();
    if let Some(token) = token {
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((socket, _)) => Ok(socket),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => Err((
            response.status().as_u16(),
            String::from_utf8_lossy(response.body().as_deref().unwrap_or_default()).into_owned(),
        )),
        Err(e) => panic!("connecting to {path}: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_on_a_terminal_takes_input_resizes_and_reports_its_exit() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "t", work.path()).await;
    let api = &daemon.client;
    let size = TerminalSize {
        cols: 100,
        rows: 30,
    };
    let started = api.start_process("t", &bash(Some(size))).await.unwrap();
    assert!(started.tty);

    let mut terminal = api.open_terminal("t", &started.process_id).await.unwrap();
    let mut seen = String::new();
    read_until(&mut terminal, &mut seen, "READY$ ").await;
    // A real terminal: stdin is one, it is the controlling terminal, and its size is
    // the one asked for; TERM is set for it.
    terminal
        .send_input("[ -t 0 ] && tty && stty size && echo \"term=$TERM\" && echo $((6*7))x\r")
        .await
        .unwrap();
    read_until(&mut terminal, &mut seen, "42x").await;
    assert!(seen.contains("/dev/pts/"), "{seen:?}");
    assert!(seen.contains("30 100"), "{seen:?}");
    assert!(seen.contains("term=xterm-256color"), "{seen:?}");

    // A resize reaches the process (bash learns it through SIGWINCH).
    terminal
        .resize(TerminalSize {
            cols: 132,
            rows: 43,
        })
        .await
        .unwrap();
    terminal
        .send_input("stty size; echo resized\r")
        .await
        .unwrap();
    read_until(&mut terminal, &mut seen, "43 132").await;

    // Ctrl-C reaches the foreground job through the terminal, not the daemon.
    terminal.send_input("sleep 30\r").await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    terminal.send_input(vec![3u8]).await.unwrap();
    terminal.send_input("echo after-interrupt\r").await.unwrap();
    read_until(&mut terminal, &mut seen, "after-interrupt\r\n").await;

    // A bad control frame is answered, the socket stays open.
    let mut raw = connect(
        &daemon,
        &api.terminal_ticket("t", &started.process_id)
            .await
            .unwrap()
            .path,
        None,
    )
    .await
    .unwrap();
    raw.send(Message::text(r#"{"type":"resize","cols":0,"rows":5}"#))
        .await
        .unwrap();
    raw.send(Message::text("not json")).await.unwrap();
    let mut errors = 0;
    let mut replayed = String::new();
    while errors < 2 {
        match tokio::time::timeout(Duration::from_secs(10), raw.next()).await {
            Ok(Some(Ok(Message::Text(text)))) => {
                assert!(text.contains("\"type\":\"error\""), "{text}");
                errors += 1;
            }
            Ok(Some(Ok(Message::Binary(bytes)))) => {
                replayed.push_str(&String::from_utf8_lossy(&bytes))
            }
            Ok(Some(Ok(_))) => {}
            other => panic!("waiting for the error frames: {other:?}"),
        }
    }
    // The second socket replayed the screen so far (a reconnect redraws).
    assert!(
        replayed.contains("42x") && replayed.contains("after-interrupt"),
        "{replayed:?}"
    );
    raw.send(Message::text(r#"{"type":"input","data":"exit 3\r"}"#))
        .await
        .unwrap();

    // The exit is reported on every socket, then they close; the process is listed
    // exited.
    let end = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match terminal.next_event().await {
                Some(Ok(TerminalEvent::Exit { exit_code, signal })) => break (exit_code, signal),
                Some(Ok(_)) => continue,
                other => panic!("waiting for the exit: {other:?}"),
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(end, (Some(3), None));
    assert!(
        terminal.next_event().await.is_none(),
        "closed after the exit"
    );
    let info = api.get_process("t", &started.process_id).await.unwrap();
    assert_eq!(info.exit_code, Some(3));
    // The log holds the terminal's output too.
    let logs = api.process_logs("t", &started.process_id, 0).await.unwrap();
    let logged: String = logs.chunks.iter().map(|c| c.data.as_str()).collect();
    assert!(logged.contains("after-interrupt"), "{logged:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tickets_open_one_connection_to_their_own_terminal() {
    let daemon = TestDaemon::start_with(common::Options {
        token: Some("terminal-test-token".into()),
        ..common::Options::default()
    })
    .await;
    let token = daemon.token.clone().expect("a token");
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "k", work.path()).await;
    let api = &daemon.client;
    let one = api.start_process("k", &bash(None)).await.unwrap();
    let two = api.start_process("k", &bash(None)).await.unwrap();

    // A ticket opens its terminal once; the token never appears in its path.
    let ticket = api.terminal_ticket("k", &one.process_id).await.unwrap();
    assert!(!ticket.path.contains(&token));
    assert!(ticket.expires_at > chrono::Utc::now());
    let socket = connect(&daemon, &ticket.path, None).await.unwrap();
    drop(socket);
    let (status, body) = connect(&daemon, &ticket.path, None).await.unwrap_err();
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("terminal-ticket-refused"), "{body}");

    // Another process's ticket, a made-up one and none at all are refused.
    let other = api.terminal_ticket("k", &two.process_id).await.unwrap();
    let foreign = other.path.replace(
        &format!("/{}/", two.process_id),
        &format!("/{}/", one.process_id),
    );
    assert_eq!(connect(&daemon, &foreign, None).await.unwrap_err().0, 401);
    let base = format!("/sessions/k/processes/{}/terminal", one.process_id);
    assert_eq!(
        connect(&daemon, &format!("{base}?ticket=made-up"), None)
            .await
            .unwrap_err()
            .0,
        401
    );
    let (status, body) = connect(&daemon, &base, None).await.unwrap_err();
    assert_eq!(status, 401);
    assert!(body.contains("unauthorized"), "{body}");
    // Clients that can send headers may use the token instead.
    connect(&daemon, &base, Some(&token)).await.unwrap();

    // A plain request is told it needs a WebSocket handshake.
    let plain = reqwest::Client::new()
        .get(format!("{}{base}", daemon.url()))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 400);
    assert!(plain.text().await.unwrap().contains("websocket-required"));

    // A process without a terminal has none to open; runs take no terminal.
    let piped = ProcessRequest {
        command: "sleep".into(),
        args: vec!["30".into()],
        ..ProcessRequest::default()
    };
    let piped = api.start_process("k", &piped).await.unwrap();
    assert!(!piped.tty);
    let error = api
        .terminal_ticket("k", &piped.process_id)
        .await
        .unwrap_err();
    assert_eq!(slug(error), (409, "not-a-terminal".into()));
    let error = api.run_process("k", &bash(None)).await.unwrap_err();
    assert_eq!(slug(error), (422, "invalid-body".into()));
    let sized_without_tty = ProcessRequest {
        tty: false,
        ..bash(Some(TerminalSize::default()))
    };
    let error = api
        .start_process("k", &sized_without_tty)
        .await
        .unwrap_err();
    assert_eq!(slug(error), (422, "invalid-body".into()));
    let error = api.terminal_ticket("k", "p99").await.unwrap_err();
    assert_eq!(slug(error), (404, "process-not-found".into()));

    // A terminal's process ends with its session like any other.
    api.end_session("k").await.unwrap();
    for process in [&one, &two] {
        let wait = async {
            while api
                .get_process("k", &process.process_id)
                .await
                .unwrap()
                .exit_code
                .is_none()
                && api
                    .get_process("k", &process.process_id)
                    .await
                    .unwrap()
                    .signal
                    .is_none()
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_attaches_to_a_terminal() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "c", work.path()).await;
    let started = crate::cli::json(
        &crate::cli::run(
            &daemon,
            &[
                "sessions",
                "processes",
                "start",
                "c",
                "--tty",
                "--cols",
                "90",
                "--",
                "bash",
                "--norc",
                "--noprofile",
            ],
        )
        .await,
    );
    assert_eq!(started["tty"], true);
    let id = started["processId"].as_str().unwrap().to_string();
    let ticket = crate::cli::json(
        &crate::cli::run(
            &daemon,
            &["sessions", "processes", "terminal-ticket", "c", &id],
        )
        .await,
    );
    assert!(ticket["path"].as_str().unwrap().contains("ticket="));

    // Piped input is typed in; the CLI ends with the process's exit code.
    let mut command = crate::cli::bin();
    command
        .args(["sessions", "processes", "terminal", "c", &id])
        .env("SANDBOX_DAEMON_ENDPOINT", daemon.url())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some(token) = &daemon.token {
        command.env("SANDBOX_DAEMON_TOKEN", token);
    }
    let output = tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"stty size; echo from-the-cli\nexit 7\n")
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(7),
        "{stdout} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("from-the-cli"), "{stdout}");
    assert!(stdout.contains("24 90"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_the_terminal_needs_no_ticket() {
    let daemon = TestDaemon::start().await;
    assert!(daemon.token.is_none());
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "n", work.path()).await;
    let started = daemon.client.start_process("n", &bash(None)).await.unwrap();
    let path = format!("/sessions/n/processes/{}/terminal", started.process_id);
    let mut socket = connect(&daemon, &path, None).await.unwrap();
    socket
        .send(Message::binary(b"echo open-$((1+1))\r".to_vec()))
        .await
        .unwrap();
    let mut seen = String::new();
    let wait = async {
        while !seen.contains("open-2") {
            if let Some(Ok(Message::Binary(bytes))) = socket.next().await {
                seen.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminals_jobs_end_with_it() {
    let daemon = TestDaemon::start().await;
    let work = tempfile::tempdir().unwrap();
    session_in(&daemon.client, "j", work.path()).await;
    let api = &daemon.client;
    let mut pids = Vec::new();
    for how in ["exit", "stop", "kill", "session end"] {
        let started = api.start_process("j", &bash(None)).await.unwrap();
        let mut terminal = api.open_terminal("j", &started.process_id).await.unwrap();
        let mut seen = String::new();
        read_until(&mut terminal, &mut seen, "READY$ ").await;
        // Job control gives each background job a process group of its own; `nohup`
        // makes it ignore the hang-up and leave the terminal.
        terminal
            .send_input("nohup sleep 1000 >/dev/null 2>&1 & echo \"job=$!=\"\r")
            .await
            .unwrap();
        read_until(&mut terminal, &mut seen, "=\r\n").await;
        let job: u32 = seen
            .split("job=")
            .nth(2)
            .and_then(|rest| rest.split('=').next())
            .and_then(|pid| pid.parse().ok())
            .unwrap_or_else(|| panic!("{how}: no job pid in {seen:?}"));
        assert!(alive(job));
        match how {
            // A shell leaves such a job running when it exits: the session's end does not.
            "exit" => terminal.send_input("exit\r").await.unwrap(),
            "stop" => drop(api.stop_process("j", &started.process_id).await.unwrap()),
            "kill" => drop(api.kill_process("j", &started.process_id).await.unwrap()),
            _ => drop(api.end_session("j").await.unwrap()),
        }
        pids.push((how, job, started.pid));
    }
    for (how, job, shell) in pids {
        let wait = async {
            while alive(job) || alive(shell) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap_or_else(|_| panic!("{how}: the job {job} or the shell {shell} outlived it"));
    }
}
