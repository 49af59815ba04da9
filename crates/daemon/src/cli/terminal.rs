//! `sandbox-daemon sessions processes terminal`: this terminal attached to a process's
//! over the daemon's WebSocket.

use std::io::{Read, Write};
use std::process::ExitCode;

use sandbox_client::{Client, TerminalEvent};
use sandbox_universal::TerminalSize;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use super::client::fail;

/// Ctrl-]: detaches (as telnet does), leaving the process running.
const DETACH: u8 = 0x1d;

/// Attaches stdin and stdout to the process's terminal until it ends (its exit code) or
/// the user detaches.
pub async fn attach(client: &Client, id: &str, process: &str) -> ExitCode {
    let mut terminal = match client.open_terminal(id, process).await {
        Ok(terminal) => terminal,
        Err(error) => return fail(error),
    };
    let interactive = rustix::termios::isatty(rustix::stdio::stdin());
    // Raw while attached, restored however this ends.
    let _raw = match interactive.then(RawMode::enter).transpose() {
        Ok(raw) => raw,
        Err(e) => {
            eprintln!("error: putting this terminal in raw mode: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut resized = signal(SignalKind::window_change()).ok();
    if interactive && let Some(size) = own_size() {
        let _ = terminal.resize(size).await;
    }
    let mut input = read_stdin();
    let mut input_open = true;
    let mut stdout = std::io::stdout();
    loop {
        tokio::select! {
            typed = input.recv(), if input_open => match typed {
                Some(bytes) => {
                    if interactive && bytes.contains(&DETACH) {
                        eprint!("\r\n[detached; the process goes on running]\r\n");
                        let _ = terminal.close().await;
                        return ExitCode::SUCCESS;
                    }
                    if let Err(error) = terminal.send_input(bytes).await {
                        return fail(error);
                    }
                }
                // Piped input ran out: what it started goes on until the process ends.
                None => input_open = false,
            },
            Some(()) = async { resized.as_mut()?.recv().await }, if interactive => {
                if let Some(size) = own_size() {
                    let _ = terminal.resize(size).await;
                }
            }
            event = terminal.next_event() => match event {
                Some(Ok(TerminalEvent::Output(bytes))) => {
                    let _ = stdout.write_all(&bytes).and_then(|()| stdout.flush());
                }
                Some(Ok(TerminalEvent::Exit { exit_code, signal })) => {
                    let code = exit_code.unwrap_or(128 + signal.unwrap_or(0));
                    return ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1));
                }
                Some(Ok(TerminalEvent::Error(message))) => {
                    eprint!("\r\n[sandbox-daemon: {message}]\r\n");
                }
                Some(Err(error)) => return fail(error),
                None => {
                    eprintln!("error: the daemon closed the terminal before the process ended");
                    return ExitCode::FAILURE;
                }
            },
        }
    }
}

/// Stdin's bytes as they come, read on a thread of its own: a read cut short by another
/// branch of a `select!` would lose what it read, and a read blocked on tokio's pool
/// would hold the runtime's shutdown (the process exits with this thread still waiting).
fn read_stdin() -> mpsc::Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel(16);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buffer = vec![0u8; 8 << 10];
        while let Ok(read @ 1..) = stdin.read(&mut buffer) {
            if sender.blocking_send(buffer[..read].to_vec()).is_err() {
                break;
            }
        }
    });
    receiver
}

/// This terminal's size, when stdout is one.
fn own_size() -> Option<TerminalSize> {
    let size = rustix::termios::tcgetwinsize(rustix::stdio::stdout()).ok()?;
    (size.ws_col > 0 && size.ws_row > 0).then(|| TerminalSize {
        cols: size.ws_col.min(1000),
        rows: size.ws_row.min(1000),
    })
}

/// Stdin in raw mode until dropped.
struct RawMode(rustix::termios::Termios);

impl RawMode {
    fn enter() -> std::io::Result<Self> {
        let stdin = rustix::stdio::stdin();
        let saved = rustix::termios::tcgetattr(stdin)?;
        let mut raw = saved.clone();
        raw.make_raw();
        rustix::termios::tcsetattr(stdin, rustix::termios::OptionalActions::Now, &raw)?;
        Ok(Self(saved))
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(
            rustix::stdio::stdin(),
            rustix::termios::OptionalActions::Now,
            &self.0,
        );
    }
}
