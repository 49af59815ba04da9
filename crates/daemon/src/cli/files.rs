//! `sandbox-daemon sessions files ...`: the session's workspace files.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use sandbox_client::{ArchiveQuery, Client};

use super::client::{ClientArgs, fail, finish, print_json};

/// The files subcommands of `sandbox-daemon sessions`.
#[derive(Debug, Subcommand)]
pub enum FilesCommand {
    /// GET /sessions/{id}/files: a directory's entries (JSON).
    List {
        /// Session id.
        id: String,
        /// The directory, relative to the session's working directory (default: itself).
        #[arg(long)]
        path: Option<String>,
        /// How many levels down (1–32, default 1).
        #[arg(long)]
        depth: Option<u32>,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /sessions/{id}/files/content: a file's bytes (to stdout, or `--out`).
    Read {
        /// Session id.
        id: String,
        /// The file, relative to the session's working directory.
        path: String,
        /// Only these bytes, e.g. `bytes=0-99`.
        #[arg(long)]
        range: Option<String>,
        /// Write them to this file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// PUT /sessions/{id}/files/content: writes a file atomically from a local file (`-`:
    /// standard input).
    Write {
        /// Session id.
        id: String,
        /// The file, relative to the session's working directory.
        path: String,
        /// Its new content: a local file, or `-` for standard input.
        source: PathBuf,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// DELETE /sessions/{id}/files: a file, a symlink or a directory.
    Delete {
        /// Session id.
        id: String,
        /// What to delete, relative to the session's working directory.
        path: String,
        /// Delete a directory with everything in it.
        #[arg(long)]
        recursive: bool,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/files/upload: a local folder (sent as a tar), a tar or tar.gz
    /// file, or `-` (an archive on standard input), unpacked into the workspace.
    Upload {
        /// Session id.
        id: String,
        /// A folder, an archive, or `-`.
        source: PathBuf,
        /// The directory to unpack into (default: the working directory).
        #[arg(long)]
        path: Option<String>,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /sessions/{id}/files/archive: a tar.gz snapshot (to `--out`, or stdout); what
    /// it holds is printed as JSON (to stderr when the archive goes to stdout).
    Archive {
        /// Session id.
        id: String,
        /// The directory to snapshot (default: the working directory).
        #[arg(long)]
        path: Option<String>,
        /// Take `.git`, `node_modules` and ignored paths too.
        #[arg(long)]
        all: bool,
        /// Leave out files larger than this.
        #[arg(long)]
        max_file_bytes: Option<u64>,
        /// Refuse a snapshot whose files add up to more.
        #[arg(long)]
        max_bytes: Option<u64>,
        /// Write the tar.gz here instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        client: ClientArgs,
    },
}

impl FilesCommand {
    /// How to reach the daemon.
    pub fn client(&self) -> &ClientArgs {
        match self {
            Self::List { client, .. }
            | Self::Read { client, .. }
            | Self::Write { client, .. }
            | Self::Delete { client, .. }
            | Self::Upload { client, .. }
            | Self::Archive { client, .. } => client,
        }
    }

    /// Runs it.
    pub async fn run(self, client: &Client) -> ExitCode {
        match self {
            Self::List {
                id, path, depth, ..
            } => finish(client.list_files(&id, path.as_deref(), depth).await),
            Self::Read {
                id,
                path,
                range,
                out,
                ..
            } => match client.read_file(&id, &path, range.as_deref()).await {
                Ok(bytes) => emit(out.as_deref(), &bytes),
                Err(error) => fail(error),
            },
            Self::Write {
                id, path, source, ..
            } => match read_source(&source) {
                Ok(content) => finish(client.write_file(&id, &path, content).await),
                Err(message) => usage(&message),
            },
            Self::Delete {
                id,
                path,
                recursive,
                ..
            } => match client.delete_file(&id, &path, recursive).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => fail(error),
            },
            Self::Upload {
                id, source, path, ..
            } => {
                let archive = if source.is_dir() {
                    tar_folder(&source)
                } else {
                    read_source(&source)
                };
                match archive {
                    Ok(archive) => finish(client.upload_files(&id, path.as_deref(), archive).await),
                    Err(message) => usage(&message),
                }
            }
            Self::Archive {
                id,
                path,
                all,
                max_file_bytes,
                max_bytes,
                out,
                ..
            } => {
                let query = ArchiveQuery {
                    path,
                    all,
                    max_file_bytes,
                    max_bytes,
                };
                match client.archive_files(&id, &query).await {
                    Ok(archive) => {
                        let summary = serde_json::json!({
                            "files": archive.files,
                            "bytes": archive.bytes,
                            "skipped": archive.skipped,
                            "skippedPaths": archive.skipped_paths,
                        });
                        let status = emit(out.as_deref(), &archive.data);
                        if out.is_some() {
                            print_json(&summary);
                        } else {
                            eprintln!("{summary}");
                        }
                        status
                    }
                    Err(error) => fail(error),
                }
            }
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

/// Writes bytes to `out`, or stdout.
fn emit(out: Option<&Path>, bytes: &[u8]) -> ExitCode {
    let written = match out {
        Some(path) => std::fs::write(path, bytes),
        None => std::io::stdout().lock().write_all(bytes),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage(&format!("writing the output: {e}")),
    }
}

/// A local file's bytes, or standard input's for `-`.
fn read_source(source: &Path) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let read = if source.as_os_str() == "-" {
        std::io::stdin().read_to_end(&mut bytes).map(drop)
    } else {
        std::fs::File::open(source).and_then(|mut f| f.read_to_end(&mut bytes).map(drop))
    };
    read.map(|()| bytes)
        .map_err(|e| format!("reading {}: {e}", source.display()))
}

/// A local folder as a tar archive (symlinks kept as links).
fn tar_folder(folder: &Path) -> Result<Vec<u8>, String> {
    let mut builder = tar::Builder::new(Vec::new());
    builder.follow_symlinks(false);
    builder
        .append_dir_all(".", folder)
        .and_then(|()| builder.into_inner())
        .map_err(|e| format!("packing {}: {e}", folder.display()))
}
