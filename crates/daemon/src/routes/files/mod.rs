//! The session's workspace files: list, read (with `Range`), write atomically, delete,
//! upload a tar or tar.gz, download a tar.gz snapshot. Every path stays inside the
//! session's working directory (`workspace/`).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use sandbox_universal::{FileListing, ProblemDetails};
use serde::Deserialize;
use utoipa::IntoParams;

use super::AppState;
use crate::error::ApiError;
use crate::extract::{ApiPath, ApiQuery};
use crate::session::SessionId;
use crate::workspace::{Workspace, WorkspacePath, content, listing};

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

mod file_archive;
mod file_content;

pub use file_archive::*;
pub use file_content::*;

#[cfg(test)]
mod tests {
    use super::*;

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
}
