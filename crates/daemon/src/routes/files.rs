//! The session's workspace files: list, read (with `Range`), write atomically, delete,
//! upload a tar or tar.gz, download a tar.gz snapshot. Every path stays inside the
//! session's working directory (`workspace/`).

use std::io::{Seek, SeekFrom};

use axum::Json;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sandbox_universal::{FileEntry, FileListing, ProblemDetails, UploadSummary};
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use utoipa::IntoParams;

use super::AppState;
use crate::error::ApiError;
use crate::extract::{ApiPath, ApiQuery, BodyLimit};
use crate::session::SessionId;
use crate::workspace::archive::ArchiveOptions;
use crate::workspace::{
    Workspace, WorkspaceError, WorkspacePath, archive, content, listing, upload,
};

/// The most bytes a snapshot's limits may ask for (1 GiB): it is spooled to the data dir.
pub const MAX_ARCHIVE_BYTES: u64 = 1 << 30;

// The OpenAPI description of raw bytes (`type: string, format: binary`), where a `Vec<u8>`
// would be described as an array of integers.
/// Raw bytes: a file's content, or an archive.
#[derive(utoipa::ToSchema)]
#[schema(value_type = String, format = Binary)]
pub struct Binary(pub Vec<u8>);

/// Query of `GET /sessions/{id}/files`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// The directory to list, relative to the working directory (default: the working
    /// directory itself).
    #[param(
        pattern = r"^(?:(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)(?:/(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)?)*)?$",
        max_length = 4096
    )]
    pub path: Option<String>,
    /// How many levels down to list (1: its own entries; default 1, at most 32).
    #[param(minimum = 1, maximum = 32)]
    pub depth: Option<u32>,
}

/// Query naming one path (`GET` and `PUT .../files/content`).
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PathQuery {
    /// The file, relative to the working directory.
    #[param(
        pattern = r"^(?:(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)(?:/(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)?)*)?$",
        min_length = 1,
        max_length = 4096
    )]
    pub path: String,
}

/// Query of `DELETE /sessions/{id}/files`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeleteQuery {
    /// What to delete, relative to the working directory (never the directory itself).
    #[param(
        pattern = r"^(?:(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)(?:/(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)?)*)?$",
        min_length = 1,
        max_length = 4096
    )]
    pub path: String,
    /// Delete a directory with everything in it (default false: only an empty one).
    pub recursive: Option<bool>,
}

/// Query of `POST /sessions/{id}/files/upload`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UploadQuery {
    /// The directory to unpack into, created if missing (default: the working directory).
    #[param(
        pattern = r"^(?:(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)(?:/(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)?)*)?$",
        max_length = 4096
    )]
    pub path: Option<String>,
}

/// Query of `GET /sessions/{id}/files/archive`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ArchiveQuery {
    /// The directory to snapshot (default: the working directory).
    #[param(
        pattern = r"^(?:(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)(?:/(?:[^/.\x00][^/\x00]*|\.(?:[^/.\x00][^/\x00]*)?|\.\.[^/\x00]+)?)*)?$",
        max_length = 4096
    )]
    pub path: Option<String>,
    /// Take `.git`, `node_modules` and `.gitignore`d paths too (default false).
    pub all: Option<bool>,
    /// Leave out files larger than this (default `--archive-max-file-bytes`, 1 MiB; at
    /// most 1 GiB).
    #[param(minimum = 0, maximum = 1073741824)]
    pub max_file_bytes: Option<u64>,
    /// Refuse (409 `archive-too-large`) when the files taken add up to more (default
    /// `--archive-max-bytes`, 12 MiB; at most 1 GiB).
    #[param(minimum = 0, maximum = 1073741824)]
    pub max_bytes: Option<u64>,
}

/// The workspace of session `id` (loaded and claimed for this daemon, as any command).
async fn workspace(state: &AppState, id: &str) -> Result<Workspace, ApiError> {
    let handle = state.sessions.open(id).await?;
    Ok(Workspace::new(
        handle.record.cwd.clone(),
        state.sessions.settings().agent_user.clone(),
    ))
}

fn parse(path: Option<&str>) -> Result<WorkspacePath, ApiError> {
    Ok(WorkspacePath::parse(path.unwrap_or(""))?)
}

/// A path that must name something (`path` of the content and delete routes).
fn parse_named(path: &str) -> Result<WorkspacePath, ApiError> {
    if path.is_empty() {
        return Err(ApiError::InvalidParameter(
            "path must not be empty; name a file or directory in the workspace".into(),
        ));
    }
    parse(Some(path))
}

/// Lists a directory of the session's workspace, `depth` levels down, each directory
/// followed by its entries in name order; symlinks are listed, not followed. At most
/// 10,000 entries (`truncated` says when more were left out).
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/files",
    operation_id = "listFiles",
    tag = "files",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id"), ListQuery),
    responses(
        (status = 200, description = "The entries", body = FileListing),
        (status = 400, description = "A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 403, description = "The path leads outside the workspace through a symlink (`outside-workspace`), or the workspace's user may not read it (`file-permission-denied`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session, or nothing at the path (`file-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The path is not a directory (`wrong-file-kind`), or another daemon sharing the store owns the session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 414, description = "The URL is over 8 KiB (a long `path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn list_files(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<FileListing>, ApiError> {
    let path = parse(query.path.as_deref())?;
    let depth = query.depth.unwrap_or(1);
    if !(1..=listing::MAX_DEPTH).contains(&depth) {
        return Err(ApiError::InvalidParameter(format!(
            "depth must be between 1 and {}",
            listing::MAX_DEPTH
        )));
    }
    let limit = state.sessions.settings().files.max_list_entries;
    let workspace = workspace(&state, &session_id).await?;
    let listed = workspace
        .run(move |dir| listing::list(dir, &path, depth, limit))
        .await?;
    Ok(Json(listed))
}

/// Deletes a file, a symlink (never what it points to) or a directory (with its contents
/// only when `recursive=true`) in the session's workspace.
#[utoipa::path(
    delete,
    path = "/sessions/{sessionId}/files",
    operation_id = "deleteFile",
    tag = "files",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id"), DeleteQuery),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 403, description = "The path leads outside the workspace (`outside-workspace`), or the workspace's user may not delete it (`file-permission-denied`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session, or nothing at the path (`file-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "A directory that is not empty without `recursive` (`directory-not-empty`), the workspace itself (`workspace-root`: `.`), or another daemon sharing the store owns the session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 414, description = "The URL is over 8 KiB (a long `path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn delete_file(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<DeleteQuery>,
) -> Result<StatusCode, ApiError> {
    let path = parse_named(&query.path)?;
    let recursive = query.recursive.unwrap_or(false);
    let workspace = workspace(&state, &session_id).await?;
    workspace
        .run(move |dir| content::delete(dir, &path, recursive))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

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

/// Copies a request body to `out` (see [`super::body::copy_to_file`]); a write that fails
/// is the workspace's failure (a full disk: 507).
async fn copy_body(
    body: Body,
    out: &mut tokio::fs::File,
    limit: u64,
    idle: std::time::Duration,
) -> Result<(), ApiError> {
    super::body::copy_to_file(body, out, limit, idle, |e| {
        WorkspaceError::from_io("writing the body", e).into()
    })
    .await
}

/// The content types an upload is taken with.
const ARCHIVE_TYPES: [&str; 4] = [
    "application/x-tar",
    "application/gzip",
    "application/x-gzip",
    "application/octet-stream",
];

/// Unpacks a tar or tar.gz archive (told apart by its first bytes) into a directory of
/// the workspace. Every entry is checked before anything is written: entries that are
/// absolute or name `..`, device nodes, FIFOs, hard links and symlinks pointing outside
/// the workspace are refused (422), as are archives over `--max-upload-entries` (100,000)
/// or unpacking to more than `--max-upload-bytes` (413). Files and symlinks in the way
/// are replaced; symlinks in the workspace are never written through to outside it.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/files/upload",
    operation_id = "uploadFiles",
    tag = "files",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id"), UploadQuery),
    request_body(description = "A tar archive, or a gzip-compressed one (told apart by its first bytes); none unpacks nothing", content(
        (inline(Binary) = "application/x-tar"),
        (inline(Binary) = "application/gzip"),
        (inline(Binary) = "application/x-gzip"),
        (inline(Binary) = "application/octet-stream")
    )),
    responses(
        (status = 201, description = "Unpacked", body = UploadSummary),
        (status = 400, description = "A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 403, description = "The directory leads outside the workspace (`outside-workspace`), or the workspace's user may not write there (`file-permission-denied`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 408, description = "The body did not arrive in time", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "An entry meets a directory where it is a file, or a file where it needs a directory (`wrong-file-kind`), or another daemon sharing the store owns the session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "The body, the unpacked bytes or the entries are over the limits (`payload-too-large`, `files-limit-exceeded`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 415, description = "The content type is not a tar or gzip type", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "Not a tar or tar.gz archive (`invalid-archive`), or an entry that is never extracted (`archive-entry-refused`; nothing was written)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 414, description = "The URL is over 8 KiB (a long `path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The workspace's disk is full (`workspace-full`)", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn upload_files(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<UploadQuery>,
    request: Request,
) -> Result<(StatusCode, Json<UploadSummary>), ApiError> {
    let headers = request.headers();
    let archive_type = match headers.get(header::CONTENT_TYPE) {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase())
            .is_some_and(|v| ARCHIVE_TYPES.contains(&v.as_str())),
        // No body at all needs no type: it unpacks nothing.
        None => {
            !headers.contains_key(header::TRANSFER_ENCODING)
                && headers
                    .get(header::CONTENT_LENGTH)
                    .is_none_or(|v| v.as_bytes() == b"0")
        }
    };
    if !archive_type {
        return Err(ApiError::NotAnArchiveType);
    }
    let dest = parse(query.path.as_deref())?;
    let settings = state.sessions.settings();
    let limits = settings.files;
    let idle = BodyLimit::of(&request).1;
    let workspace = workspace(&state, &session_id).await?;
    let spool = tempfile::tempfile_in(&settings.data_dir)
        .map_err(|e| ApiError::Internal(format!("spooling the upload: {e}")))?;
    let mut writer = tokio::fs::File::from_std(
        spool
            .try_clone()
            .map_err(|e| ApiError::Internal(format!("spooling the upload: {e}")))?,
    );
    copy_body(
        request.into_body(),
        &mut writer,
        limits.max_upload_bytes,
        idle,
    )
    .await?;
    drop(writer);
    let summary = workspace
        .run(move |dir| upload::extract(dir, &dest, spool, &limits))
        .await?;
    Ok((StatusCode::CREATED, Json(summary)))
}

/// A tar.gz snapshot of the workspace (or a directory in it), entries named relative to
/// it. By default without `.git`, `node_modules` and what `.gitignore` leaves out (`all`
/// takes everything), files over `maxFileBytes` left out and named in
/// `X-Archive-Skipped-Paths`, and refused (409 `archive-too-large`) when the rest adds up
/// to more than `maxBytes`. Symlinks are stored as links.
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/files/archive",
    operation_id = "archiveFiles",
    tag = "files",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id"), ArchiveQuery),
    responses(
        (status = 200, description = "The snapshot", content_type = "application/gzip", body = inline(Binary),
            headers(
                ("X-Archive-Files" = u64, description = "Regular files in it"),
                ("X-Archive-Bytes" = u64, description = "Their bytes, uncompressed"),
                ("X-Archive-Skipped" = u64, description = "Paths left out: over maxFileBytes, unreadable, or not a file, directory or symlink"),
                ("X-Archive-Skipped-Paths" = String, description = "The first 50 of them, comma-separated, percent-encoded")
            )),
        (status = 400, description = "A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 403, description = "The path leads outside the workspace (`outside-workspace`), or the workspace's user may not read it (`file-permission-denied`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session, or nothing at the path (`file-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The files taken add up to more than maxBytes (`archive-too-large`), the path is not a directory (`wrong-file-kind`), or another daemon sharing the store owns the session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 414, description = "The URL is over 8 KiB (a long `path`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn archive_files(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<ArchiveQuery>,
) -> Result<Response, ApiError> {
    let path = parse(query.path.as_deref())?;
    for (name, value) in [
        ("maxFileBytes", query.max_file_bytes),
        ("maxBytes", query.max_bytes),
    ] {
        if value.is_some_and(|v| v > MAX_ARCHIVE_BYTES) {
            return Err(ApiError::InvalidParameter(format!(
                "{name} is at most {MAX_ARCHIVE_BYTES} (1 GiB)"
            )));
        }
    }
    let settings = state.sessions.settings();
    let options = ArchiveOptions {
        all: query.all.unwrap_or(false),
        max_file_bytes: query
            .max_file_bytes
            .unwrap_or(settings.files.archive_max_file_bytes),
        max_bytes: query.max_bytes.unwrap_or(settings.files.archive_max_bytes),
    };
    let workspace = workspace(&state, &session_id).await?;
    let mut spool = tempfile::tempfile_in(&settings.data_dir)
        .map_err(|e| ApiError::Internal(format!("spooling the archive: {e}")))?;
    let out = spool
        .try_clone()
        .map_err(|e| ApiError::Internal(format!("spooling the archive: {e}")))?;
    let root = workspace.root().to_path_buf();
    let summary = workspace
        .run(move |dir| archive::write(&root, dir, &path, std::io::BufWriter::new(out), options))
        .await?;
    let size = spool
        .seek(SeekFrom::End(0))
        .and_then(|size| spool.seek(SeekFrom::Start(0)).map(|_| size))
        .map_err(|e| ApiError::Internal(format!("reading the archive back: {e}")))?;
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(
        tokio::fs::File::from_std(spool),
    ));
    let mut response = (StatusCode::OK, body).into_response();
    let out = response.headers_mut();
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/gzip"),
    );
    out.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    out.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"workspace.tar.gz\""),
    );
    out.insert("x-archive-files", HeaderValue::from(summary.files));
    out.insert("x-archive-bytes", HeaderValue::from(summary.bytes));
    out.insert(
        "x-archive-skipped",
        HeaderValue::from(summary.skipped.len() as u64),
    );
    let skipped: Vec<String> = summary
        .skipped
        .iter()
        .take(50)
        .map(|p| percent(p))
        .collect();
    out.insert(
        "x-archive-skipped-paths",
        HeaderValue::from_str(&skipped.join(",")).expect("percent-encoded ASCII"),
    );
    Ok(response)
}

/// What `X-Archive-Skipped-Paths` encodes in a path: controls, space, non-ASCII, and the
/// `%` and `,` the header uses itself.
const HEADER_UNSAFE: &percent_encoding::AsciiSet =
    &percent_encoding::CONTROLS.add(b' ').add(b'%').add(b',');

/// `path` as a header-safe item of `X-Archive-Skipped-Paths`.
fn percent(path: &str) -> String {
    percent_encoding::utf8_percent_encode(path, HEADER_UNSAFE).to_string()
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

    /// The workspace path pattern the schema states (`constraints::WORKSPACE_PATH`), written
    /// out in each `#[param]` (utoipa takes only literals): what `WorkspacePath::parse` takes.
    fn path_pattern() -> &'static str {
        sandbox_universal::constraints::WORKSPACE_PATH.pattern
    }

    #[test]
    fn the_stated_path_pattern_takes_what_the_daemon_takes() {
        let pattern = regex::Regex::new(path_pattern()).unwrap();
        for good in [
            "", "a", "a/b", "a//b/", ".", "./a", ".hidden", "...", "..a", "a/.b",
        ] {
            assert!(pattern.is_match(good), "{good}");
            assert!(WorkspacePath::parse(good).is_ok(), "{good}");
        }
        for bad in ["/a", "..", "a/..", "../a", "a/../b", "a\0b"] {
            assert!(!pattern.is_match(bad), "{bad}");
            assert!(WorkspacePath::parse(bad).is_err(), "{bad}");
        }
        let doc = crate::routes::openapi::document(crate::routes::openapi::DocAuth::Token);
        let mut stated = 0;
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                for param in op["parameters"].as_array().into_iter().flatten() {
                    if param["name"] == "path" && param["in"] == "query" {
                        assert_eq!(
                            param["schema"]["pattern"],
                            path_pattern(),
                            "{}",
                            op["operationId"]
                        );
                        stated += 1;
                    }
                }
            }
        }
        assert_eq!(stated, 6, "every files route states the pattern");
    }

    #[test]
    fn skipped_paths_are_header_safe() {
        assert_eq!(percent("a b,c%d/é"), "a%20b%2Cc%25d/%C3%A9");
    }
}
