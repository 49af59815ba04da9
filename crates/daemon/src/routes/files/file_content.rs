//! Reading a file (one byte range) and writing one atomically.

use std::io::SeekFrom;

use axum::Json;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sandbox_universal::{FileEntry, ProblemDetails};
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use super::{Binary, PathQuery, parse_named, workspace};
use crate::error::ApiError;
use crate::extract::{ApiPath, ApiQuery, BodyLimit};
use crate::routes::AppState;
use crate::session::SessionId;
use crate::workspace::{WorkspaceError, content};

/// A file's bytes. `Range: bytes=a-b` (or `a-`, or `-n`) answers that part (206); a
/// range past the end answers 416; several ranges answer the whole file.
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/files/content",
    operation_id = "readFile",
    tag = "files",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        PathQuery,
        ("Range" = Option<String>, Header, description = "One byte range: `bytes=a-b`, `bytes=a-` or `bytes=-n`")
    ),
    responses(
        (status = 200, description = "The whole file", content_type = "application/octet-stream", body = inline(Binary),
            headers(("Accept-Ranges" = String, description = "`bytes`"), ("Last-Modified" = String, description = "When the file last changed"))),
        (status = 206, description = "The range asked for", content_type = "application/octet-stream", body = inline(Binary),
            headers(("Content-Range" = String, description = "`bytes a-b/size`"))),
        (status = 400, description = "A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 403, description = "The path leads outside the workspace through a symlink (`outside-workspace`), or the workspace's user may not read it (`file-permission-denied`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session, or no such file (`file-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The path is not a regular file (`wrong-file-kind`; `workspace-root` for the workspace itself), or another daemon sharing the store owns the session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 416, description = "The range starts past the end (`range-not-satisfiable`; `Content-Range: bytes */size`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 414, description = "The URL is over 8 KiB (a long `path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn read_file(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<PathQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let path = parse_named(&query.path)?;
    if query.path.ends_with('/') {
        return Err(WorkspaceError::WrongKind(format!(
            "path `{}` ends in `/`, which names a directory; name the file",
            query.path
        ))
        .into());
    }
    let workspace = workspace(&state, &session_id).await?;
    let (file, entry) = workspace.run(move |dir| content::open(dir, &path)).await?;
    let size = entry.size;
    let range = match headers.get(header::RANGE).and_then(|v| v.to_str().ok()) {
        Some(range) => match byte_range(range, size) {
            Ok(range) => range,
            Err(error) => {
                let mut response = ApiError::from(error).into_response();
                response.headers_mut().insert(
                    header::CONTENT_RANGE,
                    HeaderValue::from_str(&format!("bytes */{size}")).expect("ASCII"),
                );
                return Ok(response);
            }
        },
        None => None,
    };
    let mut file = tokio::fs::File::from_std(file);
    let (status, start, length) = match range {
        Some((start, end)) => (StatusCode::PARTIAL_CONTENT, start, end - start + 1),
        None => (StatusCode::OK, 0, size),
    };
    if start > 0 {
        file.seek(SeekFrom::Start(start))
            .await
            .map_err(|e| ApiError::from(WorkspaceError::from_io("reading the file", e)))?;
    }
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(file.take(length)));
    let mut response = (status, body).into_response();
    let out = response.headers_mut();
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    out.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    out.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    let modified = entry
        .modified_at
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    if let Ok(value) = HeaderValue::from_str(&modified) {
        out.insert(header::LAST_MODIFIED, value);
    }
    if status == StatusCode::PARTIAL_CONTENT {
        let value = format!("bytes {start}-{}/{size}", start + length - 1);
        out.insert(
            header::CONTENT_RANGE,
            HeaderValue::from_str(&value).expect("ASCII"),
        );
    }
    Ok(response)
}

/// The one range of `Range` over a file of `size` bytes, as first and last byte; `None`
/// for a header this answers with the whole file (several ranges, another unit, a
/// malformed value, as RFC 9110 allows).
fn byte_range(value: &str, size: u64) -> Result<Option<(u64, u64)>, WorkspaceError> {
    let Some(spec) = value.trim().strip_prefix("bytes=") else {
        return Ok(None);
    };
    if spec.contains(',') {
        return Ok(None);
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Ok(None);
    };
    let unsatisfiable = WorkspaceError::RangeNotSatisfiable { size };
    match (first.trim(), last.trim()) {
        ("", suffix) => match suffix.parse::<u64>() {
            Ok(0) => Err(unsatisfiable),
            Ok(_) if size == 0 => Err(unsatisfiable),
            Ok(n) => Ok(Some((size.saturating_sub(n), size - 1))),
            Err(_) => Ok(None),
        },
        (first, last) => {
            let Ok(start) = first.parse::<u64>() else {
                return Ok(None);
            };
            let end = match last {
                "" => size.saturating_sub(1),
                last => match last.parse::<u64>() {
                    Ok(end) if end >= start => end.min(size.saturating_sub(1)),
                    _ => return Ok(None),
                },
            };
            if start >= size {
                return Err(unsatisfiable);
            }
            Ok(Some((start, end)))
        }
    }
}

/// Writes a file from the request body (any content type), atomically: the body goes to
/// a temporary file beside it, renamed over the path once complete, so a reader sees the
/// old content or the new, never a part. Missing parent directories are created. A file
/// it replaces keeps its permission bits; a new one is created as the agents create
/// theirs. At most `--max-upload-bytes` (512 MiB).
#[utoipa::path(
    put,
    path = "/sessions/{sessionId}/files/content",
    operation_id = "writeFile",
    tag = "files",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id"), PathQuery),
    request_body(content = inline(Binary), content_type = "application/octet-stream", description = "The file's new content (none: an empty file)"),
    responses(
        (status = 200, description = "Replaced", body = FileEntry),
        (status = 201, description = "Created", body = FileEntry),
        (status = 400, description = "A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 403, description = "The path leads outside the workspace (`outside-workspace`), or the workspace's user may not write there (`file-permission-denied`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 408, description = "The body did not arrive in time", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The path is a directory, or a parent is a file (`wrong-file-kind`; `workspace-root` for the workspace itself), or another daemon sharing the store owns the session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "The body is over `--max-upload-bytes`", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 414, description = "The URL is over 8 KiB (a long `path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The workspace's disk is full (`workspace-full`)", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn write_file(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<PathQuery>,
    request: Request,
) -> Result<Response, ApiError> {
    let path = parse_named(&query.path)?;
    if query.path.ends_with('/') {
        return Err(WorkspaceError::InvalidPath(format!(
            "path `{}` ends in `/`, which names a directory; name the file",
            query.path
        ))
        .into());
    }
    let limit = state.sessions.settings().files.max_upload_bytes;
    let idle = BodyLimit::of(&request).1;
    let workspace = workspace(&state, &session_id).await?;
    let pending = workspace
        .run(move |dir| content::begin_write(dir, &path))
        .await?;
    let writer = pending
        .file
        .try_clone()
        .map_err(|e| ApiError::Internal(format!("writing the file: {e}")))?;
    let mut writer = tokio::fs::File::from_std(writer);
    let written = async {
        copy_body(request.into_body(), &mut writer, limit, idle).await?;
        writer
            .sync_all()
            .await
            .map_err(|e| WorkspaceError::from_io("writing the file", e).into())
    }
    .await;
    drop(writer);
    if let Err(error) = written {
        workspace
            .run(move |dir| {
                content::abandon_write(dir, pending);
                Ok(())
            })
            .await?;
        return Err(error);
    }
    let replaces = pending.replaces;
    let entry = workspace
        .run(move |dir| content::finish_write(dir, pending))
        .await?;
    let status = if replaces {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((status, Json(entry)).into_response())
}

/// Copies a request body to `out` (see [`crate::routes::body::copy_to_file`]); a write that fails
/// is the workspace's failure (a full disk: 507).
pub(super) async fn copy_body(
    body: Body,
    out: &mut tokio::fs::File,
    limit: u64,
    idle: std::time::Duration,
) -> Result<(), ApiError> {
    crate::routes::body::copy_to_file(body, out, limit, idle, |e| {
        WorkspaceError::from_io("writing the body", e).into()
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_byte_range_is_served_and_others_answer_the_whole_file() {
        assert_eq!(byte_range("bytes=0-9", 100).unwrap(), Some((0, 9)));
        assert_eq!(byte_range("bytes=90-", 100).unwrap(), Some((90, 99)));
        assert_eq!(byte_range("bytes=-10", 100).unwrap(), Some((90, 99)));
        assert_eq!(byte_range("bytes=-500", 100).unwrap(), Some((0, 99)));
        assert_eq!(byte_range("bytes=50-500", 100).unwrap(), Some((50, 99)));
        assert!(byte_range("bytes=100-", 100).is_err());
        assert!(byte_range("bytes=-0", 100).is_err());
        assert!(byte_range("bytes=0-", 0).is_err());
        assert_eq!(byte_range("bytes=0-1,5-6", 100).unwrap(), None);
        assert_eq!(byte_range("items=0-1", 100).unwrap(), None);
        assert_eq!(byte_range("bytes=9-1", 100).unwrap(), None);
        assert_eq!(byte_range("bytes=x-1", 100).unwrap(), None);
    }
}
