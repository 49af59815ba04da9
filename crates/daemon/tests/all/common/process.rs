//! The real `sandbox-daemon` binary as a child process: for tests that kill it, fill its
//! disk or restart it the way an operator would.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandbox_daemon::store::StoreConfig;

/// The daemon binary cargo built for these tests.
pub const BINARY: &str = env!("CARGO_BIN_EXE_sandbox-daemon");

/// A running daemon process.
pub struct DaemonProcess {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// Everything it wrote to stderr so far.
    pub stderr: Arc<Mutex<String>>,
}

/// The arguments that run the daemon on `data_dir` with `store`, on a free port.
pub fn daemon_args(data_dir: &Path, store: Option<&StoreConfig>) -> Vec<String> {
    let mut args = vec![
        "--no-token".to_string(),
        "--port".into(),
        "0".into(),
        "--data-dir".into(),
        data_dir.display().to_string(),
    ];
    match store {
        Some(StoreConfig::Postgres(url)) => args.extend(["--store".into(), url.clone()]),
        Some(StoreConfig::Sqlite(path)) => {
            args.extend(["--store".into(), format!("sqlite:{}", path.display())])
        }
        None => {}
    }
    args
}

impl DaemonProcess {
    /// Starts the daemon on `data_dir` with `store`.
    pub fn spawn(data_dir: &Path, store: Option<&StoreConfig>) -> Self {
        let mut command = Command::new(BINARY);
        command.args(daemon_args(data_dir, store));
        Self::spawn_command(command)
    }

    /// Starts a command that ends up exec-ing the daemon (e.g. through `nsenter`), and
    /// waits until it listens.
    pub fn spawn_command(mut command: Command) -> Self {
        command
            .current_dir(std::env::temp_dir())
            .env("SANDBOX_DAEMON_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("the daemon starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().expect("piped stderr");
        let log = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("sandbox-daemon listening on ") {
                    let _ = url_tx.send(url.trim().to_string());
                }
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let url = match url_rx.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                panic!("the daemon did not start: {}", stderr.lock().unwrap());
            }
        };
        Self { child, url, stderr }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: no shutdown, no flush.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, then waits for a clean exit.
    pub fn terminate(mut self) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().unwrap();
        assert!(
            status.success(),
            "the daemon stops cleanly on SIGTERM: {status}; {}",
            self.stderr.lock().unwrap()
        );
    }
}

impl DaemonProcess {
    /// SIGTERM, then waits up to `limit` for the exit (SIGKILL and a failed test past
    /// it); answers the exit status and everything the daemon wrote to stderr.
    pub fn terminate_within(mut self, limit: Duration) -> (std::process::ExitStatus, String) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = std::time::Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // The stderr reader gets the last lines once the pipe closes.
                std::thread::sleep(Duration::from_millis(100));
                return (status, self.stderr.lock().unwrap().clone());
            }
            if std::time::Instant::now() > deadline {
                panic!(
                    "the daemon did not exit within {limit:?} of SIGTERM: {}",
                    self.stderr.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for DaemonProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A mount namespace holding a small tmpfs at a directory, kept alive by a sleeping
/// process: daemons started in it ([`TmpfsNamespace::command`]) see the tmpfs, and the
/// test reaches it through `/proc/<holder>/root`.
pub struct TmpfsNamespace {
    holder: Child,
    /// The directory the tmpfs is mounted on (inside the namespace).
    pub dir: PathBuf,
}

impl TmpfsNamespace {
    /// Mounts a tmpfs of `size` (e.g. `24m`) on `dir` in a new mount namespace; `None` when
    /// this machine cannot (no privileges for namespaces or mounts).
    pub fn new(dir: &Path, size: &str) -> Option<Self> {
        let mut holder = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(r#"mount -t tmpfs -o "size=$1,mode=0700" tmpfs "$0" && echo ready && exec sleep 100000"#)
            .arg(dir)
            .arg(size)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut ready = String::new();
        BufReader::new(holder.stdout.take()?)
            .read_line(&mut ready)
            .ok()?;
        if ready.trim() != "ready" {
            let _ = holder.kill();
            let _ = holder.wait();
            return None;
        }
        Some(Self {
            holder,
            dir: dir.to_path_buf(),
        })
    }

    /// `nsenter` into the namespace, running the daemon with `args`.
    pub fn command(&self, args: &[String]) -> Command {
        let mut command = Command::new("nsenter");
        command
            .arg(format!("--mount=/proc/{}/ns/mnt", self.holder.id()))
            .arg("--")
            .arg(BINARY)
            .args(args);
        command
    }

    /// `path` (inside the tmpfs) as the test process can reach it.
    pub fn outside(&self, path: &Path) -> PathBuf {
        let inside = self.dir.join(path);
        PathBuf::from(format!("/proc/{}/root", self.holder.id()))
            .join(inside.strip_prefix("/").expect("an absolute directory"))
    }

    /// Fills the tmpfs: writes `name` until no space is left.
    pub fn fill(&self, name: &str) {
        use std::io::Write;
        let mut file = std::fs::File::create(self.outside(Path::new(name))).unwrap();
        let chunk = vec![0u8; 64 << 10];
        loop {
            match file.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
                Err(e) => panic!("filling the tmpfs: {e}"),
            }
        }
        let _ = file.sync_all();
    }

    /// What the tmpfs holds: its free bytes and each file's size, for a failure's message.
    pub fn usage(&self) -> String {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                match entry.metadata() {
                    Ok(meta) if meta.is_dir() => walk(&path, base, out),
                    Ok(meta) => out.push(format!(
                        "{} {}",
                        path.strip_prefix(base).unwrap_or(&path).display(),
                        meta.len()
                    )),
                    Err(_) => {}
                }
            }
        }
        let root = self.outside(Path::new(""));
        let mut files = Vec::new();
        walk(&root, &root, &mut files);
        files.sort();
        let free = {
            let path = std::ffi::CString::new(root.as_os_str().as_encoded_bytes()).unwrap();
            let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
            // SAFETY: a NUL-terminated path and a zeroed struct statvfs fills in.
            match unsafe { libc::statvfs(path.as_ptr(), &mut stat) } {
                0 => (stat.f_bavail as u64 * stat.f_frsize as u64).to_string(),
                _ => "unknown".to_string(),
            }
        };
        format!("{free} bytes free; {}", files.join(", "))
    }

    /// Gives the space back.
    pub fn free(&self, name: &str) {
        std::fs::remove_file(self.outside(Path::new(name))).unwrap();
    }
}

impl Drop for TmpfsNamespace {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// Whether tests that need namespaces must run (CI) instead of skipping.
pub fn namespaces_required() -> bool {
    std::env::var("SANDBOX_REQUIRE_NETNS").is_ok_and(|v| v == "1")
}
