//! One task owns an agent's stdin and writes JSON lines in the order they were queued, so
//! any task can send without holding the process.

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// Queues JSON values as lines on an agent's stdin.
#[derive(Debug, Clone)]
pub struct LineWriter {
    queue: mpsc::UnboundedSender<Queued>,
}

/// A line to write, and who waits to learn it was written.
type Queued = (Value, Option<oneshot::Sender<std::io::Result<()>>>);

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
        self.queue.send((message, None)).map_err(|_| WriterClosed)
    }

    /// Writes `message` as one line (after everything queued before it) and waits until
    /// it was written and flushed: the error says why not (a broken pipe when the agent
    /// is gone).
    pub async fn write(&self, message: Value) -> std::io::Result<()> {
        let closed = || std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let (done, written) = oneshot::channel();
        self.queue
            .send((message, Some(done)))
            .map_err(|_| closed())?;
        written.await.unwrap_or_else(|_| Err(closed()))
    }
}

async fn write_lines(
    mut stdin: impl AsyncWrite + Unpin,
    mut lines: mpsc::UnboundedReceiver<Queued>,
) {
    while let Some((message, done)) = lines.recv().await {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        let written = match stdin.write_all(&line).await {
            Ok(()) => stdin.flush().await,
            Err(error) => Err(error),
        };
        let failed = written.is_err();
        if let Err(error) = &written {
            tracing::debug!(%error, "writing to an agent's stdin failed");
        }
        if let Some(done) = done {
            let _ = done.send(written);
        }
        if failed {
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

    #[tokio::test]
    async fn a_waited_write_reports_a_reader_that_is_gone() {
        let (ours, mut theirs) = tokio::io::duplex(1024);
        let writer = LineWriter::spawn(ours);
        writer.write(json!({"id": 1})).await.unwrap();
        let mut buf = [0u8; 9];
        theirs.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"{\"id\":1}\n");
        drop(theirs);
        let error = writer.write(json!({"id": 2})).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe);
        assert!(
            writer.write(json!(3)).await.is_err(),
            "the writer has stopped"
        );
    }
}
