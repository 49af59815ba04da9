//! One task owns an agent's stdin and writes JSON lines in the order they were queued, so
//! any task can send without holding the process.

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Queues JSON values as lines on an agent's stdin.
#[derive(Debug, Clone)]
pub struct LineWriter {
    queue: mpsc::UnboundedSender<Value>,
}

/// The writer task has stopped (stdin closed or broken): nothing more can be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterClosed;

impl LineWriter {
    /// Starts the task writing to `stdin` (it stops, closing stdin, when every
    /// `LineWriter` is dropped or a write fails).
    pub fn spawn(stdin: impl AsyncWrite + Unpin + Send + 'static) -> Self {
        let (queue, lines) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(stdin, lines));
        Self { queue }
    }

    /// Queues `message` as one line.
    pub fn send(&self, message: Value) -> Result<(), WriterClosed> {
        self.queue.send(message).map_err(|_| WriterClosed)
    }
}

async fn write_lines(
    mut stdin: impl AsyncWrite + Unpin,
    mut lines: mpsc::UnboundedReceiver<Value>,
) {
    while let Some(message) = lines.recv().await {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        if let Err(error) = stdin.write_all(&line).await {
            tracing::debug!(%error, "writing to an agent's stdin failed");
            return;
        }
        if stdin.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn values_become_lines_in_order() {
        let (ours, mut theirs) = tokio::io::duplex(1024);
        let writer = LineWriter::spawn(ours);
        writer.send(json!({"id": 1})).unwrap();
        writer.send(json!("two")).unwrap();
        drop(writer);
        let mut text = String::new();
        theirs.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "{\"id\":1}\n\"two\"\n");
    }
}
