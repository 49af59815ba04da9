//! Streaming a request body to a file: bounded in size and in the time between chunks.

use axum::body::Body;
use futures::StreamExt;
use tokio::io::AsyncWriteExt;

use crate::error::ApiError;

/// Copies `body` to `out`: at most `limit` bytes (413 past it), each chunk within `idle` of
/// the last (408); a failed write is what `failed` makes of it.
pub async fn copy_to_file(
    body: Body,
    out: &mut tokio::fs::File,
    limit: u64,
    idle: std::time::Duration,
    failed: impl Fn(std::io::Error) -> ApiError,
) -> Result<(), ApiError> {
    let mut stream = body.into_data_stream();
    let mut written = 0u64;
    loop {
        let chunk = tokio::time::timeout(idle, stream.next())
            .await
            .map_err(|_| ApiError::RequestTimeout {
                part: "body",
                after: idle,
            })?;
        let Some(chunk) = chunk else { break };
        let chunk =
            chunk.map_err(|e| ApiError::InvalidFraming(format!("the body cannot be read: {e}")))?;
        written += chunk.len() as u64;
        if written > limit {
            return Err(ApiError::PayloadTooLarge {
                limit: usize::try_from(limit).unwrap_or(usize::MAX),
            });
        }
        out.write_all(&chunk).await.map_err(&failed)?;
    }
    out.flush().await.map_err(failed)
}
