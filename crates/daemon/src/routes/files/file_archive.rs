//! Unpacking an uploaded tar or tar.gz, and a tar.gz snapshot of the workspace.

use std::io::{Seek, SeekFrom};

use axum::Json;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sandbox_universal::{ProblemDetails, UploadSummary};

use super::file_content::copy_body;
use super::{ArchiveQuery, Binary, UploadQuery, parse, workspace};
use crate::error::ApiError;
use crate::extract::{ApiPath, ApiQuery, BodyLimit};
use crate::routes::AppState;
use crate::session::SessionId;
use crate::workspace::archive::ArchiveOptions;
use crate::workspace::{archive, upload};

/// The most bytes a snapshot's limits may ask for (1 GiB): it is spooled to the data dir.
pub const MAX_ARCHIVE_BYTES: u64 = 1 << 30;

/// The content types an upload is taken with.
const ARCHIVE_TYPES: [&str; 4] = [
    "application/x-tar",
    "application/gzip",
    "application/x-gzip",
    "application/octet-stream",
];

/// Whether a `Content-Type` value declares an archive an upload takes (parameters and
/// case aside).
pub fn is_archive_type(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    ARCHIVE_TYPES
        .iter()
        .any(|t| t.eq_ignore_ascii_case(essence))
}

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
        Some(value) => value.to_str().is_ok_and(is_archive_type),
        // No body at all needs no type: it unpacks nothing.
        None => !crate::extract::has_body(headers),
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
    fn skipped_paths_are_header_safe() {
        assert_eq!(percent("a b,c%d/é"), "a%20b%2Cc%25d/%C3%A9");
    }
}
