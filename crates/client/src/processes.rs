//! The processes API of a session: `/sessions/{id}/processes...`.

use futures::StreamExt;
use reqwest::Method;
use sandbox_universal::{
    LogChunk, ProcessInfo, ProcessList, ProcessLogs, ProcessOutput, ProcessRequest,
};

use crate::{Client, ClientError, checked};

/// One frame of a followed process log.
#[derive(Debug, Clone, PartialEq)]
pub enum LogFrame {
    /// A chunk of output.
    Log(LogChunk),
    /// Chunks `from..=to` were dropped to keep the log bounded.
    Gap {
        /// First dropped sequence.
        from: u64,
        /// Last dropped sequence.
        to: u64,
    },
    /// The process ended (the stream ends after it).
    Exit(ProcessInfo),
}

/// A followed process log (see [`Client::follow_process_logs`]).
pub type LogFrames =
    std::pin::Pin<Box<dyn futures::Stream<Item = Result<LogFrame, ClientError>> + Send>>;

impl Client {
    /// `POST /sessions/{id}/processes/run`: runs a program to its end.
    pub async fn run_process(
        &self,
        id: &str,
        request: &ProcessRequest,
    ) -> Result<ProcessOutput, ClientError> {
        Self::send(
            self.request(Method::POST, &["sessions", id, "processes", "run"])
                .json(request),
        )
        .await
    }

    /// `POST /sessions/{id}/processes`: starts a long-running program.
    pub async fn start_process(
        &self,
        id: &str,
        request: &ProcessRequest,
    ) -> Result<ProcessInfo, ClientError> {
        Self::send(
            self.request(Method::POST, &["sessions", id, "processes"])
                .json(request),
        )
        .await
    }

    /// `GET /sessions/{id}/processes`.
    pub async fn list_processes(&self, id: &str) -> Result<ProcessList, ClientError> {
        Self::send(self.request(Method::GET, &["sessions", id, "processes"])).await
    }

    /// `GET /sessions/{id}/processes/{processId}`.
    pub async fn get_process(&self, id: &str, process: &str) -> Result<ProcessInfo, ClientError> {
        Self::send(self.request(Method::GET, &["sessions", id, "processes", process])).await
    }

    /// `DELETE /sessions/{id}/processes/{processId}`: forgets an exited process.
    pub async fn delete_process(&self, id: &str, process: &str) -> Result<(), ClientError> {
        Self::send_empty(self.request(Method::DELETE, &["sessions", id, "processes", process]))
            .await
    }

    /// `POST /sessions/{id}/processes/{processId}/stop` (SIGTERM).
    pub async fn stop_process(&self, id: &str, process: &str) -> Result<ProcessInfo, ClientError> {
        Self::send(self.request(
            Method::POST,
            &["sessions", id, "processes", process, "stop"],
        ))
        .await
    }

    /// `POST /sessions/{id}/processes/{processId}/kill` (SIGKILL).
    pub async fn kill_process(&self, id: &str, process: &str) -> Result<ProcessInfo, ClientError> {
        Self::send(self.request(
            Method::POST,
            &["sessions", id, "processes", process, "kill"],
        ))
        .await
    }

    /// `GET /sessions/{id}/processes/{processId}/logs?offset=`: a page of its log.
    pub async fn process_logs(
        &self,
        id: &str,
        process: &str,
        offset: u64,
    ) -> Result<ProcessLogs, ClientError> {
        Self::send(
            self.request(Method::GET, &["sessions", id, "processes", process, "logs"])
                .query(&[("offset", offset)]),
        )
        .await
    }

    /// `GET /sessions/{id}/processes/{processId}/logs?follow=true`: its log after
    /// `offset` (sent as `Last-Event-ID`), then live, until it ends.
    pub async fn follow_process_logs(
        &self,
        id: &str,
        process: &str,
        offset: u64,
    ) -> Result<LogFrames, ClientError> {
        let response = checked(
            self.request(Method::GET, &["sessions", id, "processes", process, "logs"])
                .query(&[("follow", "true")])
                .header("last-event-id", offset.to_string())
                .send()
                .await?,
        )
        .await?;
        use eventsource_stream::Eventsource;
        let frames = response.bytes_stream().eventsource().map(|event| {
            let event = event.map_err(|e| ClientError::Stream(e.to_string()))?;
            let bad = |e: serde_json::Error| ClientError::Stream(format!("{}: {e}", event.event));
            match event.event.as_str() {
                "log" => Ok(LogFrame::Log(
                    serde_json::from_str(&event.data).map_err(bad)?,
                )),
                "exit" => Ok(LogFrame::Exit(
                    serde_json::from_str(&event.data).map_err(bad)?,
                )),
                "gap" => {
                    let gap: serde_json::Value = serde_json::from_str(&event.data).map_err(bad)?;
                    Ok(LogFrame::Gap {
                        from: gap["from"].as_u64().unwrap_or(0),
                        to: gap["to"].as_u64().unwrap_or(0),
                    })
                }
                other => Err(ClientError::Stream(format!("unknown frame `{other}`"))),
            }
        });
        Ok(Box::pin(frames))
    }
}
