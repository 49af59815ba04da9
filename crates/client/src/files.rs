//! The files API of a session's workspace: `/sessions/{id}/files...`.

use reqwest::Method;
use sandbox_universal::{FileEntry, FileListing, UploadSummary};

use crate::{Client, ClientError, checked};

/// Query of [`Client::archive_files`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArchiveQuery {
    /// The directory to snapshot (default: the working directory).
    pub path: Option<String>,
    /// Take `.git`, `node_modules` and ignored paths too.
    pub all: bool,
    /// Leave out files larger than this (default: the daemon's).
    pub max_file_bytes: Option<u64>,
    /// Refuse a snapshot whose files add up to more (default: the daemon's).
    pub max_bytes: Option<u64>,
}

/// A workspace snapshot: the tar.gz and what the daemon says it holds.
#[derive(Debug, Clone)]
pub struct FileArchive {
    /// The tar.gz bytes.
    pub data: bytes::Bytes,
    /// Regular files in it (`X-Archive-Files`).
    pub files: u64,
    /// Their bytes, uncompressed (`X-Archive-Bytes`).
    pub bytes: u64,
    /// How many paths were left out (`X-Archive-Skipped`).
    pub skipped: u64,
    /// The first of them, decoded (`X-Archive-Skipped-Paths`).
    pub skipped_paths: Vec<String>,
}

impl Client {
    /// `GET /sessions/{id}/files`: a directory's entries, `depth` levels down.
    pub async fn list_files(
        &self,
        id: &str,
        path: Option<&str>,
        depth: Option<u32>,
    ) -> Result<FileListing, ClientError> {
        let mut builder = self.request(Method::GET, &["sessions", id, "files"]);
        if let Some(path) = path {
            builder = builder.query(&[("path", path)]);
        }
        if let Some(depth) = depth {
            builder = builder.query(&[("depth", depth)]);
        }
        Self::send(builder).await
    }

    /// `GET /sessions/{id}/files/content`: a file's bytes; with `range` (e.g. `bytes=0-99`)
    /// only that part.
    pub async fn read_file(
        &self,
        id: &str,
        path: &str,
        range: Option<&str>,
    ) -> Result<bytes::Bytes, ClientError> {
        let mut builder = self
            .request(Method::GET, &["sessions", id, "files", "content"])
            .query(&[("path", path)]);
        if let Some(range) = range {
            builder = builder.header(reqwest::header::RANGE, range);
        }
        Ok(checked(builder.send().await?).await?.bytes().await?)
    }

    /// `PUT /sessions/{id}/files/content`: writes a file atomically.
    pub async fn write_file(
        &self,
        id: &str,
        path: &str,
        content: impl Into<reqwest::Body>,
    ) -> Result<FileEntry, ClientError> {
        Self::send(
            self.raw_request(Method::PUT, &["sessions", id, "files", "content"])
                .query(&[("path", path)])
                .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                .body(content),
        )
        .await
    }

    /// `DELETE /sessions/{id}/files`: a file, a symlink or (with `recursive`, a non-empty)
    /// directory.
    pub async fn delete_file(
        &self,
        id: &str,
        path: &str,
        recursive: bool,
    ) -> Result<(), ClientError> {
        let mut builder = self
            .request(Method::DELETE, &["sessions", id, "files"])
            .query(&[("path", path)]);
        if recursive {
            builder = builder.query(&[("recursive", "true")]);
        }
        Self::send_empty(builder).await
    }

    /// `POST /sessions/{id}/files/upload`: unpacks a tar or tar.gz archive into `path`.
    pub async fn upload_files(
        &self,
        id: &str,
        path: Option<&str>,
        archive: impl Into<reqwest::Body>,
    ) -> Result<UploadSummary, ClientError> {
        let mut builder = self
            .raw_request(Method::POST, &["sessions", id, "files", "upload"])
            .header(reqwest::header::CONTENT_TYPE, "application/x-tar")
            .body(archive);
        if let Some(path) = path {
            builder = builder.query(&[("path", path)]);
        }
        Self::send(builder).await
    }

    /// `GET /sessions/{id}/files/archive`: a tar.gz snapshot of the workspace.
    pub async fn archive_files(
        &self,
        id: &str,
        query: &ArchiveQuery,
    ) -> Result<FileArchive, ClientError> {
        let mut builder = self.request(Method::GET, &["sessions", id, "files", "archive"]);
        if let Some(path) = &query.path {
            builder = builder.query(&[("path", path)]);
        }
        if query.all {
            builder = builder.query(&[("all", "true")]);
        }
        if let Some(max) = query.max_file_bytes {
            builder = builder.query(&[("maxFileBytes", max)]);
        }
        if let Some(max) = query.max_bytes {
            builder = builder.query(&[("maxBytes", max)]);
        }
        let response = checked(builder.send().await?).await?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let number = |name: &str| header(name).parse::<u64>().unwrap_or(0);
        let (files, bytes, skipped) = (
            number("x-archive-files"),
            number("x-archive-bytes"),
            number("x-archive-skipped"),
        );
        let skipped_paths = header("x-archive-skipped-paths")
            .split(',')
            .filter(|p| !p.is_empty())
            .map(percent_decode)
            .collect();
        Ok(FileArchive {
            data: response.bytes().await?,
            files,
            bytes,
            skipped,
            skipped_paths,
        })
    }
}

/// Undoes the daemon's percent-encoding of a path in a header.
fn percent_decode(encoded: &str) -> String {
    percent_encoding::percent_decode_str(encoded)
        .decode_utf8_lossy()
        .into_owned()
}
