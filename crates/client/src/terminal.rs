//! A process's terminal: a ticket (`POST .../terminal-ticket`) and the WebSocket it opens
//! (`GET .../terminal?ticket=`), seen as bytes out, bytes and resizes in.

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use reqwest::Method;
use sandbox_universal::{ProblemDetails, TerminalMessage, TerminalSize, TerminalTicket};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::{Client, ClientError};

/// What a terminal's socket brings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalEvent {
    /// Bytes the process wrote to its terminal.
    Output(Bytes),
    /// The process ended; nothing follows.
    Exit {
        /// Its exit code, when it exited.
        exit_code: Option<i32>,
        /// The signal that ended it, when one did.
        signal: Option<i32>,
    },
    /// The daemon could not act on a frame this client sent.
    Error(String),
}

/// An open terminal (see [`Client::open_terminal`]).
#[derive(Debug)]
pub struct Terminal {
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Terminal {
    /// Types `data` into the terminal.
    pub async fn send_input(&mut self, data: impl Into<Bytes>) -> Result<(), ClientError> {
        self.socket
            .send(Message::Binary(data.into()))
            .await
            .map_err(socket_error)
    }

    /// Sets the terminal's size.
    pub async fn resize(&mut self, size: TerminalSize) -> Result<(), ClientError> {
        let message = TerminalMessage::Resize {
            cols: size.cols.into(),
            rows: size.rows.into(),
        };
        let text = serde_json::to_string(&message).expect("terminal messages serialize");
        self.socket
            .send(Message::text(text))
            .await
            .map_err(socket_error)
    }

    /// The next thing the terminal brings; `None` once the socket closed.
    pub async fn next_event(&mut self) -> Option<Result<TerminalEvent, ClientError>> {
        loop {
            let message = match self.socket.next().await? {
                Ok(message) => message,
                Err(tungstenite::Error::ConnectionClosed) => return None,
                Err(e) => return Some(Err(socket_error(e))),
            };
            return Some(Ok(match message {
                Message::Binary(bytes) => TerminalEvent::Output(bytes),
                Message::Text(text) => match serde_json::from_str(text.as_str()) {
                    Ok(TerminalMessage::Exit { exit_code, signal }) => {
                        TerminalEvent::Exit { exit_code, signal }
                    }
                    Ok(TerminalMessage::Error { message }) => TerminalEvent::Error(message),
                    _ => {
                        return Some(Err(ClientError::Stream(format!(
                            "unexpected terminal frame: {text}"
                        ))));
                    }
                },
                Message::Close(_) => return None,
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
            }));
        }
    }

    /// Closes the socket (the process goes on running).
    pub async fn close(mut self) -> Result<(), ClientError> {
        self.socket.close(None).await.map_err(socket_error)
    }
}

fn socket_error(error: tungstenite::Error) -> ClientError {
    ClientError::Stream(format!("terminal socket: {error}"))
}

impl Client {
    /// `POST /sessions/{id}/processes/{processId}/terminal-ticket`.
    pub async fn terminal_ticket(
        &self,
        id: &str,
        process: &str,
    ) -> Result<TerminalTicket, ClientError> {
        Self::send(self.request(
            Method::POST,
            &["sessions", id, "processes", process, "terminal-ticket"],
        ))
        .await
    }

    /// `GET /sessions/{id}/processes/{processId}/terminal`: opens the process's terminal
    /// with a fresh ticket (the token never goes in the URL).
    pub async fn open_terminal(&self, id: &str, process: &str) -> Result<Terminal, ClientError> {
        let ticket = self.terminal_ticket(id, process).await?;
        let mut url = self.url(&["sessions", id, "processes", process, "terminal"]);
        url.query_pairs_mut().append_pair("ticket", &ticket.ticket);
        let scheme = if url.scheme() == "https" { "wss" } else { "ws" };
        url.set_scheme(scheme)
            .expect("ws and wss are valid schemes");
        match tokio_tungstenite::connect_async(url.as_str()).await {
            Ok((socket, _)) => Ok(Terminal { socket }),
            Err(tungstenite::Error::Http(response)) => {
                let status = response.status();
                let body = response
                    .into_body()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                Err(match serde_json::from_str::<ProblemDetails>(&body) {
                    Ok(problem) => ClientError::Problem(Box::new(problem)),
                    Err(_) => ClientError::Unexpected {
                        status: reqwest::StatusCode::from_u16(status.as_u16())
                            .unwrap_or(reqwest::StatusCode::BAD_GATEWAY),
                        body,
                    },
                })
            }
            Err(e) => Err(socket_error(e)),
        }
    }
}
