//! A loopback HTTP mirror of the agents' official download hosts and of an npm registry,
//! for hermetic install tests. It serves a directory whose paths are the official URLs'
//! paths (`releases` builds it from the real binaries the test kit installs; `registry`
//! builds packuments and tarballs), records every request, and injects faults on demand:
//! an error status, corrupted bytes, a transfer cut short, a delay, or a JSON document
//! served without some of its members (a checksum nobody published). A [`Pace`] slows
//! every answer down (a delay before each, file bodies at a bounded rate), so a client's
//! progress can be watched (`testkit mirror`).

pub mod registry;
pub mod releases;

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::agents::{self, Agent};

use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

/// A fault the mirror injects on requests whose path ends with a given suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answer this status, for the next `times` requests.
    Status {
        /// The status.
        status: u16,
        /// How many requests get it.
        times: usize,
    },
    /// Serve the file with one byte changed (same length).
    Corrupt,
    /// Announce the full length but close the connection halfway.
    Truncate,
    /// Answer only after this many milliseconds (for the next request).
    Delay(u64),
    /// Serve a JSON document without any member of this name, at any depth (e.g. a
    /// platform's entry in a checksum manifest, or GitHub's asset `digest`s).
    Without(&'static str),
}

/// How fast the mirror answers every request (the default: at once, as fast as it can).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pace {
    /// Wait this long before answering.
    pub delay: std::time::Duration,
    /// Stream file bodies at most this many bytes a second (small documents are sent
    /// whole).
    pub bytes_per_second: Option<u64>,
}

#[derive(Default)]
struct Shared {
    root: PathBuf,
    url: String,
    faults: Mutex<Vec<(String, Fault)>>,
    requests: Mutex<Vec<String>>,
    pace: Mutex<Pace>,
}

/// A running mirror; stops when dropped.
pub struct Mirror {
    url: String,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Mirror {
    /// Serves `root` on a free loopback port.
    pub async fn serve(root: &Path) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let url = format!("http://{}", listener.local_addr()?);
        let shared = Arc::new(Shared {
            root: root.to_path_buf(),
            url: url.clone(),
            ..Shared::default()
        });
        let app = axum::Router::new()
            .fallback(serve_file)
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            url,
            shared,
            server,
        })
    }

    /// `http://127.0.0.1:PORT` (no trailing slash): the mirror base.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Injects `fault` on requests whose path ends with `suffix` (until cleared).
    pub fn fail(&self, suffix: &str, fault: Fault) {
        self.shared
            .faults
            .lock()
            .expect("faults")
            .push((suffix.to_string(), fault));
    }

    /// Answers every request at this pace from now on.
    pub fn set_pace(&self, pace: Pace) {
        *self.shared.pace.lock().expect("pace") = pace;
    }

    /// Removes every fault.
    pub fn heal(&self) {
        self.shared.faults.lock().expect("faults").clear();
    }

    /// Every path requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.shared.requests.lock().expect("requests").clone()
    }

    /// How many requests had a path ending with `suffix`.
    pub fn count(&self, suffix: &str) -> usize {
        self.requests()
            .iter()
            .filter(|p| p.ends_with(suffix))
            .count()
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The fault for `path`, consuming one use of a counted status fault.
fn fault_for(shared: &Shared, path: &str) -> Option<Fault> {
    let mut faults = shared.faults.lock().expect("faults");
    let i = faults
        .iter()
        .position(|(suffix, _)| path.ends_with(suffix.as_str()))?;
    let fault = faults[i].1;
    if let Fault::Delay(_) = fault {
        faults.remove(i);
    } else if let Fault::Status { status, times } = fault {
        if times <= 1 {
            faults.remove(i);
        } else {
            faults[i].1 = Fault::Status {
                status,
                times: times - 1,
            };
        }
    }
    Some(fault)
}

async fn serve_file(State(shared): State<Arc<Shared>>, uri: Uri) -> Response {
    // npm names scoped packages `@scope%2fname`: the file is `@scope/name`.
    let path = uri.path().replace("%2f", "/").replace("%2F", "/");
    shared.requests.lock().expect("requests").push(path.clone());
    let fault = fault_for(&shared, &path);
    let pace = *shared.pace.lock().expect("pace");
    if !pace.delay.is_zero() {
        tokio::time::sleep(pace.delay).await;
    }
    if let Some(Fault::Delay(ms)) = fault {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    if let Some(Fault::Status { status, .. }) = fault {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return (status, format!("injected {status}\n")).into_response();
    }
    if path.split('/').any(|part| part == "..") {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let mut file = shared.root.join(path.trim_start_matches('/'));
    if file.join(registry::PACKUMENT_FILE).is_file() {
        file = file.join(registry::PACKUMENT_FILE);
    }
    let Ok(meta) = tokio::fs::metadata(&file).await else {
        return (StatusCode::NOT_FOUND, "Not Found\n").into_response();
    };
    if !meta.is_file() {
        return (StatusCode::NOT_FOUND, "Not Found\n").into_response();
    }
    let len = meta.len();
    if let Some(Fault::Without(name)) = fault {
        let Ok(mut json) = tokio::fs::read(&file)
            .await
            .map_err(|_| ())
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).map_err(|_| ()))
        else {
            return (StatusCode::INTERNAL_SERVER_ERROR, "not a JSON document\n").into_response();
        };
        strip(&mut json, name);
        let text = json
            .to_string()
            .replace(registry::MIRROR_PLACEHOLDER, &shared.url);
        return text.into_response();
    }
    if len < 4 << 20 {
        // Small documents may name the mirror (npm packuments' tarball URLs).
        let Ok(bytes) = tokio::fs::read(&file).await else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let text = String::from_utf8_lossy(&bytes);
        if text.contains(registry::MIRROR_PLACEHOLDER) {
            return text
                .replace(registry::MIRROR_PLACEHOLDER, &shared.url)
                .into_response();
        }
    }
    let Ok(opened) = tokio::fs::File::open(&file).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let stream = match pace.bytes_per_second {
        Some(rate) => throttled(opened, rate.max(1)),
        None => tokio_util::io::ReaderStream::with_capacity(opened, 256 * 1024).boxed(),
    };
    let body = match fault {
        Some(Fault::Truncate) => {
            let mut left = len / 2;
            Body::from_stream(stream.map(move |chunk| {
                let mut chunk = chunk?;
                if left == 0 {
                    return Err(std::io::Error::other("the mirror cuts the transfer short"));
                }
                if chunk.len() as u64 > left {
                    chunk.truncate(left as usize);
                }
                left -= chunk.len() as u64;
                Ok(chunk)
            }))
        }
        Some(Fault::Corrupt) => {
            let mut first = true;
            Body::from_stream(stream.map(move |chunk| {
                let chunk = chunk?;
                if std::mem::take(&mut first) && !chunk.is_empty() {
                    let mut bytes = chunk.to_vec();
                    let middle = bytes.len() / 2;
                    bytes[middle] ^= 0xff;
                    return Ok::<_, std::io::Error>(bytes::Bytes::from(bytes));
                }
                Ok(chunk)
            }))
        }
        _ => Body::from_stream(stream),
    };
    let mut response = Response::new(body);
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, len.into());
    response
}

/// A file's bytes at most `rate` bytes a second: chunks of a twentieth of a second's
/// worth, each followed by the time it stands for.
fn throttled(
    file: tokio::fs::File,
    rate: u64,
) -> futures::stream::BoxStream<'static, std::io::Result<bytes::Bytes>> {
    let chunk = usize::try_from(rate / 20)
        .unwrap_or(usize::MAX)
        .clamp(1, 1 << 20);
    tokio_util::io::ReaderStream::with_capacity(file, chunk)
        .then(move |read| async move {
            if let Ok(bytes) = &read {
                let seconds = bytes.len() as f64 / rate as f64;
                tokio::time::sleep(std::time::Duration::from_secs_f64(seconds)).await;
            }
            read
        })
        .boxed()
}

/// Removes every member named `name` from `json`, at any depth.
fn strip(json: &mut serde_json::Value, name: &str) {
    match json {
        serde_json::Value::Object(members) => {
            members.remove(name);
            members.values_mut().for_each(|v| strip(v, name));
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| strip(v, name)),
        _ => {}
    }
}

/// Writes `bytes` at `root/path` (creating directories).
fn put(root: &Path, path: &str, bytes: &[u8]) -> std::io::Result<()> {
    let file = root.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(file.parent().expect("a file path has a parent"))?;
    std::fs::write(file, bytes)
}

/// Links (or copies) `from` to `root/path`.
fn put_file(root: &Path, path: &str, from: &Path) -> std::io::Result<()> {
    let file = root.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(file.parent().expect("a file path has a parent"))?;
    let _ = std::fs::remove_file(&file);
    std::fs::hard_link(from, &file).or_else(|_| std::fs::copy(from, &file).map(|_| ()))
}

/// SHA-256 (hex) and size of a file.
fn digest(path: &Path) -> std::io::Result<(String, u64)> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let size = hash_file(path, |chunk| hasher.update(chunk))?;
    let hex = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((hex, size))
}

/// Feeds the bytes of `path` to `update`; returns its size.
fn hash_file(path: &Path, mut update: impl FnMut(&[u8])) -> std::io::Result<u64> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0; 1 << 20];
    let mut size = 0;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(size);
        }
        update(&buf[..n]);
        size += n as u64;
    }
}

/// What a layout published: file paths by a short name, for tests to break them.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// The version published (also announced as latest).
    pub version: String,
    /// Short name (e.g. `binary`, `linux-x64-musl`) → URL path.
    pub paths: HashMap<String, String>,
}

/// The directory [`remove_at_exit`] removes.
static REMOVED_AT_EXIT: OnceLock<PathBuf> = OnceLock::new();

/// Removes `dir` when the process exits normally (`exit`, as the test harness ends; not on
/// a signal). One directory per process: the shared layouts'.
fn remove_at_exit(dir: &Path) {
    extern "C" fn remove() {
        if let Some(dir) = REMOVED_AT_EXIT.get() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    if REMOVED_AT_EXIT.set(dir.to_path_buf()).is_ok() {
        // SAFETY: `remove` is a plain function that neither unwinds nor re-enters exit.
        unsafe { libc::atexit(remove) };
    }
}

/// The mirror's files for this test process, built on first use (hundreds of MB, so once):
/// the release layouts of the agents asked for and the npm packages.
pub struct Layouts {
    root: tempfile::TempDir,
    releases: Mutex<Vec<(Agent, Published)>>,
    npm_amp: Mutex<bool>,
    npm_pi: Mutex<bool>,
}

impl Layouts {
    /// The process's layouts, removed when the process exits (a static is never dropped:
    /// without that, every test process would leave hundreds of MB in the temp dir).
    pub fn shared() -> &'static Layouts {
        static LAYOUTS: OnceLock<Layouts> = OnceLock::new();
        LAYOUTS.get_or_init(|| {
            let root = tempfile::tempdir().expect("a temp dir");
            remove_at_exit(root.path());
            Layouts {
                root,
                releases: Mutex::default(),
                npm_amp: Mutex::default(),
                npm_pi: Mutex::default(),
            }
        })
    }

    /// The directory a [`Mirror`] serves.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// `agent`'s release layout (published on first use); `None` after a loud skip when
    /// the test kit's agents are not installed.
    pub fn release(&self, agent: Agent) -> Option<Published> {
        agents::require(agent)?;
        let mut done = self.releases.lock().expect("layouts");
        if let Some((_, published)) = done.iter().find(|(a, _)| *a == agent) {
            return Some(published.clone());
        }
        let published = releases::publish(agent, self.root()).expect("publishing a release layout");
        done.push((agent, published.clone()));
        Some(published)
    }

    /// An npm registry under `/npm`: Amp's packages (its launcher and platform package) and
    /// Pi with its dependency closure; `None` after a loud skip without the agents.
    pub fn npm(&self) -> Option<()> {
        self.amp_npm()?;
        agents::require(Agent::Pi)?;
        let mut done = self.npm_pi.lock().expect("layouts");
        if !*done {
            registry::publish(
                self.root(),
                "/npm",
                &[agents::node_modules().join("@mariozechner/pi-coding-agent")],
                true,
            )
            .expect("publishing Pi and its dependencies");
            *done = true;
        }
        Some(())
    }

    /// Amp's packages alone under `/npm` (its launcher and this CPU's platform package,
    /// the verified source of Amp's binary); `None` after a loud skip without Amp.
    pub fn amp_npm(&self) -> Option<()> {
        agents::require(Agent::Amp)?;
        let mut done = self.npm_amp.lock().expect("layouts");
        if !*done {
            let modules = agents::node_modules();
            let cpu = if cfg!(target_arch = "aarch64") {
                "arm64"
            } else {
                "x64"
            };
            registry::publish(
                self.root(),
                "/npm",
                &[
                    modules.join("@ampcode/cli"),
                    modules.join(format!("@ampcode/cli-linux-{cpu}")),
                ],
                false,
            )
            .expect("publishing Amp's packages");
            *done = true;
        }
        Some(())
    }
}
