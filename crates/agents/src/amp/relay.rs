//! How Amp's permission questions reach the daemon. Amp's settings end with a `delegate`
//! rule naming the daemon's own executable; Amp runs it (no arguments, Amp's environment,
//! the tool's input as JSON on stdin) for every tool call the rules leave open, and reads
//! the decision from its exit code. Run that way, the executable is the [`helper`]: it
//! forwards the call over the session's channel — a Linux abstract Unix socket named in
//! `SANDBOX_AMP_PERMISSION` with a random secret — and waits for the user's answer.
//!
//! The channel carries no credential of the daemon: whoever holds the secret (Amp and the
//! tools it runs inherit it) can only ask the user a question, never answer one.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener as StdListener, UnixStream as StdStream};
use std::process::ExitCode;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::kernel::per_turn::Ask;

/// The variable that names the channel (`<socket name>:<secret>`).
pub const CHANNEL_ENV: &str = "SANDBOX_AMP_PERMISSION";
/// The largest request the daemon reads (a tool's input).
const MAX_REQUEST: u64 = 4 << 20;

/// What the helper sends: one JSON line.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    secret: String,
    tool: String,
    #[serde(default)]
    thread: Option<String>,
    input: Value,
}

/// What the daemon answers: one JSON line (`{"allow", "reason"}`), the answer of the
/// session's protocol to the ask.
#[derive(Debug, Serialize, Deserialize)]
pub struct Answer {
    /// Run the tool.
    pub allow: bool,
    /// Why not; it reaches the model.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A session's permission channel: questions arrive on the receiver while it lives.
pub struct Channel {
    value: String,
    task: tokio::task::JoinHandle<()>,
}

impl Channel {
    /// Opens a channel with a fresh name and secret.
    /// Each ask is `{"tool", "thread", "input"}` (Amp's tool name, its thread, the tool's
    /// input), answered with an [`Answer`] as JSON.
    pub fn open() -> std::io::Result<(Self, mpsc::Receiver<Ask>)> {
        let name = format!("sandbox-daemon-amp-{}", uuid::Uuid::new_v4().simple());
        let secret = uuid::Uuid::new_v4().simple().to_string();
        let listener = StdListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes())?)?;
        listener.set_nonblocking(true)?;
        let listener = tokio::net::UnixListener::from_std(listener)?;
        let (questions, receiver) = mpsc::channel(16);
        let expected = secret.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, expected.clone(), questions.clone()));
            }
        });
        Ok((
            Self {
                value: format!("{name}:{secret}"),
                task,
            },
            receiver,
        ))
    }

    /// The value of [`CHANNEL_ENV`] for Amp's environment.
    pub fn env_value(&self) -> &str {
        &self.value
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One helper connection: a request line, a question, the answer line.
async fn serve(stream: tokio::net::UnixStream, secret: String, questions: mpsc::Sender<Ask>) {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    let mut reader = tokio::io::BufReader::new(read.take(MAX_REQUEST));
    let answer = match reader.read_line(&mut line).await {
        Ok(_) => match serde_json::from_str::<Request>(&line) {
            Ok(request) if request.secret == secret => ask(request, &questions).await,
            Ok(_) => Answer {
                allow: false,
                reason: Some("sandbox-daemon: wrong permission channel secret".into()),
            },
            Err(error) => Answer {
                allow: false,
                reason: Some(format!(
                    "sandbox-daemon: unreadable permission request: {error}"
                )),
            },
        },
        Err(error) => Answer {
            allow: false,
            reason: Some(format!("sandbox-daemon: {error}")),
        },
    };
    let mut text = serde_json::to_vec(&answer).expect("serializes");
    text.push(b'\n');
    let _ = write.write_all(&text).await;
}

async fn ask(request: Request, questions: &mpsc::Sender<Ask>) -> Answer {
    let (answer, decision) = oneshot::channel();
    let question = Ask {
        native: json!({"tool": request.tool, "thread": request.thread, "input": request.input}),
        answer,
    };
    if questions.send(question).await.is_err() {
        return Answer {
            allow: false,
            reason: Some("sandbox-daemon: the session is gone".into()),
        };
    }
    match decision.await.map(serde_json::from_value::<Answer>) {
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => Answer {
            allow: false,
            reason: Some(format!("sandbox-daemon: an unreadable answer: {error}")),
        },
        Err(_) => Answer {
            allow: false,
            reason: Some("the turn ended before the user answered".into()),
        },
    }
}

/// Whether this process was started by Amp as the delegate program (no arguments, Amp's
/// `AGENT=amp`, and a channel in the environment).
pub fn is_helper() -> bool {
    std::env::args_os().len() == 1
        && std::env::var("AGENT").as_deref() == Ok("amp")
        && std::env::var_os(CHANNEL_ENV).is_some()
}

/// The delegate program: reads the tool's input, asks the daemon over the channel, and exits
/// 0 to allow, or 2 with the reason on stderr to reject (never 1, which Amp reads as "ask").
pub fn helper() -> ExitCode {
    match ask_daemon() {
        Ok(Answer { allow: true, .. }) => ExitCode::SUCCESS,
        Ok(Answer { reason, .. }) => {
            eprintln!(
                "{}",
                reason.unwrap_or_else(|| "rejected by the user".into())
            );
            ExitCode::from(2)
        }
        Err(error) => {
            eprintln!("sandbox-daemon could not ask about this tool call: {error}");
            ExitCode::from(2)
        }
    }
}

fn ask_daemon() -> std::io::Result<Answer> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let input: Value = serde_json::from_str(&input).unwrap_or(Value::String(input));
    let channel = std::env::var(CHANNEL_ENV).map_err(std::io::Error::other)?;
    let (name, secret) = channel
        .split_once(':')
        .ok_or_else(|| std::io::Error::other("malformed channel"))?;
    let request = Request {
        secret: secret.to_string(),
        tool: std::env::var("AGENT_TOOL_NAME").unwrap_or_default(),
        thread: std::env::var("AMP_THREAD_ID").ok(),
        input,
    };
    let mut stream = StdStream::connect_addr(&SocketAddr::from_abstract_name(name.as_bytes())?)?;
    let mut line = serde_json::to_vec(&request).map_err(std::io::Error::other)?;
    line.push(b'\n');
    stream.write_all(&line)?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer)?;
    serde_json::from_str(&answer).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_question_waits_for_the_answer_and_a_wrong_secret_is_refused() {
        let (channel, mut questions) = Channel::open().unwrap();
        let (name, secret) = channel.env_value().split_once(':').unwrap();
        let (name, secret) = (name.to_string(), secret.to_string());
        let asking = {
            let (name, secret) = (name.clone(), secret.clone());
            tokio::task::spawn_blocking(move || {
                let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
                let mut stream = StdStream::connect_addr(&addr).unwrap();
                let request = Request {
                    secret,
                    tool: "shell_command".into(),
                    thread: Some("T-1".into()),
                    input: serde_json::json!({"command": "ls"}),
                };
                writeln!(stream, "{}", serde_json::to_string(&request).unwrap()).unwrap();
                let mut answer = String::new();
                BufReader::new(stream).read_line(&mut answer).unwrap();
                serde_json::from_str::<Answer>(&answer).unwrap()
            })
        };
        let question = questions.recv().await.unwrap();
        assert_eq!(question.native["tool"], "shell_command");
        assert_eq!(question.native["thread"], "T-1");
        assert_eq!(question.native["input"]["command"], "ls");
        let no = serde_json::json!({"allow": false, "reason": "no"});
        question.answer.send(no).unwrap();
        let answer = asking.await.unwrap();
        assert!(!answer.allow);
        assert_eq!(answer.reason.as_deref(), Some("no"));

        let wrong = tokio::task::spawn_blocking(move || {
            let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
            let mut stream = StdStream::connect_addr(&addr).unwrap();
            writeln!(stream, r#"{{"secret":"guess","tool":"x","input":{{}}}}"#).unwrap();
            let mut answer = String::new();
            BufReader::new(stream).read_line(&mut answer).unwrap();
            serde_json::from_str::<Answer>(&answer).unwrap()
        })
        .await
        .unwrap();
        assert!(!wrong.allow);
        assert!(
            questions.try_recv().is_err(),
            "no question for a wrong secret"
        );
        let _ = secret;
    }
}
